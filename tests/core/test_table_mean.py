"""The minimax affine estimator of the table's own mean (hdp_core.table_mean) against
independent oracles: a convex solver (cvxpy) on random per-user profiles, exact rational
arithmetic (the objective's definition and its one-sided derivatives, no piece formula),
expanded tiers, a scaling identity for huge tiers, and brute force over tables."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_core.table_mean import table_mean, table_objective

INF = math.inf


def random_levels(rng: np.random.Generator, n: int, zero: float = 0.1, pub: float = 0.1):
    eps = np.exp(rng.uniform(-5, 4, n))
    u = rng.random(n)
    eps[u < zero] = 0.0
    eps[(u >= zero) & (u < zero + pub)] = INF
    return eps


def cvx_worst_case(eps: np.ndarray) -> float:
    """min over (w, eta) of (||w - 1/n||_1 / 2)^2 + 2 eta^2 with |w_i| <= eps_i eta, straight
    from the problem statement (weights free, not assumed in [0, 1/n])."""
    n = eps.size
    w = cp.Variable(n)
    eta = cp.Variable(nonneg=True)
    t = cp.Variable(nonneg=True)
    cons = [t >= cp.norm1(w - 1.0 / n)]
    fin = np.isfinite(eps)
    idx = np.flatnonzero(fin)
    if idx.size:
        cons += [cp.abs(w[idx]) <= cp.multiply(eps[idx], eta)]
    prob = cp.Problem(cp.Minimize(cp.square(t) / 4 + 2 * cp.square(eta)), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return float(prob.value)


@pytest.mark.parametrize("seed", range(40))
def test_against_convex_solver(seed):
    rng = np.random.default_rng(seed)
    eps = random_levels(rng, int(rng.integers(1, 60)))
    sol = table_mean(eps)
    opt = cvx_worst_case(eps)
    assert sol.worst_case_mse <= opt + 1e-9  # never worse than the solver
    assert sol.worst_case_mse == pytest.approx(opt, rel=1e-6, abs=1e-10)
    # the reported numbers are those of the reported weights and noise
    n = eps.size
    assert sol.bias_bound == pytest.approx(0.5 * np.abs(sol.weights - 1 / n).sum(), abs=1e-15)
    fin = np.isfinite(eps)
    assert np.all(sol.weights[fin] <= eps[fin] * sol.noise_scale * (1 + 1e-12))
    assert np.all(sol.weights[eps == 0] == 0)


# ---- exact rational arithmetic --------------------------------------------------------------
def frac_F(levels, counts, eta: Fraction) -> Fraction:
    """F(eta) = D^2/4 + 2 eta^2 with D = sum_i c_i (1/n - eps_i eta)_+, by definition."""
    n = sum(counts)
    d = Fraction(0)
    for e, c in zip(levels, counts, strict=True):
        if e is None:  # public
            continue
        d += c * max(Fraction(0), Fraction(1, n) - e * eta)
    return d * d / 4 + 2 * eta * eta


def frac_one_sided(levels, counts, eta: Fraction) -> tuple[Fraction, Fraction]:
    """(F'(eta-), F'(eta+)) from the definition: D' sums -c eps over users below 1/n."""
    n = sum(counts)
    d = Fraction(0)
    left = right = Fraction(0)
    for e, c in zip(levels, counts, strict=True):
        if e is None:
            continue
        gap = Fraction(1, n) - e * eta
        d += c * max(Fraction(0), gap)
        if gap > 0 or (gap == 0 and e > 0):
            left -= c * e  # active just left of eta
        if gap > 0:
            right -= c * e  # active just right of eta
    return d * left / 2 + 4 * eta, d * right / 2 + 4 * eta


