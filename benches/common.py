"""Shared parts of the benchmark scripts: run a child and measure it, describe the machine,
the common command-line options and the report header."""
import sys
import argparse, os, platform, subprocess, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, log, cwd=None):
    """Run one child with output to `log`; return (seconds, peak RSS MiB, exit code, output).
    Dirty pages are flushed first (untimed): a step must not pay for writing back the file the
    step before it, or the generator, wrote."""
    os.sync()
    with open(log, "w+") as out:
        t0 = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - t0
        out.seek(0)
        return seconds, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), out.read()


def run_cpu(cmd, log, cwd=None):
    """Like `run`, plus the child's CPU seconds (user + system):
    (seconds, CPU seconds, peak RSS MiB, exit code, output)."""
    os.sync()
    with open(log, "w+") as out:
        t0 = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - t0
        out.seek(0)
        return (seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                os.waitstatus_to_exitcode(status), out.read())


def machine():
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((int(l.split()[1]) // 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
    return (f"nproc {len(os.sched_getaffinity(0))} (os.cpu_count {os.cpu_count()}), {model}, {mem} MiB RAM, "
            f"Linux {platform.release()}, load avg {os.getloadavg()[0]:.2f} at start")


def parser(description):
    """An argument parser with the options every benchmark takes."""
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.expanduser("~/.cache/sphragis-target")
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"), help="shared team dir (default ../shared)")
    p.add_argument("--bin", default=os.path.join(target, "release", "sphragis"), help="sphragis binary")
    p.add_argument("--venv-python", default=os.path.expanduser("~/.cache/sphragis-venv/bin/python"),
                   help="python with duckdb==2.0.0")
    p.add_argument("--workdir", help="make the scratch dir inside this dir (default: system temp)")
    p.add_argument("--keep", action="store_true", help="keep the generated files, databases and logs")
    return p


DUCKDB_PIN = "duckdb==2.0.0"


def bench_venv(args):
    """Makes the bench venv (`--venv-python`'s parent venv) with DUCKDB_PIN from PyPI when its
    python is missing or lacks that duckdb, as .ci/run does for its own."""
    ok = os.path.exists(args.venv_python) and subprocess.run(
        [args.venv_python, "-c", "import duckdb, sys; sys.exit(duckdb.__version__ != '2.0.0')"],
        capture_output=True).returncode == 0
    if ok:
        return
    venv = os.path.dirname(os.path.dirname(args.venv_python))
    print(f"creating the bench venv {venv}: pip install {DUCKDB_PIN}", flush=True)
    if not os.path.exists(args.venv_python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([args.venv_python, "-m", "pip", "install", "-q", "--disable-pip-version-check", DUCKDB_PIN],
                   check=True)


def header(title, args, notes):
    """Print the report header: title, date, machine, tool versions, notes."""
    if not os.path.exists(args.bin):
        sys.exit(f"no sphragis binary at {args.bin}: build it with `cargo build --release` "
                 "(set CARGO_TARGET_DIR as for that build) or pass --bin")
    bench_venv(args)
    version = subprocess.run([args.bin, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    duck = subprocess.run([args.venv_python, "-c", "import duckdb; print(duckdb.__version__)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    print(title)
    print(f"date:    {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    print(f"machine: {machine()}")
    print(f"tools:   {version} ({args.bin}); Python duckdb {duck}; Python {platform.python_version()}")
    for i, line in enumerate(notes):
        print(("note:    " if i == 0 else "         ") + line)
    template_cache(args)


def template_cache(args):
    """Points every sphragis step at a fresh template cache (SPHRAGIS_CACHE_DIR, a temp dir of
    this run) and makes its template with one `sphragis init` of a scratch file, timed: the
    first new file of a schema (from scratch, then copied into the cache). Every `init`
    timed afterwards is what a user's second and later new files cost (a copy of the
    template); the cold figure is printed beside it."""
    import atexit, shutil, tempfile
    workdir = getattr(args, "workdir", None)
    if workdir:  # --workdir names a folder the run may have to make (it held nothing before)
        os.makedirs(workdir, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="sphragis_template_cache.", dir=workdir)
    atexit.register(shutil.rmtree, cache, True)
    os.environ["SPHRAGIS_CACHE_DIR"] = cache
    scratch = os.path.join(cache, "first.duckdb")
    seconds, _, code, output = run([args.bin, "--db", scratch, "--quiet", "init"], os.path.join(cache, "init.log"))
    if code != 0:
        sys.exit(f"sphragis init of a scratch file failed (exit {code}): {output.strip()[-300:]}")
    for f in os.listdir(cache):
        if f.startswith("first.duckdb"):
            os.remove(os.path.join(cache, f))
    made = [f for f in os.listdir(cache) if f.startswith("template-")]
    print(f"template: first new file of this schema {seconds:.2f} s (made from scratch, then kept as "
          f"{made[0] if made else 'NO TEMPLATE'} in {cache}); every init below copies it")


SIMD_PIN = "pysimdjson==7.0.2"


def simd_peer(args):
    """The command prefix of the SIMD-JSON physical reference (benches/simd_parse_peer.py) in the
    bench venv; installs `pysimdjson` (simdjson's Python binding, from PyPI) there when missing."""
    ok = subprocess.run([args.venv_python, "-c", "import simdjson"], capture_output=True).returncode == 0
    if not ok:
        print(f"installing {SIMD_PIN} into the bench venv ({args.venv_python})", flush=True)
        subprocess.run([args.venv_python, "-m", "pip", "install", "-q", SIMD_PIN], check=True)
    return [args.venv_python, os.path.join(os.path.dirname(os.path.abspath(__file__)), "simd_parse_peer.py")]
