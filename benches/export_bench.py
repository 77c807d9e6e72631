"""Export benchmark: `sphragis export --format parquet` beside DuckDB's own COPY of the same
table, and `sphragis init --from` back, on two corpora:

  SFT      the synthetic seed-sized SFT pool file written by ../shared/bench/gen_sft_pools.py
           (1,735 views, ~36M token positions), loaded with `load views`;
  review   review4repair (test_100.json, 2,961 rows) replicated N times by
           ../shared/bench/gen_review_jsonl.py (x100 ~ 1.9 GB of JSONL), loaded with
           `load review4repair` and refined to v3 (so refine_examples, partitioned by
           version and org, exports too).

Generating and loading the inputs is not timed as export. For each database:

  (a) sphragis export --format parquet --out DIR    every base table, hive-partitioned,
                                                    ZSTD, manifest.json with SHA-256s
  (b) DuckDB's own COPY of the largest table (sft_views / review_examples) from Python
      duckdb 2.0.0 on the same database (read-only), with the same PARTITION_BY as the
      export's manifest gives that table: the peer for the one large table, without
      manifest or hashing
  (c) sphragis init --from DIR                      a new database from the export, every
                                                    file's SHA-256 checked

Each step is a child process: wall seconds, peak RSS (MiB), bytes written. Whether the
export streams shows in its peak RSS beside the size of the data: with --review-copies
10,100 the review corpus grows tenfold and a streaming export's peak does not.
Usage: python3 benches/export_bench.py [--review-copies 10,100] [--no-sft] [--keep]
       [--workdir DIR] [--bin PATH]
"""
import json, os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import header, parser, run  # noqa: E402


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def must(result, what):
    s, rss, code, out = result
    if code:
        sys.exit(f"{what} failed:\n{out[-2000:]}")
    return s, rss


def bench_database(args, work, name, db, table):
    """Export `db`, COPY `table` with DuckDB, rebuild from the export: the table's rows."""
    rows = []
    out_dir = os.path.join(work, f"{name}-export")
    s, rss = must(run([args.bin, "--db", db, "export", "--out", out_dir], os.path.join(work, f"{name}-export.log")),
                  "export")
    rows.append(("sphragis export (every table + manifest, SHA-256)", s, rss, folder_bytes(out_dir)))
    with open(os.path.join(out_dir, "manifest.json")) as f:
        manifest = json.load(f)
    entry = next(t for t in manifest["tables"] if t["name"] == table)
    partition = f", partition_by ({', '.join(entry['partition_by'])})" if entry["partition_by"] else ""
    peer_dir = os.path.join(work, f"{name}-peer")
    target = peer_dir if partition else os.path.join(peer_dir, "data.parquet")
    os.makedirs(peer_dir, exist_ok=True)
    script = ("import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); "
              f"c.execute(\"copy {table} to '\" + sys.argv[2] + \"' (format parquet, compression zstd, "
              f"overwrite_or_ignore true{partition})\")")
    s, rss = must(run([args.venv_python, "-c", script, db, target], os.path.join(work, f"{name}-peer.log")),
                  "DuckDB COPY")
    rows.append((f"DuckDB COPY {table} (Python duckdb{partition})", s, rss, folder_bytes(peer_dir)))
    rebuilt = os.path.join(work, f"{name}-rebuilt.duckdb")
    s, rss = must(run([args.bin, "--db", rebuilt, "--quiet", "init", "--from", out_dir],
                      os.path.join(work, f"{name}-init.log")), "init --from")
    rows.append(("sphragis init --from (SHA-256 checked, one transaction)", s, rss, os.path.getsize(rebuilt)))
    print()
    print("| step | seconds | peak RSS | bytes written |")
    print("|---|---|---|---|")
    for label, s, rss, b in rows:
        print(f"| {label} | {s:.2f} s | {rss:,.0f} MiB | {b / 1e6:,.1f} MB |")
    table_bytes = folder_bytes(os.path.join(out_dir, entry["path"]))
    print(f"\n{table}: {entry['rows']:,} rows, {table_bytes / 1e6:,.1f} MB of Parquet in {len(entry['files'])} files "
          f"(partitioned by {', '.join(entry['partition_by']) or 'nothing'})")
    if not args.keep:  # the next corpus needs the disk
        for d in (out_dir, peer_dir):
            shutil.rmtree(d, ignore_errors=True)
        os.remove(rebuilt)


def bench_sft(args, work):
    subprocess.run([sys.executable, os.path.join(args.shared, "bench", "gen_sft_pools.py")], cwd=work, check=True)
    pools = os.path.join(work, "sft_pools.jsonl")
    db = os.path.join(work, "sft.duckdb")
    s, rss = must(run([args.bin, "--db", db, "--quiet", "load", "views", pools], os.path.join(work, "sft-load.log")),
                  "load views")
    print(f"\n## SFT: seed-sized pools, {os.path.getsize(pools) / 1e6:,.1f} MB JSONL -> database "
          f"{os.path.getsize(db) / 1e6:,.1f} MB (load {s:.2f} s, {rss:,.0f} MiB peak)")
    bench_database(args, work, "sft", db, "sft_views")


def bench_review(args, work, n):
    source = os.path.join(args.shared, "data/review/review4repair/test_100.json")
    jsonl = os.path.join(work, f"review4repair_x{n}.jsonl")
    subprocess.run([sys.executable, os.path.join(args.shared, "bench/gen_review_jsonl.py"), source, str(n), jsonl],
                   check=True, stdout=subprocess.DEVNULL)
    db = os.path.join(work, f"review_x{n}.duckdb")
    s, rss = must(run([args.bin, "--db", db, "--quiet", "load", "review4repair", jsonl],
                      os.path.join(work, f"review-x{n}-load.log")), "load review4repair")
    s2, _ = must(run([args.bin, "--db", db, "--quiet", "refine", "--version", "v3", "--rules", "all"],
                     os.path.join(work, f"review-x{n}-refine.log")), "refine")
    print(f"\n## review4repair x{n}: {os.path.getsize(jsonl) / 1e6:,.1f} MB JSONL -> database "
          f"{os.path.getsize(db) / 1e6:,.1f} MB (load {s:.2f} s, {rss:,.0f} MiB peak; refine v3 {s2:.2f} s)")
    os.remove(jsonl)
    bench_database(args, work, f"review-x{n}", db, "review_examples")


def main():
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--review-copies", default="100", help="review4repair replication factors, comma list (default 100)")
    p.add_argument("--no-sft", action="store_true", help="skip the SFT pools")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="sphragis-export-bench-", dir=args.workdir)
    try:
        header("sphragis export benchmark (seed-sized SFT pools, review4repair replicated)", args,
               ["single runs on a shared machine; seconds vary by about 10%"])
        if not args.no_sft:
            bench_sft(args, work)
        for n in [int(x) for x in args.review_copies.split(",") if x]:
            bench_review(args, work, n)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
