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
3. Outcome classes (issue 31): the same runs and ft3 (a harness run report with every class)
   and ft3-counts (counts only): each instance's class from the files, the graded and
   attempted denominators (eval_runs_v3), the populations of the real run
   (eval_run_populations_v1), and every pair on the instances both graded with exact McNemar
   p from scipy's binomial test and Holm-adjusted p from statsmodels (eval_pairs_v2).
4. Repo-clustered intervals: every run's resolve rate and every pair's difference, with the
   cluster-robust standard error from statsmodels' OLS (cov_type 'cluster'), on the real run
   (500 instances) and the outcome-class runs (eval_runs_clustered_v1, eval_pair_clustered_v1).
Nothing here reuses sphragis code: the file shapes are read with json and a few lines of
YAML reading for the batch files' one shape.
"""
import glob
import json
import math
import os
import sys

import re

import duckdb
import numpy as np
from statsmodels.regression.linear_model import OLS
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

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

# ---- 3. outcome classes, denominators, populations, pairs (eval_*_v2 / v3) --------------
HARNESS_ONLY = ("empty_patch_ids", "infra_failure_ids", "ambiguous_failure_ids", "empty_patch_instances")
LISTS = {"resolved_ids": "resolved", "unresolved_ids": "unresolved", "empty_patch_ids": "empty_patch",
         "error_ids": "error", "failed_ids": "error", "incomplete_ids": "not_run", "pending_ids": "not_run"}


def classes(run):
    """instance -> outcome class (None = no outcome), from the run's files alone."""
    folder = os.path.join(samples, run)
    named = {os.path.basename(p)[:-len(".traj.json")] for p in glob.glob(os.path.join(folder, "trajs", "*.traj.json"))}
    explicit, listed, every_prediction = {}, False, False
    for p in sorted(glob.glob(os.path.join(folder, "**", "*.json"), recursive=True)):
        name = os.path.basename(p)
        if p.endswith(".traj.json") or name == "results_summary.json" or name.endswith(".response.json"):
            continue
        doc = json.load(open(p))
        if "resolved_ids" in doc:
            listed, every_prediction = True, every_prediction or "submitted_instances" in doc
            got = {}
            for key, cls in LISTS.items():
                for iid in doc.get(key, []):
                    got[iid] = cls
            for iid in doc.get("infra_failure_ids", []):
                got[iid] = "infra_failure"
            for key in ("submitted_ids", "completed_ids"):
                for iid in doc.get(key, []):
                    got.setdefault(iid, "not_run")
            for iid, cls in got.items():
                explicit.setdefault(iid, []).append((2, cls))
        elif isinstance(doc.get("resolved"), list):
            listed = True
            for iid in doc["resolved"]:
                explicit.setdefault(iid, []).append((2, "resolved"))
        elif "resolved_instances" in doc:
            continue  # counts only
        else:
            if isinstance(doc.get("resolved"), bool):
                iid, inner = os.path.basename(os.path.dirname(p)), doc
            else:
                (iid, inner), = doc.items()
            cls = ("infra_failure" if inner.get("infra_failure") else "empty_patch" if inner.get("patch_is_None")
                   else "resolved" if inner["resolved"] else "unresolved")
            explicit.setdefault(iid, []).append((1, cls))
    out = {}
    for iid in named | set(explicit):
        if iid in explicit:
            out[iid] = min(explicit[iid])[1]  # per-instance (1) before run-level (2); then file order
        else:
            out[iid] = ("not_run" if every_prediction else "unresolved") if listed else None
    return out


GRADED = ("resolved", "unresolved", "empty_patch")
db3 = os.path.join(work, "acceptance-runs-classes.duckdb")
acc3 = Acceptance("runs acceptance (outcome classes)", binary, db3)
specs3 = specs + [("ft3", "ft-c", []), ("ft3-counts", "ft-c", [])]
for name, model, extra in specs3:
    acc3.sph("load", "run", name, os.path.join(samples, name), "--model", model, "--harness", "mini-swe-agent 1.15.0",
             "--runaway-turns", "3", *extra)
