"""`sphragis check` on real databases (issue 26): the JUnit XML, read back by Python's own
XML parser (xml.etree), holds exactly the findings of the JSON output — one test case per
check and scope, a <failure> per result at or above --fail-on, a <skipped> per check not
run — and the exit code is 4 exactly when the JSON says the run failed.

Usage: check_junit.py SPHRAGIS_BINARY DB...
"""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET


def run(binary, db, *args):
    return subprocess.run([binary, "--db", db, "check", "--no-record", *args], capture_output=True, text=True)


def main():
    binary, dbs = sys.argv[1], sys.argv[2:]
    bad = 0
    for db in dbs:
        for fail_on in ("error", "warn"):
            j = run(binary, db, "--format", "json", "--fail-on", fail_on)
            x = run(binary, db, "--format", "junit", "--fail-on", fail_on)
            doc = json.loads(j.stdout)
            findings = doc["findings"]
            root = ET.fromstring(x.stdout)
            cases = root.findall(".//testcase")
            names = sorted(f"{c.get('name')}" for c in cases)
            want = sorted(f"{f['check_name']} [{f['scope']}]" for f in findings)
            failing = sum(1 for f in findings if f["status"] == "fail" or (fail_on == "warn" and f["status"] == "warn"))
            skipped = sum(1 for f in findings if f["status"] == "not-run")
            problems = []
            if names != want:
                problems.append("test cases differ from the JSON findings")
            if len(root.findall(".//failure")) != failing:
                problems.append(f"{len(root.findall('.//failure'))} <failure>, JSON has {failing}")
            if len(root.findall(".//skipped")) != skipped:
                problems.append(f"{len(root.findall('.//skipped'))} <skipped>, JSON has {skipped}")
            expected_code = 4 if doc["failed"] else 0
            if j.returncode != expected_code or x.returncode != expected_code:
                problems.append(f"exit {j.returncode}/{x.returncode}, expected {expected_code}: {j.stderr.strip()}")
            if doc["failed"] != (failing > 0):
                problems.append("'failed' disagrees with the statuses")
            c = doc["counts"]
            line = (f"{db.rsplit('/', 1)[-1]} --fail-on {fail_on}: {len(findings)} findings, {c['fail']} fail, "
                    f"{c['warn']} warn, {c['not-run']} not-run, {c['info']} info, {c['pass']} pass; exit {j.returncode}")
            if problems:
                bad += 1
                print(f"FAIL {line}: {'; '.join(problems)}")
            else:
                print(f"ok   {line}")
    print(f"check junit: {len(dbs) * 2 - bad} of {len(dbs) * 2} runs agree with the JSON")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
