"""Writes the Inspect AI log samples beside this script (written for sphragis's tests):
calc_epochs.json, a .json log of one sample run for two epochs, and calc.eval, a .eval
archive (zip, deflate) of two samples run for one epoch. Run: python3 make_samples.py"""

import json
import zipfile

SYSTEM = {"id": "m0", "role": "system", "source": "input",
          "content": "You are an expert software engineer. Fix the issue in /testbed with the tools, then submit."}
USER = {"id": "m1", "role": "user", "source": "input",
        "content": "add() in src/calc.py returns the difference of its arguments; it must return their sum."}
TOOLS = ["bash", "text_editor", "submit"]


def call(cid, function, arguments):
    return {"id": cid, "function": function, "arguments": arguments, "type": "function"}


def assistant(mid, content, calls):
    return {"id": mid, "role": "assistant", "source": "generate", "model": "example-model-1",
            "content": content, "tool_calls": calls}


def tool(mid, cid, function, content, error=None):
    m = {"id": mid, "role": "tool", "tool_call_id": cid, "function": function, "content": content}
    if error:
        m["error"] = error
    return m


# the full run: ls (bash), view, edit, test run (bash), submit
FULL = [
    SYSTEM, USER,
    assistant("m2", [{"type": "reasoning", "reasoning": "List the folders first.", "signature": "c2lnMQ==", "redacted": False},
                     {"type": "text", "text": "Let me look at the repository."}],
              [call("toolu_01", "bash", {"cmd": "ls src tests"})]),
    tool("m3", "toolu_01", "bash", "src:\n__init__.py\ncalc.py\n\ntests:\ntest_calc.py\n"),
    assistant("m4", "", [call("toolu_02", "text_editor", {"command": "view", "path": "/testbed/src/calc.py"})]),
    tool("m5", "toolu_02", "text_editor", [{"type": "text", "text": "     1\tdef add(a, b):\n     2\t    return a - b\n"}]),
    assistant("m6", [{"type": "reasoning", "reasoning": "gAAAAB-encrypted", "summary": "The operator is wrong.", "redacted": True},
                     {"type": "text", "text": "The subtraction is the bug."}],
              [call("toolu_03", "text_editor", {"command": "str_replace", "path": "/testbed/src/calc.py",
                                                "old_str": "return a - b", "new_str": "return a + b"})]),
    tool("m7", "toolu_03", "text_editor", "The file /testbed/src/calc.py has been edited."),
    assistant("m8", "Now the tests.", [call("toolu_04", "bash", {"cmd": "python -m pytest -q tests/test_calc.py"})]),
    tool("m9", "toolu_04", "bash", "1 passed in 0.02s\n"),
    assistant("m10", "add() now returns the sum.", [call("toolu_05", "submit", {"answer": "fixed add()"})]),
    tool("m11", "toolu_05", None, "fixed add()"),
]

# a second attempt that edits without looking and submits at once; the editor call fails first
SHORT = [
    SYSTEM, USER,
    assistant("n2", "Editing the file.", [call("toolu_11", "text_editor", {"command": "str_replace", "path": "/testbed/calc.py",
                                                                          "old_str": "a - b", "new_str": "a + b"})]),
    tool("n3", "toolu_11", "text_editor", "", {"type": "file_not_found", "message": "No such file: /testbed/calc.py"}),
    assistant("n4", "I could not find the file.", [call("toolu_12", "submit", {"answer": "not fixed"})]),
    tool("n5", "toolu_12", "submit", "not fixed"),
]


def sample(sid, epoch, messages, scores, repo="example/calc"):
    return {"id": sid, "epoch": epoch, "input": USER["content"], "target": "", "messages": messages,
            "output": {"model": "example-model-1", "choices": []}, "scores": scores,
            "metadata": {"repo": repo, "base_commit": "0a1b2c3"}, "store": {}, "events": [],
            "model_usage": {}, "attachments": {}}


def eval_spec(epochs):
    return {"eval_id": "E1", "run_id": "R1", "created": "2026-03-02T10:00:00+00:00", "task": "calc_fix",
            "task_version": 0, "dataset": {"name": "calc", "samples": 2}, "model": "example/example-model-1",
            "config": {"epochs": epochs}, "packages": {"inspect_ai": "0.3.140"}}


def score(value):
    return {"value": value, "answer": None, "explanation": None, "history": []}


# .json log: one sample, two epochs (attempts 0 and 1 of one instance); epoch 1 resolved (1.0), epoch 2
# not (0.0 and "I" agree)
log = {"version": 2, "status": "success", "eval": eval_spec(2), "plan": {"name": "plan", "steps": []},
       "results": {"total_samples": 2, "completed_samples": 2, "scores": []},
       "stats": {"started_at": "2026-03-02T10:00:00+00:00", "completed_at": "2026-03-02T10:01:00+00:00"},
       "samples": [sample("calc__add-1", 1, FULL, {"swe_bench_scorer": score(1.0)}),
                   sample("calc__add-1", 2, SHORT, {"swe_bench_scorer": score(0.0), "includes": score("I")})]}
with open("calc_epochs.json", "w") as f:
    json.dump(log, f, indent=1)
    f.write("\n")

# .eval archive: two samples, one epoch (ids as given); sample 7 (an integer id) has
# scorers that disagree ("C" and "P"): no verdict
start = {"version": 2, "eval": eval_spec(1), "plan": {"name": "plan", "steps": []}}
header = dict(start, status="success", results={"total_samples": 2, "completed_samples": 2, "scores": []},
              stats={"started_at": "2026-03-02T10:00:00+00:00", "completed_at": "2026-03-02T10:01:00+00:00"})
# its calc__add-1 is another run of the sample: the same turns, but the test run took
# 0.03 s (so its messages are not those of calc_epochs.json's epoch 1 and both files load
# as attempts of one instance)
FULL_EVAL = [dict(m, content="1 passed in 0.03s\n") if m["id"] == "m9" else m for m in FULL]
s1 = sample("calc__add-1", 1, FULL_EVAL, {"swe_bench_scorer": score("C")})
s7 = sample(7, 1, SHORT, {"a": score("C"), "b": score("P")}, repo="example/calc")
with zipfile.ZipFile("calc.eval", "w", compression=zipfile.ZIP_DEFLATED) as z:
    for name, doc in [("_journal/start.json", start), ("samples/calc__add-1_epoch_1.json", s1),
                      ("samples/7_epoch_1.json", s7),
                      ("summaries.json", [{"id": "calc__add-1", "epoch": 1}, {"id": 7, "epoch": 1}]),
                      ("header.json", header)]:
        info = zipfile.ZipInfo(name, date_time=(2026, 3, 2, 10, 1, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, json.dumps(doc))
