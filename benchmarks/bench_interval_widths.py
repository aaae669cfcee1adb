"""Each proven population bound's width over the exact quantile, side by side (issue 31).

Run: ``python benchmarks/bench_interval_widths.py`` (about two minutes). For a fixed set of profiles
(ADPM's weights and noise, with and without a declared spread s, unit scale) prints the
exact 95% quantile q of |Z + L| under the worst two-point law on the range with sd at most
s (brute force: Z's exact law by convolving each tier's binomial, L's Laplace CDF in closed
form, q by bisection; the worst over a grid of 29 values of p), then each bound of
hdp_core.intervals.population_bounds over q: (a) deterministic, (b) union, (c) Chernoff,
(d) Chebyshev, (e) fourth moment; "old" is the least of (a)-(c), what main stated; "now" is
the least of all five, what a release states. A ratio below 1 would be a bound that is not
valid (never seen; tests/core/test_intervals_oracle.py checks it). The two-point laws are
the extreme laws for many of these bounds but not proven the worst for every profile, so
q is a lower bound of the true worst-case quantile and each ratio an upper bound of how
loose the bound is. Not part of the test suite.
"""

from __future__ import annotations

import math
import time

import numpy as np

import hdp_core as hdp
from hdp_core.intervals import population_bounds

ALPHA = 0.05
PS = np.concatenate([np.linspace(0.02, 0.98, 25), [0.001, 0.005, 0.995, 0.999]])


def binom_pmf(n: int, p: float) -> np.ndarray:
    k = np.arange(n + 1)
    lg = (
        math.lgamma(n + 1)
        - np.array([math.lgamma(i + 1) + math.lgamma(n - i + 1) for i in k])
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )
    return np.exp(lg)


def z_law(weights, counts, gap: float, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Z = sum_i w_i (x_i - mu) for x_i on {0, gap}, P(gap) = p: per tier a binomial."""
    vals, probs = np.zeros(1), np.ones(1)
    for w, c in zip(weights, counts, strict=True):
        if w == 0 or c == 0:
            continue
        k = np.arange(c + 1)
        tv = w * gap * (k - c * p)
        vals = (vals[:, None] + tv[None, :]).ravel()
        probs = (probs[:, None] * binom_pmf(int(c), p)[None, :]).ravel()
        if vals.size > 200_000:  # merge atoms on a fine grid (1e-12 of the range)
            key = np.round(vals * 1e12)
            uniq, inv = np.unique(key, return_inverse=True)
            probs = np.bincount(inv, weights=probs)
            vals = uniq / 1e12
    return vals, probs


def tail(vals, probs, h: float, eta: float) -> float:
    if eta == 0:
        return float(probs[np.abs(vals) > h].sum())
    hi, lo = h - vals, -h - vals
    e_hi, e_lo = 0.5 * np.exp(-np.abs(hi) / eta), 0.5 * np.exp(-np.abs(lo) / eta)
    p_hi = np.where(hi >= 0, e_hi, 1 - e_hi)  # P(L > h - z)
    p_lo = np.where(lo <= 0, e_lo, 1 - e_lo)  # P(L < -h - z)
    return float(np.dot(probs, np.minimum(p_hi + p_lo, 1.0)))


def quantile(vals, probs, eta: float) -> float:
    if eta == 0:
        a = np.abs(vals)
        order = np.argsort(a)
        above = 1.0 - np.cumsum(probs[order])
        return float(a[order][int(np.argmax(above <= ALPHA + 1e-15))])
    lo, hi = 0.0, float(np.abs(vals).max()) + 50 * eta
    for _ in range(44):  # to 2^-44 of the start: far below the ratios' 2 decimals
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if tail(vals, probs, mid, eta) > ALPHA else (lo, mid)
    return hi


def worst_quantile(weights, counts, eta: float, sd: float | None) -> float:
    best = 0.0
    for p in PS:
        gap = 1.0 if sd is None else min(1.0, sd / math.sqrt(p * (1 - p)))
        best = max(best, quantile(*z_law(weights, counts, gap, p), eta))
    return best


CASES = [
    ("1 user eps 100", [100.0], [1], 0.01),
    ("1 user eps 100", [100.0], [1], 0.1),
    ("2 users eps 50", [50.0], [2], None),
    ("10 users eps 1", [1.0], [10], None),
    ("10 users eps 1", [1.0], [10], 0.1),
    ("50 public", [math.inf], [50], None),
    ("200 users eps 1", [1.0], [200], None),
    ("200 users eps 1", [1.0], [200], 0.1),
    ("200 users eps 5", [5.0], [200], 0.02),
    ("tiers 100/50/10", [0.5, 2.0, math.inf], [100, 50, 10], None),
    ("tiers 100/50/10", [0.5, 2.0, math.inf], [100, 50, 10], 0.15),
    ("1000 users eps 1", [1.0], [1000], None),
    ("1000 users eps 0.1", [0.1], [1000], 0.25),
]
NAMES = ["deterministic", "union", "chernoff", "chebyshev", "fourth_moment"]
SHORT = ["(a)", "(b)", "(c)", "(d)", "(e)"]


def main() -> None:
    t0 = time.perf_counter()
    head = f"{'case':<18}{'sd':>6}{'q':>10}" + "".join(f"{s:>7}" for s in SHORT)
    print(head + f"{'old':>7}{'now':>7}{'old/now':>9}")
    olds, nows = [], []
    for name, levels, counts, sd in CASES:
        sol = hdp.adpm(hdp.EpsilonProfile.from_tiers(levels, counts), data_sd=sd)
        if sol.outputs_zero:
            print(f"{name:<18} ADPM answers the mid-range")
            continue
        w, c, eta = sol.weights, sol.profile.counts, sol.noise_scale
        b = population_bounds(float(np.dot(c, w * w)), float(w.max()), eta, data_sd=sd)
        q = worst_quantile(w, c, eta, sd)
        old = min(b[k] for k in NAMES[:3])
        now = min(b.values())
        olds.append(old / q)
        nows.append(now / q)
        cells = "".join(f"{b[k] / q:>7.2f}" for k in NAMES)
        sd_s = "-" if sd is None else f"{sd:g}"
        print(
            f"{name:<18}{sd_s:>6}{q:>10.4g}{cells}{old / q:>7.2f}{now / q:>7.2f}{old / now:>9.2f}"
        )
    print(
        f"\nover q: old median {np.median(olds):.2f}, max {max(olds):.2f}, "
        f"over 2x in {sum(r > 2 for r in olds)} of {len(olds)}; "
        f"now median {np.median(nows):.2f}, max {max(nows):.2f}, "
        f"over 2x in {sum(r > 2 for r in nows)} of {len(nows)}"
    )
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
