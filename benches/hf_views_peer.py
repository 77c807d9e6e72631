"""Hugging Face peer of `sphragis views build`: the same trajectories, tokenizer and chat
template through transformers' `apply_chat_template(..., tokenize=True, return_dict=True,
return_assistant_tokens_mask=True, add_generation_prompt=False)`, one conversation at a
time on one core, as a training script would.

Usage: python hf_views_peer.py TOKENIZER_DIR TEMPLATE OUT.jsonl TRAJ.json...

Each mini-swe-agent trajectory becomes OpenAI-style messages the way sphragis reads them:
role and content; an assistant message also gets `reasoning_content` =
`extra.response.choices[0].message.reasoning`, stripped ("" when absent). Writes one line
per trajectory ({instance_id, input_ids, assistant_masks}) and prints
`load_seconds=` (import + tokenizer), `render_seconds=` (apply_chat_template calls only),
`tokenize_seconds=` and `tokens=` on the last line.

`tokenize_seconds` is the tokenization floor: the same conversations rendered to text
(untimed), then only the Rust `tokenizers` encoding of each whole text with offsets
(`tok._tokenizer.encode(text, add_special_tokens=False)`), one core. Every renderer that
tokenizes with `tokenizers` — Hugging Face's and sphragis's — spends at least this much CPU.
"""
import json, os, sys, time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
t0 = time.perf_counter()
from transformers import AutoTokenizer  # noqa: E402

tokenizer_dir, template_path, out_path, trajs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
tok = AutoTokenizer.from_pretrained(tokenizer_dir)
template = open(template_path, encoding="utf-8").read()
load_seconds = time.perf_counter() - t0


def messages(path):
    out = []
    for m in json.load(open(path, encoding="utf-8"))["messages"]:
        msg = {"role": m["role"], "content": m["content"]}
        if m["role"] == "assistant":
            choices = (((m.get("extra") or {}).get("response") or {}).get("choices")) or [{}]
            msg["reasoning_content"] = ((choices[0].get("message") or {}).get("reasoning") or "").strip()
        out.append(msg)
    return out


conversations = [(os.path.basename(os.path.dirname(p)), messages(p)) for p in trajs]
render_seconds, tokens = 0.0, 0
with open(out_path, "w") as out:
    for instance_id, msgs in conversations:
        t1 = time.perf_counter()
        r = tok.apply_chat_template(msgs, chat_template=template, tokenize=True, return_dict=True,
                                    return_assistant_tokens_mask=True, add_generation_prompt=False)
        render_seconds += time.perf_counter() - t1
        tokens += len(r["input_ids"])
        out.write(json.dumps({"instance_id": instance_id, "input_ids": list(r["input_ids"]),
                              "assistant_masks": list(r["assistant_masks"])}) + "\n")
tokenize_seconds = 0.0
for _, msgs in conversations:
    text = tok.apply_chat_template(msgs, chat_template=template, tokenize=False, add_generation_prompt=False)
    t1 = time.perf_counter()
    tok._tokenizer.encode(text, add_special_tokens=False)
    tokenize_seconds += time.perf_counter() - t1
print(f"load_seconds={load_seconds:.3f} render_seconds={render_seconds:.3f} "
      f"tokenize_seconds={tokenize_seconds:.3f} tokens={tokens}")