def frac_minimum(levels, counts) -> tuple[Fraction, Fraction]:
    """Exact minimiser by brute force: every breakpoint and every interior stationary point of
    the quadratic between consecutive breakpoints (fitted from three exact values of F, not
    from the closed form), the least F among them; checked by the one-sided derivatives."""
    n = sum(counts)
    bps = sorted({Fraction(1, 1) / (n * e) for e in levels if e not in (None, 0)})
    cands = [Fraction(0), *bps]
    edges = [Fraction(0), *bps, (bps[-1] * 2 if bps else Fraction(1))]
    for lo, hi in itertools.pairwise(edges):
        # the quadratic through three points of this piece: its vertex
        a, m, b = lo, (lo + hi) / 2, hi
        fa, fm, fb = (frac_F(levels, counts, t) for t in (a, m, b))
        curv = (fa - 2 * fm + fb) / ((hi - lo) / 2) ** 2 / 2  # F = curv t^2 + lin t + c
        lin = (fb - fa) / (hi - lo) - curv * (a + b)
        if curv > 0:
            v = -lin / (2 * curv)
            if lo <= v <= hi:
                cands.append(v)
    best = min(cands, key=lambda t: frac_F(levels, counts, t))
    lft, rgt = frac_one_sided(levels, counts, best)
    assert lft <= 0 <= rgt or (best == 0 and rgt >= 0)
    return best, frac_F(levels, counts, best)


def to_frac(levels):
    return [None if math.isinf(e) else Fraction(e) for e in levels]


@pytest.mark.parametrize("seed", range(30))
def test_against_exact_rationals(seed):
    rng = np.random.default_rng(100 + seed)
    k = int(rng.integers(1, 7))
    levels = random_levels(rng, k)
    counts = rng.integers(1, 40, k)
    if seed % 3 == 0:
        counts = counts * 10 ** int(rng.integers(6, 13))  # up to 10^12 users in a tier
    eta_x, f_x = frac_minimum(to_frac(levels), [int(c) for c in counts])
    sol = table_mean(hdp.EpsilonProfile.from_tiers(levels, counts))
    assert sol.noise_scale == pytest.approx(float(eta_x), rel=1e-9, abs=1e-300)
    assert sol.worst_case_mse == pytest.approx(float(f_x), rel=1e-9)
    # and F at the solver's own eta, evaluated exactly, is the exact optimum to rounding
    f_at = frac_F(to_frac(levels), [int(c) for c in counts], Fraction(sol.noise_scale))
    # rounding eta to a double moves D = sum c (1/n - eps eta)_+ by a few ulps of the held
    # share (D <= 1), so F by at most (1e-15)^2 beyond a relative 1e-9
    assert float(f_at - f_x) <= 1e-9 * float(f_x) + 1e-30


def test_tiers_equal_expanded_profiles():
    rng = np.random.default_rng(7)
    for _ in range(20):
        k = int(rng.integers(1, 6))
        levels = random_levels(rng, k)
        counts = rng.integers(1, 30, k)
        tiered = table_mean(hdp.EpsilonProfile.from_tiers(levels, counts))
        flat = table_mean(np.repeat(levels, counts))
        assert tiered.noise_scale == pytest.approx(flat.noise_scale, rel=1e-12)
        assert tiered.bias_bound == pytest.approx(flat.bias_bound, rel=1e-12, abs=1e-15)
        np.testing.assert_allclose(np.repeat(tiered.weights, counts), flat.weights, rtol=1e-12)


@pytest.mark.parametrize("scale", [10**6, 10**9])
def test_huge_tiers_scaling_identity(scale):
    """Levels e/N with counts c N give the same D(eta), hence the same eta and worst case,
    with weights divided by N (the small profile solved on its own, expanded)."""
    levels = np.array([1.0, 3.0, 20.0, 400.0])
    counts = np.array([5, 3, 2, 1])
    small = table_mean(np.repeat(levels, counts))
    big = table_mean(hdp.EpsilonProfile.from_tiers(levels * (1e3 / scale), counts * scale))
    small_k = table_mean(hdp.EpsilonProfile.from_tiers(levels * 1e3, counts))
    assert big.noise_scale == pytest.approx(small_k.noise_scale, rel=1e-10)
    assert big.worst_case_mse == pytest.approx(small_k.worst_case_mse, rel=1e-10)
    np.testing.assert_allclose(big.weights * scale, small_k.weights, rtol=1e-10)
    assert small.worst_case_mse > 0


