"""Differential acceptance of `views build` against Hugging Face (issue 27).

Usage: python3 templates_acceptance.py SPHRAGIS_BINARY SHARED_DATA_DIR WORK_DIR

Renders three small conversations (plain turns; a tool call and its result; a turn order
the Llama 2 style forbids) with each chat template of tests/acceptance/templates/ (written
by the team in the styles of the model families, see its README) through `sphragis views
build` and through `transformers`' `apply_chat_template(tokenize=True, return_dict=True,
return_assistant_tokens_mask=True)`, with the real Qwen3 tokenizer and a tokenizer_config
whose special tokens the templates use (`bos_token` <|endoftext|>, `eos_token` <|im_end|>).
For every pair: the ids and the masks agree token for token, or sphragis refuses and the
expected reason is in its message (a template that is not prefix-preserving, one whose
`raise_exception` fires — where HF raises too). Each template is also rendered with its
generation markers removed: HF then gives an all-zero mask, sphragis refuses. HF's
`strftime_now` is pinned to the date given to `--date` (the clock HF reads is patched).
"""
import datetime as real_datetime
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Acceptance  # noqa: E402

binary, data, work = sys.argv[1], sys.argv[2], sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))
db = os.path.join(work, "acceptance-templates.duckdb")
run = Acceptance("templates acceptance", binary, db)
check = run.check

import transformers  # noqa: E402
import transformers.utils.chat_template_utils as ctu  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402

PINNED = real_datetime.datetime(2026, 7, 4, 9, 30, 0)


