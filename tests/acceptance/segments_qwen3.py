"""Independent segment counts for the Qwen3 reference views (issue 9, segment-level audit).

Usage: python3 segments_qwen3.py SHARED_DATA_DIR > tests/acceptance/segments_qwen3.expected

No tokenizer library and none of sphragis's token rules: every token id is decoded to
bytes by hand from tokenizer.json (the GPT-2 byte-to-unicode table that Qwen3's
ByteLevel decoder inverts; added tokens are their content), each message span is decoded
to text, and the segments are found on the TEXT with the strings the Qwen3 training
template writes (qwen3_training.jinja): the header `<|im_start|>ROLE\\n`, the end of turn
`<|im_end|>\\n`, in assistant messages `<think>...</think>` and `<tool_call>...</tool_call>`
blocks with the white space after them, the rest text; other roles' bodies are content.
A token belongs to the segment holding its first byte (the script checks that no token
straddles two segments). Supervised tokens are those with assistant_masks = 1.

Prints one line per (instance, role, segment), sorted: instance role segment messages
tokens supervised pattern, where the pattern (always / never / partly, empty when the
segment lies only in untrained assistant messages of a view that trains others) reads
assistant segments over the view's trained assistant messages and other roles over all.
"""
import json
import os
import re
import sys
from collections import defaultdict

data = sys.argv[1]
tok = json.load(open(os.path.join(data, "tokenizers", "qwen3", "tokenizer.json"), encoding="utf-8"))


def bytes_to_unicode():
    """GPT-2's reversible byte <-> printable character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


char_to_byte = {c: b for b, c in bytes_to_unicode().items()}
token_bytes = {}
for text, i in tok["model"]["vocab"].items():
    token_bytes[i] = bytes(char_to_byte[c] for c in text)
for added in tok["added_tokens"]:
    token_bytes[added["id"]] = added["content"].encode("utf-8")

HEADER = re.compile(rb"^<\|im_start\|>[a-z]+\n")
END = re.compile(rb"<\|im_end\|>\n$")
BLOCK = re.compile(rb"(<think>.*?</think>|<tool_call>.*?</tool_call>)\s*", re.S)
NAMES = {b"<think>": "thinking", b"<tool_call>": "tool_call"}


def segments(text, assistant):
    """[(name, start_byte, end_byte)] of one message's text."""
    out = []
    head = HEADER.match(text)
    h = head.end() if head else 0
    end = END.search(text, h)
    e = end.start() if end else len(text)
    if h:
        out.append(("header", 0, h))
    if assistant:
        at = h
        for m in BLOCK.finditer(text, h, e):
            if m.start() > at:
                out.append(("text", at, m.start()))
            out.append((NAMES[m.group(1)[: m.group(1).index(b">") + 1]], m.start(), m.end()))
            at = m.end()
        if at < e:
            out.append(("text", at, e))
    elif e > h:
        out.append(("content", h, e))
    if e < len(text):
        out.append(("end_of_turn", e, len(text)))
    return out


lines = []
for line in open(os.path.join(data, "sft", "reference-views-qwen3", "views.jsonl"), encoding="utf-8"):
    view = json.loads(line)
    ids, mask = view["input_ids"], view["assistant_masks"]
    # per message: {segment: [tokens, supervised]}
    messages = []
    for span in view["message_spans"]:
        start, end, role = span["start"], span["end"], span["role"]
        offsets, text = [], b""
        for i in range(start, end):
            offsets.append(len(text))
            text += token_bytes[ids[i]]
        cut = segments(text, role == "assistant")
        counts = defaultdict(lambda: [0, 0])
        for k, i in enumerate(range(start, end)):
            first, last = offsets[k], offsets[k] + len(token_bytes[ids[i]])
            (name,) = [n for n, a, b in cut if a <= first < b]
            assert all(a <= first and last <= b for n, a, b in cut if n == name and a <= first < b), (span, k)
            counts[name][0] += 1
            counts[name][1] += mask[i]
        trained = sum(s for _, s in counts.values()) > 0
        messages.append((role, trained, counts))
    trains_assistant = any(t for r, t, _ in messages if r == "assistant")
    totals = defaultdict(lambda: [0, 0, 0, 0, 0])  # messages, tokens, supervised, scope tokens, scope supervised
    for role, trained, counts in messages:
        in_scope = trained if role == "assistant" and trains_assistant else True
        for name, (n, s) in counts.items():
            t = totals[(role, name)]
            t[0] += 1
            t[1] += n
            t[2] += s
            if in_scope:
                t[3] += n
                t[4] += s
    for (role, name), (msgs, n, s, scope_n, scope_s) in totals.items():
        pattern = "" if scope_n == 0 else "always" if scope_s == scope_n else "never" if scope_s == 0 else "partly"
        lines.append((view["instance_id"], role, name, msgs, n, s, pattern))

for row in sorted(lines):
    print(" ".join(str(x) for x in row))
