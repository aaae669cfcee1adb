"""Every population bound against independent oracles (issue 31).

1. Brute force: for small n, the exact law of Z + L when every user's value follows a
   two-point law (every support {a, b} and weight p with the declared spread), Z summed over
   all 2^n outcomes and L's Laplace CDF in closed form; its exact 95% quantile found by
   bisection. Each proven bound (hdp_core.intervals.population_bounds) must be at or above
   the worst of these quantiles; their least is what a release states.
2. Simulation: coverage of the stated interval for data from other laws (numpy draws of the
   values and of Laplace noise), at least 95% up to 4 standard errors.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_core.intervals import population_bounds, population_half_width

ALPHA = 0.05


def z_law(w: np.ndarray, gap: float, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Support and probabilities of Z = sum_i w_i (x_i - mu), x_i i.i.d. on {0, gap} with
    P(gap) = p (mu = p gap), over all 2^n outcomes."""
    vals, probs = np.zeros(1), np.ones(1)
    for wi in w:
        vals = np.concatenate([vals - wi * p * gap, vals + wi * (1 - p) * gap])
        probs = np.concatenate([probs * (1 - p), probs * p])
    return vals, probs


def tail(vals: np.ndarray, probs: np.ndarray, h: float, eta: float) -> float:
    """P(|Z + L| > h), L ~ Laplace(eta), exactly (closed-form CDF per atom of Z)."""
    if eta == 0:
        return float(probs[np.abs(vals) > h].sum())
    hi = h - vals  # P(L > h - z)
    lo = -h - vals  # P(L < -h - z)
    e_hi, e_lo = 0.5 * np.exp(-np.abs(hi) / eta), 0.5 * np.exp(-np.abs(lo) / eta)
    p_hi = np.where(hi >= 0, e_hi, 1 - e_hi)  # P(L > h - z)
    p_lo = np.where(lo <= 0, e_lo, 1 - e_lo)  # P(L < -h - z)
    return float(np.dot(probs, np.minimum(p_hi + p_lo, 1.0)))


def quantile(vals: np.ndarray, probs: np.ndarray, eta: float) -> float:
    """The exact (1 - ALPHA) quantile of |Z + L|: the least h with tail <= ALPHA."""
    if eta == 0:
        a = np.abs(vals)
        order = np.argsort(a)
        above = 1.0 - np.cumsum(probs[order])  # P(|Z| > a_k) at the k-th smallest
        k = int(np.argmax(above <= ALPHA + 1e-15))
        return float(a[order][k])
    lo, hi = 0.0, float(np.abs(vals).max()) + 50 * eta
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if tail(vals, probs, mid, eta) > ALPHA else (lo, mid)
    return hi


def worst_two_point(w: np.ndarray, eta: float, sd: float | None) -> float:
    """max over two-point laws on the range with sd at most ``sd`` (the largest gap for each
    p: the spread is used up, or the gap is the whole range) of the exact quantile."""
    best = 0.0
    for p in np.concatenate([np.linspace(0.01, 0.99, 49), [0.001, 0.005, 0.995, 0.999]]):
        gap = 1.0 if sd is None else min(1.0, sd / math.sqrt(p * (1 - p)))
        best = max(best, quantile(*z_law(w, gap, p), eta))
    return best


def adpm_case(levels, sd):
    sol = hdp.adpm(hdp.EpsilonProfile.from_values(levels), data_sd=sd)
    assert not sol.outputs_zero
    return sol.weights, sol.noise_scale


CASES = {
    "one user eps 100 sd 0.01": ([100.0], 0.01),
    "one user eps 100 sd 0.1": ([100.0], 0.1),
    "one public user": ([math.inf], None),
    "three public users sd 0.05": ([math.inf] * 3, 0.05),
    "two users eps 50": ([50.0, 50.0], None),
    "eight users eps 20 sd 0.1": ([20.0] * 8, 0.1),
    "mixed 10": ([0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, math.inf, math.inf], None),
    "mixed 10 sd 0.02": ([1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1e3], 0.02),
    "twelve users eps 5 sd 0.2": ([5.0] * 12, 0.2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_bound_is_above_the_exact_two_point_quantile(name):
    levels, sd = CASES[name]
    w, eta = adpm_case(levels, sd)
    q = worst_two_point(w, eta, sd)
    bounds = population_bounds(float(np.dot(w, w)), float(w.max()), eta, data_sd=sd)
    for bound_name, h in bounds.items():
        assert h >= q * (1 - 1e-9), (bound_name, h, q)
    stated = population_half_width(w, np.ones_like(w), eta, data_sd=sd)
    assert stated == pytest.approx(min(bounds.values()), rel=1e-12)
    assert stated >= q * (1 - 1e-9)


def test_chebyshev_is_the_least_for_one_user_at_eps_100_with_a_small_spread():
    """The audit's case: one user at eps 100, declared sd 0.01 of the range: Chebyshev,
    sqrt((s^2 + 2 eta^2) / 0.05) = 0.0775, is the stated half-width (was 6.4x wider)."""
    _, eta = adpm_case([100.0], 0.01)
    bounds = population_bounds(1.0, 1.0, eta, data_sd=0.01)
    cheb = math.sqrt((0.01**2 + 2 * eta**2) / 0.05)
    assert bounds["chebyshev"] == pytest.approx(cheb, rel=1e-9)
    assert min(bounds.values()) == bounds["chebyshev"]
    assert min(bounds["union"], bounds["chernoff"]) > 5 * cheb


def draw(law: str, rng, shape) -> np.ndarray:
    """Values on [0, 1] from laws other than two-point ones: uniform, Beta(2, 5), and a
    skewed one (0.1, or 1 with probability 0.03)."""
    if law == "uniform":
        return rng.uniform(0, 1, shape)
    if law == "beta":
        return rng.beta(2, 5, shape)
    return np.where(rng.uniform(size=shape) < 0.03, 1.0, 0.1)


MEANS = {"uniform": 0.5, "beta": 2 / 7, "skewed": 0.03 + 0.97 * 0.1}


@pytest.mark.parametrize(
    "levels",
    [[1.0] * 20, [0.2] * 30 + [5.0] * 10 + [math.inf] * 2, [100.0, 100.0], [10.0] * 3 + [math.inf]],
    ids=["20 at eps 1", "tiered 42", "two users eps 100", "3 plus public"],
)
def test_coverage_by_simulation(levels):
    rng = np.random.default_rng(12)
    sims = 20_000
    w, eta = adpm_case(levels, None)
    h = population_half_width(w, np.ones_like(w), eta)
    for law, mu in MEANS.items():
        est = draw(law, rng, (sims, len(w))) @ w + rng.laplace(0, eta, sims)
        cover = float(np.mean(np.abs(est - mu) <= h))
        assert cover >= 0.95 - 4 * math.sqrt(0.05 * 0.95 / sims), (law, cover)


def test_small_n_brute_force_enumerates_all_outcomes():
    """The oracle itself: Z's law sums to 1 and has the two-point law's variance."""
    w = np.array([0.5, 0.3, 0.2])
    vals, probs = z_law(w, 0.8, 0.3)
    assert probs.sum() == pytest.approx(1.0)
    assert np.dot(probs, vals) == pytest.approx(0.0, abs=1e-15)
    assert np.dot(probs, vals**2) == pytest.approx(0.8**2 * 0.21 * np.dot(w, w))
    assert len(list(itertools.product([0, 1], repeat=3))) == len(vals)
