#!/usr/bin/env bash
# Regenerate src/db/spark_views.json (issue 14) in one step: build the demo database
# with the given sphragis binary, export it to Parquet (sealed rows included, as CI does),
# and run `spark_parity.py EXPORT --generate`, which transpiles every view and macro,
# runs each on a local Spark and on DuckDB over that export, and records which are equal.
# Rebuild sphragis afterwards: the binary embeds the table (src/db/spark.rs).
#
# Usage: tests/acceptance/spark_generate.sh [SPHRAGIS_BINARY]
#   SPHRAGIS_BINARY defaults to $CARGO_TARGET_DIR/release/sphragis (or target/release/sphragis).
#   The Python is ~/.cache/sphragis-spark-venv (duckdb==2.0.0, sqlglot, pyspark; Java 17),
#   set up as .ci/run does; SPHRAGIS_SPARK_PYTHON overrides it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$root/target}/release/sphragis}
python=${SPHRAGIS_SPARK_PYTHON:-${HOME:-/root}/.cache/sphragis-spark-venv/bin/python}
[ -x "$bin" ] || { echo "no sphragis binary at $bin (cargo build --release first)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && "$bin" demo --samples "$root/data-samples" --quiet > /dev/null)
"$bin" --db "$work/sphragis-demo.duckdb" export --format parquet --out "$work/demo-export" --include-sealed > /dev/null
"$python" "$root/tests/acceptance/spark_parity.py" "$work/demo-export" --generate "$root/src/db/spark_views.json"
