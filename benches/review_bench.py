"""Review-ingest benchmark: sphragis against its peers, on the same bytes, in one run.

What it measures, for review4repair (test_100.json, 2,961 rows) replicated N times as JSONL
(x10 ~ 188 MB, x100 ~ 1.9 GB, written by ../shared/bench/gen_review_jsonl.py; not timed):

  (a) sphragis init, then sphragis load review4repair FILE
                                                  -> a new DuckDB file (the init: migrations and
                                                     views, a fixed cost timed on its own), then
                                                     the load into it; ratios for the load alone
                                                     and for init + load
  (b) DuckDB's own read_json into a table         (../shared/bench/duckdb_native_review.py,
                                                   Python duckdb 2.0.0, the bundled engine's version)
  (c) the pure-Python reference of the rules      (../shared/bench/py_review_reference.py; it
                                                   computes strict fence + target_in_comment but
                                                   builds no database)
  (d) sphragis refine --version v3 --rules all, then report all --format csv --out DIR,
      timed together, on the database from (a)
  (e) the physical reference: simdjson (pysimdjson in the venv, installed when missing)
      parsing the same JSONL, nothing else (benches/simd_parse_peer.py)

Then, unless --no-formats, the loaders on review4repair as users have it (the published
file is one JSON array on a single line, 18.8 MB): the array itself, its first quarter and
half (written the same way), the whole array pretty-printed (one field a line), and the same
rows as JSONL; each loaded into a fresh database, with seconds per 1,000 rows (flat = linear
in the input). And `verify --reproduce` of a frozen v3 (tests/acceptance/review4repair-orgs.json)
on the half and the whole array: the rebuild reads the array again.

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
from common import header, parser, run, simd_peer  # noqa: E402

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
        ("sphragis init (new file)", [[args.bin, "--db", db, "--quiet", "init"]], r"$^"),
        ("sphragis load review4repair", [[args.bin, "--db", db, "--quiet", "load", "review4repair", jsonl]],
         r"\d+ rows"),
        ("duckdb read_json -> table", [[args.venv_python, os.path.join(bench, "duckdb_native_review.py"), jsonl,
                                        os.path.join(work, f"native_x{n}.duckdb")]], r"rows=\d+ seconds=[\d.]+"),
        ("python reference (no db)", [[sys.executable, os.path.join(bench, "py_review_reference.py"), jsonl]],
         r"examples=\d+ suggested_edit=\d+ target_in_comment=\d+ seconds=[\d.]+"),
        ("simdjson parse only (physical)", [[*simd_peer(args), jsonl]], r"rows=\d+ read_seconds=[\d.]+ parse_seconds=[\d.]+"),
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
            if label not in ("sphragis refine v3 + report all", "sphragis init (new file)") \
                    and str(rows) not in results[label][2]:
                problems.append(f"{label}: expected {rows} rows, output says: {results[label][2]}")
    print(f"\nreview4repair x{n}: {rows:,} rows, {mb:,.1f} MB JSONL (generated in {gen_seconds:.1f} s, not timed)")
    print(f"  {'step':<32}{'seconds':>9}{'MB/s':>9}{'rows/s':>11}{'peak MiB':>10}  output")
    for label, (s, rss, shown) in results.items():
        if label == "sphragis init (new file)":  # reads no input: no rate
            print(f"  {label:<32}{s:>9.2f}{'-':>9}{'-':>11}{rss:>10,.0f}  {shown}")
        else:
            print(f"  {label:<32}{s:>9.2f}{mb / s:>9.1f}{rows / s:>11,.0f}{rss:>10,.0f}  {shown}")
    load = results.get("sphragis load review4repair")
    init = results.get("sphragis init (new file)", (0.0,))[0]
    if load:
        print(f"  ratios, peer seconds / sphragis seconds (>1 = sphragis faster), file {mb:,.1f} MB:")
        for peer in ("duckdb read_json -> table", "python reference (no db)"):
            if peer in results:
                print(f"    {peer + ' / sphragis load':<56}{results[peer][0] / load[0]:>6.2f}")
                print(f"    {peer + ' / sphragis init + load':<56}{results[peer][0] / (init + load[0]):>6.2f}")
        simd = re.search(r"parse_seconds=([\d.]+)", results.get("simdjson parse only (physical)", (0, 0, ""))[2])
        if simd:
            parse = float(simd.group(1))
            print(f"    physical reference: simdjson parses the file in {parse:.2f} s ({mb / parse:,.0f} MB/s, in-process);"
                  f" sphragis load / that = {load[0] / parse:.1f}")
        rules = results.get("sphragis refine v3 + report all")
        if rules and "python reference (no db)" in results:
            label = "python reference / sphragis init + load + refine + report"
            total = init + load[0] + rules[0]
            print(f"    {label:<56}{results['python reference (no db)'][0] / total:>6.2f}")
    for p in problems:
        print(f"  PROBLEM {p}")
    if not args.keep:  # the JSONL and databases of this size are not needed any more
        for name in os.listdir(work):
            path = os.path.join(work, name)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    return not problems


def bench_formats(args, work):
    """The loaders on review4repair's own array and its variants; verify --reproduce."""
    import json
    source = os.path.join(args.shared, "data/review/review4repair/test_100.json")
    rows = json.load(open(source, encoding="utf-8"))
    orgs = os.path.join(ROOT_DIR, "tests", "acceptance", "review4repair-orgs.json")
    files = []  # (label, path, rows)
    for label, part in (("array, first quarter", len(rows) // 4), ("array, first half", len(rows) // 2)):
        path = os.path.join(work, f"r4r_{part}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(rows[:part], f, ensure_ascii=False)
        files.append((label, path, part))
    files.append(("array as published (test_100.json)", source, len(rows)))
    pretty = os.path.join(work, "r4r_pretty.json")
    with open(pretty, "w", encoding="utf-8") as f:
        json.dump(rows, f, ensure_ascii=False, indent=1)
    files.append(("array, pretty-printed", pretty, len(rows)))
    jsonl = os.path.join(work, "r4r.jsonl")
    with open(jsonl, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    files.append(("same rows as JSONL", jsonl, len(rows)))
    problems, results = [], []
    for i, (label, path, n) in enumerate(files):
        db = os.path.join(work, f"fmt_{i}.duckdb")
        s, rss, code, output = run([args.bin, "--db", db, "--quiet", "load", "review4repair", path],
                                   os.path.join(work, f"fmt_{i}.log"))
        if code != 0 or f"{n} rows" not in output:
            problems.append(f"load {label}: exit {code}: {' '.join(output.split())[-200:]}")
            continue
        results.append((f"load review4repair: {label}", s, rss, n, os.path.getsize(path) / 1e6))
    for label, path, n in files[1:3]:
        db = os.path.join(work, f"verify_{n}.duckdb")
        frozen = os.path.join(work, f"frozen_{n}")
        cmds = [["load", "orgs", orgs], ["load", "review4repair", "--org", "review4repair", path],
                ["refine", "--version", "v3", "--rules", "all"], ["split", "--version", "v3"],
                ["freeze", "--version", "v3", "--out", frozen]]
        for j, cmd in enumerate(cmds):
            _, _, code, output = run([args.bin, "--db", db, "--quiet", *cmd], os.path.join(work, f"v{n}_{j}.log"))
            if code != 0:
                problems.append(f"verify setup {' '.join(cmd[:2])} ({label}): exit {code}: {output.strip()[-200:]}")
                break
        else:
            s, rss, code, output = run([args.bin, "--db", db, "--quiet", "verify", "--reproduce", "--version", "v3"],
                                       os.path.join(work, f"v{n}_verify.log"))
            if code != 0 or output.strip() != "clean":
                problems.append(f"verify --reproduce ({label}): exit {code}: {output.strip()[-200:]}")
            else:
                results.append((f"verify --reproduce v3: {label}", s, rss, n, os.path.getsize(path) / 1e6))
    print(f"\nreview4repair as users have it ({len(rows):,} rows)")
    print(f"  {'step':<58}{'seconds':>8}{'MB':>7}{'MB/s':>7}{'s/1k rows':>10}{'peak MiB':>10}")
    for label, s, rss, n, mb in results:
        print(f"  {label:<58}{s:>8.2f}{mb:>7.1f}{mb / s:>7.1f}{s / n * 1000:>10.3f}{rss:>10,.0f}")
    timing = {label: s for label, s, *_ in results}
    array = timing.get("load review4repair: array as published (test_100.json)")
    lines = timing.get("load review4repair: same rows as JSONL")
    if array and lines:
        print(f"  the published array / the same rows as JSONL: {array / lines:.2f} (1 = the container costs nothing)")
    for p in problems:
        print(f"  PROBLEM {p}")
    return not problems


ROOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10,100", help="replication factors, comma list (default 10,100)")
    p.add_argument("--no-formats", action="store_true", help="skip the loaders-as-published section")
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
        if not args.no_formats:
            ok = bench_formats(args, work) and ok
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
