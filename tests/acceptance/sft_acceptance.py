"""Acceptance for SFT ingest on real agent trajectories (issue 4).

Usage: python3 sft_acceptance.py SPHRAGIS_BINARY SHARED_DATA_DIR WORK_DIR

Loads the 43 mini-swe-agent trajectories with their SWE-bench report.json outcomes and
the SWE-Gym/OpenHands rows, reads the trajectory statistics from the views and compares
them with the values checked independently (issue 4; the folder's index.tsv). Builds
views with the real Qwen3 tokenizer and compares the two reference instances with the
Hugging Face reference token for token (this script reads both JSONL files itself).
Builds, loads and contract-checks views of every mini-swe-agent trajectory, and opens
the database from a stock DuckDB client.
"""
import csv
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Acceptance  # noqa: E402

binary, data, work = sys.argv[1], sys.argv[2], sys.argv[3]
db = os.path.join(work, "acceptance-sft.duckdb")
run = Acceptance("sft acceptance", binary, db)
sph, check = run.sph, run.check
sft = os.path.join(data, "sft")
tokenizer = os.path.join(data, "tokenizers", "qwen3", "tokenizer.json")
# TRL's Qwen3 training template, kept as data beside the tokenizer (see its PROVENANCE.md);
# the tokenizer_config.json there holds the stock Qwen3 chat_template, which views build
# refuses (no {% generation %} block).
template = os.path.join(data, "tokenizers", "qwen3", "qwen3_training.jinja")




def rows(report):
    return json.loads(sph("report", report, "--format", "json").stdout)["rows"]


mini = os.path.join(sft, "mini-swe-agent-gemini3pro")
trajs = sorted(glob.glob(os.path.join(mini, "trajs", "*", "*.traj.json")))
reports = sorted(glob.glob(os.path.join(mini, "logs", "*", "report.json")))
sph("load", "trajectories", *trajs)
sph("load", "outcomes", *reports)
sph("load", "trajectories", os.path.join(sft, "swe-gym-openhands-trajectories", "sample_raw.json"))

stats = {r["source"]: r for r in rows("trajectories")}
m = stats["mini-swe-agent"]
print("-- from view sft_trajectory_stats_v1")
check("mini-swe-agent trajectories", m["trajectories"], 43)
check("resolved (report.json)", m["resolved"], 24)
check("messages", m["messages"], 3612)
check("assistant messages", m["assistant_messages"], 1763)
check("bash code blocks in assistant messages", m["bash_commands"], 1829)
check("git-history commands", m["git_history_commands"], 4)
check("instances with git-history commands", m["instances_with_git_history"], 3)
index = {r["instance_id"]: r for r in csv.DictReader(open(os.path.join(mini, "index.tsv")), delimiter="\t")}
per_instance = json.loads(sph("sql", "select instance_id, count(*) filter (where role = 'assistant') as a, count(*) as n "
                              "from sft_messages group by instance_id", "--format", "json").stdout)["rows"]
mismatch = [r["instance_id"] for r in per_instance if r["instance_id"] in index
            and (r["n"], r["a"]) != (int(index[r["instance_id"]]["messages"]), int(index[r["instance_id"]]["assistant_turns"]))]
check("messages and assistant turns per instance equal index.tsv (43 rows)", mismatch, [])

# The two reference views, rebuilt by sphragis from the loaded trajectories.
built = os.path.join(work, "reference-built.jsonl")
proc = sph("views", "build", "--tokenizer", tokenizer, "--pool", "REF", "--instance", "pytest-dev__pytest-7432",
           "--out", os.path.join(work, "stock.jsonl"), expect=1)
check("views build refuses the stock Qwen3 chat_template of tokenizer_config.json (no generation block)",
      "marks no assistant output" in proc.stderr and not os.path.exists(os.path.join(work, "stock.jsonl")), True)
stock = os.path.join(work, "stock-qwen3.jinja")
with open(stock, "w") as f:
    f.write(json.load(open(os.path.join(data, "tokenizers", "qwen3", "tokenizer_config.json")))["chat_template"]
            .replace("{{- '<|im_start|>' + message.role + '\\n' + content }}",
                     "{% generation %}{{- '<|im_start|>' + message.role + '\\n' + content }}{% endgeneration %}"))
