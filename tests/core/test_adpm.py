"""ADPM (Algorithm 1) against independent oracles: a convex solver, the O(n^2) enumeration over
the saturation index, the literal loop, closed forms and the paper's worked numbers."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_core.adpm import (
    _BRACKET_MIN,
    _RANDOM_SAMPLE_MIN,
    _SAMPLE,
    _SELECT_MIN,
    _first_saturated_bracket,
)
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN

INF = math.inf


# --------------------------------------------------------------------------------------------
# strategies
# --------------------------------------------------------------------------------------------
@st.composite
def profiles(draw, max_n: int = 60, min_exp: int = -8, max_exp: int = 8, specials: bool = True):
    """Per-user levels: a common scale 10^k times e^U[-5, 5], with ties (levels drawn from a
    small pool), public users (inf) and excluded users (0); at least one usable user."""
    n = draw(st.integers(1, max_n))
    scale = 10.0 ** draw(st.integers(min_exp, max_exp))
    pool_size = draw(st.integers(1, n))
    pool = draw(st.lists(st.floats(-5, 5), min_size=pool_size, max_size=pool_size))
    idx = draw(st.lists(st.integers(0, pool_size - 1), min_size=n, max_size=n))
    # clipped to the supported range [1e-6, 1e6] (issue 12), so its ends are drawn often
    eps = np.clip(scale * np.exp(np.asarray(pool)[idx]), LEVEL_MIN, LEVEL_MAX)
    if specials:
        # tag 0 -> public, tag 1 -> excluded, anything else keeps the drawn level
        tags = np.asarray(draw(st.lists(st.integers(0, 14), min_size=n, max_size=n)))
        eps[tags == 0] = INF
        eps[tags == 1] = 0.0
    if not ((eps > 0).any()):
        eps[draw(st.integers(0, n - 1))] = scale
    return eps


# --------------------------------------------------------------------------------------------
# oracles (written from the definitions, not from hdp_core)
# --------------------------------------------------------------------------------------------
def true_worst_case(w: np.ndarray, eps: np.ndarray) -> float:
    """||w||^2/4 + 2 (max_i w_i/eps_i)^2: the exact worst-case MSE (before the 1/4 cap) of the
    affine estimator with weights w (sum 1) and the least Laplace noise that gives every user
    their eps (eq. pd-val); public users need no noise."""
    fin = np.isfinite(eps) & (w > 0)
    b = float(np.max(w[fin] / eps[fin])) if fin.any() else 0.0
    return float(w @ w) / 4.0 + 2.0 * b * b


def solver_optimum(eps: np.ndarray, tol: float = 1e-10):
    """cvxpy + Clarabel on: min ||w||^2/4 + 2 s^2, w >= 0, sum w = 1, w_i <= s eps_i (no
    constraint for eps_i = inf). Preconditioned only: s = sigma*u and the objective divided by
    an upper bound UB taken from simple feasible points (public-only mean, proportional and
    uniform weights), so the solver sees O(1) numbers at every scale. Returns (optimum,
    weights, status)."""
    n = eps.size
    fin = np.isfinite(eps)
    pos = fin & (eps > 0)
    pub = np.isinf(eps)
    ubs = []
    if pub.any():
        ubs.append(0.25 / pub.sum())
    if pos.any():
        s1 = eps[pos].sum()
        ubs.append((eps[pos] @ eps[pos] / 4 + 2) / s1**2)
        m = pos.sum()
        ubs.append(1 / (4 * m) + 2 / (m * eps[pos].min()) ** 2)
    ub = min(ubs)
    sig = math.sqrt(ub / 2)
    w = cp.Variable(n)
    u = cp.Variable()
    cons = [w >= 0, cp.sum(w) == 1]
    if fin.any():
        cons.append(w[fin] <= u * (sig * eps[fin]))
    prob = cp.Problem(
        cp.Minimize((cp.sum_squares(w) / 4 + 2 * sig * sig * cp.square(u)) / ub), cons
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "solution may be inaccurate" is judged below
        prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
    return prob.value * ub, w.value, prob.status


def enumeration_optimum(eps: np.ndarray) -> float:
    """Cummings et al.'s enumeration over the saturation index, O(n^2): for each k keep the k
    strictest users at their eps and pool the rest at (S2_k + 8)/S1_k (clipped to their own
    eps), evaluate each candidate's exact worst case from scratch, return the best."""
    eps = np.sort(np.asarray(eps, dtype=float))
    use = eps > 0
    e = eps[use]
    fin = e[np.isfinite(e)]
    best = INF
    if fin.size == 0:  # only public users: the sample mean of them
        x = np.ones(e.size)
        return true_worst_case(x / x.sum(), e)
    for k in range(1, fin.size + 1):
        head = fin[:k]
        level = (float(np.sum(head * head)) + 8.0) / float(np.sum(head))
        x = np.concatenate([head, np.minimum(e[k:], level)])
        best = min(best, true_worst_case(x / x.sum(), e))
    return best