def test_trillion_user_tiers():
    levels = [1e-6, 0.01, 1.0, INF, 0.0]
    counts = [10**12, 10**12, 10**11, 10**9, 10**6]
    eta_x, f_x = frac_minimum(to_frac(levels), counts)
    sol = table_mean(hdp.EpsilonProfile.from_tiers(levels, counts))
    assert sol.noise_scale == pytest.approx(float(eta_x), rel=1e-9)
    assert sol.worst_case_mse == pytest.approx(float(f_x), rel=1e-9)


@pytest.mark.parametrize(
    "levels",
    [[1e-6] * 5, [1e6] * 5, [1e-6, 1e6], [INF, 1e-6], [0.0, 1e6], [0.0, INF, 1e-6, 1e6], [1e6]],
)
def test_extreme_levels_against_rationals(levels):
    eta_x, f_x = frac_minimum(to_frac(levels), [1] * len(levels))
    sol = table_mean(levels)
    assert sol.noise_scale == pytest.approx(float(eta_x), rel=1e-9)
    assert sol.worst_case_mse == pytest.approx(float(f_x), rel=1e-9)


def test_edge_profiles():
    pub = table_mean([INF] * 7)  # the plain mean: exact, no noise
    assert pub.noise_scale == 0 and pub.bias_bound == 0 and pub.worst_case_mse == 0
    np.testing.assert_allclose(pub.weights, 1 / 7)
    only0 = table_mean([0.0, 0.0, INF])  # two unusable rows force a bias of 1/(2n) each
    assert only0.noise_scale == 0 and only0.bias_bound == pytest.approx(1 / 3)
    none = table_mean([0.0, 0.0])
    assert none.worst_case_mse == pytest.approx(0.25) and none.weight_total == 0
    one = table_mean([1.0])  # n = 1: D = (1 - eta)_+, eta = 1/9
    assert one.noise_scale == pytest.approx(1 / 9)
    assert one.worst_case_mse == pytest.approx((8 / 9) ** 2 / 4 + 2 / 81)