cls = {name: classes(name) for name, _, _ in specs3}
con = duckdb.connect(db3, read_only=True)
print("-- outcome classes, from the files vs eval_instances_v2 / eval_runs_v3 (stock DuckDB client)")
for name, o in cls.items():
    got = dict(con.execute("select instance_id, outcome from eval_instances_v2 where run = ?", [name]).fetchall())
    acc3.check(f"{name}: the class of every instance", got, o)
    graded = [c for c in o.values() if c in GRADED]
    attempted = [c for c in o.values() if c in GRADED + ("error", "infra_failure")]
    k = sum(1 for c in o.values() if c == "resolved")
    row = con.execute("select graded, resolved, attempted, infra_failures, not_run, wilson_low, wilson_high "
                      "from eval_runs_v3 where run = ?", [name]).fetchone()
    want_bounds = wilson(k, len(graded)) if graded else (None, None)
    acc3.check(f"{name}: graded, resolved, attempted, infra failures, not run, Wilson bounds",
               (row[0], row[1], row[2], row[3], row[4],
                row[5] is None if not graded else close(row[5], want_bounds[0]),
                row[6] is None if not graded else close(row[6], want_bounds[1])),
               (len(graded), k, len(attempted), sum(1 for c in o.values() if c == "infra_failure"),
                sum(1 for c in o.values() if c == "not_run"), True, True))
counts = json.load(open(os.path.join(samples, "ft3-counts", "swe-bench_lite__dev__ft3-counts.json")))
acc3.check("ft3-counts: the count-only report's figures, nothing per instance",
           con.execute("select run_status, reported_total, reported_resolved, instances from eval_runs_v3 "
                       "where run = 'ft3-counts'").fetchone(),
           ("counts_only", counts["total_instances"], counts["resolved_instances"], 0))
# pairs: on the instances both graded; exact McNemar (scipy), Holm across the pairs (statsmodels)
names = sorted(cls)
pairs, pvals = [], []
for a, b in [(a, b) for a in names for b in names if a < b]:
    ids = set(cls[a]) | set(cls[b])
    shared = [i for i in ids if cls[a].get(i) in GRADED and cls[b].get(i) in GRADED]
    only_a = sum(1 for i in shared if cls[a][i] == "resolved" and cls[b][i] != "resolved")
    only_b = sum(1 for i in shared if cls[b][i] == "resolved" and cls[a][i] != "resolved")
    a_only = sum(1 for i in ids if cls[a].get(i) in GRADED and cls[b].get(i) not in GRADED)
    p = binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
    pairs.append((a, b, len(shared), only_a, only_b, a_only, min(1.0, p)))
compared = [x for x in pairs if x[2] > 0]
holm = dict(zip([(x[0], x[1]) for x in compared], multipletests([x[6] for x in compared], method="holm")[1]))
for a, b, shared, only_a, only_b, a_only, p in pairs:
    got = con.execute("select shared, only_a, only_b, graded_in_a_only, mcnemar_p, holm_p from eval_pairs_v2 "
                      "where run_a = ? and run_b = ?", [a, b]).fetchone()
    want_holm = holm.get((a, b))
    acc3.check(f"{a} vs {b}: shared graded, only A, only B, graded in A only, McNemar p (scipy), Holm p (statsmodels)",
               (got[0], got[1], got[2], got[3], close(got[4], p),
                got[5] is None if want_holm is None else close(got[5], want_holm)),
               (shared, only_a, only_b, a_only, True, True))
# the paired bootstrap (eval_pair_bootstrap_v1: 2000 resamples, seed 0), redrawn with the
# generator the macro documents, and the percentiles by linear interpolation


def fmix_pick(k, n):
    h = k * 2654435761 % 2**32
    h ^= h >> 16
    h = h * 0x85EBCA6B % 2**32
    h ^= h >> 13
    h = h * 0xC2B2AE35 % 2**32
    h ^= h >> 16
    return (h * n) >> 32


def percentile(values, p):
    v = sorted(values)
    h = (len(v) - 1) * p
    lo = int(math.floor(h))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


for a, b, shared, only_a, only_b, a_only, p in pairs:
    if shared == 0:
        continue
    ids = sorted(i for i in set(cls[a]) | set(cls[b]) if cls[a].get(i) in GRADED and cls[b].get(i) in GRADED)
    d = [(cls[a][i] == "resolved") - (cls[b][i] == "resolved") for i in ids]
    n = len(d)
    means = [sum(d[fmix_pick(0 + r * n + t, n)] for t in range(n)) / n for r in range(2000)]
    got = con.execute("select difference, ci_low, ci_high from eval_pair_bootstrap_v1 where run_a = ? and run_b = ?",
                      [a, b]).fetchone()
    acc3.check(f"{a} vs {b}: paired bootstrap difference and 95% interval (redrawn here)",
               (close(got[0], sum(d) / n), close(got[1], percentile(means, 0.025)), close(got[2], percentile(means, 0.975))),
               (True, True, True))