def closed_f(r: np.ndarray, counts=None) -> float:
    """f(r) = (||r||_2^2 + 8) / (4 ||r||_1^2) (Theorem 2), counts-weighted."""
    c = np.ones_like(r) if counts is None else np.asarray(counts, dtype=float)
    s1 = float(np.sum(c * r))
    return (float(np.sum(c * r * r)) + 8.0) / (4.0 * s1 * s1)


# --------------------------------------------------------------------------------------------
# 1. the convex solver
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
@given(profiles())
def test_adpm_matches_convex_solver(eps):
    sol = hdp.adpm(eps)
    opt, w, status = solver_optimum(eps)
    assert status in ("optimal", "optimal_inaccurate"), status
    assert sol.objective == pytest.approx(opt, rel=1e-5)
    # never worse than the solver: the solver's weights, made exactly feasible (clipped to the
    # simplex, excluded users zeroed) and evaluated exactly, cannot beat ADPM's optimum
    w = np.clip(np.asarray(w, dtype=float), 0.0, None)
    w[eps == 0] = 0.0
    w /= w.sum()
    assert sol.objective <= true_worst_case(w, eps) * (1 + 1e-12)
    # ADPM's reported objective is the exact worst case of its own weights and noise
    assert sol.objective == pytest.approx(true_worst_case(sol.weights, eps), rel=1e-12)
    assert sol.objective == pytest.approx(
        float(sol.weights @ sol.weights) / 4 + 2 * sol.noise_scale**2, rel=1e-12
    )


@pytest.mark.parametrize(
    "eps",
    [
        [0.7],
        [1e-6],
        [1e6],
        [0.3] * 40,
        [0.1, 0.1, 0.1, 5.0, 5.0, INF],
        [INF, INF, 0.2],
        [0.0, 0.0, 0.5, 2.0],
        [1e-4, 1e-4, 1e4, 1e4, INF],
    ],
)
def test_adpm_matches_convex_solver_fixed_cases(eps):
    eps = np.asarray(eps, dtype=float)
    opt, _, status = solver_optimum(eps)
    assert status in ("optimal", "optimal_inaccurate")
    assert hdp.adpm(eps).objective == pytest.approx(opt, rel=1e-5)


# --------------------------------------------------------------------------------------------
# 2. the enumeration oracle and the literal loop
# --------------------------------------------------------------------------------------------
@given(profiles(max_n=40, min_exp=-12, max_exp=12))
def test_adpm_matches_enumeration(eps):
    assert hdp.adpm(eps).objective == pytest.approx(enumeration_optimum(eps), rel=1e-9)


def tau_from_trace(tr: hdp.AlgorithmTrace) -> float:
    """tau*: the granted level at the first saturated step of the literal loop (inf if none)."""
    hit = np.flatnonzero(tr.saturated)
    return float(tr.r[hit[0]]) if hit.size else INF


