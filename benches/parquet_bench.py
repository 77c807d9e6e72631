"""Parquet-input benchmark (issues 29 and 27): `sphragis load views FILE.parquet` against DuckDB's
own Parquet load of the same file, and against sphragis' JSON-lines load of the same rows.

What it measures, on the synthetic seed-sized SFT pool file of ../shared/bench/gen_sft_pools.py
written N times over (default x4: 6,940 views, ~145M token positions; copy r's instance ids
prefixed `r<r>-`, as benches/sft_bench.py --scale does), then written as Parquet by DuckDB
(`input_ids` INTEGER[], `loss_mask` TINYINT[]: the widths Hugging Face datasets store token ids
and masks in; DuckDB's default Snappy compression and row groups; not timed):

  (a) sphragis init (a new file, timed on its own), then sphragis load views FILE.parquet into it:
      read once and hashed into memory, decoded by DuckDB, every row through the views contract
      path, written to sft_views + sft_view_runs, one transaction
  (b) the DuckDB peer (Python duckdb 2.0.0, the bundled engine's version, in a child): a new
      database file, CREATE TABLE t AS SELECT * FROM read_parquet(FILE), closed; its own
      in-process seconds are printed beside the wall time
  (c) sphragis init, then sphragis load views FILE.jsonl of the same rows (the JSON-lines path)

Ratios (> 1: sphragis' Parquet load is faster): peer / sphragis Parquet load (target >= 0.8) and
sphragis JSON-lines load / sphragis Parquet load (target >= 4). The figures (views, positions,
supervised positions) of the two sphragis databases and of the peer's table are compared; a
mismatch is a PROBLEM and exit code 1. One run per step.

    python3 benches/parquet_bench.py                 # x4, deletes its files at the end
    python3 benches/parquet_bench.py --scale 1 --keep --workdir /tmp/pb
"""
import json, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import header, parser, run  # noqa: E402
from sft_bench import scaled  # noqa: E402

WRITE_PARQUET = """
import duckdb, sys
src, out = sys.argv[1], sys.argv[2]
duckdb.connect().execute(f'''copy (select pool, instance_id, input_ids::integer[] as input_ids,
    loss_mask::tinyint[] as loss_mask from read_json('{src}', format = 'newline_delimited',
    columns = {{pool: 'varchar', instance_id: 'varchar', input_ids: 'bigint[]', loss_mask: 'bigint[]'}}))
    to '{out}' (format parquet)''')
"""

PEER = """
import duckdb, sys, time
src, db = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
conn = duckdb.connect(db)
conn.execute(f"create table t as select * from read_parquet('{src}')")
conn.close()
seconds = time.perf_counter() - t0
conn = duckdb.connect(db, read_only=True)
views, positions, supervised = conn.execute(
    "select count(*), sum(len(input_ids)), sum(list_sum(loss_mask)) from t").fetchone()
print(f"load_seconds={seconds:.3f} views={views} positions={positions} supervised={int(supervised)}")
"""

FIGURES = "select count(*) as views, sum(n_ids) as positions, sum(list_sum(loss_mask)) as supervised from sft_views"


def key_values(text):
    last = text.strip().splitlines()[-1]
    return {k: v for k, v in (kv.split("=", 1) for kv in last.split())}


