"""benchmarks/bench_release_floor.py's floor queries compute what they claim: its --selftest
compares every query's result with numpy's on a small file (counts and exact integer sums
equal, float sums within 1e-9 relative, the weighted sum at a bin edge rebuilt from the bins)
and checks OpenDP's calls. A broken query (a wrong column, a wrong grid) fails it."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers import ROOT


def test_floor_benchmark_selftest(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_release_floor.py"),
            "--selftest",
            "--rows",
            "20000",
            "--keep",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "selftest ok:" in r.stdout, r.stdout