@given(profiles(max_n=60, min_exp=-12, max_exp=12))
@pytest.mark.slow
def test_trace_agrees_with_adpm(eps):
    sol = hdp.adpm(eps)
    tr = hdp.adpm_trace(eps)
    assert tr.n_excluded == int(np.sum(eps == 0))
    np.testing.assert_allclose(tr.r, np.sort(sol.r[eps > 0]), rtol=1e-12)
    assert tr.eps.tolist() == np.sort(eps[eps > 0]).tolist()
    tau = tau_from_trace(tr)
    if math.isinf(tau) == math.isinf(sol.saturation_level):
        if not math.isinf(tau):
            assert sol.saturation_level == pytest.approx(tau, rel=1e-12)
    else:
        # the literal loop compares eps_{k+1} with (L2 + 8)/L1 in floating point; when the 8
        # is below the rounding of L2 (levels ~1e9 and up) a user exactly at the cap can be
        # flagged either way. That is only allowed where granted level = asked level.
        k = int(np.argmax(tr.saturated))
        assert tr.r[k] == pytest.approx(tr.eps[k], rel=1e-12)
        assert 8.0 < 1e-12 * tr.l2[k - 1] * 16
    if np.isfinite(tr.f[-1]):
        assert sol.objective == pytest.approx(tr.f[-1], rel=1e-12)


def test_trace_is_the_literal_recursion_on_a_small_example():
    # worked by hand: eps = (1, 1, 2, 20): tau_1 = 9, tau_2 = 10/2 = 5, tau_3 = 14/4 < 20
    tr = hdp.adpm_trace([20.0, 1.0, 2.0, 1.0])
    assert tr.r.tolist() == [1.0, 1.0, 2.0, 3.5]
    assert tr.tau[:3].tolist() == [9.0, 5.0, 3.5]
    assert tr.saturated.tolist() == [False, False, False, True]
    assert hdp.adpm([20.0, 1.0, 2.0, 1.0]).saturation_level == 3.5


def test_trace_refuses_large_profiles():
    with pytest.raises(hdp.ProfileError, match="at most"):
        hdp.adpm_trace(hdp.EpsilonProfile.from_tiers([0.1], [10**6]))


# --------------------------------------------------------------------------------------------
# 3. every user's privacy holds; weights sum to 1
# --------------------------------------------------------------------------------------------
@given(profiles(min_exp=-12, max_exp=12))
def test_privacy_holds_for_every_user(eps):
    sol = hdp.adpm(eps)
    assert sol.granted_eps is sol.r or np.array_equal(sol.granted_eps, sol.r)
    assert math.fsum(sol.weights) == pytest.approx(1.0, rel=1e-12)
    assert (sol.weights >= 0).all()
    assert (sol.weights[eps == 0] == 0).all()
    if sol.noise_scale == 0:  # only public users are used
        assert (sol.weights[np.isfinite(eps)] == 0).all()
        return
    granted = sol.weights / sol.noise_scale  # Laplace-mechanism lemma: user i gets w_i / eta
    assert (granted <= eps * (1 + 1e-12)).all()
    np.testing.assert_allclose(granted, sol.r, rtol=1e-12)
    unsat = (eps > 0) & (eps < sol.saturation_level)
    np.testing.assert_allclose(granted[unsat], eps[unsat], rtol=1e-12)
    # saturated = asked for at least tau* (away from ties with tau* at rounding level)
    tau = sol.saturation_level
    assert sol.saturated[eps >= tau * (1 + 1e-12)].all()
    assert not sol.saturated[(eps <= tau * (1 - 1e-12)) | (eps == 0)].any()
    np.testing.assert_allclose(granted[sol.saturated], sol.saturation_level, rtol=1e-12)
    assert sol.n_saturated == int(sol.saturated.sum())


@st.composite
def tiered(draw, max_k: int = 8, max_count: int = 50):
    k = draw(st.integers(1, max_k))
    levels = [draw(st.one_of(st.just(INF), st.just(0.0), st.floats(1e-3, 1e3))) for _ in range(k)]
    counts = draw(st.lists(st.integers(0, max_count), min_size=k, max_size=k))
    if sum(c for c, lv in zip(counts, levels) if lv > 0) == 0:
        levels[0], counts[0] = 0.5, max(counts[0], 1)
    return levels, counts


@given(tiered(max_count=10**12))
def test_tier_privacy_and_weights_sum_to_one(lc):
    levels, counts = lc
    prof = hdp.EpsilonProfile.from_tiers(levels, counts)
    sol = hdp.adpm(prof)
    c = np.asarray(counts, dtype=float)
    assert math.fsum(c * sol.weights) == pytest.approx(1.0, rel=1e-12)
    lv = np.asarray(levels)
    if sol.noise_scale > 0:
        assert (sol.weights / sol.noise_scale <= lv * (1 + 1e-12)).all()
        np.testing.assert_allclose(sol.weights / sol.noise_scale, sol.r, rtol=1e-12)
    assert sol.n_saturated == int(c[sol.saturated].sum())


