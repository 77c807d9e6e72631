"""Acceptance for evaluation runs side by side (issue 11, SPEC §3.5).

Usage: python3 runs_acceptance.py SPHRAGIS_BINARY SHARED_DATA_DIR WORK_DIR

1. The real run (sft/mini-swe-agent-gemini3pro): loads it whole with `load run`, then
   recomputes here, from the files themselves, the run-level resolved k/n (sb-cli report),
   its Wilson 95% bounds, how many of the 43 per-instance report.json agree with the run
   report, and what the four batch exit_statuses_*.yaml say (continued; the instances
   re-run after a RetryError), and compares with eval_runs_v2 read from a stock DuckDB client.
2. The hand-made runs in data-samples/runs: recomputes every run's k/n and Wilson bounds,
   every pair's table and exact McNemar p (math.comb), and pass@k (Chen et al. 2021) of the
   repeats, from the files, and compares with eval_runs_v2, eval_pairs_v1, eval_pass_at_k_v2.
Nothing here reuses sphragis code: the file shapes are read with json and a few lines of
YAML reading for the batch files' one shape.
"""
import glob
import json
import math
import os
import sys

import duckdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Acceptance  # noqa: E402

binary, data, work = sys.argv[1], sys.argv[2], sys.argv[3]
samples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data-samples", "runs")
Z = 1.959963984540054


def wilson(k, n):
    p = k / n
    centre, half = p + Z * Z / (2 * n), Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, (centre - half) / (1 + Z * Z / n)), min(1.0, (centre + half) / (1 + Z * Z / n))


def mcnemar(b, c):
    d = b + c
    return min(1.0, 2 * sum(math.comb(d, i) for i in range(min(b, c) + 1)) / 2 ** d)


def pass_at_k(n, c, k):
    return 1.0 if n - c < k else 1 - math.comb(n - c, k) / math.comb(n, k)


def close(a, b):
    return a is not None and abs(a - b) < 1e-12


def exit_statuses(path):
    """instances_by_exit_status: {Status: [ids]} as mini-swe-agent writes it."""
    out, status = [], None
    for line in open(path):
        text = line.strip()
        if not text or text == "instances_by_exit_status:":
            continue
        if text.startswith("- "):
            out.append((text[2:], status))
        elif text.endswith(":"):
            status = text[:-1]
    return out


def report_resolved(path):
    """A per-instance report.json: (instance, resolved), flat (folder names it) or keyed."""
    doc = json.load(open(path))
    if isinstance(doc.get("resolved"), bool):
        return os.path.basename(os.path.dirname(path)), doc["resolved"]
    (iid, inner), = doc.items()
    return iid, inner["resolved"]


# ---- 1. the real run ------------------------------------------------------------------
db = os.path.join(work, "acceptance-runs.duckdb")
acc = Acceptance("runs acceptance", binary, db)
mini = os.path.join(data, "sft", "mini-swe-agent-gemini3pro")
acc.sph("load", "run", "gemini3pro", mini, "--model", "gemini-3-pro-preview", "--harness", "mini-swe-agent 1.15.0")
sbcli = json.load(open(glob.glob(os.path.join(mini, "run", "sb-cli-reports", "*.json"))[0]))
k, n = len(sbcli["resolved_ids"]), len(sbcli["resolved_ids"]) + len(sbcli["unresolved_ids"]) + len(sbcli["error_ids"])
per_instance = dict(report_resolved(p) for p in glob.glob(os.path.join(mini, "logs", "*", "report.json")))
resolved_ids = set(sbcli["resolved_ids"])
agree = sum((iid in resolved_ids) == r for iid, r in per_instance.items())
batches = sorted(glob.glob(os.path.join(mini, "run", "exit_statuses_*.yaml")),
                 key=lambda p: float(os.path.basename(p)[len("exit_statuses_"):-len(".yaml")]))
history = {}
for b in batches:
    for iid, status in exit_statuses(b):
        history.setdefault(iid, []).append(status)
rerun = sorted(i for i, h in history.items() if "RetryError" in h[:-1])

con = duckdb.connect(db, read_only=True)
row = con.execute("select n, resolved, wilson_low, wilson_high, trajectories, outcomes_checked, outcomes_agree, "
                  "batches, continued, rerun_after_retry_error, rerun_instances from eval_runs_v2").fetchone()
