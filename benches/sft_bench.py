"""SFT-views benchmark: sphragis against its peers, on the same bytes, in one run.

What it measures, on the synthetic seed-sized SFT pool file written by
../shared/bench/gen_sft_pools.py (1,735 views of 949 instances, ~36M token positions,
~371 MB; pools A, C1, C2 = repair, B = recovery, C3 = report-only; generated into the scratch
dir, not timed):

  (a) sphragis init, then sphragis load views FILE -> a new DuckDB file (the init: migrations and
                                                      views, a fixed cost timed on its own), then
                                                      the load into it (sft_views with list
                                                      columns + sft_view_runs, the supervised runs);
                                                      ratios are given for the load alone and for
                                                      init + load (what a first load into a new
                                                      file costs)
  (b) sphragis sql "<query>" --format json, one child per query, on the database from (a):
        startup              `select 1` (process start + open the database: the fixed cost)
        counts               views, positions (sum n_mask), exposure (from the runs)
        union, positions     exposure + union_unique over A/C1/C2, position-level: unnest of the
                             mask list, distinct (instance_id, position) - the peer's own query
        union, runs expand   the same two figures from sft_view_runs: unnest(range(start, end))
        union, runs interval the same from sft_view_runs, interval union per instance with
                             window functions (running max of previous ends -> merged groups);
                             runs are deduplicated first: with tied (s, e) rows the two windows
                             could order them differently and merge across a gap
        recovery region      pool B supervised positions met again in any view of the instance
                             (pairwise run overlaps)
        context              P50/P90/max context length, one length per instance (max n_ids),
                             quantile_cont = linear interpolation at (n-1)q
  (c) DuckDB's own read_json into list columns + its position-level union query
      (../shared/bench/duckdb_native_sft.py, Python duckdb 2.0.0, the bundled engine's version;
      it prints its own in-process load and query seconds, shown beside the wall time)
  (d) the pure-Python reference (../shared/bench/py_sft_reference.py; computes every figure,
      builds no database)
  (e) the physical reference: simdjson (pysimdjson in the venv, installed when missing)
      parsing the same JSONL, nothing else (benches/simd_parse_peer.py)

Each step is a separate child process: wall seconds (perf_counter around the child) and the
child's peak RSS (ru_maxrss from os.wait4, MiB); loads also get positions/s and MB/s of the
input file (MB = 10^6 bytes). Every figure sphragis computes is checked against the Python
reference (integers exactly, percentiles to 1e-9 relative); a mismatch is printed as a PROBLEM
and the exit code is 1. One run per step, no repeats: compare the ratios of one run, not
absolute times across machines.

Run from the repo root (Python 3 stdlib; the DuckDB peer runs in the venv's python):

    python3 benches/sft_bench.py                     # deletes its files at the end
    python3 benches/sft_bench.py --keep --workdir /tmp/sb
    python3 benches/sft_bench.py --scale 1 4         # the file x1, then x4 (memory must stay flat)
    options: --shared DIR (default ../shared), --bin PATH (default
    $CARGO_TARGET_DIR or ~/.cache/sphragis-target, + /release/sphragis),
    --venv-python PATH (default ~/.cache/sphragis-venv/bin/python), --workdir DIR, --keep,
    --scale N [N ...] (default 1: the file N times, copy r's instance ids prefixed `r<r>-`, so
    every view is distinct; every step runs once per scale, a summary of loads per scale at the end)
"""
import json, math, os, re, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import header, parser, run, simd_peer  # noqa: E402

REPAIR = "('A', 'C1', 'C2')"
CHECK_LABEL = "sphragis check --only sft"
# the report views the SFT checks read (sql/checks/check_sft_*.sql)
CHECK_VIEWS = ["sft_contract_summary_v1", "sft_assistant_supervision_v1", "sft_segment_deviations_v2",
               "sft_segment_patterns_v2", "sft_dedup_v1", "sft_recovery_concentration_v1",
               "sft_truncation_views_v1"]