# --------------------------------------------------------------------------------------------
# 4. permutation invariance, tiers = expansion, saturation is absorbing
# --------------------------------------------------------------------------------------------
@given(profiles(min_exp=-12, max_exp=12), st.randoms(use_true_random=False))
@pytest.mark.slow
def test_permutation_invariance(eps, rnd):
    perm = np.arange(eps.size)
    rnd.shuffle(perm)
    a, b = hdp.adpm(eps), hdp.adpm(eps[perm])
    np.testing.assert_allclose(b.r, a.r[perm], rtol=1e-12)
    np.testing.assert_allclose(b.weights, a.weights[perm], rtol=1e-12)
    assert (b.saturated == a.saturated[perm]).all()
    assert b.objective == pytest.approx(a.objective, rel=1e-12)
    assert b.saturation_level == pytest.approx(a.saturation_level, rel=1e-12)


@given(tiered(max_count=40))
def test_tiers_equal_their_expansion(lc):
    levels, counts = lc
    prof = hdp.EpsilonProfile.from_tiers(levels, counts)
    flat = np.repeat(levels, counts)
    a, b = hdp.adpm(prof), hdp.adpm(flat)
    assert a.objective == pytest.approx(b.objective, rel=1e-12)
    if math.isinf(b.saturation_level):
        assert math.isinf(a.saturation_level)
    else:
        assert a.saturation_level == pytest.approx(b.saturation_level, rel=1e-12)
    np.testing.assert_allclose(a.user_weights, b.weights, rtol=1e-12)
    assert a.n_saturated == b.n_saturated
    assert a.noise_scale == pytest.approx(b.noise_scale, rel=1e-12)


@given(profiles(min_exp=-12, max_exp=12))
@pytest.mark.slow
def test_saturation_is_absorbing_and_r_nondecreasing(eps):
    sol = hdp.adpm(eps)
    order = np.argsort(eps, kind="stable")
    sat = sol.saturated[order]
    if sat.any():  # Lemma 3 (A): once saturated, every later user is saturated
        assert sat[np.argmax(sat) :].all()
    r = sol.r[order]
    r = r[np.isfinite(r)]  # r = inf only for public users when every used user is public
    assert (np.diff(r) >= -1e-12 * np.abs(r[1:])).all()  # eq. r-inc
    tr = hdp.adpm_trace(eps)  # the same in the literal loop, where the +8 in (L2 + 8)/L1 is
    # not lost to rounding (levels up to ~1e6; above, near-ties at the cap flip either way)
    if tr.saturated.any() and np.max(tr.eps[np.isfinite(tr.eps)], initial=0) <= 1e6:
        assert tr.saturated[np.argmax(tr.saturated) :].all()
        k = int(np.argmax(tr.saturated))
        np.testing.assert_allclose(tr.r[k:], tr.r[k], rtol=1e-12)  # Lemma 3 (C)


# selection path (per-user profiles above _SELECT_MIN entries use quickselect, not a sort)
@settings(max_examples=12)
@given(
    st.integers(_SELECT_MIN + 1, 3 * _SELECT_MIN),
    st.integers(1, 6),
    st.integers(0, 2**32 - 1),
    st.sampled_from([1e-3, 1e-1, 1.0, 10.0]),
)
def test_large_per_user_profiles_match_the_sorted_path(n, n_levels, seed, scale):
    rng = np.random.default_rng(seed)
    levels = scale * np.exp(rng.uniform(-4, 2, n_levels))
    eps = levels[rng.integers(0, n_levels, n)]  # heavy ties: pivots land on tied levels
    if seed % 3 == 0:
        eps[rng.integers(0, n, 5)] = INF
    _assert_same(hdp.adpm(eps), _sorted_path(eps))


def _sorted_path(eps: np.ndarray) -> hdp.ADPMSolution:
    """ADPM through the tier code (np.unique + one sorted scan), as a reference."""
    return hdp.adpm(hdp.EpsilonProfile.from_tiers(eps, np.ones(eps.size, dtype=np.int64)))


