"""Shared helpers of the acceptance scripts: run the sphragis binary, compare figures."""
import os
import subprocess
import sys


class Acceptance:
    """Runs `sphragis --db DB --quiet ...` and collects checks; `close()` prints the
    plain closing line `<name>: N passed, M failed` and exits non-zero on any failure."""

    def __init__(self, name, binary, db, fresh=True):
        """`fresh`: remove a database left by an earlier run (False: check an existing one)."""
        self.name, self.binary, self.db = name, binary, db
        self.passed, self.failures = [], []
        for stale in (db, db + ".wal") if fresh else ():
            if os.path.exists(stale):
                os.remove(stale)

    def sph(self, *args, expect=0):
        proc = subprocess.run([self.binary, "--db", self.db, "--quiet", *args], capture_output=True, text=True)
        if proc.returncode != expect:
            sys.exit(f"sphragis {' '.join(args)[:300]} exited {proc.returncode}, expected {expect}\n"
                     f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        return proc

    def check(self, label, got, expected):
        ok = got == expected
        print(f"{'ok  ' if ok else 'FAIL'} {label}: {got} (expected {expected})")
        (self.passed if ok else self.failures).append(label)

    def close(self):
        print(f"{self.name}: {len(self.passed)} passed, {len(self.failures)} failed")
        if self.failures:
            sys.exit(f"failed: {self.failures}")
