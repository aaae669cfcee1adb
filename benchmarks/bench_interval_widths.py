"""Each proven population bound's width over the exact quantile, side by side (issue 31).

Run: ``python benchmarks/bench_interval_widths.py`` (about two minutes). For fixed profiles
(ADPM's weights and noise, with and without a declared spread s, unit scale) prints the
exact 95% quantile q of |Z + L| under the worst two-point law on the range with sd at most
s (brute force: Z's exact law by convolving each tier's binomial, L's Laplace CDF in closed
form, q by bisection; the worst over a grid of 29 values of p), then each bound of
hdp_core.intervals.population_bounds over q: (a) deterministic, (b) union, (c) Chernoff,
(d) Chebyshev, (e) fourth moment; "old" is the least of (a)-(c), what main stated; "now" is
the least of all five, what a release states. "none" is the least of five WITHOUT the declared
spread; "priv" the interval with a privately estimated spread (hdp_core.intervals_spread: ADPM's
untuned weights, the spread bound S released from the saturated and public users' unspent
budget, at its typical value: sample variance = sigma^2, its noise at its median 0; sigma =
the case's sd, or 1/2), both over the q of ADPM's untuned weights at that sd; "-" where no two
users have budget left. A second table, realistic menus (the Tier designer's templates, range
0-500 USD, sd 50/100/150/250 USD), prints none/priv at n = 1,000 to 10^6 and both over q at
n = 1,000 (larger n: no brute-force q); "capped": none/priv when the spread charges each
user at most tau*, what the mean charged a saturated user, not all they have left. A third
table: one tier (no one saturates) when a share f of every level pays for the spread. A ratio
below 1 would be a bound that is not valid (never seen; tests/core/test_intervals_oracle.py
checks it). The two-point laws are the extreme laws for many of these bounds but not proven
the worst for every profile, so q is a lower bound of the true worst-case quantile and each
ratio an upper bound of how loose the bound is. Not part of the test suite.
"""

from __future__ import annotations

import math
import time

import numpy as np

import hdp_core as hdp
from hdp_core.intervals import population_bounds
from hdp_core.intervals_spread import (
    SPREAD_FAILURE,
    choose_spread_users,
    population_half_width_private_spread,
    spread_noise_scale,
    spread_ucb,
)
from hdp_core.menu import template_menu

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


def worst_quantile(weights, counts, eta: float, sd: float | None, ps=PS) -> float:
    w, c = np.unique(np.asarray(weights), return_inverse=True)  # merge tiers of equal weight
    weights, counts = w, np.bincount(c, weights=np.asarray(counts)).astype(np.int64)
    best = 0.0
    for p in ps:
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


def private_spread(prof, sd: float | None, cap: bool = False) -> tuple[float, float, int]:
    """(none, priv, m): the least of five without a spread and the private-spread interval at
    its typical S (module docstring) for ADPM's untuned weights; priv nan if m < 2. ``cap``:
    the spread charges each user at most tau* (what the mean charged a saturated user), not
    everything they have left."""
    sol = hdp.adpm(prof)
    w, c, eta = sol.weights, prof.counts, sol.noise_scale
    s2w, mw = float(np.dot(c, w * w)), float(w.max())
    none = min(population_bounds(s2w, mw, eta).values())
    lv = prof.levels
    tau = sol.saturation_level
    left = np.full(lv.shape, math.inf)  # public values: nothing to protect
    fin = np.isfinite(lv)
    left[fin] = np.maximum(lv[fin] - tau, 0.0)  # saturated: eps - tau*; others 0
    _, m, eps2 = choose_spread_users(left, c, cap=tau if cap else math.inf)
    if m < 2:
        return none, math.nan, m
    sigma = 0.5 if sd is None else sd
    s_up = spread_ucb(sigma * sigma, m, spread_noise_scale(m, eps2), SPREAD_FAILURE)
    return none, population_half_width_private_spread(s2w, mw, eta, s_up), m


def cell(x: float, width: int = 7) -> str:
    return f"{'-':>{width}}" if math.isnan(x) else f"{x:>{width}.2f}"


