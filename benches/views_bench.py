"""views-build benchmark: `sphragis views build` against Hugging Face, on the same bytes, in one run.

What it measures, on the 43 real mini-swe-agent trajectories of
../shared/data/sft/mini-swe-agent-gemini3pro (Qwen3 tokenizer and TRL's Qwen3 training
template from ../shared/data/tokenizers/qwen3, ~1.07M tokens):

  (a) sphragis load trajectories (the 43 files)      -> a fresh DuckDB file (timed, reported)
  (b) sphragis views build --instance x43            -> view JSONL (ids, mask, message spans);
      rendering and tokenizing run on every core; `--repeat N` runs it N times and
      reports each run and the fastest
  (c) the Hugging Face peer, benches/hf_views_peer.py: transformers' apply_chat_template
      with return_assistant_tokens_mask=True, one conversation at a time, in the HF venv;
      it prints its own load seconds (import + tokenizer) and render seconds (the
      apply_chat_template calls only)

Each step is a separate child process: wall seconds (perf_counter around the child), CPU
seconds (user + system, os.wait4) and peak RSS (MiB). The ids and masks sphragis writes are
compared with Hugging Face's for every trajectory (a mismatch is a PROBLEM, exit code 1).
Ratios: HF seconds / sphragis seconds (>1 = sphragis faster), against the peer's own
render seconds (the fairest: no Python start-up) and against its process wall time.

The HF venv (default ~/.cache/sphragis-hf-venv) is created when missing, with
`python3 -m venv` and `pip install transformers==5.24.0 tokenizers==0.23.3 jinja2==3.1.6` from PyPI
(the versions the shared reference views were made with; transformers does not pull in
jinja2, which apply_chat_template needs; no PyTorch needed).

    python3 benches/views_bench.py                  # options as the other benches, plus
    --hf-venv DIR (default ~/.cache/sphragis-hf-venv), --repeat N (default 1)
"""
import glob, json, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import header, parser, run_cpu  # noqa: E402

HF_PINS = ["transformers==5.24.0", "tokenizers==0.23.3", "jinja2==3.1.6"]


def hf_python(venv):
    """The HF venv's python, creating the venv when it lacks transformers."""
    python = os.path.join(venv, "bin", "python")
    ok = os.path.exists(python) and subprocess.run(
        [python, "-c", "import transformers, tokenizers, jinja2"], capture_output=True).returncode == 0
    if not ok:
        print(f"creating the Hugging Face venv {venv}: pip install {' '.join(HF_PINS)}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", *HF_PINS], check=True)
    return python