# (label, figures it yields, SQL). Every query runs in its own `sphragis sql` child.
QUERIES = [
    ("startup (select 1)", [], "select 1 as one"),
    ("counts", ["views", "positions", "exposure"],
     "select count(*) as views, sum(n_mask) as positions, "
     "(select sum(run_end - run_start) from sft_view_runs) as exposure from sft_views"),
    ("union, positions (peer's query)", ["exposure", "union_unique"],
     "with pos as (select view_id, pool, instance_id, generate_subscripts(loss_mask, 1) as p, "
     "unnest(loss_mask) as m from sft_views), sup as (select * from pos where m = 1) "
     "select (select count(*) from sup) as exposure, "
     f"(select count(*) from (select distinct instance_id, p from sup where pool in {REPAIR})) as union_unique"),
    ("union, runs expand", ["exposure", "union_unique"],
     "with r as (select v.instance_id, v.pool, r.run_start, r.run_end from sft_view_runs as r "
     "join sft_views as v using (view_id)) "
     "select (select sum(run_end - run_start) from r) as exposure, "
     "(select count(*) from (select distinct instance_id, unnest(range(run_start, run_end)) as p "
     f"from r where pool in {REPAIR})) as union_unique"),
    ("union, runs interval", ["exposure", "union_unique"],
     "with r as (select v.instance_id, v.pool, r.run_start as s, r.run_end as e from sft_view_runs as r "
     "join sft_views as v using (view_id)), "
     f"d as (select distinct instance_id, s, e from r where pool in {REPAIR}), "  # (s, e) unique: a total order
     "m as (select instance_id, s, e, max(e) over (partition by instance_id order by s, e "
     "rows between unbounded preceding and 1 preceding) as prev_end from d), "
     "g as (select instance_id, s, e, sum(case when prev_end is null or s > prev_end then 1 else 0 end) "
     "over (partition by instance_id order by s, e rows unbounded preceding) as grp from m) "
     "select (select sum(e - s) from r) as exposure, "
     "(select sum(hi - lo) from (select instance_id, grp, min(s) as lo, max(e) as hi from g "
     "group by instance_id, grp)) as union_unique"),
    ("recovery region", ["recovery_region_exposure"],
     "select sum(least(b.run_end, o.run_end) - greatest(b.run_start, o.run_start)) "
     "as recovery_region_exposure from sft_view_runs as b "
     "join sft_views as bv on bv.view_id = b.view_id and bv.pool = 'B' "
     "join sft_views as ov on ov.instance_id = bv.instance_id "
     "join sft_view_runs as o on o.view_id = ov.view_id "
     "and o.run_start < b.run_end and o.run_end > b.run_start"),
    ("context P50/P90/max", ["p50", "p90", "max"],
     "select quantile_cont(n, 0.5) as p50, quantile_cont(n, 0.9) as p90, max(n) as max "
     "from (select instance_id, max(n_ids) as n from sft_views group by instance_id)"),
]
UNION_LABELS = [label for label, _, _ in QUERIES if label.startswith("union")]
FIGURES = ["views", "positions", "exposure", "union_unique", "recovery_region_exposure", "p50", "p90", "max"]
# every figure in one `sphragis sql` child: the counts, the interval union, the recovery
# region and the context quantiles of the queries above, as one statement
_by_label = {label: sql for label, _, sql in QUERIES}
ONE_PROCESS = "every figure, one query"
QUERIES.append((ONE_PROCESS, FIGURES,
                "select * from (" + _by_label["counts"] + ") as c, "
                "(select union_unique from (" + _by_label["union, runs interval"] + ")) as u, "
                "(" + _by_label["recovery region"] + ") as r, "
                "(" + _by_label["context P50/P90/max"] + ") as q"))


def number(x):
    """A figure as int or float (sphragis prints HUGEINT/BIGINT sums as JSON strings)."""
    if isinstance(x, str):
        return float(x) if re.search(r"[.eE]", x) else int(x)
    return x


def key_values(output):
    """The key=value pairs a peer prints."""
    return {k: number(v) for k, v in re.findall(r"(\w+)=(-?[\d.]+(?:e-?\d+)?)", output)}


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9)
    return a == b


def scaled(pools, scale):
    """Writes `pools` `scale` times over into a new file (copy r > 0 with its instance ids
    prefixed `r<r>-`) and returns its path; scale 1 is `pools` itself."""
    if scale == 1:
        return pools
    out = pools.replace(".jsonl", f"_x{scale}.jsonl")
    with open(out, "w") as f:
        for r in range(scale):
            with open(pools) as src:
                for line in src:
                    f.write(line if r == 0 else line.replace('"instance_id": "', f'"instance_id": "r{r}-', 1))
    return out