proc = sph("views", "build", "--tokenizer", tokenizer, "--template", stock, "--pool", "REF", "--instance",
           "pytest-dev__pytest-7432", "--out", os.path.join(work, "stock.jsonl"), expect=1)
check("views build refuses the stock Qwen3 logic with generation marks added (not prefix-preserving)",
      "not prefix-preserving" in proc.stderr and not os.path.exists(os.path.join(work, "stock.jsonl")), True)
sph("views", "build", "--tokenizer", tokenizer, "--template", template, "--pool", "REF", "--instance", "python__mypy-15976_0",
    "--instance", "pytest-dev__pytest-7432", "--out", built)
reference = {v["instance_id"]: v for v in map(json.loads, open(os.path.join(sft, "reference-views-qwen3", "views.jsonl")))}
for v in map(json.loads, open(built)):
    r = reference[v["instance_id"]]
    check(f"{v['instance_id']}: input_ids equal the reference ({len(r['input_ids'])} tokens)", v["input_ids"] == r["input_ids"], True)
    check(f"{v['instance_id']}: loss mask equals the reference ({sum(r['assistant_masks'])} supervised)",
          v["loss_mask"] == r["assistant_masks"], True)
    check(f"{v['instance_id']}: the {len(r['message_spans'])} message spans equal the reference",
          [(s["index"], s["start"], s["end"]) for s in v["message_spans"]]
          == [(s["index"], s["start"], s["end"]) for s in r["message_spans"]], True)

# Every mini-swe-agent trajectory as a view of pool A: all contract checks pass.
pool = os.path.join(work, "pool-a.jsonl")
sph("views", "build", "--tokenizer", tokenizer, "--template", template, "--pool", "A", *sum((["--instance", os.path.basename(os.path.dirname(t))] for t in trajs), []), "--out", pool)
sph("load", "views", pool, "--tokenizer", tokenizer)
summary = [r for r in rows("contract") if r["pool"] == "A"]
checks = ["lengths", "vocab", "mask_values", "spans", "supervised_in_kept_assistant",
          "keep_msgs_assistant", "ledger", "declared_sha256", "same_tokens",
          "trains_nothing", "kept_message_trains_nothing"]
check("all 11 contract checks pass on the 43 built views",
      sorted((r["check_name"], r["passed"], r["failed"], r["not_checked"]) for r in summary) == sorted((c, 43, 0, 0) for c in checks), True)
supervision = json.loads(sph("sql", "select finding, count(*) as messages, count(distinct view_id) as views "
                              "from sft_assistant_supervision_v1 where pool = 'A' group by all order by all",
                              "--format", "json").stdout)["rows"]
print(f"-- assistant messages of the 43 built views by supervision finding: {supervision}")
check("no assistant message of the 43 built views is untrained or supervised on its header only",
      sorted(r["finding"] for r in supervision), ["trained"])
# Segment-level mask audit (issue 9): one pattern for every view of pool A; the header
# and end-of-turn token counts follow from the 1,763 assistant turns (index.tsv): 3 and 2
# tokens each in Qwen3 (`<|im_start|>assistant\n`, `<|im_end|>\n`).
patterns = {(r["role"], r["segment"]): r for r in rows("segments") if r["pool"] == "A"}
check("segments of pool A: majority pattern per role and segment, all 43 views agreeing",
      sorted((role, seg, r["majority_pattern"], r["views"], r["deviating_views"]) for (role, seg), r in patterns.items()),
      sorted([("assistant", "end_of_turn", "always", 43, 0), ("assistant", "header", "never", 43, 0),
              ("assistant", "text", "always", 43, 0), ("assistant", "thinking", "always", 43, 0)]
             + [(role, seg, "never", 43, 0) for role in ("system", "user") for seg in ("content", "end_of_turn", "header")]))