class PinnedClock(real_datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return PINNED


# HF's strftime_now reads datetime.now() in chat_template_utils; pin it as --date pins sphragis
if hasattr(ctu, "datetime"):
    ctu.datetime = PinnedClock
ctu._compile_jinja_template.cache_clear()

# the tokenizer folder both sides read: the real tokenizer.json, and a tokenizer_config.json
# naming the special tokens the templates use (copied into the work folder, never the project)
# The families' turn markers, added to the tokenizer as special tokens as each family's own
# tokenizer has them (Qwen3's vocabulary would split them into text, so a message could end
# inside a token; the "bare" tokenizer keeps that case, where sphragis must refuse).
MARKERS = ["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<｜User｜>", "<｜Assistant｜>",
           "<｜end▁of▁sentence｜>", "<｜tool▁output｜>", "[gMASK]", "<sop>", "<|system|>", "<|user|>",
           "<|assistant|>", "<|observation|>", "<|tool|>", "<|end|>", "<start_of_turn>", "<end_of_turn>",
           "[INST]", "[/INST]"]


def tokenizer_folder(name, markers):
    folder = os.path.join(work, f"templates-tokenizer-{name}")
    os.makedirs(folder, exist_ok=True)
    tokenizer = json.load(open(os.path.join(data, "tokenizers", "qwen3", "tokenizer.json")))
    next_id = 1 + max([t["id"] for t in tokenizer["added_tokens"]] + list(tokenizer["model"]["vocab"].values()))
    for k, content in enumerate(markers):
        tokenizer["added_tokens"].append({"id": next_id + k, "content": content, "single_word": False, "lstrip": False,
                                          "rstrip": False, "normalized": False, "special": True})
    json.dump(tokenizer, open(os.path.join(folder, "tokenizer.json"), "w"), ensure_ascii=False)
    config = json.load(open(os.path.join(data, "tokenizers", "qwen3", "tokenizer_config.json")))
    config.pop("chat_template", None)
    config.pop("added_tokens_decoder", None)
    config.update({"bos_token": "<|endoftext|>", "eos_token": "<|im_end|>", "tokenizer_class": "PreTrainedTokenizerFast"})
    json.dump(config, open(os.path.join(folder, "tokenizer_config.json"), "w"))
    return folder, PreTrainedTokenizerFast.from_pretrained(folder)


tokenizers = {"family": tokenizer_folder("family", MARKERS), "bare": tokenizer_folder("bare", [])}
hf = tokenizers["family"][1]
check("HF reads the special tokens of the tokenizer_config", (hf.bos_token, hf.eos_token), ("<|endoftext|>", "<|im_end|>"))
check("the family markers are single tokens", [len(hf.encode(m, add_special_tokens=False)) for m in MARKERS],
      [1] * len(MARKERS))

tools = [{"type": "function", "function": {"name": "bash", "description": "Run a shell command.",
          "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]
conversations = {
    "plain": [
        {"role": "system", "content": "You fix bugs in Python repositories."},
        {"role": "user", "content": "The test test_parse fails with a KeyError."},
        {"role": "assistant", "content": "The parser reads 'name' before checking it exists."},
        {"role": "user", "content": "Fix it, please."},
        {"role": "assistant", "content": "Done: parse() now uses dict.get and the test passes."},
    ],
    "tools": [
        {"role": "system", "content": "You are a careful agent."},
        {"role": "user", "content": "How many files are in src/?"},
        {"role": "assistant", "content": "Let me count them.",
         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": {"command": "ls src | wc -l"}}}]},
        {"role": "tool", "content": "12", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "There are 12 files in src/."},
    ],
}
# each template: the conversations it renders, and what sphragis must do with each
# ("agree", or "refuse: <substring of its message>", where HF renders or raises as noted)
NOT_PREFIX = "not prefix-preserving"
expectations = {
    "llama2": {"plain": "agree", "tools": "refuse: Turns must go user, assistant"},
    "llama3": {"plain": "agree", "tools": "agree"},
    # the system text goes into the last user turn: a prefix renders it elsewhere
    "mistral": {"plain": f"refuse: {NOT_PREFIX}"},
    "zephyr": {"plain": "agree", "tools": "agree"},
    "deepseek": {"plain": "agree", "tools": "agree"},
    "gemma": {"plain": "agree", "tools": "agree"},
    "qwen25": {"plain": "agree", "tools": "agree"},
    "qwen3": {"plain": "agree", "tools": "agree"},
    "glm": {"plain": "agree", "tools": "agree"},
    "phi": {"plain": "agree", "tools": "agree"},
    # Llama 3 markers without their tokens: the system turn ends inside a BPE token
    "llama3@bare": {"plain": "refuse: does not end at a token boundary"},
}


def builder_messages(messages):
    """The messages as `views build` gives them to a template: assistant messages carry
    `reasoning_content` (empty without thinking text)."""
    out = []
    for m in messages:
        m = dict(m)
        if m["role"] == "assistant":
            m.setdefault("reasoning_content", "")
        out.append(m)
    return out


def openhands_row(instance, messages):
    """An OpenHands row (docs/formats.md) holding the conversation, arguments as JSON text."""
    rows = []
    for m in messages:
        m = dict(m)
        if "tool_calls" in m:
            m["tool_calls"] = [dict(c, function=dict(c["function"], arguments=json.dumps(c["function"]["arguments"])))
                               for c in m["tool_calls"]]
        rows.append(m)
    return {"instance_id": instance, "messages": rows, "tools": tools}


rows = [openhands_row(f"conv__{name}-1", messages) for name, messages in conversations.items()]
traj = os.path.join(work, "templates-conversations.json")
json.dump(rows, open(traj, "w"))
run.sph("load", "trajectories", traj)


def hf_render(template, messages, hf):
    try:
        out = hf.apply_chat_template(builder_messages(messages), tools=tools, chat_template=template, tokenize=True,
                                     return_dict=True, return_assistant_tokens_mask=True)
        return list(out["input_ids"]), list(out["assistant_masks"]), None
    except Exception as e:  # a template's raise_exception
        return None, None, str(e)


def sphragis_render(name, template_path, conversation, tok_dir):
    out = os.path.join(work, f"templates-{name}-{conversation}.jsonl")
    proc = subprocess.run([binary, "--db", db, "--quiet", "views", "build", "--tokenizer",
                           os.path.join(tok_dir, "tokenizer.json"), "--template", template_path, "--pool", "T",
                           "--instance", f"conv__{conversation}-1", "--date", PINNED.strftime("%Y-%m-%dT%H:%M:%S"),
                           "--out", out], capture_output=True, text=True)
    if proc.returncode != 0:
        return None, None, proc.stderr.strip()
    view = json.loads(open(out).readline())
    return view["input_ids"], view["loss_mask"], None


def strip_generation(text):
    return re.sub(r"\{%-?\s*(end)?generation\s*-?%\}", "", text)


agreed = 0
for name, cases in expectations.items():
    family, _, variant = name.partition("@")
    tok_dir, hf = tokenizers[variant or "family"]
    path = os.path.join(here, "templates", f"{family}.jinja")
    template = open(path).read()
    for conversation, expected in cases.items():
        label = f"{name} / {conversation}"
        hf_ids, hf_mask, hf_error = hf_render(template, conversations[conversation], hf)
        ids, mask, error = sphragis_render(name, path, conversation, tok_dir)
        if expected == "agree":
            check(f"{label}: HF renders", hf_error, None)
            check(f"{label}: sphragis renders", error, None)
            if hf_ids is not None and ids is not None:
                first = next((i for i, (a, b) in enumerate(zip(ids, hf_ids)) if a != b), None)
                check(f"{label}: ids equal HF's ({len(hf_ids)} tokens; first difference)",
                      (len(ids), first), (len(hf_ids), None))
                check(f"{label}: mask equals HF's assistant_masks ({sum(hf_mask)} supervised)", mask, hf_mask)
                check(f"{label}: the mask supervises something", sum(mask) > 0, True)
                agreed += 1
        else:
            reason = expected.removeprefix("refuse: ")
            check(f"{label}: sphragis refuses, saying {reason!r}", error is not None and reason in error, True)
            if "raise" in reason or "Turns must" in reason:
                check(f"{label}: HF raises the template's exception too", hf_error is not None and reason in hf_error, True)
        # without generation markers: HF gives no supervised token, sphragis refuses
        bare = os.path.join(work, f"templates-{name}-nogen.jinja")
        open(bare, "w").write(strip_generation(template))
        hf_ids, hf_mask, hf_error = hf_render(strip_generation(template), conversations[conversation], hf)
        ids, mask, error = sphragis_render(f"{name}-bare", bare, conversation, tok_dir)
        if hf_error is None:
            check(f"{label} without generation markers: HF supervises nothing", sum(hf_mask), 0)
        check(f"{label} without generation markers: sphragis refuses (no generation block)",
              error is not None and "generation" in error, True)

check("template / conversation pairs where sphragis and HF agree token for token", agreed, 17)
print(f"transformers {transformers.__version__}")
run.close()
