"""Spark parity of the exported views (issue 14): the same view SQL on Spark gives DuckDB's rows.

Usage (a venv with `duckdb==2.0.0`, `sqlglot` and `pyspark` from PyPI, and Java 17):

    python spark_parity.py EXPORT_DIR               # check: run every view the manifest marks
                                                    # portable, on Spark and on DuckDB, compare
    python spark_parity.py EXPORT_DIR --generate OUT.json
                                                    # transpile every view (sqlglot duckdb -> spark),
                                                    # run the parity, write the Spark table that
                                                    # sphragis embeds (src/db/spark_views.json)

EXPORT_DIR is a folder written by `sphragis export --format parquet` (its manifest.json names
the tables, files, column types and each view's SQL). Both engines read the same Parquet files:
DuckDB into tables of the manifest's types (as `sphragis init --from` does), Spark as
temporary views over the hive-partitioned files (partition columns read as strings, then cast
to the manifest's type). Each view runs in both; rows compare exactly for integers, strings,
booleans and timestamps, with 1e-9 relative tolerance for doubles and decimals, as multisets
unless the view's outermost select orders its rows.

A view is portable only when (1) its DuckDB SQL uses none of the constructs that transpile
silently wrong (HAZARDS below: the transpiler would produce SQL that runs and answers
differently on some data; a cast of a DOUBLE or DECIMAL to an integer type, which DuckDB
rounds and Spark truncates, is found on DuckDB's binder: `cast_hazard`), (2) every view it reads is portable, (3) the transpiled SQL runs on
Spark and (4) the rows are equal on the export. Otherwise the generated table records why.
A view whose header says "Same rows as <older view>" (a portable `_vN` of a view that is not)
is also compared with that view on DuckDB. Exit status: 0 when every view checked is equal
and every such pair agrees, 1 otherwise.
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
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.helper import seq_get

# Constructs whose transpilation is silently wrong on some data (the query runs on Spark and
# answers differently), with the reason recorded for the view. Matched on the DuckDB SQL with
# comments and string literals removed.
HAZARDS = [
    (r"\bwith\s+ordinality\b", "WITH ORDINALITY is 1-based in DuckDB, posexplode is 0-based"),
    # An ordered string_agg is not here: sqlglot writes it as Spark 4's LISTAGG(x, sep)
    # WITHIN GROUP (ORDER BY ...), which skips nulls, orders and answers null for no rows as
    # DuckDB does (the Spark SQL needs Spark 4.0 or later).
    (r"\b(?:list|array_agg)\s*\([^()]*\border\s+by\b",
     "an ordered list (list / array_agg ... order by): sqlglot writes Spark's collect_list, which keeps no order"),
    (r"\bhash\s*\(", "hash() differs between DuckDB and Spark"),
    # regexp_matches / regexp_extract / regexp_extract_all are checked on the parsed SQL
    # (portable_regex below); the operators and the other functions are not.
    (r"~\s*'|\bsimilar\s+to\b|\bregexp_(?!matches\b|extract\b|extract_all\b)\w+\s*\(",
     "regular expressions: DuckDB's RE2 and Spark's java.util.regex differ (\\s, Unicode classes, escapes)"),
    (r"\bstrftime\s*\(|\bstrptime\s*\(", "strftime/strptime format codes differ from Spark's datetime patterns"),
    (r"\basof\s+(?:left\s+)?join\b", "ASOF JOIN: Spark SQL has none (a range join or a window over runs and segments would do it)"),
    (r"\bquery_table\s*\(",
     "query_table(name) reads the view a parameter names and compares its rows as DuckDB's JSON text "
     "(to_json of a whole row, json_keys): Spark has IDENTIFIER(:name) and to_json(struct(*)), but spells "
     "timestamps and large or small doubles otherwise (2024-01-01T00:00:00.000Z, 1.0E20), and the values "
     "reported are that text"),
    (r"\*\s*replace\s*\(", "DuckDB's `* replace (...)`: Spark SQL has no star REPLACE (sqlglot writes `* exclude` as Spark's `* except`)"),
]
# Table macros that no view calls with default arguments, proven on each export with the
# arguments these queries give (one call per row, at most a few): DuckDB's
# `select * from macro(args)` against the macro's Spark SQL with the same named parameters.
MACRO_PROBES = {
    "version_diff_at_v1": "select a.version, b.version from (select distinct version from refine_examples) as a "
                          "cross join (select distinct version from refine_examples) as b "
                          "where a.version <> b.version order by 1, 2 limit 6",
    "example_moves_at_v1": "select a.version, b.version from (select distinct version from refine_examples) as a "
                           "cross join (select distinct version from refine_examples) as b "
                           "where a.version <> b.version order by 1, 2 limit 6",
    "version_diff_at_v2": "select a.version, b.version from (select distinct version from refine_examples) as a "
                          "cross join (select distinct version from refine_examples) as b "
                          "where a.version <> b.version order by 1, 2 limit 6",
    "example_moves_at_v2": "select a.version, b.version from (select distinct version from refine_examples) as a "
                           "cross join (select distinct version from refine_examples) as b "
                           "where a.version <> b.version order by 1, 2 limit 6",
    "sft_view_positions_at_v1": "select view_id from (select view_id, row_number() over (partition by pool "
                                "order by view_id) as n from sft_views) where n = 1 order by view_id limit 3",
}
# Constructs found on the parsed SQL (a list literal `['a']` is not an index, so these are
# not matched on the text).
TWO_UNNESTS = "two unnest() calls in one select list: DuckDB zips them row by row, Spark's explode cross-joins"
SLICE = "a list slice: DuckDB's l[a:b] is 1-based and inclusive, Spark's slice() takes a start and a length"
FORMAT_SPEC = "format() with a format spec other than {}: Spark's format_string reads printf patterns"


REGEX = "a regular expression RE2 (DuckDB) and java.util.regex (Spark) read differently"

# Casts to an integer type (BIT is no integer). A cast of a DOUBLE or DECIMAL rounds in DuckDB
# (a DOUBLE half to even) and truncates toward zero on Spark: the query runs on both and answers one
# apart (eval_runs_v1's first_batch_at, a microsecond, on a real run).
INTEGER_TYPES = exp.DataType.INTEGER_TYPES - {exp.DataType.Type.BIT}
INTEGER_CAST = ("a cast of a non-integer value to an integer type: DuckDB rounds a {type} to the nearest integer, "
                "Spark truncates it toward zero ({cast}); rounding first (round_even(x, 0): Spark's bround) makes "
                "the cast exact")


def integer_cast(node):
    """Whether `node` casts to an integer type an operand that is not already a whole
    number by construction: NULL, or round / round_even with no or 0 decimals, floor, ceil or
    trunc, whose value both engines cast exactly (the rounding itself is the same: round is
    half away from zero, round_even and Spark's bround half to even, in both)."""
    if not isinstance(node, exp.Cast) or node.to.this not in INTEGER_TYPES:
        return False
    x = node.this
    while isinstance(x, exp.Paren):
        x = x.this
    if isinstance(x, exp.Null) or isinstance(x, (exp.Floor, exp.Ceil, exp.Trunc)) and not x.args.get("decimals"):
        return False
    if isinstance(x, exp.Round) or (isinstance(x, exp.Anonymous) and x.name.lower() == "round_even"):
        places = x.args.get("decimals") if isinstance(x, exp.Round) else seq_get(x.expressions, 1)
        return places is not None and not (isinstance(places, exp.Literal) and places.name == "0")
    return True


def cast_hazard(duck, tree):
    """Why parsed query `tree` (table macros inlined, every view and table it reads present in
    `duck`) is not portable because of a cast to an integer type, or None.

    Each cast to an integer type of an operand that is not rounded ([`integer_cast`]) is
    probed on DuckDB's binder: the query with that operand replaced by `(operand) & 0`, which
    binds only for integer types (and NULL, and a string literal DuckDB reads as one), is
    described without running. A binder error naming `&(TYPE, ...)` gives the operand's
    type; any other error leaves the cast unproven, which is reason enough too."""
    casts = [c for c in tree.find_all(exp.Cast) if integer_cast(c)]
    for i, cast in enumerate(casts):
        probe = tree.copy()
        target = [c for c in probe.find_all(exp.Cast) if integer_cast(c)][i]
        target.replace(exp.BitwiseAnd(this=exp.Paren(this=target.this.copy()), expression=exp.Literal.number(0)))
        shown = cast.sql(dialect=DuckDBAsWritten)
        try:
            duck.execute(f"describe {probe.sql(dialect=DuckDBAsWritten)}")
        except duckdb.Error as e:
            m = re.search(r"'&\((.+?), INTEGER_LITERAL\)'", str(e))
            if m and re.match(r"DOUBLE|FLOAT|REAL|DECIMAL", m.group(1)):
                return INTEGER_CAST.format(type=m.group(1), cast=shown)
            if m:
                return f"a cast of a {m.group(1)} to an integer type ({shown}): DuckDB's and Spark's casts " \
                       f"from {m.group(1)} are not proven to agree"
            return f"a cast to an integer type whose operand's type could not be checked ({shown}): " \
                   f"{str(e).strip().splitlines()[0][:200]}"
    return None


def regex_difference(pattern):
    """None when regular expression `pattern` means the same in RE2 (DuckDB) and
    java.util.regex (Spark), else where they part. Only a plain subset passes: literal
    characters, escaped punctuation, \\t \\n \\f \\r, classes of single characters and
    ASCII ranges, groups and (?:...), alternation, ? * + {n,m} (lazy too) and ^ (start of
    text in both, without the multiline flag). Refused: . and $ (Java's stop at or before
    \\u0085, \\u2028, \\u2029 and a final line break as well), \\s \\d \\w \\b and every
    other escaped letter (Java's \\s holds the vertical tab; Unicode classes differ), flags
    such as (?i) (RE2 folds Unicode case, Java ASCII only: the Kelvin sign K matches k in
    RE2), possessive quantifiers, nested classes and && (Java's class union and
    intersection, RE2's [[:alpha:]]), and a pattern that matches an empty string (the two
    step past an empty match differently in regexp_extract_all)."""
    i, n = 0, len(pattern)
    punct = set("\\.^$|?*+()[]{}-/:=,;'\"!#%&<>@`~ ")
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                return f"{REGEX}: a trailing backslash"
            e = pattern[i + 1]
            if e not in "tnfr" and (e.isalnum() or e not in punct):
                return f"{REGEX}: \\{e}"
            i += 2
        elif c in ".$":
            return f"{REGEX}: {c} (line terminators differ)"
        elif c == "(":
            if pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
                if pattern.startswith("(?i", i):
                    return f"{REGEX}: (?i) (RE2 folds Unicode case, Java ASCII only: K, the Kelvin sign, matches k in RE2)"
                return f"{REGEX}: {pattern[i:i + 4]}... (flags and named groups)"
            i += 3 if pattern.startswith("(?:", i) else 1
        elif c in "?*+":
            if i + 1 < n and pattern[i + 1] == "+":
                return f"{REGEX}: a possessive quantifier"
            i += 2 if i + 1 < n and pattern[i + 1] == "?" else 1
        elif c == "{":
            m = re.match(r"\{\d+(,\d*)?\}", pattern[i:])
            if not m:
                return f"{REGEX}: a {{ that is no repetition"
            i += len(m.group(0))
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                return f"{REGEX}: ] first in a class"
            while j < n and pattern[j] != "]":
                d = pattern[j]
                if d == "[" or pattern.startswith("&&", j):
                    return f"{REGEX}: a nested class or && in a class"
                if d == "\\":
                    e = pattern[j + 1] if j + 1 < n else ""
                    if e not in "tnfr" and (e.isalnum() or e not in punct):
                        return f"{REGEX}: \\{e} in a class"
                    j += 2
                elif d == "-" and pattern[j - 1] not in "[^" and j + 1 < n and pattern[j + 1] != "]":
                    lo, hi = pattern[j - 1], pattern[j + 1]
                    if not (lo.isascii() and hi.isascii() and lo.isalnum() and hi.isalnum()):
                        return f"{REGEX}: the range {lo}-{hi}"
                    j += 2
                else:
                    j += 1
            if j >= n:
                return f"{REGEX}: an unclosed class"
            i = j + 1
        else:
            i += 1
    try:
        if re.search(pattern, "") or re.fullmatch(pattern.replace("^", ""), ""):
            return f"{REGEX}: it matches an empty string"
    except re.error as e:
        return f"{REGEX}: {e}"
    return None


def strip_sql(sql):
    """The SQL without comments and string literals (so a hazard in a comment does not count)."""
    sql = re.sub(r"--[^\n]*", "", sql)
    sql = re.sub(r"/\*.*?\*/", "", sql, flags=re.S)
    return re.sub(r"'(?:[^']|'')*'", "''", sql)


def hazard(sql):
    """Why the view's SQL cannot be transpiled faithfully, or None."""
    text = strip_sql(sql).lower()
    for pattern, reason in HAZARDS:
        if re.search(pattern, text):
            return reason
    tree = parse(sql)
    for select in tree.find_all(exp.Select):
        unnests = [u for e in select.expressions for u in e.find_all(exp.Unnest, exp.Explode)
                   if u.find_ancestor(exp.Select) is select]
        if len(unnests) >= 2:
            return TWO_UNNESTS
    for b in tree.find_all(exp.Bracket):
        if any(isinstance(i, exp.Slice) for i in b.expressions):
            return SLICE
    for f in tree.find_all(exp.Format):
        if not plain_format(f):
            return FORMAT_SPEC
    for r in tree.find_all(exp.RegexpLike, exp.RegexpExtract, exp.RegexpExtractAll):
        pattern = r.args.get("expression")
        if not (isinstance(pattern, exp.Literal) and pattern.is_string):
            return f"{REGEX}: a pattern that is not a string literal"
        if r.args.get("parameters") is not None:
            return f"{REGEX}: options ({r.args['parameters'].sql()})"
        why = regex_difference(pattern.this)
        if why:
            return why
    return None


class DuckDBAsWritten(DuckDB):
    """DuckDB, but list indexes parsed as written: sqlglot's own DuckDB dialect shifts a
    literal index to 0-based while parsing (and a computed one not at all, and `l[-1]` to
    `l[-2]`); [`spark_element_at`] needs the 1-based index the view wrote. `len()` is a
    list's length here: the views call `len()` only on lists (strings use `length()`), and
    a string given to Spark's `size()` is a type error, never a silent answer."""
    INDEX_OFFSET = 0

    class Parser(DuckDB.Parser):
        FUNCTIONS = {**DuckDB.Parser.FUNCTIONS, "LEN": lambda args: exp.ArraySize(this=seq_get(args, 0))}


def parse(sql):
    trees = sqlglot.parse(sql, read=DuckDBAsWritten)
    if len(trees) != 1:
        raise ValueError(f"{len(trees)} statements")
    return trees[0]


def spark_element_at(node):
    """DuckDB's `l[i]` -> Spark's `try_element_at(l, i)`.

    Both are 1-based, count a negative index from the end and give null past the end
    (Spark's `l[i]` is 0-based and, under ANSI mode, an error past the end); a computed
    index, in a lambda or not, needs no shift. A string key (a struct or map subscript)
    and a slice are left alone (a slice is a hazard)."""
    if isinstance(node, exp.Bracket) and len(node.expressions) == 1:
        index = node.expressions[0]
        if isinstance(index, exp.Slice) or (isinstance(index, exp.Literal) and index.is_string):
            return node
        index = exp.Cast(this=index.copy(), to=exp.DataType.build("int"))  # Spark takes an INT index
        return exp.Anonymous(this="try_element_at", expressions=[node.this.copy(), index])
    return node


def plain_format(node):
    """Whether a DuckDB format() call has only `{}` placeholders, one per argument."""
    if not (isinstance(node.this, exp.Literal) and node.this.is_string):
        return False
    pattern = node.this.name
    parts = pattern.split("{}")
    return all("{" not in p and "}" not in p for p in parts) and len(parts) - 1 == len(node.expressions)


def spark_format(node):
    """DuckDB's `format('{} of {}', a, b)` -> Spark's `concat(cast(a as string), ' of ', ...)`.

    sqlglot writes FORMAT_STRING with the `{}` pattern unchanged, which Spark prints
    verbatim: silently wrong. DuckDB's format() is null when any argument is null, as
    Spark's concat is; integers, strings and booleans cast to the same text in both."""
    if isinstance(node, exp.Format) and plain_format(node):
        parts = node.this.name.split("{}")
        pieces = []
        for i, part in enumerate(parts):
            if part:
                pieces.append(exp.Literal.string(part))
            if i < len(node.expressions):
                arg = node.expressions[i].copy().transform(spark_format)  # a format() inside
                pieces.append(exp.Cast(this=arg, to=exp.DataType.build("string")))
        return exp.Anonymous(this="concat", expressions=pieces)
    return node


def spark_list_position(node):
    """DuckDB's `list_position(l, x)` (1-based, null when absent) -> Spark's
    `nullif(array_position(l, x), 0)` (Spark gives 0 when absent); sqlglot leaves the name."""
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("list_position", "list_indexof"):
        args = [e.copy() for e in node.expressions]
    elif isinstance(node, exp.ArrayPosition):  # DuckDB's array_position, the same function
        args = [node.this.copy(), node.expression.copy()]
    else:
        return node
    found = exp.Anonymous(this="array_position", expressions=args)
    return exp.Nullif(this=found, expression=exp.Literal.number(0))


def spark_list_slice(node):
    """DuckDB's `list_slice(l, a, b)` (1-based, both ends inclusive) -> Spark's
    `slice(l, a, greatest(b - a + 1, 0))` (a start and a length). Both clip past the end and
    give an empty list when b < a. They differ for a start below 1 (DuckDB counts a negative
    start from the end, Spark a length from there), so the Spark SQL raises an error there
    instead of answering differently. A step argument is left alone (and fails on Spark)."""
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("list_slice", "array_slice") \
            and len(node.expressions) == 3:
        lst, a, b = (e.copy() for e in node.expressions)
        length = exp.Greatest(this=exp.Add(this=exp.Sub(this=exp.Paren(this=b), expression=exp.Paren(this=a.copy())),
                                           expression=exp.Literal.number(1)),
                              expressions=[exp.Literal.number(0)])
        sliced = exp.Anonymous(this="slice", expressions=[lst, a.copy(), length])
        fail = exp.Anonymous(this="raise_error", expressions=[exp.Literal.string("list_slice with a start below 1 is not portable")])
        return exp.If(this=exp.GTE(this=a.copy(), expression=exp.Literal.number(1)), true=sliced, false=fail)
    return node


def spark_error(node):
    """DuckDB's `error(message)` (raises, typed as any) -> Spark's `raise_error(message)`;
    sqlglot leaves the name, which Spark does not know."""
    if isinstance(node, exp.Anonymous) and node.name.lower() == "error" and len(node.expressions) == 1:
        return exp.Anonymous(this="raise_error", expressions=[node.expressions[0].copy()])
    return node


def spark_distinct_string_agg(node):
    """DuckDB's `string_agg(distinct x, sep order by x)` -> `case when count(x) > 0 then
    array_join(array_sort(collect_set(x)), sep) end` on Spark: the distinct values, sorted,
    joined; null when there is none. sqlglot writes `listagg(distinct x, sep) within group
    (order by x)`, which Spark 4.3 refuses at run time beside another aggregate
    (ClassCastException: AttributeReference cannot be cast to SortOrder, seen in
    eval_instances_v1). Left alone under a FILTER or with another order key."""
    if not isinstance(node, exp.GroupConcat) or isinstance(node.parent, exp.Filter):
        return node
    order = node.this
    if not (isinstance(order, exp.Order) and isinstance(order.this, exp.Distinct)
            and len(order.this.expressions) == 1 and len(order.expressions) == 1):
        return node
    value, key = order.this.expressions[0], order.expressions[0]
    if key.args.get("desc") or key.this != value:
        return node
    joined = exp.Anonymous(this="array_join", expressions=[
        exp.Anonymous(this="array_sort", expressions=[exp.Anonymous(this="collect_set", expressions=[value.copy()])]),
        (node.args.get("separator") or exp.Literal.string(",")).copy()])
    some = exp.GT(this=exp.Count(this=value.copy()), expression=exp.Literal.number(0))
    return exp.Case(ifs=[exp.If(this=some, true=joined)])


def spark_round_even(node):
    """DuckDB's `round_even(x, n)` (half to even) -> Spark's `bround(x, n)` (HALF_EVEN);
    sqlglot leaves the name, which Spark does not know."""
    if isinstance(node, exp.Anonymous) and node.name.lower() == "round_even" and len(node.expressions) == 2:
        return exp.Anonymous(this="bround", expressions=[e.copy() for e in node.expressions])
    return node


def spark_list_reduce(node):
    """DuckDB's `list_reduce(l, lambda acc, x: ..., initial)` -> Spark's `aggregate(l,
    initial, (acc, x) -> ...)` (the same left fold from the initial value; sqlglot leaves the
    name, which Spark does not know). Without an initial value it is left alone (and fails)."""
    if isinstance(node, exp.Anonymous) and node.name.lower() == "list_reduce" and len(node.expressions) == 3:
        lst, fold, initial = (e.copy() for e in node.expressions)
        return exp.Anonymous(this="aggregate", expressions=[lst, initial, fold])
    return node


def spark_percentile(node):
    """quantile_cont(x, q) with one literal q -> Spark's percentile(x, q).

    sqlglot writes DuckDB's quantile_cont as PERCENTILE_CONT(x, q), which Spark refuses (its
    percentile_cont takes WITHIN GROUP). Spark's percentile(x, q) interpolates linearly at
    (n-1)*q of the sorted values, as DuckDB's quantile_cont and numpy's default do; the
    parity check proves it on the export. A list of fractions is left alone (and fails)."""
    if isinstance(node, exp.PercentileCont) and isinstance(node.expression, exp.Literal):
        return exp.Anonymous(this="percentile", expressions=[node.this.copy(), node.expression.copy()])
    return node


class Macro:
    """A table macro of the manifest: `create macro name(p1 type, ...) as table <select>`."""

    def __init__(self, sql):
        tree = parse(sql)
        if not isinstance(tree, exp.Create) or not isinstance(tree.expression, exp.Query):
            raise ValueError("not a table macro")
        self.name = tree.this.this.name.lower()
        self.params = [c.name.lower() for c in tree.this.expressions]
        self.types = [c.args["kind"].sql(dialect="duckdb") if c.args.get("kind") else None for c in tree.this.expressions]
        self.body = tree.expression

    def bind(self, values):
        """The body with each parameter replaced by `values[param]` (an expression). A
        DuckDB macro parameter shadows a column of the same name, so every unqualified
        column named like a parameter is the parameter."""
        def sub(node):
            if isinstance(node, exp.Column) and not node.table and node.name.lower() in values:
                return values[node.name.lower()].copy()
            return node
        body = self.body.copy()
        for select in body.find_all(exp.Select):  # `select version_a, ...` keeps its column name
            for i, e in enumerate(select.expressions):
                if isinstance(e, exp.Column) and not e.table and e.name.lower() in values:
                    select.expressions[i] = exp.Alias(this=e.copy(), alias=exp.to_identifier(e.name))
        return body.transform(sub)


def macro_call(node, macros):
    """`(macro, [argument expressions])` when `node` is a call of a known table macro in FROM."""
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous) and node.this.name.lower() in macros:
        return macros[node.this.name.lower()], list(node.this.expressions)
    return None


