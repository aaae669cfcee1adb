"""Benchmark of hdp.simulate_mse, measured side by side in one run (ratios, not absolute times).

1. The paper's Table 1 experiment (n = 1000 users, 20 000 trials, all six methods, Beta(2, 3))
   against drawing its Beta data once: rng.beta(2, 3, (20000, 1000)) with the same generator
   type (numpy's default PCG64). Target ratio <= 1.5 (2 is the floor). Also shown: the same
   Beta draws made in the simulator's chunk size, and each method simulated alone (where the
   time goes).
2. 10^9 users in 100 tiers, 20 000 trials, all six methods, TwoPoint(1/2) (exact binomial sums)
   and Beta(2, 3) (normal approximation for tier sums): seconds, target under 1 s.
3. optimality_scatter(500): seconds (the Bounds page calls it; should be well under 1 s).

Run: .venv/bin/python benchmarks/bench_simulate.py [--repeat 3] [--quick]
Each figure is the best of --repeat runs (the machine may be shared); runs are interleaved.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import hdp_core as hdp
from hdp_core import simulate as sim
from hdp_core.experiments import optimality_scatter

N, TRIALS = 1000, 20_000


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def best_of(fns: dict, repeat: int) -> dict[str, float]:
    """Interleaved runs of every function; the best time of each."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for k, fn in fns.items():
            best[k] = min(best[k], timed(fn))
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure (best is kept)")
    ap.add_argument("--quick", action="store_true", help="skip the per-method breakdown")
    args = ap.parse_args(argv)

    prof = hdp.paper_profile("high", N, 0)
    dist = hdp.Beta(2, 3)
    chunk_rows = max(1, min(TRIALS, sim.CHUNK_CELLS // N))

    def beta_once():
        np.random.default_rng(0).beta(2.0, 3.0, (TRIALS, N))

    def beta_chunked():
        rng = np.random.default_rng(0)
        for s in range(0, TRIALS, chunk_rows):
            rng.beta(2.0, 3.0, (min(chunk_rows, TRIALS - s), N))

    def beta_threads():
        """The same chunks on the simulator's threads (its own parallelism, no methods)."""
        from concurrent.futures import ThreadPoolExecutor

        def one(ci):
            s = ci * chunk_rows
            np.random.default_rng([0, ci]).beta(2.0, 3.0, (min(chunk_rows, TRIALS - s), N))

        with ThreadPoolExecutor(max_workers=sim._WORKERS) as pool:
            list(pool.map(one, range(-(-TRIALS // chunk_rows))))

    def paper():
        hdp.simulate_mse(hdp.METHODS, prof, dist, trials=TRIALS, seed=0)

    paper()  # warm-up (imports, caches)
    t = best_of(
        {
            "sim": paper,
            "beta": beta_once,
            "beta_chunked": beta_chunked,
            "beta_threads": beta_threads,
        },
        args.repeat,
    )
    print(f"1. Paper experiment: n = {N}, {TRIALS:,} trials, 6 methods, Beta(2, 3)")
    print(f"   simulate_mse (all six methods)          {t['sim']:7.3f} s")
    print(f"   rng.beta once, {TRIALS}x{N}             {t['beta']:7.3f} s")
    print(
        f"   rng.beta in the simulator's chunks      {t['beta_chunked']:7.3f} s "
        f"({chunk_rows} rows each)"
    )
    print(f"   ratio simulate / beta once:    {t['sim'] / t['beta']:.2f}x  (target <= 1.5x)")
    print(
        f"   rng.beta chunks on {sim._WORKERS} threads like the simulator "
        f"{t['beta_threads']:7.3f} s"
    )
    print(f"   ratio simulate / beta chunked: {t['sim'] / t['beta_chunked']:.2f}x")
    print(
        f"   ratio simulate / beta chunked on the same threads: {t['sim'] / t['beta_threads']:.2f}x"
    )

    if not args.quick:
        alone = best_of(
            {m: (lambda m=m: hdp.simulate_mse([m], prof, dist, TRIALS, 0)) for m in hdp.METHODS},
            args.repeat,
        )
        print("   each method simulated alone (data draws included in every line):")
        for m, s in alone.items():
            print(f"     {m:8} {s:7.3f} s  ({s / t['beta']:.2f}x beta once)")

    levels = np.exp(np.linspace(-4.0, 2.0, 100))
    counts = np.full(100, 10**7)
    huge = hdp.EpsilonProfile.from_tiers(levels, counts)
    print(f"\n2. {huge.n:.0e} users in {huge.k} tiers, {TRIALS:,} trials, all six methods")
    for d in (hdp.TwoPoint(0.5), hdp.Beta(2, 3)):
        res = {}

        def run(d=d, res=res):
            res.update(hdp.simulate_mse(hdp.METHODS, huge, d, trials=TRIALS, seed=0))

        run()
        s = best_of({"x": run}, args.repeat)["x"]
        worst_z = max(abs(r.mse - r.exact) / r.std_err for r in res.values())
        approx = any(r.approximate for r in res.values())
        print(
            f"   {d.label():22} {s:6.3f} s  (target < 1 s; approximate={approx}; "
            f"largest |sim - exact| = {worst_z:.1f} SE)"
        )
    s = best_of({"x": lambda: [hdp.exact_mse(m, huge, dist) for m in hdp.METHODS]}, args.repeat)[
        "x"
    ]
    print(f"   exact_mse, all six methods   {s * 1e3:6.1f} ms")

    s = best_of({"x": lambda: optimality_scatter(500)}, args.repeat)["x"]
    print(f"\n3. optimality_scatter(500 sequences, max_n 200): {s * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