def _assert_same(a: hdp.ADPMSolution, b: hdp.ADPMSolution) -> None:
    if math.isinf(b.saturation_level):
        assert math.isinf(a.saturation_level)
    else:
        assert a.saturation_level == pytest.approx(b.saturation_level, rel=1e-9)
    assert a.objective == pytest.approx(b.objective, rel=1e-9)
    assert (a.saturated == b.saturated).all()
    np.testing.assert_allclose(a.r, b.r, rtol=1e-9)


@settings(max_examples=16)
@given(
    st.one_of(  # strided sample, random sample
        st.integers(_BRACKET_MIN + 1, 8 * _BRACKET_MIN),
        st.integers(_RANDOM_SAMPLE_MIN, 2 * _RANDOM_SAMPLE_MIN),
    ),
    st.sampled_from(["loguniform", "few", "tight", "public", "zeros", "sorted", "rare"]),
    st.integers(0, 2**32 - 1),
    st.sampled_from([1e-6, 1e-4, 1.0, 1e4, 1e6]),
)
@pytest.mark.slow
def test_bracket_path_matches_the_sorted_path(n, kind, seed, scale):
    rng = np.random.default_rng(seed)
    eps = np.exp(rng.uniform(-4, 2, n))
    if kind == "few":
        eps = np.exp(rng.uniform(-4, 2, 5))[rng.integers(0, 5, n)]
    elif kind == "tight":  # spread too small to saturate anyone
        eps = 1.0 + 1e-7 * rng.random(n)
    elif kind == "public":
        eps[rng.random(n) < 0.3] = INF
    elif kind == "zeros":
        eps[rng.random(n) < 0.3] = 0.0
    elif kind == "sorted":
        eps = np.sort(eps)[::-1].copy()
    elif kind == "rare":  # saturation decided by a handful of users the sample rarely sees
        eps = np.full(n, 1e6)
        eps[rng.integers(0, n, 10)] = 5.0
    # inf and 0 stay as they are; the rest clipped to the supported range (issue 12)
    eps = np.clip(eps * scale, 0.0, LEVEL_MAX)
    eps[(eps > 0) & (eps < LEVEL_MIN)] = LEVEL_MIN
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            sol = hdp.adpm(eps)
            tau = hdp.saturation_level(eps)
    _assert_same(sol, _sorted_path(eps))
    assert tau == sol.saturation_level
    assert math.fsum(sol.weights) == pytest.approx(1.0, rel=1e-12)


@pytest.mark.slow
def test_bracket_is_used_and_falls_back_when_the_sample_misses():
    rng = np.random.default_rng(5)
    for m in (10_000, _RANDOM_SAMPLE_MIN + 1):
        assert _first_saturated_bracket(np.exp(rng.uniform(-4, 2, m))) is not None  # it runs
    n = 3 * _RANDOM_SAMPLE_MIN
    # white box: put the 10 decisive users where the fixed-seed sample does not look
    sampled = np.random.default_rng(n).integers(0, n, _SAMPLE)
    unseen = np.setdiff1d(np.arange(n), sampled)
    rare = np.full(n, 1e6)
    rare[rng.choice(unseen, 10, replace=False)] = 5.0
    assert _first_saturated_bracket(rare) is None  # missed: selection takes over
    sol = hdp.adpm(rare)
    assert sol.saturation_level == pytest.approx((10 * 25 + 8) / 50, rel=1e-12)
    assert sol.n_saturated == n - 10
    # the strided sample of mid-sized profiles, defeated by a periodic pattern
    m = 10_000
    periodic = np.full(m, 1e6)
    periodic[np.arange(m) % 16 == 3] = 5.0  # the sample looks at positions 8, 24, 40, ...
    assert _first_saturated_bracket(periodic) is None
    k = int(np.sum(periodic == 5.0))
    sol = hdp.adpm(periodic)
    assert sol.saturation_level == pytest.approx((k * 25 + 8) / (k * 5), rel=1e-12)
    _assert_same(sol, _sorted_path(periodic))