def inline_macros(tree, macros):
    """Every table-macro call in FROM replaced by the macro's body with the call's arguments
    bound, as a subquery under the call's alias (nested calls too): Spark SQL has no table
    macros, but a macro is a parametrised select."""
    def sub(node):
        call = macro_call(node, macros)
        if call is None:
            return node
        macro, args = call
        if len(args) != len(macro.params):
            raise ValueError(f"{macro.name} takes {len(macro.params)} arguments, called with {len(args)}")
        body = inline_macros(macro.bind(dict(zip(macro.params, args))), macros)
        body = prefix_ctes(body, macro.name)
        alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(macro.name))
        return exp.Subquery(this=body, alias=alias.copy())
    return tree.transform(sub)


def prefix_ctes(body, prefix):
    """The inlined body of table macro `prefix` with each of its CTEs renamed `<prefix>__<cte>`
    (a reference without an alias keeps the old name as its alias, so qualified columns
    still resolve): Spark refuses a CTE named like one of the query it is inlined into
    (`sft_truncation_at_v1` and the `sft_truncation_views_at_v1` it calls both have `lengths`)."""
    names = {c.alias_or_name.lower() for c in body.find_all(exp.CTE)}
    if not names:
        return body

    def sub(node):
        if isinstance(node, exp.CTE) and node.alias_or_name.lower() in names:
            node.set("alias", exp.TableAlias(this=exp.to_identifier(f"{prefix}__{node.alias_or_name}")))
        elif isinstance(node, exp.Table) and not node.args.get("db") and node.name.lower() in names:
            if not node.args.get("alias"):
                node.set("alias", exp.TableAlias(this=exp.to_identifier(node.name)))
            node.set("this", exp.to_identifier(f"{prefix}__{node.name}"))
        return node
    return body.transform(sub)


