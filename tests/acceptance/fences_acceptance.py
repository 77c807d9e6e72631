"""The strict suggestion rule (fence-3, issue 28) against an independent CommonMark parser.

Usage: python3 fences_acceptance.py SPHRAGIS_BINARY WORK_DIR [REVIEW_DB ...]

sphragis finds fenced code blocks with pulldown-cmark (Rust). This script writes a few
thousand review comments built from the pieces that decide a fence (indentation of 0-5
spaces or tabs, blockquote and list markers, fences of 2-5 backticks or tildes, info
strings right and wrong, outer fences around inner ones), loads them as sphragis examples,
refines them, and compares every comment's stored verdict (refine_comments.fence_strict)
with the one markdown-it-py (a CommonMark implementation in Python, "commonmark" preset)
gives under the same rule: a fence outside every blockquote whose opening line, from the
fence characters on, is `suggestion` or `suggestion:-N+M` and white space. The same
comparison then runs on every comment of each review database given (the real data).
"""
import json
import os
import random
import re
import sys

import duckdb
from markdown_it import MarkdownIt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Acceptance  # noqa: E402

binary, work, review_dbs = sys.argv[1], sys.argv[2], sys.argv[3:]
db = os.path.join(work, "acceptance-fences.duckdb")
run = Acceptance("fences acceptance", binary, db)
sph, check = run.sph, run.check

md = MarkdownIt("commonmark")
OPENING = re.compile(r"(?:`{3,}|~{3,})suggestion(?::-[0-9]+\+[0-9]+)?[^\S\n]*$")


def strict(message):
    """The fence-3 verdict, from markdown-it-py's block tokens."""
    text = message.replace("\r\n", "\n").replace("\r", "\n")
    if "suggestion" not in text:
        return False
    lines = text.split("\n")
    quotes = 0
    for token in md.parse(text):
        if token.type == "blockquote_open":
            quotes += 1
        elif token.type == "blockquote_close":
            quotes -= 1
        elif token.type == "fence" and quotes == 0:
            line = lines[token.map[0]]
            at = line.find(token.markup)
            if at >= 0 and OPENING.match(line[at:]):
                return True
    return False


rng = random.Random(28)
prefixes = ["", " ", "  ", "   ", "    ", "     ", "\t", " \t", "> ", ">", "> > ", "- ", "1. ", "  - ", "> - ",
            "* ", "10) "]
fences = ["```", "````", "`````", "~~~", "~~~~", "``", "~~", "``~"]
infos = ["suggestion", "suggestion ", "suggestion\t", "suggestion:-0+2", "suggestion:-12+3", "suggestion:+2",
         " suggestion", "Suggestion", "suggestions", "suggestion\u00a0", "suggestion\u3000", "suggestion java",
         "java", "", "suggestion`"]
fillers = ["let x = 1;", "", "Please rename this.", "    indented text", "return LIMIT;", "```", "~~~", "````",
           "Use the constant:", "> quoted", "- item"]


def comment():
    lines = []
    for _ in range(rng.randint(1, 7)):
        if rng.random() < 0.45:
            lines.append(rng.choice(prefixes) + rng.choice(fences) + rng.choice(infos))
        else:
            lines.append(rng.choice(prefixes[:8]) + rng.choice(fillers))
    return rng.choice(["\n", "\r\n", "\n", "\r"]).join(lines) + rng.choice(["", "\n"])


messages = [comment() for _ in range(4000)]
path = os.path.join(work, "fences.jsonl")
with open(path, "w", encoding="utf-8") as f:
    for i, m in enumerate(messages):
        f.write(json.dumps({
            "example_id": f"f{i}", "org": "fences", "project": "p", "file_path": "a.rs",
            "hunk": f"let f{i} = 0;\n", "target": f"let f{i} = 1;\n", "created_at": "2024-01-01T00:00:00Z",
            "comments": [{"comment_id": f"f{i}-c", "author_id": "7", "message": m}],
        }) + "\n")
sph("load", "examples", path)
sph("refine", "--version", "v1", "--rules", "all")

con = duckdb.connect(db, read_only=True)
stored = dict(con.execute("select comment_id, fence_strict from refine_comments where version = 'v1'").fetchall())
rule = con.execute("select suggestion_rule from corpus_versions where version = 'v1'").fetchone()[0]
con.close()
check("suggestion rule recorded", rule, "fence-3")
expected = {f"f{i}-c": strict(m) for i, m in enumerate(messages)}
differ = [(c, messages[int(c[1:-2])]) for c in expected if stored.get(c) != expected[c]]
for c, m in differ[:5]:
    print(f"     {c}: sphragis {stored.get(c)}, markdown-it-py {expected[c]}: {m!r}")
positives = sum(expected.values())
check(f"{len(messages)} generated comments ({positives} suggestion fences by markdown-it-py): verdicts differ",
      len(differ), 0)
check("the generated comments hold both verdicts in numbers", positives > 300 and len(messages) - positives > 300,
      True)

for other in review_dbs:
    con = duckdb.connect(other, read_only=True)
    rows = con.execute("select c.comment_id, c.message, r.fence_strict from refine_comments r "
                       "join review_comments c using (example_id, comment_id) where r.version = 'v3'").fetchall()
    con.close()
    differ = [(c, m) for c, m, verdict in rows if verdict != strict(m)]
    for c, m in differ[:5]:
        print(f"     {c}: {m!r}")
    check(f"{os.path.basename(other)}: {len(rows)} real comments, "
          f"{sum(1 for _, m, _ in rows if strict(m))} suggestion fences: verdicts differ", len(differ), 0)

run.close()