def bench(args, work, scale):
    bench_dir = os.path.join(args.shared, "bench")
    t0 = time.perf_counter()
    if not os.path.exists(os.path.join(work, "sft_pools.jsonl")):
        subprocess.run([sys.executable, os.path.join(bench_dir, "gen_sft_pools.py")], cwd=work, check=True)
    jsonl = scaled(os.path.join(work, "sft_pools.jsonl"), scale)
    parquet = jsonl.replace(".jsonl", ".parquet")
    subprocess.run([args.venv_python, "-c", WRITE_PARQUET, jsonl, parquet], check=True)
    gen_seconds = time.perf_counter() - t0
    problems, rows, figures = [], [], {}

    def step(label, cmd, log):
        s, rss, code, output = run(cmd, os.path.join(work, log), cwd=work)
        if code != 0:
            problems.append(f"{label}: exit {code}: {output.strip()[-400:]}")
            rows.append((label, None, None, None))
            return None
        rows.append((label, s, rss, " ".join(output.split())[:80]))
        return s

    def sphragis(kind, path):
        db = os.path.join(work, f"sphragis_{kind}.duckdb")
        for p in (db, db + ".wal"):
            if os.path.exists(p):
                os.remove(p)
        init = step(f"sphragis init ({kind} db)", [args.bin, "--db", db, "--quiet", "init"], f"init_{kind}.log")
        load = step(f"sphragis load views .{kind}", [args.bin, "--db", db, "--quiet", "load", "views", path],
                    f"load_{kind}.log")
        if load is not None:
            out = subprocess.run([args.bin, "--db", db, "--quiet", "sql", FIGURES, "--format", "json"],
                                 capture_output=True, text=True)
            try:
                r = json.loads(out.stdout)["rows"][0]
                figures[f"sphragis {kind}"] = tuple(int(r[k]) for k in ("views", "positions", "supervised"))
            except (ValueError, KeyError, IndexError) as e:
                problems.append(f"figures of the {kind} load: {e}: {out.stdout[:200]} {out.stderr[:200]}")
        return init, load

    _, parquet_load = sphragis("parquet", parquet)
    peer_db = os.path.join(work, "peer.duckdb")
    if os.path.exists(peer_db):
        os.remove(peer_db)
    peer_wall = step("duckdb CTAS read_parquet (peer)", [args.venv_python, "-c", PEER, parquet, peer_db], "peer.log")
    peer = {}
    if peer_wall is not None:
        peer = key_values(open(os.path.join(work, "peer.log")).read())
        figures["duckdb peer"] = tuple(int(peer[k]) for k in ("views", "positions", "supervised"))
    _, jsonl_load = sphragis("jsonl", jsonl)

    if len(set(figures.values())) > 1:
        problems.append(f"figures differ: {figures}")
    mb_json, mb_parquet = os.path.getsize(jsonl) / 1e6, os.path.getsize(parquet) / 1e6
    some = next(iter(figures.values()), (0, 0, 0))
    print(f"\nSFT pools x{scale}: {some[0]:,} views, {some[1]:,} token positions, {some[2]:,} supervised; "
          f"{mb_json:,.1f} MB JSONL, {mb_parquet:,.1f} MB Parquet (written in {gen_seconds:.1f} s, not timed)")
    print(f"  {'step':<36}{'seconds':>9}{'peak MiB':>10}  output")
    for label, s, rss, shown in rows:
        if s is None:
            print(f"  {label:<36}{'failed':>9}")
        else:
            print(f"  {label:<36}{s:>9.2f}{rss:>10,.0f}  {shown}")
    if peer:
        print(f"  (the peer's own in-process seconds: {float(peer['load_seconds']):.2f})")
    if parquet_load:
        if peer_wall:
            print(f"  ratio duckdb CTAS / sphragis parquet load:        {peer_wall / parquet_load:6.2f}  (target >= 0.8)")
        if jsonl_load:
            print(f"  ratio sphragis jsonl load / sphragis parquet load: {jsonl_load / parquet_load:6.2f}  (target >= 4)")
    for p in problems:
        print(f"PROBLEM: {p}")
    return not problems


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, nargs="+", default=[4], help="the seed file N times over (default 4)")
    args = p.parse_args()
    args.bin = os.path.abspath(args.bin)
    header("sphragis Parquet-input benchmark (benches/parquet_bench.py)", args, [
        "one run per step; wall time includes process start; the peer's own in-process seconds",
        "are shown below its row; figures (views, positions, supervised) compared across all three."])
    work = tempfile.mkdtemp(prefix="parquet_bench.", dir=args.workdir)
    ok = False
    try:
        ok = all([bench(args, work, scale) for scale in args.scale])
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