def macros_called(sql, macros):
    """Names of the table macros a query calls (directly)."""
    return sorted({c[0].name for c in (macro_call(t, macros) for t in parse(sql).find_all(exp.Table)) if c})


def to_spark(tree):
    """A parsed DuckDB query in Spark SQL, with our rewrites."""
    for rewrite in (spark_element_at, spark_format, spark_list_position, spark_list_slice, spark_percentile, spark_error,
                    spark_distinct_string_agg, spark_round_even, spark_list_reduce):
        tree = tree.transform(rewrite)
    return tree.sql(dialect="spark", unsupported_level=sqlglot.ErrorLevel.RAISE)


def transpile_macro(macro, macros):
    """A table macro's body in Spark SQL with its parameters as named parameter markers
    (`:grad_accums`), for `spark.sql(sql, args={"grad_accums": [8], ...})`."""
    body = macro.bind({p: exp.Placeholder(this=p) for p in macro.params})
    return to_spark(inline_macros(body, macros))


def transpile(sql, macros=None):
    """The view's select in Spark SQL: table macros inlined ([`inline_macros`]), then
    sqlglot (DuckDB as written -> Spark) plus our rewrites ([`spark_element_at`],
    [`spark_format`], [`spark_list_position`], [`spark_list_slice`],
    [`spark_percentile`], [`spark_error`], [`spark_distinct_string_agg`], [`spark_round_even`], [`spark_list_reduce`]);
    raises on an unsupported construct."""
    tree = inline_macros(parse(sql), macros or {})
    return to_spark(tree)


