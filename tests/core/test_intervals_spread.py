"""The population interval with a privately estimated spread (hdp_core.intervals_spread)
against independent oracles (issue 31).

1. The spread's bound S: its exact failure probability P(sigma > S) for two-point laws, from
   the binomial law of the values (the sample variance of m values on {0, g} with K at g is
   g^2 K (m - K) / (m (m - 1))) and the Laplace CDF at the noise where S crosses sigma (found
   by bisection on spread_ucb as a black box): at most the stated failure, while a plug-in
   sqrt(V) fails the same check (the check can fail).
2. The whole procedure, exactly: all users public (T the plain mean, no noise) and S from
   the same values, so T and S are dependent; coverage summed over the binomial law of K is
   at least 95% for every two-point law on a grid; the plug-in sqrt(V) misses.
3. Monte Carlo (seeded): a tiered menu with noise on both releases, values from a Beta law
   and a skewed two-point law: coverage >= 95% within 4 standard errors.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_core.intervals import population_bounds
from hdp_core.intervals_spread import (
    SPREAD_FAILURE,
    SPREAD_GRID,
    choose_spread_users,
    population_bounds_private_spread,
    population_half_width_private_spread,
    spread_noise_scale,
    spread_ucb,
)

ALPHA = 0.05


def binom_pmf(m: int, p: float) -> np.ndarray:
    k = np.arange(m + 1)
    lg = np.array([math.lgamma(m + 1) - math.lgamma(i + 1) - math.lgamma(m - i + 1) for i in k])
    return np.exp(lg + k * math.log(p) + (m - k) * math.log1p(-p))


def laplace_cdf(x: float, b: float) -> float:
    return 0.5 * math.exp(x / b) if x < 0 else 1.0 - 0.5 * math.exp(-x / b)


def failure_exact(ucb, m: int, g: float, p: float, b: float) -> float:
    """P(sigma > ucb(V + L)) for m values on {0, g}, P(g) = p, L ~ Laplace(b); ucb is
    non-decreasing in its argument (black box): per K, the noise below which it is under
    sigma is found by bisection and weighed by the Laplace CDF."""
    sigma = g * math.sqrt(p * (1 - p))
    pk = binom_pmf(m, p)
    total = 0.0
    for k, pr in enumerate(pk):
        v = g * g * k * (m - k) / (m * (m - 1))
        if b == 0:
            total += pr * (ucb(v) < sigma)
            continue
        lo, hi = -1.0 - 60 * b, 1.0 + 60 * b  # ucb(v + lo) is the least, ucb(v + hi) = 1/2
        if ucb(v + lo) >= sigma:
            continue
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if ucb(v + mid) < sigma else (lo, mid)
        total += pr * laplace_cdf(hi, b)
    return total


PS = [0.01, 0.03, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9, 0.97]


@pytest.mark.parametrize(
    ("m", "b", "beta"),
    [
        (2, 0.0, 0.4),
        (7, 0.0, 0.2),
        (40, 0.0, 0.01),
        (40, 0.0, 0.3),
        (60, 0.01, 0.1),
        (100, 0.002, 0.4),
    ],
)
def test_spread_ucb_fails_at_most_beta_exactly(m: int, b: float, beta: float) -> None:
    for g in (1.0, 0.4, 0.1):
        for p in PS:
            f = failure_exact(lambda v: spread_ucb(v, m, b, beta), m, g, p, b)
            assert f <= beta, (m, b, beta, g, p, f)
    naive = max(
        failure_exact(lambda v: math.sqrt(max(v, 0.0)), m, g, p, b) for g in (1.0, 0.1) for p in PS
    )
    assert naive > beta  # the plug-in sd fails: this check has teeth


def grid_index(s: float) -> int:
    """The index of the last grid point >= s (g is constant between grid points)."""
    return max(int(np.searchsorted(-SPREAD_GRID, -s, side="right")) - 1, 0)


def coverage_all_public(n: int, g: float, p: float, beta: float, ucb_fn, cache: dict) -> float:
    """Exact coverage of mean +- h(S) for n public values on {0, g} (uniform weights, no
    noise), S = ucb_fn(V) from the same values; h = the private-spread half-width."""
    pk = binom_pmf(n, p)
    cov = 0.0
    for k, pr in enumerate(pk):
        v = g * g * k * (n - k) / (n * (n - 1))
        j = grid_index(ucb_fn(v))
        if (n, j) not in cache:
            cache[n, j] = population_half_width_private_spread(
                1.0 / n, 1.0 / n, 0.0, float(SPREAD_GRID[j]), beta
            )
        cov += pr * (abs(g * (k / n - p)) <= cache[n, j])
    return cov


def test_whole_procedure_covers_exactly_when_values_and_spread_are_dependent() -> None:
    beta, cache = 0.01, {}
    worst = 1.0
    for n, g in ((20, 1.0), (20, 0.2), (120, 0.3), (120, 0.05)):
        for p in (0.02, 0.1, 0.3, 0.5):
            ucb = lambda v, n=n: spread_ucb(v, n, 0.0, beta)  # noqa: E731
            c = coverage_all_public(n, g, p, beta, ucb, cache)
            worst = min(worst, c)
            assert c >= 1 - ALPHA, (n, g, p, c)
    # the plug-in sd in its place misses (n = 20 values at 0.1: all zero with chance 12%)
    naive = coverage_all_public(20, 0.2, 0.1, beta, lambda v: math.sqrt(v), cache)
    assert naive < 1 - ALPHA
    assert worst < 0.999  # not covered by a trivially wide interval


def test_monte_carlo_coverage_with_noise_on_both_releases() -> None:
    rng = np.random.default_rng(31)
    prof = hdp.EpsilonProfile.from_tiers([0.5, 3.0, math.inf], [150, 120, 30])
    sol = hdp.adpm(prof)
    w, c, eta = sol.weights, prof.counts, sol.noise_scale
    left = np.where(prof.levels > sol.saturation_level, prof.levels - sol.saturation_level, 0.0)
    mask, m, eps2 = choose_spread_users(left, c)
    assert m >= 150 and math.isfinite(eps2)
    b = spread_noise_scale(m, eps2)
    s2w, mw = float(np.dot(c, w * w)), float(w.max())
    user_w = np.repeat(w, c)
    in_spread = np.repeat(mask, c)
    trials = 4000
    h_of = {}  # per grid point (g is a step function of S)
    for draw in ("beta", "two_point"):
        if draw == "beta":
            x = rng.beta(2, 5, (trials, int(c.sum()))) - 0.5
            mu = 2 / 7 - 0.5
        else:
            x = np.where(rng.random((trials, int(c.sum()))) < 0.08, 0.5, 0.2)
            mu = 0.08 * 0.5 + 0.92 * 0.2
        t = x @ user_w + rng.laplace(0, eta, trials)
        v = x[:, in_spread].var(axis=1, ddof=1) + rng.laplace(0, b, trials)
        s = np.array([spread_ucb(float(vi), m, b, SPREAD_FAILURE) for vi in v])
        j = [grid_index(si) for si in s]
        for jj in set(j):
            if jj not in h_of:
                h_of[jj] = population_half_width_private_spread(
                    s2w, mw, eta, float(SPREAD_GRID[jj]), SPREAD_FAILURE
                )
        h = np.array([h_of[jj] for jj in j])
        cov = float(np.mean(np.abs(t - mu) <= h))
        se = math.sqrt(0.05 * 0.95 / trials)
        assert cov >= 0.95 - 4 * se, (draw, cov)
        plain = hdp.population_half_width(w, c, eta)
        assert np.median(h) < plain  # the spread pays: narrower than without it


def test_grid_and_levels() -> None:
    s2w, mw, eta = 1e-3, 2e-3, 5e-3
    at_half = population_bounds_private_spread(s2w, mw, eta, 0.5, 0.01)
    plain = population_bounds(s2w, mw, eta, level=0.96)  # alpha - beta = 0.04
    assert at_half["spread_grid"] == 0.5
    assert min(v for k, v in at_half.items() if k != "spread_grid") == min(plain.values())
    hs = [population_half_width_private_spread(s2w, mw, eta, s) for s in np.linspace(0.1, 0.5, 9)]
    assert all(a <= b for a, b in itertools.pairwise(hs))  # non-decreasing in S
    for bad in ((0.5, 0.05), (0.5, 0.0), (-0.1, 0.01), (math.nan, 0.01)):
        with pytest.raises(ValueError):
            population_half_width_private_spread(s2w, mw, eta, *bad)


def test_choose_spread_users_reads_levels_only() -> None:
    mask, m, e = choose_spread_users([0.0, 0.8, math.inf], [500, 300, 100])
    assert list(mask) == [False, True, True] and m == 400 and e == 0.8
    mask, m, e = choose_spread_users([0.0, 1e-4, math.inf], [500, 300, 100])
    assert list(mask) == [False, False, True] and m == 100 and math.isinf(e)
    mask, m, e = choose_spread_users([0.0, 0.8, math.inf], [500, 300, 100], cap=0.2)
    assert list(mask) == [False, True, True] and m == 400 and e == 0.2
    assert choose_spread_users([0.0, 0.0], [5, 5])[1] == 0
    assert spread_ucb(0.0, 1, 0.0, 0.01) == 0.5
