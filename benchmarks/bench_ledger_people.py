"""Benchmark (issue 30): the cost of the ledgers beside the release, side by side in one run.

Writes a Parquet file of N rows (1e7 by default; --rows) with an integer person id and four
tiers, then prints, best of --repeat runs each (taken in turns, one of each per round):
release_mean without a ledger, with the dataset ledger (check scan, charge, record), with the
per-person ledger on a new ledger (first release: keyed hashes, every person inserted) and on
a ledger holding the first release's spends (second release: every person read and
updated), with the ratios to the release without a ledger. Goals of the issue: dataset
ledger <= 1.5x, per-person <= 3x.

With --memory, each of the four also runs once more in a fresh process and its peak
resident memory is printed (MB, the whole process: Python, DuckDB and the Parquet reader), to
compare across --rows.

    python benchmarks/bench_ledger_people.py [--rows N] [--repeat K] [--memory]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean

KW: dict[str, Any] = {"value": "v", "eps": "e", "lo": 0, "hi": 500}
VARIANTS = ("none", "spend", "dataset", "first", "second")


def best_interleaved(runs: dict, k: int) -> tuple[dict[str, float], dict[str, float]]:
    """Best of ``k`` timings of each ``runs[name] = (run, prepare)``, taken in turns (one of
    each per round), so a change in the machine's load falls on every variant alike: wall
    time, and this process's CPU time (every thread's: DuckDB's too; steadier on a busy
    machine, blind to waiting for the disk)."""
    out: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(k):
        for name, (run, prepare) in runs.items():
            arg = prepare() if prepare is not None else None
            t, c = time.perf_counter(), time.process_time()
            run(arg)
            out[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    return {n: min(x) for n, x in out.items()}, {n: min(x) for n, x in cpu.items()}


def write_people_table(path: str, n: int, rng: np.random.Generator) -> None:
    """The benchmarks' table of ``n`` persons as Parquet at ``path``: an integer id ``uid``
    (a permutation), a value ``v`` in [0, 500] and one of four tiers ``e``."""
    pq.write_table(
        pa.table(
            {
                "uid": rng.permutation(n).astype(np.int64),
                "v": rng.uniform(0, 500, n),
                "e": rng.choice([0.1, 0.5, 1.0, 2.0], n),
            }
        ),
        path,
    )


def _once(variant: str, path: str, ledger: str) -> None:
    """One release of ``variant`` (a child process of --memory)."""
    if variant == "none":
        release_mean(path, **KW, ledger=False)
    elif variant == "spend":
        release_mean(path, **KW, ledger=False, spend="1/1000")
    elif variant == "dataset":
        release_mean(path, **KW, ledger=PrivacyLedger(ledger), spend="1/1000")
    else:
        release_mean(path, **KW, ledger=PrivacyLedger(ledger), id="uid", spend="1/2")


def _peak_mb(variant: str, path: str, ledger: str) -> float:
    """Peak resident memory (MB) of a fresh process making one release of ``variant``."""
    # VmHWM of the new program (ru_maxrss would carry the parent's peak across fork and exec);
    # this file is loaded by its path, hdp_release from the same sys.path as this process
    code = (
        "import importlib.util as u, sys; s = u.spec_from_file_location('b', sys.argv[4]); "
        "m = u.module_from_spec(s); s.loader.exec_module(m); m._once(*sys.argv[1:4]); "
        "print([x.split()[1] for x in open('/proc/self/status') if x.startswith('VmHWM')][0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, variant, path, ledger, os.path.abspath(__file__)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    return int(out.stdout.split()[-1]) / 1024  # kB


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--no-people", action="store_true", help="only the dataset ledger")
    a = ap.parse_args()
    n, k = a.rows, a.repeat
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.parquet")
        write_people_table(path, n, rng)
        seq = iter(range(10**6))

        def fresh(copy_of: str | None = None) -> PrivacyLedger:
            p = os.path.join(d, f"l{next(seq)}.duckdb")
            if copy_of is not None:
                shutil.copy(copy_of, p)
            return PrivacyLedger(p)

        first = os.path.join(d, "first.duckdb")
        if not a.no_people:
            release_mean(path, **KW, ledger=PrivacyLedger(first), id="uid", spend="1/2")
        dataset_led = fresh()
        runs = {
            "none": (lambda _: release_mean(path, **KW, ledger=False), None),
            # the dataset ledger's own release (spend 1/1000), without a ledger
            "spend": (lambda _: release_mean(path, **KW, ledger=False, spend="1/1000"), None),
            "dataset": (
                lambda _: release_mean(path, **KW, ledger=dataset_led, spend="1/1000"),
                None,
            ),
            "first": (lambda led: release_mean(path, **KW, ledger=led, id="uid"), fresh),
            "second": (
                lambda led: release_mean(path, **KW, ledger=led, id="uid", spend="1/2"),
                lambda: fresh(first),
            ),
        }
        if a.no_people:
            del runs["first"], runs["second"]
        t, c = best_interleaved(runs, k)
        mem = dict.fromkeys(VARIANTS, "")
        if a.memory:
            for v in runs:
                led = os.path.join(d, f"m{v}.duckdb")
                if v == "second":
                    shutil.copy(first, led)
                mem[v] = f"   peak {_peak_mb(v, path, led):7.0f} MB"
        print(f"rows {n:,}   best of {k}, in turns   load average {os.getloadavg()[0]:.1f}")
        labels = {
            "none": ("release, no ledger", ""),
            "spend": ("release, no ledger, spend 1/1000", ""),
            "dataset": ("release, dataset ledger", "(goal 1.5x)"),
            "first": ("release, per-person, first release", "(goal 3x)"),
            "second": ("release, per-person, second release", "(goal 3x)"),
        }
        print(f"{'':36s}{'wall':>10s} {'ratio':>6s} {'':11s}{'CPU':>9s} {'ratio':>6s}")
        for name in runs:
            label, goal = labels[name]
            print(
                f"{label:36s}{t[name]:8.3f} s {t[name] / t['none']:5.2f}x {goal:11s}"
                f"{c[name]:7.3f} s {c[name] / c['none']:5.2f}x{mem[name]}"
            )
        plan = release_mean(path, **KW, ledger=dataset_led, spend="1/1000").plan
        print(f"the dataset ledger's release: {plan}")
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"(this process, which wrote the table: peak {own:.0f} MB)")


if __name__ == "__main__":
    main()
