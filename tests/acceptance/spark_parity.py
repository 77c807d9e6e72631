"""Spark parity of the exported views (issue 14): the same view SQL on Spark gives DuckDB's rows.

Usage (a venv with `duckdb==2.0.0`, `sqlglot` and `pyspark` from PyPI, and Java 17):

    python spark_parity.py EXPORT_DIR               # check: run every view the manifest marks
                                                    # portable, on Spark and on DuckDB, compare
    python spark_parity.py EXPORT_DIR --generate OUT.json
                                                    # transpile every view (sqlglot duckdb -> spark),
                                                    # run the parity, write the Spark table that
                                                    # sphragis embeds (src/export/spark_views.json)

EXPORT_DIR is a folder written by `sphragis export --format parquet` (its manifest.json names
the tables, files, column types and each view's SQL). Both engines read the same Parquet files:
DuckDB into tables of the manifest's types (as `sphragis init --from` does), Spark as
temporary views over the hive-partitioned files (partition columns read as strings, then cast
to the manifest's type). Each view runs in both; rows compare exactly for integers, strings,
booleans and timestamps, with 1e-9 relative tolerance for doubles and decimals, as multisets
unless the view's outermost select orders its rows.

A view is portable only when (1) its DuckDB SQL uses none of the constructs that transpile
silently wrong (HAZARDS below: the transpiler would produce SQL that runs and answers
differently on some data), (2) every view it reads is portable, (3) the transpiled SQL runs on
Spark and (4) the rows are equal on the export. Otherwise the generated table records why.
Exit status: 0 when every view checked is equal, 1 otherwise.
"""
import argparse
import datetime
import decimal
import json
import math
import os
import re
import sys

import duckdb
import sqlglot
from sqlglot import exp

# Constructs whose transpilation is silently wrong on some data (the query runs on Spark and
# answers differently), with the reason recorded for the view. Matched on the DuckDB SQL with
# comments and string literals removed.
HAZARDS = [
    (r"\bunnest\s*\((?:.|\n)*\bunnest\s*\(",
     "two unnest() calls: DuckDB zips them row by row, Spark's explode cross-joins"),
    (r"\bwith\s+ordinality\b", "WITH ORDINALITY is 1-based in DuckDB, posexplode is 0-based"),
    (r"(?:\w|\))\s*\[", "a list index or slice: DuckDB lists are 1-based, Spark arrays 0-based, and a computed index is not shifted"),
    (r"\b(?:list|array_agg|string_agg|group_concat)\s*\([^()]*\border\s+by\b",
     "an ordered aggregate (list / array_agg / string_agg ... order by): Spark's collect_list keeps no order"),
    (r"\bhash\s*\(", "hash() differs between DuckDB and Spark"),
    (r"\bregexp_\w+\s*\(|~\s*'|\bsimilar\s+to\b",
     "regular expressions: DuckDB's RE2 and Spark's java.util.regex differ (\\s, Unicode classes, escapes)"),
    (r"\bstrftime\s*\(|\bstrptime\s*\(", "strftime/strptime format codes differ from Spark's datetime patterns"),
]


def strip_sql(sql):
    """The SQL without comments and string literals (so a hazard in a comment does not count)."""
    sql = re.sub(r"--[^\n]*", "", sql)
    sql = re.sub(r"/\*.*?\*/", "", sql, flags=re.S)
    return re.sub(r"'(?:[^']|'')*'", "''", sql)


def hazard(sql):
    text = strip_sql(sql).lower()
    for pattern, reason in HAZARDS:
        if re.search(pattern, text):
            return reason
    return None


def spark_percentile(node):
    """quantile_cont(x, q) with one literal q -> Spark's percentile(x, q).

    sqlglot writes DuckDB's quantile_cont as PERCENTILE_CONT(x, q), which Spark refuses (its
    percentile_cont takes WITHIN GROUP). Spark's percentile(x, q) interpolates linearly at
    (n-1)*q of the sorted values, as DuckDB's quantile_cont and numpy's default do; the
    parity check proves it on the export. A list of fractions is left alone (and fails)."""
    if isinstance(node, exp.PercentileCont) and isinstance(node.expression, exp.Literal):
        return exp.Anonymous(this="percentile", expressions=[node.this.copy(), node.expression.copy()])
    return node


