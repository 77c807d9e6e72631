"""Acceptance for splits, criteria, freeze and verify --reproduce on real data (issue 3).

Usage: python3 review_splits_acceptance.py SPHRAGIS_BINARY SHARED_DATA_DIR WORK_DIR

Loads Review4Repair's test_100.json (a copy in WORK_DIR) as one org whose hosts are the
projects, registers windows by written_on (train < 2018-07-01 <= dev < 2019-01-01 <= test,
sealed) and halves by host, refines v3, splits, freezes, and checks the criteria file
against figures computed here independently from the JSON (no sphragis code). Then
`verify --reproduce` must print `clean`; after one byte of the copy changes it must name
the file and exit 3. The sealed window must appear in no export, and opening it must need
--unseal and be logged.
"""
import csv
import glob
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Acceptance  # noqa: E402

binary, data, work = sys.argv[1], sys.argv[2], sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))
db = os.path.join(work, "acceptance-splits.duckdb")
run = Acceptance("splits acceptance", binary, db)
sph, check = run.sph, run.check
source = os.path.join(data, "review", "review4repair", "test_100.json")
copy = os.path.join(work, "test_100.json")
shutil.copyfile(source, copy)
orgs = os.path.join(work, "review4repair-orgs.json")
shutil.copyfile(os.path.join(here, "review4repair-orgs.json"), orgs)




# --- independent figures, straight from the JSON --------------------------------------
def normalize(text):
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(l for l in (" ".join(line.split()) for line in text.split("\n")) if l)


def target(text):
    # Review4Repair's deletion marker "<|del|>\n" is the empty target (issue 10)
    return "" if text.strip() == "<|del|>" else text


def hunk(snippet):
    body = snippet.split("<|startfocus|>", 1)[1].split("<|endfocus|>", 1)[0]
    return body[1:] if body.startswith("\n") else body


config = json.load(open(orgs))["orgs"]["review4repair"]
half_of = {p: h for h, projects in config["halves"].items() for p in projects}
rows = sorted(json.load(open(source)), key=lambda r: (r["written_on"], r["comment_id"]))
seen, kept = set(), []
for r in rows:  # no fences, Fix applied., bots or rebases in this data: only dedup removes
    key = (normalize(hunk(r["code_snippet"])), normalize(target(r["target"])))
    if key not in seen:
        seen.add(key)
        kept.append(r)


def window(r):
    day = r["written_on"][:10]
    return "train" if day < "2018-07-01" else "dev" if day < "2019-01-01" else "test"


splits = {}
for r in kept:
    splits[window(r)] = splits.get(window(r), 0) + 1
train = [r for r in kept if window(r) == "train"]
size = {h: sum(1 for r in train if half_of[r["project_name"].rstrip("_")] == h) for h in "ab"}
quoted = {h: sum(1 for r in train if half_of[r["project_name"].rstrip("_")] == h
                 and len(normalize(target(r["target"]))) >= 20
                 and normalize(target(r["target"])) in normalize(r["message"]))
          for h in "ab"}
sealed_ids = {r["comment_id"] for r in kept if window(r) == "test"}
print(f"-- independent: kept {len(kept)} of {len(rows)}, splits {splits}, train halves {size}, quoted {quoted}")

# --- sphragis -----------------------------------------------------------------------
sph("load", "orgs", orgs)
sph("load", "review4repair", "--org", "review4repair", copy)
sph("refine", "--version", "v3", "--rules", "all")
sph("split", "--version", "v3")
frozen = os.path.join(work, "frozen")
sph("freeze", "--version", "v3", "--out", frozen)
criteria = json.load(open(os.path.join(frozen, "split-criteria-review4repair.json")))
manifest = json.load(open(os.path.join(frozen, "manifest-review4repair-v3.json")))
print("-- split-criteria-review4repair.json:", json.dumps({k: criteria[k] for k in
      ("splits", "size_floor", "language_mix_ceiling", "matched_suffix")}))
check("frozen counts per split", criteria["splits"], splits)
check("half a training size", criteria["halves"]["a"]["train"], size["a"])
check("half b training size", criteria["halves"]["b"]["train"], size["b"])
check("size floor", criteria["size_floor"], min(size.values()))
check("target_in_comment half a (k of n)", criteria["halves"]["a"]["target_in_comment"], {"k": quoted["a"], "n": size["a"]})
check("target_in_comment half b (k of n)", criteria["halves"]["b"]["target_in_comment"], {"k": quoted["b"], "n": size["b"]})
# code_file_name carries no suffix in this dataset: one empty suffix, identical mixes
check("language-mix ceiling (one suffix in both halves)", criteria["language_mix_ceiling"], 0.0)
check("matched suffix", criteria["matched_suffix"], {"suffix": "", "rows_a": size["a"], "rows_b": size["b"]})
# ... both computed on no information, and the file says so (issue 10): code_file_name is an
# id with no suffix, and no comment opens a suggestion fence
no_suffix = all("." not in r["code_file_name"].rsplit("/", 1)[-1].lstrip(".") for r in train)
no_fence = not any("suggestion" in r["message"] and ("```" in r["message"] or "~~~" in r["message"]) for r in rows)
check("criteria flagged as computed on no information",
      criteria["no_information"], [f for f, on in (("suffix", no_suffix), ("suggested_edits", no_fence)) if on])
check(f"manifest lists exactly the {len(sealed_ids)} sealed window ids (ids only)", set(manifest["splits"]["test"]) == sealed_ids, True)
report = json.loads(sph("report", "criteria", "--version", "v3", "--format", "json").stdout)
check("report criteria shows the file's size floor", report["rows"][0]["size_floor"], criteria["size_floor"])

check("verify --reproduce on untouched inputs", sph("verify", "--reproduce", "--version", "v3").stdout.strip(), "clean")

# The sealed window: no export shows it, opening it needs --unseal and is logged.
exports = os.path.join(work, "exports")
sph("report", "all", "--format", "csv", "--out", exports)
leaked = [f for f in glob.glob(os.path.join(exports, "*.csv"))
          if any(i in open(f, encoding="utf-8").read() for i in sealed_ids)]
check("no export holds a sealed example id", leaked, [])
refused = sph("examples", "--version", "v3", "--org", "review4repair", "--split", "test", expect=1)
check("opening the sealed split without --unseal is refused", "--unseal" in refused.stderr, True)
opened = sph("examples", "--version", "v3", "--org", "review4repair", "--split", "test", "--unseal", "--format", "csv")
check("--unseal shows the sealed split", len(list(csv.reader(opened.stdout.splitlines()))) - 1, len(sealed_ids))
log = json.loads(sph("sql", "select count(*) as n from sph_log where command = 'unseal'", "--format", "json").stdout)
check("each unseal is logged", log["rows"][0]["n"], 1)

# One changed byte in the input copy: verify names the file and exits 3.
raw = bytearray(open(copy, "rb").read())
raw[raw.index(b"static")] = ord("S")
open(copy, "wb").write(raw)
tampered = sph("verify", "--reproduce", "--version", "v3", expect=3)
check("verify names the changed file", "test_100.json (file_id 2, review4repair): sha256 was" in tampered.stderr, True)

run.close()