@pytest.mark.parametrize("n", [1000, 3 * _BRACKET_MIN, 3 * _SELECT_MIN, 3 * _RANDOM_SAMPLE_MIN])
@pytest.mark.parametrize("level", [1e-6, 1e-3, 1.0, 6.3e5, 1e6])
def test_ties_never_saturate_among_themselves(n, level):
    # all users at one level: tau_k = level + 8/(k level) > level, so nobody saturates (and
    # the rounding noise of summing tied users must not say otherwise), on every code path
    eps = np.full(n, level)
    for sol in (hdp.adpm(eps), _sorted_path(eps)):
        assert math.isinf(sol.saturation_level) and sol.n_saturated == 0
        assert sol.objective == pytest.approx((n * level**2 + 8) / (4 * n**2 * level**2))
    # and one looser user on top saturates iff it reaches level + 8/(n level)
    thr = level + 8 / (n * level)
    if thr > level * (1 + 1e-12):
        above = hdp.adpm(np.append(eps, thr * 1.5))
        # tau* comes from prefix sums of n tied levels, whose rounding error is up to n ulps
        # (seen at level 1e-6 with n = 393,216: 9e-12 relative)
        assert above.saturation_level == pytest.approx(thr, rel=max(1e-12, n * 2.3e-16))
        assert above.n_saturated == 1


def test_large_two_level_profile_saturates():
    # regression: the quickselect lost saturation when it started at a pivot (here the median)
    eps = np.concatenate([np.full(50_000, 0.01), np.full(50_000, 1.0)])
    sol = hdp.adpm(eps)
    tau = 0.01 + 8 / (50_000 * 0.01)  # the two-group remark
    assert sol.saturation_level == pytest.approx(tau, rel=1e-12)
    assert sol.n_saturated == 50_000
    assert hdp.saturation_level(eps) == pytest.approx(tau, rel=1e-12)
    s1, s2 = 50_000 * (0.01 + tau), 50_000 * (0.01**2 + tau**2)
    assert sol.objective == pytest.approx((s2 + 8) / (4 * s1**2), rel=1e-12)


# --------------------------------------------------------------------------------------------
# 5. the paper's worked numbers
# --------------------------------------------------------------------------------------------
@given(st.lists(st.one_of(st.just(INF), st.floats(0.5, 1e6)), min_size=1, max_size=300))
@pytest.mark.slow
def test_1000_strict_users_give_looser_users_018(loose):
    eps = np.concatenate([np.full(1000, 0.1), loose])
    sol = hdp.adpm(eps)
    assert sol.saturation_level == pytest.approx(0.18, rel=1e-12)
    np.testing.assert_allclose(sol.r[1000:], 0.18, rtol=1e-12)
    assert (sol.r[:1000] == 0.1).all()
    assert sol.n_saturated == len(loose)


def test_1000_strict_users_with_a_billion_looser_users_in_tiers():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 0.5, 3.0, INF], [1000, 10**9, 10**9, 10**9])
    sol = hdp.adpm(prof)
    assert sol.saturation_level == pytest.approx(0.18, rel=1e-12)
    assert sol.r.tolist() == pytest.approx([0.1, 0.18, 0.18, 0.18], rel=1e-12)


def test_remark_prop_999_strict_users_and_one_public():
    eps = np.concatenate([np.full(999, 0.1), [INF]])
    adpm_wc = hdp.adpm(eps).worst_case_mse
    assert adpm_wc == pytest.approx(4.5e-4, rel=0.01)  # "of the order 1e-4", about 4.5e-4
    # proportional weights w = eps / sum(eps), b = 1/sum(eps): as the public level grows the
    # public user takes all the weight and the noise vanishes; the worst case is
    # (1/4) ||w||^2 + 2 b^2, evaluated at ever larger stand-ins for inf:
    for big in (1e6, 1e9, 1e12):  # plain numpy: beyond the library's range on purpose
        e = np.concatenate([np.full(999, 0.1), [big]])
        w = e / e.sum()
        prop = 0.25 * float(w @ w) + 2.0 / e.sum() ** 2
        assert prop == pytest.approx(0.25, rel=1e-3 * (1e6 / big) ** 0.5 + 1e-9)
    # the limit itself: all the weight on the public user, no noise
    w = np.zeros(1000)
    w[-1] = 1.0
    assert true_worst_case(w, eps) == 0.25
    assert 0.25 / adpm_wc > 500