def bench(args, work, scale=1, summary=None):
    bench_dir = os.path.join(args.shared, "bench")
    t0 = time.perf_counter()
    if not os.path.exists(os.path.join(work, "sft_pools.jsonl")):
        subprocess.run([sys.executable, os.path.join(bench_dir, "gen_sft_pools.py")], cwd=work, check=True)
    pools = scaled(os.path.join(work, "sft_pools.jsonl"), scale)
    gen_seconds = time.perf_counter() - t0
    work = os.path.join(work, f"x{scale}")
    os.makedirs(work, exist_ok=True)
    mb = os.path.getsize(pools) / 1e6
    db = os.path.join(work, "sphragis_sft.duckdb")
    native_db = os.path.join(work, "native_sft.duckdb")
    problems = []
    rows = []  # (label, seconds, peak MiB, shown)
    timing = {}

    def step(label, cmd, log):
        s, rss, code, output = run(cmd, os.path.join(work, log), cwd=work)
        if code != 0:
            problems.append(f"{label}: exit {code}:\n    " + "\n    ".join(output.strip().splitlines()[-5:]))
            return None
        timing[label] = (s, rss)
        return output

    # (a) sphragis init (the new file: migrations and views, a fixed cost), then the load into it
    out = step("sphragis init (new file)", [args.bin, "--db", db, "--quiet", "init"], "init.log")
    rows.append(("sphragis init (new file)", out and " ".join(out.split())[:90]))
    out = step("sphragis load views", [args.bin, "--db", db, "--quiet", "load", "views", pools], "load.log")
    rows.append(("sphragis load views", out and " ".join(out.split())[:90]))
    # (b) sphragis queries
    sph = {}  # figure -> [(query label, value)]
    if out is not None:
        for i, (label, figures, sql) in enumerate(QUERIES):
            full = f"sphragis sql: {label}"
            out = step(full, [args.bin, "--db", db, "--quiet", "sql", sql, "--format", "json"], f"sql_{i}.log")
            if out is None:
                rows.append((full, None))
                continue
            try:
                result = json.loads(out)["rows"][0]
            except (ValueError, KeyError, IndexError) as e:
                problems.append(f"{full}: unreadable output ({e}): {out[:200]}")
                rows.append((full, None))
                continue
            values = {k: number(result[k]) for k in figures}
            for k, v in values.items():
                sph.setdefault(k, []).append((label, v))
            rows.append((full, " ".join(f"{k}={v}" for k, v in values.items())))
    else:
        problems.append("sphragis queries: skipped, the load failed")
    # (b2) sphragis check (issue 26) against the report views it reads, each run once
    if "sphragis load views" in timing:
        cmd = [args.bin, "--db", db, "--quiet", "check", "--no-record", "--only", "sft", "--format", "json"]
        secs, rss, code, out = run(cmd, os.path.join(work, "check.log"), cwd=work)
        if code in (0, 4):  # 4: a check failed, which is a verdict, not a failure of the step
            timing[CHECK_LABEL] = (secs, rss)
            out = f"exit {code}: " + out
        else:
            problems.append(f"{CHECK_LABEL}: exit {code}: {out.strip()[-300:]}")
            out = None
        rows.append((CHECK_LABEL, out and " ".join(out.split())[:60]))
        for view in CHECK_VIEWS:
            label = f"sphragis sql: {view} (once)"
            out = step(label, [args.bin, "--db", db, "--quiet", "sql", f"select * from {view}", "--format", "csv"],
                       f"view_{view}.log")
            rows.append((label, out and f"{max(0, len(out.splitlines()) - 1)} rows"))
    # (c) DuckDB peer
    label = "duckdb read_json + union (peer)"
    out = step(label, [args.venv_python, os.path.join(bench_dir, "duckdb_native_sft.py"), pools, native_db],
               "native.log")
    peer = key_values(out) if out is not None else {}
    rows.append((label, out and out.strip().splitlines()[-1]))
    # (d) Python reference
    label = "python reference (no db)"
    out = step(label, [sys.executable, os.path.join(bench_dir, "py_sft_reference.py"), pools], "reference.log")
    ref = key_values(out) if out is not None else {}
    rows.append((label, out and out.strip().splitlines()[-1]))
    # (e) the physical reference: a SIMD JSON parser on the same bytes, parse only
    label = "simdjson parse only (physical)"
    out = step(label, [*simd_peer(args), pools], "simd.log")
    simd = key_values(out) if out is not None else {}
    rows.append((label, out and out.strip().splitlines()[-1]))

    positions = ref.get("positions") or (sph.get("positions") or [(None, 0)])[0][1]
    print(f"\nSFT pools x{scale}: {mb:,.1f} MB JSONL, {positions:,} token positions "
          f"(generated in {gen_seconds:.1f} s, not timed)")
    print(f"  {'step':<48}{'seconds':>8}{'peak MiB':>10}  output")
    for label, shown in rows:
        if label in timing:
            s, rss = timing[label]
            print(f"  {label:<48}{s:>8.2f}{rss:>10,.0f}  {shown}")
        else:
            print(f"  {label:<48}{'failed':>8}")
    for name, path in (("sphragis", db), ("duckdb peer", native_db)):
        if os.path.exists(path):
            print(f"  database size, {name}: {os.path.getsize(path) / 1e6:,.1f} MB")

    print("\n  loads (positions/s and MB/s of the input file):")
    print(f"    {'':<44}{'seconds':>8}{'Mpos/s':>9}{'MB/s':>8}")
    loads = []
    if "sphragis load views" in timing:
        loads.append(("sphragis load views (wall)", timing["sphragis load views"][0]))
    if "load_seconds" in peer:
        loads.append(("duckdb read_json (peer's own load_seconds)", peer["load_seconds"]))
    if "parse_seconds" in simd:
        loads.append(("simdjson parse only (own parse_seconds)", simd["parse_seconds"]))
    for label, s in loads:
        print(f"    {label:<44}{s:>8.2f}{positions / s / 1e6:>9.2f}{mb / s:>8.1f}")

    print("\n  figures (python reference = the truth):")
    print(f"    {'figure':<26}{'python ref':>20}{'duckdb peer':>14}  sphragis (query)")
    for fig in FIGURES:
        truth = ref.get(fig)
        mine = sph.get(fig, [])
        marks = []
        for q, v in mine:
            ok = truth is not None and same(v, truth)
            marks.append(f"{v} ({q}){'' if ok else '  MISMATCH'}")
            if not ok:
                problems.append(f"figure {fig}: sphragis '{q}' gives {v}, python reference {truth}")
        if not mine:
            problems.append(f"figure {fig}: no sphragis value")
        if fig in peer and truth is not None and not same(peer[fig], truth):
            problems.append(f"figure {fig}: duckdb peer gives {peer[fig]}, python reference {truth}")
        print(f"    {fig:<26}{str(truth):>20}{str(peer.get(fig, '-')):>14}  " + ("; ".join(marks) or "-"))

    load = timing.get("sphragis load views")
    init = timing.get("sphragis init (new file)", (0.0, 0))[0]
    startup = timing.get("sphragis sql: startup (select 1)", (0.0, 0))[0]
    print("\n  ratios, peer seconds / sphragis seconds (>1 = sphragis faster):")
    if load and "load_seconds" in peer:
        print(f"    {'duckdb read_json (own load_seconds) / sphragis load (wall)':<76}"
              f"{peer['load_seconds'] / load[0]:>6.2f}")
        print(f"    {'duckdb read_json (own load_seconds) / sphragis init + load (wall)':<76}"
              f"{peer['load_seconds'] / (init + load[0]):>6.2f}")
    if load and "duckdb read_json + union (peer)" in timing:
        print(f"    {'duckdb peer process (wall, load + union) / sphragis load + fastest union':<76}", end="")
        unions = [timing[f"sphragis sql: {u}"][0] for u in UNION_LABELS if f"sphragis sql: {u}" in timing]
        print(f"{timing['duckdb read_json + union (peer)'][0] / (load[0] + min(unions)):>6.2f}" if unions else "     -")
    if "query_seconds" in peer:
        print(f"    union query: peer's own query_seconds {peer['query_seconds']:.2f} / sphragis sql wall "
              f"(and net of the {startup:.2f} s startup):")
        for u in UNION_LABELS:
            t = timing.get(f"sphragis sql: {u}")
            if t:
                net = t[0] - startup
                net_ratio = f"{peer['query_seconds'] / net:>6.2f}" if net > 0 else "     -"
                print(f"      {u:<70}{peer['query_seconds'] / t[0]:>6.2f}  (net {net_ratio.strip()})")
    if load and "python reference (no db)" in timing:
        # each figure once: counts, the fastest union formulation, recovery region, context
        fastest = min((timing[f"sphragis sql: {u}"][0] for u in UNION_LABELS if f"sphragis sql: {u}" in timing),
                      default=0.0)
        each = sum(timing.get(f"sphragis sql: {q}", (0.0,))[0]
                   for q in ("counts", "recovery region", "context P50/P90/max"))
        total = init + load[0] + each + fastest
        print(f"    {'python reference (wall) / sphragis init + load + each figure query, one process each':<76}"
              f"{timing['python reference (no db)'][0] / total:>6.2f}")
        one = timing.get(f"sphragis sql: {ONE_PROCESS}")
        if one:
            print(f"    {'python reference (wall) / sphragis init + load + every figure in one query':<76}"
                  f"{timing['python reference (no db)'][0] / (init + load[0] + one[0]):>6.2f}")
    unions = [(timing[f"sphragis sql: {u}"][0], u) for u in UNION_LABELS if f"sphragis sql: {u}" in timing]
    if unions:
        print(f"  fastest union formulation: {min(unions)[1]} ({min(unions)[0]:.2f} s wall)")
    views_total = sum(timing[f"sphragis sql: {v} (once)"][0] for v in CHECK_VIEWS
                      if f"sphragis sql: {v} (once)" in timing)
    check_time = timing.get(CHECK_LABEL)
    if check_time and views_total > 0:
        print(f"    {'sphragis check --only sft (wall) / the report views it reads, once each (wall sum)':<76}"
              f"{check_time[0] / views_total:>6.2f}  (goal <= 1.2)")
    for p in problems:
        print(f"  PROBLEM {p}")
    if summary is not None:
        native = timing.get("duckdb read_json + union (peer)")
        summary.append((scale, mb, load, init, peer.get("load_seconds"), native and native[1]))
    return not problems


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, nargs="+", default=[1],
                   help="run on the file N times over, once per N (default 1)")
    args = p.parse_args()
    args.shared = os.path.abspath(args.shared)
    args.bin = os.path.abspath(args.bin)
    header("sphragis SFT-views benchmark (benches/sft_bench.py)", args, [
        "one run per step; wall time includes process start (the peer's load_seconds /",
        "query_seconds are its own in-process timings); the peer loads loss_mask as",
        "UTINYINT[], sphragis as TINYINT[]; the python reference builds no database."])
    work = tempfile.mkdtemp(prefix="sft_bench.", dir=args.workdir)
    ok = False
    try:
        summary = []
        ok = all([bench(args, work, scale, summary) for scale in args.scale])
        print("\nloads per scale (peak MiB must stay flat as the file grows):")
        print("  (ratio: read_json s / sphragis load s; with init: / sphragis init + load s, a new file)")
        print(f"  {'scale':<7}{'MB':>9}{'sphragis s':>12}{'+ init s':>10}{'peak MiB':>10}{'read_json s':>13}"
              f"{'peer MiB':>10}{'ratio':>7}{'with init':>11}")
        for scale, mb, load, init, peer_s, peer_rss in summary:
            s, rss = load if load else (float("nan"), float("nan"))
            ratio = peer_s / s if load and peer_s else float("nan")
            ratio_init = peer_s / (s + init) if load and peer_s else float("nan")
            print(f"  x{scale:<6}{mb:>9,.1f}{s:>12.2f}{init:>10.2f}{rss:>10,.0f}{peer_s or float('nan'):>13.2f}"
                  f"{peer_rss or float('nan'):>10,.0f}{ratio:>7.2f}{ratio_init:>11.2f}")
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