check("segments of pool A: assistant header tokens = 3 x 1,763 turns, none supervised",
      (patterns[("assistant", "header")]["tokens"], patterns[("assistant", "header")]["supervised"]), (5289, 0))
check("segments of pool A: end-of-turn tokens = 2 x 1,763 turns, all supervised",
      (patterns[("assistant", "end_of_turn")]["tokens"], patterns[("assistant", "end_of_turn")]["supervised"]), (3526, 3526))
check("segments of pool A: no view deviates", [r for r in rows("segment-deviations") if r["pool"] == "A"], [])
instances = [r for r in rows("instances") if r["source"] == "mini-swe-agent"]
check("per-instance table rows (mini-swe-agent)", len(instances), 43)
check("per-instance resolved", sum(1 for r in instances if r["resolved"]), 24)
check("every mini-swe-agent instance has its view in pool A", sorted({tuple(r["pools"]) for r in instances}), [("A",)])

# Pool audit figures on the seed-sized synthetic pools (../shared/bench/gen_sft_pools.py),
# checked against the pure-Python reference reading the same JSONL (no sphragis code).
import re  # noqa: E402
import subprocess  # noqa: E402

bench = os.path.join(os.path.dirname(data), "bench")
subprocess.run([sys.executable, os.path.join(bench, "gen_sft_pools.py")], cwd=work, check=True)
synthetic = os.path.join(work, "sft_pools.jsonl")
pools = os.path.join(work, "pools.json")
with open(pools, "w") as f:
    json.dump({"pools": {"A": {"role": "repair"}, "C1": {"role": "repair", "label_subset": True},
                         "C2": {"role": "repair", "label_subset": True}, "B": {"role": "recovery"},
                         "C3": {"role": "report"}}}, f)
pools_db = Acceptance("pools", binary, os.path.join(work, "acceptance-pools.duckdb"))
pools_db.sph("load", "views", synthetic)
pools_db.sph("load", "pools", pools)
out = subprocess.run([sys.executable, os.path.join(bench, "py_sft_reference.py"), synthetic],
                     capture_output=True, text=True, check=True).stdout