def bench(args, work):
    data = os.path.join(args.shared, "data")
    trajs = sorted(glob.glob(os.path.join(data, "sft", "mini-swe-agent-gemini3pro", "trajs", "*", "*.traj.json")))
    qwen3 = os.path.join(data, "tokenizers", "qwen3")
    tokenizer, template = os.path.join(qwen3, "tokenizer.json"), os.path.join(qwen3, "qwen3_training.jinja")
    db, built, hf_out = (os.path.join(work, n) for n in ("traj.duckdb", "views.jsonl", "hf.jsonl"))
    problems, rows = [], []
    mb = sum(os.path.getsize(t) for t in trajs) / 1e6

    def step(label, cmd, log):
        s, cpu, rss, code, output = run_cpu(cmd, os.path.join(work, log), cwd=work)
        if code != 0:
            problems.append(f"{label}: exit {code}:\n    " + "\n    ".join(output.strip().splitlines()[-5:]))
            return None
        rows.append((label, s, cpu, rss))
        return output

    step(f"sphragis load trajectories ({len(trajs)} files, {mb:.1f} MB)",
         [args.bin, "--db", db, "--quiet", "load", "trajectories", *trajs], "load.log")
    instances = sum((["--instance", os.path.basename(os.path.dirname(t))] for t in trajs), [])
    builds = []
    for i in range(args.repeat):
        label = "sphragis views build" + (f" (run {i + 1})" if args.repeat > 1 else "")
        if step(label, [args.bin, "--db", db, "--quiet", "views", "build", "--tokenizer", tokenizer,
                        "--template", template, "--pool", "A", *instances, "--out", built], f"build{i}.log") is not None:
            builds.append(rows[-1])
    python = hf_python(args.hf_venv)
    out = step("hugging face apply_chat_template (peer)",
               [python, os.path.join(os.path.dirname(os.path.abspath(__file__)), "hf_views_peer.py"),
                qwen3, template, hf_out, *trajs], "hf.log")
    peer = dict(kv.split("=") for kv in out.strip().splitlines()[-1].split()) if out else {}

    tokens = int(peer.get("tokens", 0))
    if builds and out:
        ours = {v["instance_id"]: v for v in map(json.loads, open(built))}
        theirs = {v["instance_id"]: v for v in map(json.loads, open(hf_out))}
        if sorted(ours) != sorted(theirs):
            problems.append(f"instances differ: {sorted(set(ours) ^ set(theirs))}")
        for k in sorted(set(ours) & set(theirs)):
            if ours[k]["input_ids"] != theirs[k]["input_ids"]:
                problems.append(f"{k}: input_ids differ from Hugging Face")
            elif ours[k]["loss_mask"] != theirs[k]["assistant_masks"]:
                problems.append(f"{k}: loss mask differs from Hugging Face's assistant_masks")
        same = sum(1 for k in set(ours) & set(theirs) if ours[k]["input_ids"] == theirs[k]["input_ids"]
                   and ours[k]["loss_mask"] == theirs[k]["assistant_masks"])
        print(f"\n{len(trajs)} trajectories, {tokens:,} tokens: {same} of them token-for-token and mask-for-mask "
              f"equal to Hugging Face")

    print(f"  {'step':<52}{'wall s':>8}{'CPU s':>8}{'peak MiB':>10}{'Mtok/s':>8}")
    for label, s, cpu, rss in rows:
        rate = f"{tokens / s / 1e6:>8.2f}" if tokens and "load" not in label else f"{'':>8}"
        print(f"  {label:<52}{s:>8.2f}{cpu:>8.2f}{rss:>10,.0f}{rate}")
    if peer:
        print(f"  hugging face, its own timings: load (import + tokenizer) {float(peer['load_seconds']):.2f} s, "
              f"apply_chat_template calls {float(peer['render_seconds']):.2f} s")
        floor = float(peer["tokenize_seconds"])
        cores = len(os.sched_getaffinity(0))
        print(f"  tokenization floor: `tokenizers` encoding the {len(trajs)} rendered texts alone, one core: "
              f"{floor:.2f} s, so on {cores} cores no renderer built on `tokenizers` goes below "
              f"{floor / cores:.2f} s wall")
    if builds and peer:
        best = min(builds, key=lambda r: r[1])
        hf_wall = next(r[1] for r in rows if r[0].startswith("hugging face"))
        print("\n  ratios, Hugging Face seconds / sphragis views build wall seconds (>1 = sphragis faster):")
        print(f"    {'HF apply_chat_template calls (in-process) / sphragis build (process wall)':<78}"
              f"{float(peer['render_seconds']) / best[1]:>6.2f}")
        print(f"    {'HF peer process (wall) / sphragis build (process wall)':<78}{hf_wall / best[1]:>6.2f}")
        print(f"    {'   the same ratio for a build that did nothing but tokenize, on every core':<78}"
              f"{hf_wall / (floor / cores):>6.2f}")
        hf_cpu = next(r[2] for r in rows if r[0].startswith("hugging face"))
        print(f"    {'HF peer process (CPU s) / sphragis build (CPU s; less sensitive to a busy machine)':<78}"
              f"{hf_cpu / best[2]:>6.2f}")
    for p in problems:
        print(f"  PROBLEM {p}")
    return not problems


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--hf-venv", default=os.path.expanduser("~/.cache/sphragis-hf-venv"),
                   help="venv with transformers + tokenizers (created when missing)")
    p.add_argument("--repeat", type=int, default=1, help="runs of sphragis views build (default 1)")
    args = p.parse_args()
    args.shared, args.bin = os.path.abspath(args.shared), os.path.abspath(args.bin)
    header("sphragis views-build benchmark (benches/views_bench.py)", args, [
        "one run per step unless --repeat; sphragis wall time includes process start, opening",
        "the database and parsing tokenizer.json; the HF render seconds exclude its start-up"])
    work = tempfile.mkdtemp(prefix="views_bench.", dir=args.workdir)
    ok = False
    try:
        ok = bench(args, work)
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