def realistic() -> None:
    """none/priv on the Tier designer's template menus (module docstring)."""
    print(
        f"\n{'menu':<14}{'n':>9}{'sd':>6}{'m':>8}{'none/q':>8}{'priv/q':>8}{'none/priv':>10}"
        f"{'capped':>8}"
    )
    for name in ("three_public", "two", "product_menu"):
        for n in (1_000, 10_000, 100_000, 1_000_000):
            prof = template_menu(name, n_users=n).to_profile()
            for sd in (0.1, 0.2, 0.3, 0.5):
                none, priv, m = private_spread(prof, sd)
                capped = none / private_spread(prof, sd, cap=True)[1]
                nq = pq = math.nan
                if n == 1_000:
                    sol = hdp.adpm(prof)
                    ps = PS[[0, 3, 6, 9, 12, 15, 18, 21, 24, 25, 26]]
                    q = worst_quantile(sol.weights, prof.counts, sol.noise_scale, sd, ps)
                    nq, pq = none / q, priv / q
                print(
                    f"{name:<14}{n:>9,}{sd:>6g}{m:>8,}{cell(nq, 8)}{cell(pq, 8)}"
                    f"{cell(none / priv, 10)}{cell(capped, 8)}"
                )


def split_budget() -> None:
    """none/priv when no one saturates (one tier at eps) and a share f of every user's level
    pays for the spread (all n users, eps2 = f eps), the mean running at (1 - f) eps."""
    print(f"\n{'one tier':<14}{'n':>9}" + "".join(f"{f'f={f:g} sd 0.1/0.2':>20}" for f in FS))
    for eps in (0.1, 1.0):
        for n in (1_000, 10_000, 100_000):
            plain = hdp.adpm(hdp.EpsilonProfile.from_tiers([eps], [n]))
            none = hdp.population_half_width(plain.weights, [n], plain.noise_scale)
            row = f"{f'eps {eps:g}':<14}{n:>9,}"
            for f in FS:
                sol = hdp.adpm(hdp.EpsilonProfile.from_tiers([eps * (1 - f)], [n]))
                w, eta = float(sol.weights[0]), sol.noise_scale
                b = spread_noise_scale(n, eps * f)
                r = [
                    none
                    / population_half_width_private_spread(
                        n * w * w, w, eta, spread_ucb(sd * sd, n, b, SPREAD_FAILURE)
                    )
                    for sd in (0.1, 0.2)
                ]
                row += f"{f'{r[0]:.2f}/{r[1]:.2f}':>20}"
            print(row)


FS = (0.05, 0.1, 0.2)


def main() -> None:
    t0 = time.perf_counter()
    head = f"{'case':<18}{'sd':>6}{'q':>10}" + "".join(f"{s:>7}" for s in SHORT)
    print(head + f"{'old':>7}{'now':>7}{'old/now':>9}{'none':>7}{'priv':>7}")
    olds, nows = [], []
    for name, levels, counts, sd in CASES:
        prof = hdp.EpsilonProfile.from_tiers(levels, counts)
        sol = hdp.adpm(prof, data_sd=sd)
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
        none, priv, _ = private_spread(prof, sd)
        q0 = q
        if sd is not None:  # the untuned weights' own q
            plain = hdp.adpm(prof)
            q0 = worst_quantile(plain.weights, c, plain.noise_scale, sd)
        sd_s = "-" if sd is None else f"{sd:g}"
        print(
            f"{name:<18}{sd_s:>6}{q:>10.4g}{cells}{old / q:>7.2f}{now / q:>7.2f}{old / now:>9.2f}"
            f"{cell(none / q0)}{cell(priv / q0)}"
        )
    print(
        f"\nover q: old median {np.median(olds):.2f}, max {max(olds):.2f}, "
        f"over 2x in {sum(r > 2 for r in olds)} of {len(olds)}; "
        f"now median {np.median(nows):.2f}, max {max(nows):.2f}, "
        f"over 2x in {sum(r > 2 for r in nows)} of {len(nows)}"
    )
    realistic()
    split_budget()
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