def spark_literal(value):
    """A Python value as a Spark argument: a list becomes `array(...)` (Spark refuses a bare
    Python list as a named parameter)."""
    from pyspark.sql import functions as F
    if isinstance(value, list):
        return F.array(*[F.lit(x) for x in value])
    return value


def default_call(sql, macros):
    """`(macro, [arguments])` when the view is exactly `select * from macro(arguments)` (the
    grid of a table macro's default arguments), else None."""
    tree = parse(sql)
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1 or not isinstance(tree.expressions[0], exp.Star):
        return None
    if any(tree.args.get(k) for k in ("joins", "where", "group", "having", "order", "limit", "with_")):
        return None
    source = tree.args.get("from_") or tree.args.get("from")
    return macro_call(source.this, macros) if source is not None else None


def referenced(sql):
    """Names of the tables and views a query reads (CTE names excluded)."""
    tree = parse(sql)
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    return {t.name.lower() for t in tree.find_all(exp.Table) if t.name and t.name.lower() not in ctes}


def orders(sql):
    """Whether the outermost select orders its rows."""
    tree = parse(sql)
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
             # the Spark SQL assumes these (Spark 4's defaults): a null list has a null size,
             # and an overflow or a bad cast is an error rather than a quiet null or wrap
             .config("spark.sql.ansi.enabled", "true")
             .config("spark.sql.legacy.sizeOfNull", "false")
             .config("spark.driver.memory", os.environ.get("SPARK_DRIVER_MEMORY", "8g"))
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


