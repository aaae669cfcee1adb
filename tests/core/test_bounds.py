"""Bounds: H(eps) against brute force over i = 0..n, tiers whose maximum falls inside a tier,
closed forms for 10^12-user tiers, Theorem 4 (f/H <= 443) and robustness at extreme levels."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN

INF = math.inf


# --------------------------------------------------------------------------------------------
# oracles
# --------------------------------------------------------------------------------------------
def brute_H(eps) -> tuple[float, int]:
    """max_{i=0..n} 1/(||eps_1^i||_1^2 + n - i) over the sorted expanded levels, and its argmax
    (Theorem 3). Written with a Python loop and math.fsum, independently of hdp_core."""
    e = sorted(float(x) for x in eps)
    n = len(e)
    best, arg = -1.0, -1
    s = comp = 0.0  # Neumaier-compensated running sum of the prefix
    for i in range(n + 1):
        total = s + comp
        d = total * total + (n - i)
        val = 0.0 if math.isinf(d) else (math.inf if d == 0 else 1.0 / d)
        if val > best:
            best, arg = val, i
        if i < n:
            x = e[i]
            if math.isinf(x):
                s, comp = math.inf, 0.0
            elif math.isfinite(s):
                t = s + x
                comp += (s - t) + x if abs(s) >= abs(x) else (x - t) + s
                s = t
    return best, arg


def brute_H_fast(eps) -> float:
    """The same maximum, vectorised (for expansions of a few 10^4 users)."""
    e = np.sort(np.asarray(eps, dtype=float))
    n = e.size
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        s = np.concatenate([[0.0], np.cumsum(e)])
        d = s * s + (n - np.arange(n + 1))
        return float(np.max(1.0 / d))


def tier_min_D(s_before: float, i_before: int, e: float, c: int, n: int) -> float:
    """min over u = 0..c of (s_before + u e)^2 + n - i_before - u: a convex quadratic in u, so
    the integer minimum is at the floor or ceiling of the real minimiser (clipped)."""
    cands = {0, c}
    if e > 0:
        u0 = (1.0 / (2 * e) - s_before) / e
        for u in (math.floor(u0), math.ceil(u0)):
            if 0 <= u <= c:
                cands.add(u)
    else:
        cands = {c}
    return min((s_before + u * e) ** 2 + (n - i_before - u) for u in cands)


def tiers_H(levels, counts) -> float:
    """H for sorted tiers from :func:`tier_min_D` (finite levels; public tiers add only u = 0)."""
    order = np.argsort(levels, kind="stable")
    n = int(sum(counts))
    s, i, best = 0.0, 0, math.inf
    for j in order:
        e, c = float(levels[j]), int(counts[j])
        if math.isinf(e):
            best = min(best, s * s + (n - i))
            break
        best = min(best, tier_min_D(s, i, e, c, n))
        s += c * e
        i += c
    best = min(best, s * s + (n - i))
    return 1.0 / best


@st.composite
def profiles(draw, max_n: int = 60):
    n = draw(st.integers(1, max_n))
    scale = 10.0 ** draw(st.integers(-6, 6))
    pool_size = draw(st.integers(1, n))
    pool = draw(st.lists(st.floats(-5, 5), min_size=pool_size, max_size=pool_size))
    idx = draw(st.lists(st.integers(0, pool_size - 1), min_size=n, max_size=n))
    # clipped to the supported range [1e-6, 1e6] (issue 12), so its ends are drawn often
    eps = np.clip(scale * np.exp(np.asarray(pool)[idx]), LEVEL_MIN, LEVEL_MAX)
    tags = np.asarray(draw(st.lists(st.integers(0, 14), min_size=n, max_size=n)))
    eps[tags == 0] = INF
    eps[tags == 1] = 0.0
    if not (eps > 0).any():
        eps[0] = scale
    return eps


@st.composite
def unsaturated_sequences(draw, max_n: int = 200):
    """The paper's last experiment: eps_{i+1} drawn from [eps_i, 4||eps_1^i||_1 f(eps_1^i)) =
    [eps_i, (||eps_1^i||_2^2 + 8)/||eps_1^i||_1), so nothing saturates. Each draw stays at
    least 1e-9 (relative) below the cap so that "unsaturated" is not a rounding tie."""
    n = draw(st.integers(1, max_n))
    e1 = 10.0 ** draw(st.floats(-4, 2))
    us = draw(st.lists(st.floats(0, 0.999), min_size=n - 1, max_size=n - 1))
    eps = [e1]
    s1, s2 = e1, e1 * e1
    for u in us:
        cap = (s2 + 8.0) / s1
        x = max(eps[-1], min(eps[-1] + u * (cap - eps[-1]), cap * (1 - 1e-9)))
        eps.append(x)
        s1 += x
        s2 += x * x
    return np.asarray(eps)


# --------------------------------------------------------------------------------------------
# 7. H against brute force
# --------------------------------------------------------------------------------------------
@given(profiles())
def test_H_matches_brute_force(eps):
    h, _ = brute_H(eps)
    assert hdp.lower_bound_H(eps) == pytest.approx(h, rel=1e-12)
    assert hdp.lower_bound_H(np.random.default_rng(0).permutation(eps)) == pytest.approx(
        h, rel=1e-12
    )


@given(
    st.lists(
        st.tuples(
            st.one_of(st.just(INF), st.just(0.0), st.floats(1e-3, 2.0)),
            st.integers(0, 3000),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_H_of_tiers_matches_brute_force_on_the_expansion(tiers):
    levels = [t[0] for t in tiers]
    counts = [t[1] for t in tiers]
    if sum(counts) == 0:
        counts[0] = 1
    prof = hdp.EpsilonProfile.from_tiers(levels, counts)
    flat = np.repeat(levels, counts)
    assert hdp.lower_bound_H(prof) == pytest.approx(brute_H_fast(flat), rel=1e-12)
    assert hdp.lower_bound_H(prof) == pytest.approx(hdp.lower_bound_H(flat), rel=1e-12)


def test_H_maximum_inside_a_tier():
    # D(i) = S_i^2 + n - i is minimised where 2 eps S_i ~ 1: with 20000 users at 0.01 after
    # 100 at 0.001 that is S ~ 50, i.e. about 5000 users into the 0.01 tier
    levels, counts = [0.5, 0.001, INF, 0.01], [3000, 100, 50, 20_000]
    flat = np.repeat(levels, counts)
    h, arg = brute_H(flat)
    assert 100 < arg < 100 + 20_000 and arg not in (100, 20_100)  # strictly inside tier 0.01
    prof = hdp.EpsilonProfile.from_tiers(levels, counts)
    assert hdp.lower_bound_H(prof) == pytest.approx(h, rel=1e-12)
    assert hdp.lower_bound_H(flat) == pytest.approx(h, rel=1e-12)
    # endpoints alone (what a tier-by-tier evaluation would see) are strictly smaller
    ends = np.concatenate([[0.0], np.cumsum(counts_sorted := np.array([100, 20_000, 3000]))])
    s_ends = np.concatenate([[0.0], np.cumsum(counts_sorted * np.array([0.001, 0.01, 0.5]))])
    n = sum(counts)
    assert max(1 / (s_ends**2 + n - ends)) < h * (1 - 1e-3)


@pytest.mark.parametrize(
    ("eps", "count"),
    [(1e-4, 10**12), (1e-6, 10**12), (0.01, 10**9), (1.0, 10**12), (1e-6, 5), (1e6, 10**15)],
)
def test_H_single_huge_tier_closed_form(eps, count):
    expected = 1.0 / tier_min_D(0.0, 0, eps, count, count)
    prof = hdp.EpsilonProfile.from_tiers([eps], [count])
    assert hdp.lower_bound_H(prof) == pytest.approx(expected, rel=1e-12)


@given(
    st.lists(st.tuples(st.floats(1e-6, 1e3), st.integers(1, 10**12)), min_size=1, max_size=5),
    st.integers(0, 10**12),
)
def test_H_huge_tiers_closed_form(tiers, n_public):
    levels = [t[0] for t in tiers] + [INF]
    counts = [t[1] for t in tiers] + [n_public]
    prof = hdp.EpsilonProfile.from_tiers(levels, counts)
    assert hdp.lower_bound_H(prof) == pytest.approx(tiers_H(levels, counts), rel=1e-9)


def test_H_edge_cases():
    assert hdp.lower_bound_H([INF] * 7) == pytest.approx(1 / 7)  # only i = 0 is finite
    assert hdp.lower_bound_H([0.0] * 5 + [INF] * 5) == pytest.approx(1 / 5)  # i = 5
    # nobody's data usable: D(n) = 0, H = inf, and the lower bound is the trivial 1/4 / 512
    assert math.isinf(hdp.lower_bound_H([0.0] * 4))
    assert hdp.lower_bound([0.0] * 4) == 0.25 / 512
    assert hdp.lower_bound_H([2.0]) == pytest.approx(1 / 1)  # max(1/1, 1/4)
    assert hdp.lower_bound_H([0.1]) == pytest.approx(1 / 0.01)  # i = 1: 1/(0.1^2)


# --------------------------------------------------------------------------------------------
# the bound functions and Theorem 4
# --------------------------------------------------------------------------------------------
@given(profiles())
def test_bound_functions_are_what_they_say(eps):
    sol = hdp.adpm(eps)
    h, _ = brute_H(eps)
    assert hdp.lower_bound(eps) == pytest.approx(min(h, 0.25) / 512, rel=1e-12)
    assert hdp.upper_bound(eps) == sol.worst_case_mse
    assert hdp.optimality_ratio(eps) == pytest.approx(sol.objective / h, rel=1e-12)
    assert hdp.lower_bound(eps) <= hdp.upper_bound(eps)


@given(profiles())
def test_theorem4_on_random_profiles(eps):
    ratio = hdp.optimality_ratio(eps)
    assert ratio <= 443
    assert ratio > 0


@given(unsaturated_sequences())
def test_theorem4_on_unsaturated_sequences(eps):
    sol = hdp.adpm(eps)
    assert sol.n_saturated == 0 and math.isinf(sol.saturation_level)  # really unsaturated
    assert (sol.r == eps).all()
    h, _ = brute_H(eps)
    assert sol.objective / h <= 443
    assert hdp.optimality_ratio(eps) == pytest.approx(sol.objective / h, rel=1e-12)


def test_theorem4_tiers_with_huge_counts():
    rng = np.random.default_rng(11)
    for _ in range(200):
        k = int(rng.integers(1, 6))
        levels = np.exp(rng.uniform(-10, 4, k))
        counts = rng.integers(1, 10**12, k)
        assert hdp.optimality_ratio(hdp.EpsilonProfile.from_tiers(levels, counts)) <= 443


@given(profiles())
def test_H_sanity_bounds(eps):
    """H is at least its i = 0 and i = n terms, and at most the H of everyone at the strictest
    positive level (since ||eps_1^i||_1 >= i * eps_min for the users that are not excluded)."""
    h = hdp.lower_bound_H(eps)
    n = eps.size
    assert h >= 1.0 / n * (1 - 1e-12)
    s = float(np.sum(eps))
    if math.isfinite(s) and s > 0:
        assert h >= 1.0 / (s * s) * (1 - 1e-12)
    n0 = int(np.sum(eps == 0))
    pos = eps[eps > 0]
    emin = float(pos.min())
    if math.isfinite(emin) and n0 == 0:
        # max over real u in [0, n] of 1/((u emin)^2 + n - u)
        u = min(max(1.0 / (2 * emin * emin), 0.0), n)
        assert h <= 1.0 / ((u * emin) ** 2 + (n - u)) * (1 + 1e-12)


@given(profiles(), st.floats(1.0, 100.0), st.integers(0, 2**32 - 1))
def test_bounds_do_not_increase_when_levels_loosen(eps, factor, seed):
    """More privacy budget for anyone can only lower the error and the lower bound."""
    rng = np.random.default_rng(seed)
    looser = eps * np.where(rng.random(eps.size) < 0.5, factor, 1.0)
    looser = np.where(np.isinf(eps), eps, np.minimum(looser, LEVEL_MAX))  # stays in range
    assert hdp.lower_bound_H(looser) <= hdp.lower_bound_H(eps) * (1 + 1e-12)
    assert hdp.adpm(looser).objective <= hdp.adpm(eps).objective * (1 + 1e-12)


# --------------------------------------------------------------------------------------------
# 8. robustness: extreme levels and counts, no floating-point warnings
# --------------------------------------------------------------------------------------------
@pytest.fixture
def strict_fp():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            yield


@pytest.mark.parametrize("lv", [1e-6, 1e-3, 1.0, 1e3, 1e6])
@pytest.mark.parametrize("count", [1, 2, 1000, 10**6, 10**9, 10**12, 10**15])
def test_single_tier_closed_form(strict_fp, lv, count):
    prof = hdp.EpsilonProfile.from_tiers([lv], [count])
    sol = hdp.adpm(prof)
    f = (count * lv * lv + 8.0) / (4.0 * count * count * lv * lv)  # r = eps for everyone
    assert sol.r.tolist() == [lv]
    assert math.isinf(sol.saturation_level)
    assert sol.objective == pytest.approx(f, rel=1e-12)
    assert sol.worst_case_mse == pytest.approx(min(f, 0.25), rel=1e-12)
    assert sol.noise_scale == pytest.approx(1 / (count * lv), rel=1e-12)
    assert sol.weights[0] == pytest.approx(1 / count, rel=1e-12)
    h = hdp.lower_bound_H(prof)
    assert h == pytest.approx(1 / tier_min_D(0.0, 0, lv, count, count), rel=1e-12)
    assert math.isfinite(hdp.lower_bound(prof)) and hdp.optimality_ratio(prof) <= 443


def two_tier_closed_form(e1, c1, e2, c2):
    """The two-group remark: the looser tier saturates iff e2 >= e1 + 8/(c1 e1), and is then
    granted that level; returns (tau*, f)."""
    thr = e1 + 8.0 / (c1 * e1)
    sat = e2 - e1 >= 8.0 / (c1 * e1)  # not e2 >= thr: 8/(c1 e1) may vanish next to e1
    r2 = thr if sat else e2
    s1 = c1 * e1 + c2 * r2
    f = (c1 * e1 * e1 + c2 * r2 * r2 + 8.0) / (4.0 * s1 * s1)
    return (thr if sat else INF), f


@pytest.mark.parametrize("e1", [1e-6, 1e-2, 1.0, 1e4])
@pytest.mark.parametrize("ratio", [1.0, 1.0 + 1e-9, 2.0, 1e6, INF])
@pytest.mark.parametrize("share", [1e-6, 0.5, 0.999])
def test_two_tiers_of_10_to_12_users_closed_form(strict_fp, e1, ratio, share):
    n = 10**12
    c1 = max(1, round(share * n))
    c2 = n - c1
    e2 = e1 * ratio if ratio == INF else min(e1 * ratio, LEVEL_MAX)  # within [1e-6, 1e6]
    prof = hdp.EpsilonProfile.from_tiers([e2, e1], [c2, c1])  # given in the "wrong" order
    sol = hdp.adpm(prof)
    tau, f = two_tier_closed_form(e1, c1, e2, c2)
    assert sol.objective == pytest.approx(f, rel=1e-12)
    if math.isinf(tau):
        assert math.isinf(sol.saturation_level)
        assert sol.r.tolist() == [e2, e1]
    else:
        assert sol.saturation_level == pytest.approx(tau, rel=1e-12)
        assert sol.r[0] == pytest.approx(tau, rel=1e-12) and sol.r[1] == e1
    assert math.fsum(sol.weights * np.array([c2, c1])) == pytest.approx(1.0, rel=1e-12)
    h = hdp.lower_bound_H(prof)
    assert h == pytest.approx(tiers_H([e1, e2], [c1, c2]), rel=1e-9)
    assert 0 < hdp.lower_bound(prof) <= hdp.upper_bound(prof)
    assert hdp.optimality_ratio(prof) <= 443


@given(
    st.lists(
        st.tuples(
            st.one_of(st.just(INF), st.just(0.0), st.floats(1e-6, 1e6)),
            st.integers(0, 10**12),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_extreme_tiers_finite_and_warning_free(tiers):
    levels = [t[0] for t in tiers]
    counts = [t[1] for t in tiers]
    if sum(c for c, lv in zip(counts, levels) if lv > 0) == 0:
        levels[0], counts[0] = 1.0, 1
    prof = hdp.EpsilonProfile.from_tiers(levels, counts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            sol = hdp.adpm(prof)
            h = hdp.lower_bound_H(prof)
            lb, ub = hdp.lower_bound(prof), hdp.upper_bound(prof)
            ratio = hdp.optimality_ratio(prof)
            tau = hdp.saturation_level(prof)
    assert math.isfinite(sol.objective) and sol.objective > 0
    assert np.isfinite(sol.weights).all() and math.isfinite(sol.noise_scale)
    assert math.isfinite(h) and h > 0
    assert 0 < lb <= ub <= 0.25
    assert ratio <= 443
    assert tau == sol.saturation_level
    c = np.asarray(counts, dtype=float)
    assert math.fsum(c * sol.weights) == pytest.approx(1.0, rel=1e-12)
    if sol.noise_scale > 0:
        assert (sol.weights / sol.noise_scale <= np.asarray(levels) * (1 + 1e-12)).all()


@given(st.lists(st.one_of(st.just(INF), st.floats(1e-6, 1e6)), min_size=1, max_size=60))
def test_extreme_per_user_levels_finite_and_warning_free(levels):
    eps = np.asarray(levels)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            sol = hdp.adpm(eps)
            h = hdp.lower_bound_H(eps)
            tr = hdp.adpm_trace(eps)
            ratio = hdp.optimality_ratio(eps)
    assert math.isfinite(sol.objective) and np.isfinite(sol.weights).all()
    assert h == pytest.approx(brute_H(eps)[0], rel=1e-12)
    assert ratio <= 443
    np.testing.assert_allclose(np.sort(sol.r), tr.r, rtol=1e-12)


def test_two_group_threshold_validates():
    with pytest.raises(ValueError):
        hdp.two_group_threshold(0, 0.5, 0.1)
    with pytest.raises(ValueError):
        hdp.two_group_threshold(10, 0.0, 0.1)
    with pytest.raises(ValueError):
        hdp.two_group_threshold(10, 0.5, 0.0)