con.close()
# the real run: the run report's population (500) is not the trajectories' (43)
con = duckdb.connect(db, read_only=True)
print("-- real run, populations (eval_run_populations_v1)")
got = {r[0]: r[1:] for r in con.execute("select population, instances, graded, resolved from eval_run_populations_v1").fetchall()}
traj_resolved = sum(1 for iid, r in per_instance.items() if iid in resolved_ids)
acc.check("run report population: 500 instances, 371 resolved", got["run_report"], (500, 500, 371))
acc.check("trajectories population: 43 instances, resolved from the run report", got["trajectories"],
          (len(per_instance), len(per_instance), traj_resolved))
acc.check("eval_runs_v3: complete, graded 500", con.execute("select run_status, graded, resolved from eval_runs_v3").fetchone(),
          ("complete", 500, 371))
con.close()

# ---- 4. repo-clustered intervals (eval_runs_clustered_v1, eval_pair_clustered_v1) ------------
# statsmodels' OLS of the outcome (or the paired difference) on a constant with the
# repository as cluster (cov_type 'cluster', its default small-sample correction); the
# repository from the SWE-bench id written here ("<owner>__<repo>-<number>").


def repo_of(instance_id):
    m = re.match(r"^(.+)-\d+(?:_[^-]*)?$", instance_id)
    return m.group(1) if m else instance_id


def clustered_se(values, groups):
    codes = {g: i for i, g in enumerate(sorted(set(groups)))}
    if len(codes) < 2:
        return None
    fit = OLS(np.array(values, dtype=float), np.ones(len(values))).fit(
        cov_type="cluster", cov_kwds={"groups": np.array([codes[g] for g in groups])})
    return float(fit.bse[0])


for label, path, check in [("real run", db, acc), ("outcome classes", db3, acc3)]:
    con = duckdb.connect(path, read_only=True)
    print(f"-- {label}: repo-clustered intervals against statsmodels")
    graded = con.execute("select run, instance_id, resolved from eval_instances_v2 where graded order by run, instance_id").fetchall()
    for run in sorted({r[0] for r in graded}):
        ids = [(i, r) for (x, i, r) in graded if x == run]
        y = [1.0 if r else 0.0 for _, r in ids]
        repos = [repo_of(i) for i, _ in ids]
        se = clustered_se(y, repos)
        p = sum(y) / len(y)
        got = con.execute("select graded, repos, resolve_rate, se_clustered, ci_low, ci_high from eval_runs_clustered_v1 "
                          "where run = ?", [run]).fetchone()
        want_low = None if se is None else max(0.0, p - Z * se)
        want_high = None if se is None else min(1.0, p + Z * se)
        check.check(f"{run}: graded, repositories, rate, clustered SE and 95% interval (statsmodels)",
                    (got[0], got[1], close(got[2], p),
                     got[3] is None if se is None else close(got[3], se),
                     got[4] is None if se is None else close(got[4], want_low),
                     got[5] is None if se is None else close(got[5], want_high)),
                    (len(y), len(set(repos)), True, True, True, True))
    pairs = con.execute("select run_a, run_b, instance_id, a_resolved, b_resolved from eval_pair_instances_v2 "
                        "where shared order by 1, 2, 3").fetchall()
    for a, b in sorted({(r[0], r[1]) for r in pairs}):
        rows = [r for r in pairs if (r[0], r[1]) == (a, b)]
        d = [float(r[3]) - float(r[4]) for r in rows]
        repos = [repo_of(r[2]) for r in rows]
        se = clustered_se(d, repos)
        got = con.execute("select shared, repos, difference, se_clustered from eval_pair_clustered_v1 "
                          "where run_a = ? and run_b = ?", [a, b]).fetchone()
        check.check(f"{a} vs {b}: shared, repositories, difference, clustered SE (statsmodels)",
                    (got[0], got[1], close(got[2], sum(d) / len(d)), got[3] is None if se is None else close(got[3], se)),
                    (len(d), len(set(repos)), True, True))
    con.close()
con = duckdb.connect(db, read_only=True)
n_repos, deff = con.execute("select repos, design_effect from eval_runs_clustered_v1").fetchone()
print(f"   the real run: {n_repos} repositories, design effect {deff:.3f}")
con.close()

acc.passed += acc2.passed + acc3.passed
acc.failures += acc2.failures + acc3.failures
acc.close()
