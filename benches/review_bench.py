"""Review-ingest benchmark: sphragis against its peers, on the same bytes, in one run.

What it measures, for review4repair (test_100.json, 2,961 rows) replicated N times as JSONL
(x10 ~ 188 MB, x100 ~ 1.9 GB, written by ../shared/bench/gen_review_jsonl.py; not timed):

  (a) sphragis load review4repair FILE           -> a fresh DuckDB file
  (b) DuckDB's own read_json into a table         (../shared/bench/duckdb_native_review.py,
                                                   Python duckdb 2.0.0, the bundled engine's version)
  (c) the pure-Python reference of the rules      (../shared/bench/py_review_reference.py; it
                                                   computes strict fence + target_in_comment but
                                                   builds no database)
  (d) sphragis refine --version v3 --rules all, then report all --format csv --out DIR,
      timed together, on the database from (a)

Each is a separate child process: wall seconds (perf_counter around the child), MB/s and
rows/s of the input file (MB = 10^6 bytes, rows = 2961 * N), and the child's peak RSS
(ru_maxrss from os.wait4; for (d) the larger of the two children). One run per step, no
repeats: compare the ratios printed for the same run, not absolute times across machines.

Run from the repo root (Python 3 stdlib; the DuckDB peer runs in the venv's python):

    python3 benches/review_bench.py                  # sizes 10,100; deletes its files
    python3 benches/review_bench.py --sizes 10 --keep --workdir /tmp/rb
    options: --shared DIR (default ../shared), --bin PATH (default
    $CARGO_TARGET_DIR or ~/.cache/sphragis-target, + /release/sphragis),
    --venv-python PATH (default ~/.cache/sphragis-venv/bin/python)
"""
import os, re, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import header, parser, run  # noqa: E402

ROWS_PER_COPY = 2961


def note(output, pattern):
    """The part of a child's output worth showing (its row count / rule counts)."""
    m = re.search(pattern, output)
    wrote = len(re.findall(r"^wrote ", output, re.M))
    return m.group(0) if m else f"{wrote} files written" if wrote else " ".join(output.split())[-60:]


def bench_size(n, args, work):
    rows = ROWS_PER_COPY * n
    jsonl = os.path.join(work, f"review4repair_x{n}.jsonl")
    source = os.path.join(args.shared, "data/review/review4repair/test_100.json")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, os.path.join(args.shared, "bench/gen_review_jsonl.py"), source, str(n), jsonl],
                   check=True)
    gen_seconds = time.perf_counter() - t0
    mb = os.path.getsize(jsonl) / 1e6
    db = os.path.join(work, f"sphragis_x{n}.duckdb")
    bench = os.path.join(args.shared, "bench")
    steps = [  # (label, [commands], pattern of the output to show)
        ("sphragis load review4repair", [[args.bin, "--db", db, "--quiet", "load", "review4repair", jsonl]],
         r"\d+ rows"),
        ("duckdb read_json -> table", [[args.venv_python, os.path.join(bench, "duckdb_native_review.py"), jsonl,
                                        os.path.join(work, f"native_x{n}.duckdb")]], r"rows=\d+ seconds=[\d.]+"),
        ("python reference (no db)", [[sys.executable, os.path.join(bench, "py_review_reference.py"), jsonl]],
         r"examples=\d+ suggested_edit=\d+ target_in_comment=\d+ seconds=[\d.]+"),
        ("sphragis refine v3 + report all", [
            [args.bin, "--db", db, "--quiet", "refine", "--version", "v3", "--rules", "all"],
            [args.bin, "--db", db, "--quiet", "report", "all", "--format", "csv", "--out",
             os.path.join(work, f"reports_x{n}")]], r"\d+ built, \d+ removed, \d+ kept"),
    ]
    results, problems = {}, []
    for label, cmds, pattern in steps:
        if label.startswith("sphragis refine") and results.get("sphragis load review4repair") is None:
            problems.append(f"{label}: skipped, the load failed")
            continue
        seconds, rss, shown = 0.0, 0.0, []
        for i, cmd in enumerate(cmds):
            s, r, code, output = run(cmd, os.path.join(work, f"x{n}_{len(results)}_{i}.log"))
            seconds, rss = seconds + s, max(rss, r)
            if code != 0:
                problems.append(f"{label}: exit {code} from {' '.join(cmd[-4:])}:\n    "
                                + "\n    ".join(output.strip().splitlines()[-5:]))
                break
            shown.append(note(output, pattern))
        else:
            results[label] = (seconds, rss, " ".join(x for x in shown if x))
            if label != "sphragis refine v3 + report all" and str(rows) not in results[label][2]:
                problems.append(f"{label}: expected {rows} rows, output says: {results[label][2]}")
    print(f"\nreview4repair x{n}: {rows:,} rows, {mb:,.1f} MB JSONL (generated in {gen_seconds:.1f} s, not timed)")
    print(f"  {'step':<32}{'seconds':>9}{'MB/s':>9}{'rows/s':>11}{'peak MiB':>10}  output")
    for label, (s, rss, shown) in results.items():
        print(f"  {label:<32}{s:>9.2f}{mb / s:>9.1f}{rows / s:>11,.0f}{rss:>10,.0f}  {shown}")
    load = results.get("sphragis load review4repair")
    if load:
        print(f"  ratios, peer seconds / sphragis seconds (>1 = sphragis faster), file {mb:,.1f} MB:")
        for peer in ("duckdb read_json -> table", "python reference (no db)"):
            if peer in results:
                print(f"    {peer + ' / sphragis load':<56}{results[peer][0] / load[0]:>6.2f}")
        rules = results.get("sphragis refine v3 + report all")
        if rules and "python reference (no db)" in results:
            label = "python reference / sphragis load + refine + report"
            print(f"    {label:<56}{results['python reference (no db)'][0] / (load[0] + rules[0]):>6.2f}")
    for p in problems:
        print(f"  PROBLEM {p}")
    if not args.keep:  # the JSONL and databases of this size are not needed any more
        for name in os.listdir(work):
            path = os.path.join(work, name)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    return not problems


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10,100", help="replication factors, comma list (default 10,100)")
    args = p.parse_args()
    args.shared = os.path.abspath(args.shared)
    sizes = [int(s) for s in args.sizes.split(",")]
    header("sphragis review-ingest benchmark (benches/review_bench.py)", args, [
        "one run per step; wall time includes process start (seconds= in the output column is",
        "the peer's own in-process timing); the python reference computes the rules",
        "(strict fence + target_in_comment) but builds no database."])
    work = tempfile.mkdtemp(prefix="review_bench.", dir=args.workdir)
    ok = True
    try:
        for n in sizes:
            ok = bench_size(n, args, work) and ok
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