@pytest.mark.parametrize("n", [10, 1000, 10**6, 10**12])
@pytest.mark.parametrize("frac", [0.01, 0.5, 0.9])
@pytest.mark.parametrize("eps1", [1e-3, 0.1, 2.0])
def test_two_groups_saturation_boundary(n, frac, eps1):
    thr = eps1 + 8.0 / (n * frac * eps1)
    assert hdp.two_group_threshold(n, frac, eps1) == pytest.approx(thr, rel=1e-15)
    n1 = n * frac
    if n1 != int(n1):
        return
    n1 = int(n1)
    for factor, should in ((1 + 1e-9, True), (1 - 1e-9, False), (3.0, True), (0.999, False)):
        eps2 = thr * factor
        if eps2 < eps1:
            continue
        sol = hdp.adpm(hdp.EpsilonProfile.from_tiers([eps1, eps2], [n1, n - n1]))
        assert bool(sol.saturated[1]) is should, (factor, sol.saturation_level, thr)
        assert not sol.saturated[0]
        if should:
            assert sol.saturation_level == pytest.approx(thr, rel=1e-12)
            assert sol.r[1] == pytest.approx(thr, rel=1e-12)
        else:
            assert math.isinf(sol.saturation_level)
            assert sol.r[1] == eps2


@pytest.mark.parametrize("n", [10, 1000, 10**6, 10**12])
@pytest.mark.parametrize("eps1", [1e-3, 0.1, 0.37, 2.0])
def test_two_groups_at_the_threshold_exact_arithmetic(n, eps1):
    """At and next to the float threshold two_group_threshold() returns, the looser group
    saturates iff G = n1 eps1 (eps2 - eps1) >= 8 evaluated exactly (rationals) on the float
    inputs; only levels within 1e-12 (relative, in G) of the boundary may go either way."""
    for frac in (0.1, 0.5, 0.9):
        n1 = round(n * frac)
        thr = hdp.two_group_threshold(n, n1 / n, eps1)
        for eps2 in (
            thr,
            math.nextafter(thr, INF),
            math.nextafter(thr, 0.0),
            thr * (1 + 1e-9),
            thr * (1 - 1e-9),
        ):
            if eps2 < eps1:
                continue
            g = n1 * Fraction(eps1) * (Fraction(eps2) - Fraction(eps1))
            sol = hdp.adpm(hdp.EpsilonProfile.from_tiers([eps1, eps2], [n1, n - n1]))
            if abs(g / 8 - 1) > Fraction(1, 10**12):
                assert bool(sol.saturated[1]) is (g >= 8), (n, frac, eps1, eps2, float(g))
            if sol.saturated[1]:
                assert sol.saturation_level == pytest.approx(thr, rel=1e-8)
        # the level itself: saturated unless it lies below the threshold beyond the tie rule
        g_thr = n1 * Fraction(eps1) * (Fraction(thr) - Fraction(eps1))
        sol = hdp.adpm(hdp.EpsilonProfile.from_tiers([eps1, thr], [n1, n - n1]))
        if g_thr >= 8 * (1 - Fraction(1, 10**12)):
            assert sol.saturated[1]


def test_two_groups_boundary_with_the_literal_loop():
    # n = 40, f = 1/4, eps1 = 0.5: threshold 0.5 + 8/(10*0.5) = 2.1
    for eps2, should in ((2.1 * (1 + 1e-12), True), (2.1 * (1 - 1e-12), False)):
        eps = [0.5] * 10 + [eps2] * 30
        assert tr_sat(eps) is should
        assert bool(hdp.adpm(eps).saturated[-1]) is should


def tr_sat(eps) -> bool:
    return bool(hdp.adpm_trace(eps).saturated.any())


# --------------------------------------------------------------------------------------------
# 6. edge cases
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 7, 1000])
def test_all_public_is_the_sample_mean(n):
    sol = hdp.adpm([INF] * n)
    assert (sol.weights == 1.0 / n).all()
    assert sol.noise_scale == 0
    assert sol.worst_case_mse == pytest.approx(1 / (4 * n), rel=1e-15)
    assert math.isinf(sol.saturation_level)
    assert sol.n_saturated == 0
    assert not sol.outputs_zero


