"""Every stamp re-runs in a stock DuckDB client (issue 8 §1).

Usage: python3 stamps_acceptance.py SPHRAGIS_BINARY DATABASE

For every report of the database (and the parametrised reports with arguments), runs
`sphragis report NAME --format json`, takes the stamp's `query`, runs it with the `duckdb`
Python package (no sphragis code) on the same file, and compares the rows: integers and
strings exactly, doubles to 1e-12 relative. Also checks that the stamp's SHA-256 is the
one recorded in `sph_views` for the named view or macro.
"""
import datetime
import decimal
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Acceptance  # noqa: E402

import duckdb  # noqa: E402  (installed by .ci/run into a venv)

binary, db = sys.argv[1], sys.argv[2]
run = Acceptance("stamps acceptance", binary, db, fresh=False)


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def plain(value, nested=False):
    """A stock-client value in the form sphragis's JSON gives it: integers (HUGEINT sums
    too) as numbers, timestamps in ISO form, lists as JSON arrays, structs as objects, NaN and infinities as
    the strings Python's json names them."""
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() and value.as_tuple().exponent >= 0 else str(value)
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, list):
        return [plain(v, True) for v in value]
    if isinstance(value, dict):
        return {k: plain(v, True) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


cases = [["all"], ["all", "--version", "v3"], ["weights", "--weights", "0.5,3"],
         ["budget", "--grad-accum", "2,8", "--steps", "10"], ["truncation", "--max-length", "4,6", "--side", "left"],
         ["truncation-views", "--max-length", "5"]]
tables = []
for case in cases:
    out = json.loads(run.sph("report", *case, "--format", "json").stdout)
    tables += [(case, t) for t in (out if isinstance(out, list) else [out])]
run.check("report all (twice) and the parametrised reports: over 60 stamped tables", len(tables) > 60, True)
con = duckdb.connect(db, read_only=True)
recorded = dict(con.execute("select name, sha256 from sph_views").fetchall())
for case, table in tables:
    rows = con.execute(table["query"]).fetchall()
    cols = [d[0] for d in con.description]
    ok = cols == table["columns"] and len(rows) == len(table["rows"]) and all(
        same(plain(v), r[c]) for row, r in zip(rows, table["rows"]) for c, v in zip(cols, row)
    )
    case = [table["report"]] + case[1:]
    run.check(f"{' '.join(case)}: {table['kind']} {table['name']} re-runs in stock duckdb ({len(rows)} rows)", ok, True)
    run.check(f"{' '.join(case)}: stamp sha256 is the recorded one", recorded.get(table["name"]) == table["sha256"], True)
run.close()
