"""Export benchmark: `sphragis export --format parquet` on the seed-sized SFT pools, beside
DuckDB's own COPY of the same table, and `sphragis init --from` back.

What it measures, on the synthetic seed-sized SFT pool file written by
../shared/bench/gen_sft_pools.py (1,735 views, ~36M token positions; generated and loaded
into a database file first, not timed as export):

  (a) sphragis export --format parquet --out DIR    every base table, hive-partitioned,
                                                    ZSTD, manifest.json with SHA-256s
  (b) DuckDB's own COPY sft_views TO ... (FORMAT parquet, COMPRESSION zstd,
      PARTITION_BY (pool)) from Python duckdb 2.0.0 on the same database (read-only): the
      peer for the one large table, without manifest or hashing
  (c) sphragis init --from DIR                      a new database from the export, every
                                                    file's SHA-256 checked

Each step is a child process: wall seconds and peak RSS (MiB), bytes written.
Usage: python3 benches/export_bench.py [--keep] [--workdir DIR] [--bin PATH]
"""
import os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import header, parser, run  # noqa: E402


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def main():
    p = parser(__doc__.split("\n")[0])
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="sphragis-export-bench-", dir=args.workdir)
    try:
        header("sphragis export benchmark (seed-sized SFT pools)", args,
               ["single runs on a shared machine; seconds vary by about 10%"])
        subprocess.run([sys.executable, os.path.join(args.shared, "bench", "gen_sft_pools.py")], cwd=work, check=True)
        pools = os.path.join(work, "sft_pools.jsonl")
        db = os.path.join(work, "sft.duckdb")
        s, rss, code, out = run([args.bin, "--db", db, "--quiet", "load", "views", pools], os.path.join(work, "load.log"))
        if code:
            sys.exit(f"load failed:\n{out[-2000:]}")
        print(f"input:   {os.path.getsize(pools) / 1e6:.1f} MB JSONL -> database {os.path.getsize(db) / 1e6:.1f} MB "
              f"(load {s:.2f} s, {rss:.0f} MiB peak)")
        rows = []
        out_dir = os.path.join(work, "export")
        s, rss, code, out = run([args.bin, "--db", db, "export", "--out", out_dir], os.path.join(work, "export.log"))
        if code:
            sys.exit(f"export failed:\n{out[-2000:]}")
        rows.append(("sphragis export (every table + manifest, SHA-256)", s, rss, folder_bytes(out_dir)))
        peer_dir = os.path.join(work, "peer")
        script = ("import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); "
                  "c.execute(\"copy sft_views to '\" + sys.argv[2] + \"' (format parquet, compression zstd, "
                  "partition_by (pool))\")")
        s, rss, code, out = run([args.venv_python, "-c", script, db, peer_dir], os.path.join(work, "peer.log"))
        if code:
            sys.exit(f"DuckDB COPY failed:\n{out[-2000:]}")
        rows.append(("DuckDB COPY sft_views (Python duckdb, partition_by pool)", s, rss, folder_bytes(peer_dir)))
        sft_bytes = folder_bytes(os.path.join(out_dir, "sft_views"))
        rebuilt = os.path.join(work, "rebuilt.duckdb")
        s, rss, code, out = run([args.bin, "--db", rebuilt, "--quiet", "init", "--from", out_dir], os.path.join(work, "init.log"))
        if code:
            sys.exit(f"init --from failed:\n{out[-2000:]}")
        rows.append(("sphragis init --from (SHA-256 checked, one transaction)", s, rss, os.path.getsize(rebuilt)))
        print()
        print("| step | seconds | peak RSS | bytes written |")
        print("|---|---|---|---|")
        for label, s, rss, b in rows:
            print(f"| {label} | {s:.2f} s | {rss:.0f} MiB | {b / 1e6:.1f} MB |")
        print(f"\nsphragis export: sft_views alone {sft_bytes / 1e6:.1f} MB of Parquet")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