def test_all_public_tiers_and_public_with_excluded():
    sol = hdp.adpm(hdp.EpsilonProfile.from_tiers([INF, 0.0], [10**9, 5]))
    assert sol.weights.tolist() == [1e-9, 0.0]
    assert sol.worst_case_mse == pytest.approx(0.25e-9)


def test_excluded_users_get_weight_zero_and_adpm_runs_on_the_rest():
    rng = np.random.default_rng(3)
    rest = np.exp(rng.uniform(-3, 1, 30))
    eps = np.concatenate([rest[:10], [0.0, 0.0], rest[10:], [0.0]])
    a, b = hdp.adpm(eps), hdp.adpm(rest)
    assert (a.weights[eps == 0] == 0).all() and (a.r[eps == 0] == 0).all()
    np.testing.assert_allclose(a.weights[eps > 0], b.weights, rtol=1e-12)
    assert a.objective == pytest.approx(b.objective, rel=1e-12)
    assert a.n_excluded == 3
    assert not a.saturated[eps == 0].any()


@pytest.mark.parametrize("n", [1, 5])
def test_everyone_excluded_outputs_zero(n):
    sol = hdp.adpm([0.0] * n)
    assert sol.worst_case_mse == 0.25
    assert sol.outputs_zero
    assert (sol.weights == 0).all()
    assert sol.estimate(np.full(n, 0.3)) == 0.0


@pytest.mark.parametrize("eps", [1e-6, 1e-3, 0.5, 3.0, 1e3, 1e6])
def test_single_user(eps):
    sol = hdp.adpm([eps])
    assert sol.weights.tolist() == [1.0]
    assert sol.noise_scale == pytest.approx(1 / eps, rel=1e-15)
    assert sol.objective == pytest.approx(0.25 + 2 / eps**2, rel=1e-14)
    assert math.isinf(sol.saturation_level)
    assert sol.worst_case_mse == 0.25  # 1/4 + 2/eps^2 > 1/4 always for one private user
    if 2 / eps**2 > 1e-15:  # beyond that f rounds to exactly 1/4 and is not "> 1/4"
        assert sol.outputs_zero


def test_f_above_quarter_outputs_zero_and_caps():
    eps = [0.05] * 20  # f = (20*0.0025 + 8)/(4*1) = 2.0125
    sol = hdp.adpm(eps)
    assert sol.objective == pytest.approx(2.0125, rel=1e-14)
    assert sol.worst_case_mse == 0.25
    assert sol.outputs_zero
    assert sol.estimate(np.full(20, 0.4), np.random.default_rng(0)) == 0.0
    assert hdp.upper_bound(eps) == 0.25
    ok = hdp.adpm([1.0] * 400)
    assert not ok.outputs_zero and ok.worst_case_mse == ok.objective


@given(profiles(max_n=60, min_exp=-3, max_exp=3, specials=False))
def test_lemma_sat_b_on_saturated_steps(eps):
    tr = hdp.adpm_trace(eps)
    for k in np.flatnonzero(tr.saturated):
        f_prev = tr.f[k - 1]
        assert tr.f[k] == pytest.approx(f_prev / (1 + 4 * f_prev), rel=1e-12)
    # f of the prefixes never increases (each added user can only help)
    assert (np.diff(tr.f) <= 1e-12 * tr.f[1:]).all()


def test_lemma_sat_b_has_saturated_steps_to_check():
    tr = hdp.adpm_trace([0.1] * 1000 + [0.5, 1.0, 2.0, INF])
    assert tr.saturated.sum() == 4
    for k in np.flatnonzero(tr.saturated):  # the public step is checked too
        assert tr.f[k] == pytest.approx(tr.f[k - 1] / (1 + 4 * tr.f[k - 1]), rel=1e-12)


def test_estimate_is_unbiased_weighted_mean_plus_laplace():
    eps = np.array([0.5] * 300 + [5.0] * 100)
    sol = hdp.adpm(eps)
    x = np.linspace(-0.5, 0.5, 400)
    rng = np.random.default_rng(0)
    draws = np.array([sol.estimate(x, rng) for _ in range(4000)])
    assert abs(draws.mean() - sol.weights @ x) < 5 * sol.noise_scale * math.sqrt(2 / 4000)
    assert draws.var() == pytest.approx(2 * sol.noise_scale**2, rel=0.1)