print("-- real run, from the files vs eval_runs_v2 (stock DuckDB client)")
acc.check("resolved k/n from the sb-cli run report", (row[1], row[0]), (k, n))
acc.check("that is 371/500", (k, n), (371, 500))
lo, hi = wilson(k, n)
acc.check("Wilson 95% bounds", (close(row[2], lo), close(row[3], hi)), (True, True))
acc.check("trajectories", row[4], len(per_instance))
acc.check("per-instance reports checked against the run report", row[5], len(per_instance))
acc.check("of them agreeing", row[6], agree)
acc.check("all 43 agree", (agree, len(per_instance)), (43, 43))
acc.check("batch files; the run is continued", (row[7], row[8]), (len(batches), len(batches) > 1))
acc.check("re-run after a RetryError", (row[9], row[10].split(" ")), (len(rerun), rerun))
last = {i: h[-1] for i, h in history.items()}
got = dict(con.execute("select instance_id, last_exit_status from eval_instances_v1 where batches > 0").fetchall())
acc.check("last batch status of every instance in a batch file", got == last, True)
con.close()

# ---- 2. the hand-made runs ------------------------------------------------------------
db2 = os.path.join(work, "acceptance-runs-samples.duckdb")
acc2 = Acceptance("runs acceptance (samples)", binary, db2)
specs = [("base", "base-7b", []), ("ft1", "ft-a", []), ("ft2", "ft-b", []), ("ft2-repeat", "ft-b", []),
         ("ft2-resumed", "ft-b", ["--continues", "ft2"])]
for name, model, extra in specs:
    acc2.sph("load", "run", name, os.path.join(samples, name), "--model", model, "--harness", "mini-swe-agent 1.15.0",
             "--runaway-turns", "3", *extra)


def outcomes(run):
    """instance -> resolved (None = no outcome), from the run's files alone."""
    folder = os.path.join(samples, run)
    known = {os.path.basename(p)[:-len(".traj.json")] for p in glob.glob(os.path.join(folder, "trajs", "*.traj.json"))}
    explicit, listed = {}, False
    for p in glob.glob(os.path.join(folder, "**", "*.json"), recursive=True):
        if p.endswith(".traj.json"):
            continue
        doc = json.load(open(p))
        if "resolved_ids" in doc:
            listed = True
            for key in ("resolved_ids", "unresolved_ids", "error_ids"):
                for iid in doc.get(key, []):
                    explicit.setdefault(iid, []).append((2, key == "resolved_ids"))
        elif isinstance(doc.get("resolved"), list):
            listed = True
            for iid in doc["resolved"]:
                explicit.setdefault(iid, []).append((2, True))
        else:
            iid, r = report_resolved(p)
            explicit.setdefault(iid, []).append((1, r))
    out = {}
    for iid in known | set(explicit):
        if iid in explicit:
            out[iid] = min(explicit[iid])[1]  # a per-instance report (1) before a run-level list (2)
        else:
            out[iid] = False if listed else None
    return out


runs = {name: outcomes(name) for name, _, _ in specs}
con = duckdb.connect(db2, read_only=True)
print("-- hand-made runs, from the files vs the views (stock DuckDB client)")
for name, o in runs.items():
    k, n = sum(1 for r in o.values() if r), sum(1 for r in o.values() if r is not None)
    got = con.execute("select resolved, n, wilson_low, wilson_high from eval_runs_v2 where run = ?", [name]).fetchone()
    lo, hi = wilson(k, n)
    acc2.check(f"{name}: resolved k/n and Wilson bounds", (got[0], got[1], close(got[2], lo), close(got[3], hi)),
               (k, n, True, True))
for a, b in [(a, b) for a in sorted(runs) for b in sorted(runs) if a < b]:
    shared = [i for i in runs[a] if runs[a][i] is not None and runs[b].get(i) is not None]
    only_a = sum(1 for i in shared if runs[a][i] and not runs[b][i])
    only_b = sum(1 for i in shared if runs[b][i] and not runs[a][i])
    both = sum(1 for i in shared if runs[a][i] and runs[b][i])
    got = con.execute("select shared, both_resolved, only_a, only_b, mcnemar_p from eval_pairs_v1 where run_a = ? and run_b = ?",
                      [a, b]).fetchone()
    acc2.check(f"{a} vs {b}: shared, both, only A, only B, McNemar p",
               (got[0], got[1], got[2], got[3], close(got[4], mcnemar(only_a, only_b))),
               (len(shared), both, only_a, only_b, True))
# repeats: same model and harness, not continued (ft2-resumed declares --continues; ft1 has 2 batches)
repeat_runs = ["ft2", "ft2-repeat"]
shared = [i for i in runs["ft2"] if all(runs[r].get(i) is not None for r in repeat_runs)]
for k in (1, 2):
    want = sum(pass_at_k(2, sum(runs[r][i] for r in repeat_runs), k) for i in shared) / len(shared)
    got = con.execute("select pass_at_k from eval_pass_at_k_v2 where model = 'ft-b' and k = ?", [k]).fetchone()[0]
    acc2.check(f"pass@{k} over the ft-b repeats", close(got, want), True)
acc2.check("repeat groups (continued runs never repeats)",
           con.execute("select runs from eval_repeats_v2").fetchall(), [("ft2 ft2-repeat",)])
con.close()

acc.passed += acc2.passed
acc.failures += acc2.failures
acc.close()