NO_PROBE = "table macro: the parity export had no arguments to run it with (MACRO_PROBES in tests/acceptance/spark_parity.py)"


def probe_macro(duck, spark, macro, spark_sql, probe):
    """Run table macro `macro` with each row of arguments `probe` gives on DuckDB and its Spark
    SQL (named parameter markers) on Spark; None when every call gives the same rows, else
    the first difference. No arguments (the export has no data the macro reads): a reason."""
    calls = duck.execute(probe).fetchall()
    if not calls:
        return NO_PROBE
    ordered = orders(macro.body.sql(dialect=DuckDBAsWritten))
    for values in calls:
        marks = ", ".join("?" for _ in values)
        duck_rows = [tuple(canon(x) for x in r)
                     for r in duck.execute(f"select * from {macro.name}({marks})", list(values)).fetchall()]
        try:
            bound = {p: spark_literal(v) for p, v in zip(macro.params, values)}
            spark_rows = [tuple(canon(x) for x in r) for r in spark.sql(spark_sql, args=bound).collect()]
        except Exception as e:
            return f"fails on Spark with arguments {values}: {str(e).strip().splitlines()[0][:300]}"
        diff = compare(duck_rows, spark_rows, ordered)
        if diff:
            return f"rows differ with arguments {values}: {diff}"
        print(f"ok   {macro.name}{tuple(values)}: {len(duck_rows)} rows equal{' (ordered)' if ordered else ''}")
    return None


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
    macros = {}  # name -> Macro, those created so far
    macro_entries = {}  # name -> its entry in results
    for v in manifest["views"]:
        name, sql = v["name"], v["duckdb_sql"]
        if v["kind"] == "macro":
            duck.execute(sql)
            macro = Macro(sql)
            entry = dict(name=name, duckdb_sha256=v["sha256"], portable=False, spark_sql=None, reason=None)
            results.append(entry)
            macro_entries[name] = entry
            if args.generate:
                body = macro.body.sql(dialect=DuckDBAsWritten)
                reason = hazard(body)
                blocked = [r for r in referenced(body) if r not in portable and any(x["name"] == r for x in manifest["views"])]
                called = [m for m in macros_called(body, macros) if not macro_entries[m]["spark_sql"]]
                if reason is None and called:
                    reason = f"calls the table macro {', '.join(called)}, which is not portable"
                if reason is None and blocked:
                    reason = f"reads {', '.join(sorted(blocked))}, which is not portable"
                if reason is None:  # the body with every parameter a null of its type
                    nulls = {p: exp.Cast(this=exp.Null(), to=exp.DataType.build(t or "varchar", dialect="duckdb"))
                             for p, t in zip(macro.params, macro.types)}
                    reason = cast_hazard(duck, inline_macros(macro.bind(nulls), macros))
                if reason is None:
                    try:
                        entry["spark_sql"] = transpile_macro(macro, macros)
                    except Exception as e:
                        reason = f"sqlglot cannot transpile it: {str(e).splitlines()[0][:200]}"
                # portable once a view that calls it is equal on Spark (below)
                entry["reason"] = reason or "table macro: no view that calls it was equal on Spark"
                if reason:
                    print(f"skip {name}: {reason}")
            else:
                entry["spark_sql"] = v["spark_sql"]
                entry["portable"] = v["spark_portable"]
                entry["reason"] = v["spark_reason"]
            macros[macro.name] = macro
            if name in MACRO_PROBES and entry["spark_sql"] and (args.generate or entry["portable"]) \
                    and not (only and name not in only):
                diff = probe_macro(duck, spark, macro, entry["spark_sql"], MACRO_PROBES[name])
                if diff == NO_PROBE:  # nothing to run it with here: not a difference
                    print(f"skip {name}: {diff}")
                    if args.generate:
                        entry["portable"], entry["reason"] = False, diff
                elif diff:
                    entry["portable"], entry["reason"] = False, diff
                    print(f"FAIL {name}: {diff}")
                    failures.append(name)
                elif args.generate:
                    entry["portable"], entry["reason"] = True, None
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
            called = [m for m in macros_called(sql, macros) if not macro_entries[m]["spark_sql"]]
            if reason is None and called:
                reason = f"calls the table macro {', '.join(called)}, which is not portable: " \
                         f"{macro_entries[called[0]]['reason']}"
            if reason is None and blocked:
                reason = f"reads {', '.join(blocked)}, which is not portable"
            if reason is None:
                reason = cast_hazard(duck, inline_macros(parse(sql), macros))
            if reason is None:
                try:
                    spark_sql = transpile(sql, macros)
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
        # A table macro's own Spark SQL (named parameter markers) with this view's arguments.
        call = default_call(sql, macros)
        if call is not None:
            macro, values = call
            m = macro_entries[macro.name]
            try:
                bound = {p: spark_literal(duck.execute(
                             f"select cast({a.sql(dialect=DuckDBAsWritten)} as {t or 'varchar'})").fetchone()[0])
                         for p, t, a in zip(macro.params, macro.types, values)}
                macro_rows = [tuple(canon(x) for x in r) for r in spark.sql(m["spark_sql"], args=bound).collect()]
                diff = compare(duck_rows, macro_rows, False)
            except Exception as e:
                diff = f"fails on Spark: {str(e).strip().splitlines()[0][:300]}"
            if diff:
                m["portable"], m["reason"] = False, f"with the arguments of {name}: {diff}"
                print(f"FAIL {macro.name} with the arguments of {name}: {diff}")
                failures.append(macro.name)
            else:
                if args.generate:
                    m["portable"], m["reason"] = True, None
                print(f"ok   {macro.name}: its parametrised Spark SQL with the arguments of {name} gives its rows")
        # A transpiled view that other views read must exist on Spark under its name.
        spark.sql(f"create or replace temporary view {name} as {spark_sql}")
        entry["portable"] = True
        portable.add(name)
        print(f"ok   {name}: {len(duck_rows)} rows equal{' (ordered)' if orders(sql) else ''}")

    # A `_vN` written as a portable copy of an older version says so in its header ("Same
    # rows as <view>"): check that on this database too (DuckDB against DuckDB).
    for v in manifest["views"]:
        m = re.search(r"Same rows as\s+(?:--\s*)?(\w+)", v["duckdb_sql"])
        if v["kind"] != "view" or not m or (only and v["name"] not in only):
            continue
        old = m.group(1)
        rows = [[tuple(canon(x) for x in r) for r in duck.execute(f"select * from {n}").fetchall()] for n in (v["name"], old)]
        diff = compare(rows[1], rows[0], False)
        if diff:
            print(f"FAIL {v['name']} differs from {old}: {diff}")
            failures.append(v["name"])
        else:
            print(f"ok   {v['name']}: the rows of {old} ({len(rows[0])} rows)")

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