def test_brute_force_worst_table():
    """The worst case over tables, found by trying every corner of the cube (exactly 2^n
    tables) with the exact Laplace variance, is the reported worst_case_mse."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        n = int(rng.integers(1, 9))
        eps = random_levels(rng, n)
        sol = table_mean(eps)
        x = np.array(list(itertools.product([-0.5, 0.5], repeat=n)))
        bias = x @ sol.weights - x.mean(axis=1)
        assert float(np.max(bias**2)) + 2 * sol.noise_scale**2 == pytest.approx(
            sol.worst_case_mse, rel=1e-12, abs=1e-15
        )
        assert float(np.max(np.abs(bias))) == pytest.approx(sol.bias_bound, abs=1e-15)


def test_objective_is_convex_and_minimised():
    rng = np.random.default_rng(11)
    for _ in range(10):
        eps = random_levels(rng, 30)
        sol = table_mean(eps)
        grid = sol.noise_scale * np.linspace(0, 5, 501)
        f = np.array([table_objective(eps, t) for t in grid])
        assert f.min() >= sol.worst_case_mse * (1 - 1e-12)
        assert np.all(np.diff(f, 2) >= -1e-12 * f.max())  # convex on an even grid


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(1e-6, 1e6),
            st.just(INF),
            st.just(0.0),
        ),
        min_size=1,
        max_size=25,
    )
)
def test_property_optimal_and_private(levels):
    eps = np.array(levels)
    sol = table_mean(eps)
    n = eps.size
    # private: every user's loss at most their level; weights within [0, 1/n]
    assert np.all(sol.granted_eps <= np.where(eps == 0, 0, eps) * (1 + 1e-12))
    assert np.all(sol.weights >= 0) and np.all(sol.weights <= 1 / n)
    assert sol.worst_case_mse <= 0.25 + 1e-15  # never worse than answering 0
    # locally optimal in eta: nudging eta either way does not help
    for f in (0.999, 1.001):
        assert table_objective(eps, sol.noise_scale * f) >= sol.worst_case_mse * (1 - 1e-12)
    # order does not matter
    perm = np.random.default_rng(0).permutation(n)
    other = table_mean(eps[perm])
    np.testing.assert_allclose(other.weights, sol.weights[perm], rtol=1e-12)


# ---- large per-user profiles: the sampled bracket ---------------------------------------------
@pytest.mark.parametrize("seed", range(12))
def test_large_per_user_profiles_match_the_tiers_solver_and_are_optimal(seed):
    """Above a few thousand users the per-user solver sorts only a sampled bracket (module
    docstring). Its answer equals the tiers solver's on the same levels grouped (which sorts
    every distinct level) and is the minimum of the objective F(eta) evaluated directly."""
    import importlib

    tm = importlib.import_module("hdp_core.table_mean")
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5_000, 120_000))
    kind = seed % 4
    if kind == 0:
        eps = random_levels(rng, n)
    elif kind == 1:  # heavy ties
        eps = rng.choice([0.0, 0.05, 0.1, 1.0, 5.0, INF], n)
    elif kind == 2:  # wide spread, clipped to the supported range
        eps = np.exp(rng.normal(0, 3, n)).clip(1e-6, 1e6)
    else:  # mostly public
        eps = np.where(rng.random(n) < 0.8, INF, np.exp(rng.uniform(-3, 1, n)))
    if kind != 1:
        assert tm._bracketed(eps) is not None  # the bracket path is the one under test
    sol = table_mean(eps)
    lv, ct = np.unique(eps, return_counts=True)
    tiers = table_mean(hdp.EpsilonProfile.from_tiers(lv, ct))
    assert sol.noise_scale == pytest.approx(tiers.noise_scale, rel=1e-9)
    assert sol.bias_bound == pytest.approx(tiers.bias_bound, rel=1e-9, abs=1e-15)
    np.testing.assert_allclose(sol.weights, tiers.weights[np.searchsorted(lv, eps)], rtol=1e-9)
    f0 = table_objective(eps, sol.noise_scale)
    assert f0 == pytest.approx(sol.worst_case_mse, rel=1e-9)
    for f in (0.99, 0.9999, 1.0001, 1.01):
        assert table_objective(eps, sol.noise_scale * f) >= f0 * (1 - 1e-12)


# ---- the registry ---------------------------------------------------------------------------


def test_estimator_exact_mse_against_simulation():
    prof = hdp.EpsilonProfile.from_tiers([0.05, 1.0, INF, 0.0], [60, 30, 8, 2])
    est = hdp.get_method("TableMean", prof)
    for dist in (hdp.Beta(2, 3), hdp.TwoPoint(0.9), hdp.Uniform()):
        res = hdp.simulate_mse(["TableMean"], prof, dist, trials=20_000, seed=1)["TableMean"]
        exact = est.exact_mse(dist)
        assert res.ci_low <= exact <= res.ci_high
    # worst case over distributions is at a corner (TwoPoint(1/2) or a point mass)
    worst = max(est.exact_mse(hdp.TwoPoint(p)) for p in np.linspace(0, 1, 101))
    assert est.worst_case_mse == pytest.approx(worst, rel=1e-12)


def test_estimate_matches_solution():
    eps = [0.1, 0.5, INF, 0.0, 2.0]
    x = np.array([0.5, -0.5, 0.2, 0.1, -0.3])
    est = hdp.get_method("TableMean", eps)
    sol = table_mean(eps)
    a = est.estimate(x, np.random.default_rng(5))
    b = sol.estimate(x, np.random.default_rng(5))
    assert a == pytest.approx(b, rel=1e-12)
    assert sol.bias(x) == pytest.approx(float(np.dot(sol.weights, x) - x.mean()))