def transpile(sql):
    """The view's select in Spark SQL (sqlglot, duckdb -> spark, plus [`spark_percentile`]);
    raises on an unsupported construct."""
    trees = sqlglot.parse(sql, read="duckdb")
    if len(trees) != 1:
        raise ValueError(f"{len(trees)} statements")
    tree = trees[0].transform(spark_percentile)
    return tree.sql(dialect="spark", unsupported_level=sqlglot.ErrorLevel.RAISE)


def referenced(sql):
    """Names of the tables and views a query reads (CTE names excluded)."""
    tree = sqlglot.parse_one(sql, read="duckdb")
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    return {t.name.lower() for t in tree.find_all(exp.Table) if t.name and t.name.lower() not in ctes}


def orders(sql):
    """Whether the outermost select orders its rows."""
    tree = sqlglot.parse_one(sql, read="duckdb")
    return tree.args.get("order") is not None


def canon(v):
    """A value in a form both engines' Python rows agree on (Spark Row -> tuple, Decimal -> float)."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, (float, decimal.Decimal)):
        return float(v)
    if isinstance(v, datetime.datetime):
        return v.replace(tzinfo=None).isoformat()
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, dict):
        return tuple(sorted((k, canon(x)) for k, x in v.items()))
    if hasattr(v, "asDict"):  # pyspark Row (struct)
        return tuple(sorted((k, canon(x)) for k, x in v.asDict().items()))
    if isinstance(v, (list, tuple)):
        return tuple(canon(x) for x in v)
    return v


def sort_key(row):
    return json.dumps(row, default=str, sort_keys=True)


def equal(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None or isinstance(a, (tuple, str)) or isinstance(b, (tuple, str)):
            return a == b
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    return a == b


def compare(duck_rows, spark_rows, ordered):
    """None when equal, else a short description of the first difference."""
    if len(duck_rows) != len(spark_rows):
        return f"{len(duck_rows)} rows in DuckDB, {len(spark_rows)} on Spark"
    if not ordered:
        duck_rows, spark_rows = sorted(duck_rows, key=sort_key), sorted(spark_rows, key=sort_key)
    for i, (d, s) in enumerate(zip(duck_rows, spark_rows)):
        if not equal(d, s):
            return f"row {i}: DuckDB {d!r} vs Spark {s!r}"[:600]
    return None


def duckdb_side(export, manifest):
    con = duckdb.connect()
    for t in manifest["tables"]:
        cols = ", ".join(f'"{c["name"]}" {c["type"]}' for c in t["columns"])
        con.execute(f'create table "{t["name"]}" ({cols})')
        files = [os.path.join(export, f["path"]) for f in t["files"]]
        if files:
            hive = "true" if t["partition_by"] else "false"
            con.execute(f'insert into "{t["name"]}" by name select * from read_parquet(?, '
                        f'hive_partitioning = {hive}, hive_types_autocast = false)', [files])
    return con


def spark_side(export, manifest):
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    spark = (SparkSession.builder.master("local[*]").appName("sphragis-parity")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("OFF")
    for t in manifest["tables"]:
        base = os.path.join(export, t["path"])
        files = [os.path.join(export, f["path"]) for f in t["files"]]
        df = spark.read.option("basePath", base).parquet(*files)
        types = {c["name"]: c["type"] for c in t["columns"]}
        for p in t["partition_by"]:
            df = df.withColumn(p, F.col(p).cast(spark_type(types[p])))
        df.select(*[c["name"] for c in t["columns"]]).createOrReplaceTempView(t["name"])
    return spark


def spark_type(duck):
    return {"VARCHAR": "string", "INTEGER": "int", "BIGINT": "bigint", "BOOLEAN": "boolean"}.get(duck, "string")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("export", help="folder written by `sphragis export --format parquet`")
    ap.add_argument("--generate", metavar="OUT_JSON", help="transpile every view and write the Spark table here")
    ap.add_argument("--only", help="comma-separated view names to run (debugging)")
    args = ap.parse_args()
    with open(os.path.join(args.export, "manifest.json")) as f:
        manifest = json.load(f)
    duck = duckdb_side(args.export, manifest)
    spark = spark_side(args.export, manifest)
    only = set(args.only.split(",")) if args.only else None

    results = []  # one entry per view, in creation order
    portable = set()
    failures = []
    for v in manifest["views"]:
        name, sql = v["name"], v["duckdb_sql"]
        if v["kind"] == "macro":
            duck.execute(sql)
            results.append(dict(name=name, duckdb_sha256=v["sha256"], portable=False, spark_sql=None,
                                reason="table macro: Spark SQL has no table macros"))
            continue
        duck.execute(f"create view {name} as {sql}")
        entry = dict(name=name, duckdb_sha256=v["sha256"], portable=False, spark_sql=None, reason=None)
        results.append(entry)
        if only and name not in only:
            entry["reason"] = "not run (--only)"
            continue
        if args.generate:
            reason = hazard(sql)
            reads = referenced(sql)
            views_read = sorted(r for r in reads if any(x["name"] == r for x in manifest["views"]))
            blocked = [r for r in views_read if r not in portable]
            macros = [m["name"] for m in manifest["views"]
                      if m["kind"] == "macro" and re.search(rf"\b{m['name']}\s*\(", strip_sql(sql).lower())]
            if reason is None and macros:
                reason = f"reads the table macro {', '.join(macros)} (Spark SQL has no table macros)"
            if reason is None and blocked:
                reason = f"reads {', '.join(blocked)}, which is not portable"
            if reason is None:
                try:
                    spark_sql = transpile(sql)
                except Exception as e:  # an unsupported construct: sqlglot says so
                    reason = f"sqlglot cannot transpile it: {str(e).splitlines()[0][:200]}"
            if reason is not None:
                entry["reason"] = reason
                print(f"skip {name}: {reason}")
                continue
        else:
            if not v["spark_portable"]:
                entry["reason"] = v["spark_reason"]
                continue
            spark_sql = v["spark_sql"]
        entry["spark_sql"] = spark_sql
        try:
            spark_df = spark.sql(spark_sql)
            spark_cols = spark_df.columns
            spark_rows = [tuple(canon(x) for x in r) for r in spark_df.collect()]
        except Exception as e:
            entry["reason"] = f"fails on Spark: {str(e).strip().splitlines()[0][:300]}"
            print(f"FAIL {name}: {entry['reason']}")
            failures.append(name)
            continue
        rel = duck.execute(f"select * from {name}")
        duck_cols = [d[0] for d in rel.description]
        duck_rows = [tuple(canon(x) for x in r) for r in rel.fetchall()]
        diff = None
        if [c.lower() for c in duck_cols] != [c.lower() for c in spark_cols]:
            diff = f"columns differ: DuckDB {duck_cols} vs Spark {spark_cols}"
        else:
            diff = compare(duck_rows, spark_rows, orders(sql))
        if diff:
            entry["reason"] = f"rows differ on the parity export: {diff}"
            print(f"FAIL {name}: {diff}")
            failures.append(name)
            continue
        # A transpiled view that other views read must exist on Spark under its name.
        spark.sql(f"create or replace temporary view {name} as {spark_sql}")
        entry["portable"] = True
        portable.add(name)
        print(f"ok   {name}: {len(duck_rows)} rows equal{' (ordered)' if orders(sql) else ''}")

    checked = sum(1 for r in results if r["portable"]) + len(failures)
    print(f"spark parity: {len(portable)} views equal, {len(failures)} differ or fail, "
          f"{len(results) - checked} not portable (reasons in the manifest)")
    if args.generate:
        for r in results:
            if not r["portable"]:
                r["spark_sql"] = r["spark_sql"] if r["reason"] and r["reason"].startswith("rows differ") else None
        out = dict(generated_by="tests/acceptance/spark_parity.py --generate",
                   sqlglot=sqlglot.__version__, export_code_version=manifest["code_version"], views=results)
        with open(args.generate, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        print(f"wrote {args.generate}")
        return 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