ref = {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", out)}
q = lambda sql: json.loads(pools_db.sph("sql", sql, "--format", "json").stdout)["rows"][0]
got = q("select (select count(*) from sft_views) as views, (select sum(n_ids) from sft_views) as positions, "
        "(select sum(run_end - run_start) from sft_view_runs) as exposure, "
        "(select sum(run_end - run_start) from sft_union_runs_v1) as union_unique, "
        "(select region_exposure from sft_recovery_exposure_v1 where mode = 'none') as recovery_region_exposure, "
        "(select p50 from sft_context_lengths_v1) as p50, (select p90 from sft_context_lengths_v1) as p90, "
        "(select max from sft_context_lengths_v1) as max")
for key in ("views", "positions", "exposure", "union_unique", "recovery_region_exposure", "p50", "p90", "max"):
    check(f"synthetic pools: {key} equals the independent Python checker", abs(float(got[key]) - ref[key]) < 1e-6, True)
os.remove(synthetic)

# Real pools from the 43 built views, by rules written here (issue 5):
#   A  = views of resolved trajectories (all assistant turns);
#   C1 = exact copies of A's views whose first write comes within the first 6 assistant turns;
#   C2 = A's instances where a test passes after the last write, the mask cut after the
#        last passing test run (a subset mask);
#   B  = recovery windows: from the first failing test observation to the next passing
#        run, loss 0 outside the window;
#   C3 = the final report of unresolved trajectories only.
# The heuristic readings come from sft_test_runs_heuristic_v1; the independent checker is
# ../shared/bench/py_sft_reference.py reading the pool file.
runs = {r["instance_id"]: r for r in json.loads(sph("sql", "select * from sft_test_runs_heuristic_v1", "--format", "json").stdout)["rows"]}
resolved = {r["instance_id"] for r in json.loads(sph("sql", "select instance_id from sft_outcomes where resolved", "--format", "json").stdout)["rows"]}
base = [json.loads(line) for line in open(pool)]


def keep_messages(view, keep):
    # zero the mask outside the spans of the kept messages
    mask = [0] * len(view["loss_mask"])
    for s in view["message_spans"]:
        if keep(s["index"]):
            mask[s["start"]:s["end"]] = view["loss_mask"][s["start"]:s["end"]]
    return mask


pooled = []
for v in base:
    inst, r = v["instance_id"], runs[v["instance_id"]]
    def add(name, mask):
        if any(mask):
            pooled.append(dict(v, view_id=f"{name}:{inst}", pool=name, loss_mask=mask,
                               ledger={"n_tokens": len(mask), "n_supervised": sum(mask)}, keep_msgs=None))
    if inst in resolved:
        add("A", v["loss_mask"])
        if r["first_write_turn"] is not None and r["first_write_turn"] <= 6:
            add("C1", v["loss_mask"])
        if r["pass_after_last_write"]:
            add("C2", keep_messages(v, lambda i: i < r["last_pass_index"]))
        if r["recovery_pass_index"] is not None:
            add("B", keep_messages(v, lambda i: r["first_fail_index"] < i < r["recovery_pass_index"]))
    else:
        last = max(s["index"] for s in v["message_spans"] if s["role"] == "assistant")
        add("C3", keep_messages(v, lambda i: i == last))
pool_file = os.path.join(work, "real-pools.jsonl")
with open(pool_file, "w") as f:
    for v in pooled:
        f.write(json.dumps(v) + "\n")
counts = {p: sum(1 for v in pooled if v["pool"] == p) for p in ("A", "C1", "C2", "B", "C3")}
print(f"-- real pools by the rules above: {counts}")
real = Acceptance("real pools", binary, os.path.join(work, "acceptance-real-pools.duckdb"))
real.sph("load", "views", pool_file, "--tokenizer", tokenizer)
real.sph("load", "pools", pools)
out = subprocess.run([sys.executable, os.path.join(bench, "py_sft_reference.py"), pool_file],
                     capture_output=True, text=True, check=True).stdout
ref = {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", out)}
got = json.loads(real.sph("sql", "select (select count(*) from sft_views) as views, "
        "(select sum(run_end - run_start) from sft_view_runs) as exposure, "
        "(select sum(run_end - run_start) from sft_union_runs_v1) as union_unique, "
        "(select region_exposure from sft_recovery_exposure_v1 where mode = 'none') as recovery_region_exposure, "
        "(select p50 from sft_context_lengths_v1) as p50, (select p90 from sft_context_lengths_v1) as p90, "
        "(select count(distinct instance_id) from sft_views) as instances", "--format", "json").stdout)["rows"][0]
check("real pools: views equal the independent checker", got["views"], int(ref["views"]))
check("real pools: unique instances", got["instances"], 43)
for key in ("exposure", "union_unique", "recovery_region_exposure", "p50", "p90"):
    check(f"real pools: {key} equals the independent checker ({ref[key]:g})", abs(float(got[key]) - ref[key]) < 1e-6, True)
findings = json.loads(real.sph("sql", "select pool, finding, count(*) as messages, count(distinct view_id) as views "
                               "from sft_assistant_supervision_v1 group by all order by all", "--format", "json").stdout)["rows"]
print(f"-- real pools, assistant messages by supervision finding: {findings}")
contract = json.loads(real.sph("report", "contract", "--format", "json").stdout)["rows"]
check("real pools: every view passes every contract check", sum(r["failed"] for r in contract), 0)

import duckdb  # noqa: E402  (installed by .ci/run into a venv)

con = duckdb.connect(db, read_only=True)
for name in ("sft_contract_summary_v1", "sft_trajectory_stats_v1", "sft_instances_v1"):
    n = con.execute(f"select count(*) from {name}").fetchone()[0]
    print(f"ok   stock duckdb {duckdb.__version__}: {name} answers ({n} rows)")
stock = con.execute("select git_history_commands from sft_trajectory_stats_v1 where source = 'mini-swe-agent'").fetchone()[0]
check("stock client reads the git-history count", stock, 4)
con.close()

run.close()
