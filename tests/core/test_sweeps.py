"""hdp_core.sweeps against independent computations: closed forms for one level and two groups,
brute-force H, direct calls on each scaled or resized profile, and the baselines' worst cases
written out from the hdp_core.baselines docstring (SM through an exact Poisson-binomial
distribution)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_core import sweeps
from hdp_core.validate import LEVEL_MAX

INF = math.inf
BASELINES = ("PropDPM", "LDPE", "SM", "FME", "UNI")


# ------------------------------------------------------------------------------------ oracles
def f_single(n, eps):
    """ADPM's f for n users at one level eps: (n eps^2 + 8)/(4 n^2 eps^2) (nothing saturates)."""
    return (n * eps**2 + 8.0) / (4.0 * n**2 * eps**2)


def h_single(n: int, eps: float) -> float:
    """H for n users at eps in closed form: D(i) = i^2 eps^2 + n - i is a convex parabola in i
    with its minimum at i* = 1/(2 eps^2); H = 1/min D over the integers next to i*."""
    i_star = 1.0 / (2.0 * eps * eps)
    cands = {0, n, min(max(math.floor(i_star), 0), n), min(max(math.ceil(i_star), 0), n)}
    return 1.0 / min((n - i) + i * i * eps * eps for i in cands)


def h_brute(eps) -> float:
    """H = max_{i=0..n} 1/(||eps_1^i||_1^2 + n - i), a plain loop over the sorted levels."""
    e = sorted(float(x) for x in eps)
    n = len(e)
    best, s = 1.0 / n, 0.0
    for i, x in enumerate(e, start=1):
        s += x
        best = max(best, 1.0 / ((n - i) + s * s)) if math.isfinite(s) else best
    return best


def poisson_binomial(p) -> np.ndarray:
    """pmf of the number of successes of independent Bernoulli(p_i), by convolution."""
    pmf = np.array([1.0])
    for q in p:
        pmf = np.convolve(pmf, [1.0 - q, q])
    return pmf


def worst_case_by_definition(method: str, eps) -> float:
    """Worst-case MSE (data in [-0.5, 0.5]) written out from the hdp_core.baselines docstring, for a
    per-user list of positive levels (inf allowed); no hdp_core code involved."""
    e = np.sort(np.asarray(eps, dtype=np.float64))
    n = e.size
    fin = e[np.isfinite(e)]
    pub = int(np.isinf(e).sum())
    if method == "UNI":  # w = 1/n, b = 1/(n eps_1)
        b = 1.0 / (n * fin[0]) if fin.size else 0.0
        return 0.25 / n + 2 * b * b
    if method in ("PropDPM", "FME"):  # proportional to eps (FME: capped at 1/sqrt(n))
        r = e if method == "PropDPM" else np.minimum(e, 1 / math.sqrt(n))
        if method == "FME" and not fin.size:
            r = e
        if np.isinf(r).any():  # public users take all the weight, no noise
            return 0.25 / int(np.isinf(r).sum())
        s1 = r.sum()
        return (0.25 * (r * r).sum() + 2.0) / s1**2
    if method == "LDPE":  # w ∝ 1/(1/4 + 2/eps^2); MSE sum w^2 (1/4 + 2/eps^2)
        var = 0.25 + 2.0 / (e * e)  # 1/4 for public users
        w = (1.0 / var) / (1.0 / var).sum()
        return float((w * w * var).sum())
    if method == "SM":  # keep with (e^eps - 1)/(e^t - 1); mean of kept + Laplace(1/(N t))
        t = e.max()
        if math.isinf(t):
            return 0.25 / pub
        p = np.expm1(e) / math.expm1(t)
        pmf = poisson_binomial(p)
        k = np.arange(1, pmf.size)
        e1 = float((pmf[1:] / k).sum())
        e2 = float((pmf[1:] / k**2).sum())
        return 0.25 * max(e1, pmf[0]) + 2.0 / t**2 * e2
    raise ValueError(method)


# ------------------------------------------------------------------------------ single level
@settings(max_examples=25)
@given(st.integers(1, 3000), st.floats(0.001, 50.0))
def test_scale_sweep_single_level_closed_forms(n, eps):
    prof = hdp.EpsilonProfile.from_tiers([eps], [n])
    c = sweeps.log_grid(1e-3, 1e3, 13)
    sw = sweeps.scale_sweep(prof, c, methods=())
    np.testing.assert_allclose(sw.x, c)
    np.testing.assert_allclose(sw.f, f_single(n, c * eps), rtol=1e-10)
    np.testing.assert_allclose(sw.upper, np.minimum(f_single(n, c * eps), 0.25), rtol=1e-10)
    h = np.array([h_single(n, ci * eps) for ci in c])
    np.testing.assert_allclose(sw.H, h, rtol=1e-10)
    np.testing.assert_allclose(sw.lower, np.minimum(h, 0.25) / 512, rtol=1e-10)
    np.testing.assert_allclose(sw.ratio, sw.f / h, rtol=1e-10)
    assert np.isinf(sw.tau).all()  # one level never saturates
    assert (sw.ratio <= 443).all()


def test_h_closed_form_matches_brute_force():
    for n, eps in ((1, 0.5), (7, 0.01), (50, 0.3), (200, 2.0), (500, 0.04)):
        assert h_single(n, eps) == pytest.approx(h_brute([eps] * n), rel=1e-12)


@settings(max_examples=25)
@given(st.floats(0.001, 20.0))
def test_n_sweep_single_level_closed_forms(eps):
    ns = np.array([1, 2, 10, 99, 1000, 123_456, 10**9, 10**12])
    sw = sweeps.n_sweep(hdp.EpsilonProfile.from_tiers([eps], [10]), ns, methods=("UNI",))
    np.testing.assert_allclose(sw.f, f_single(ns.astype(float), eps), rtol=1e-10)
    np.testing.assert_allclose(sw.H, [h_single(int(n), eps) for n in ns], rtol=1e-9)
    # UNI on one level is the sample mean with Laplace(1/(n eps)): the same number
    np.testing.assert_allclose(sw.mse["UNI"], np.minimum(sw.f, INF), rtol=1e-10)


# ------------------------------------------------------------------------------ two groups
@settings(max_examples=25)
@given(st.integers(1, 10**6), st.integers(1, 10**6), st.floats(0.005, 5.0))
def test_group_sweep_flat_exactly_from_the_threshold(n1, n2, e1):
    thr = e1 + 8.0 / (n1 * e1)  # Remark (two groups), with n f = n1
    gap = thr - e1
    below = e1 + gap * np.array([0.0, 0.3, 0.9, 0.999])
    above = thr + gap * np.array([1e-3, 0.5, 10.0, 1e4])
    above = above[above <= LEVEL_MAX]  # the supported range of levels (issue 12)
    values = [*below, *above, INF]
    sw = sweeps.group_sweep(n1, e1, n2, values, methods=("ADPM", "PropDPM"))
    f_flat = (n1 * e1**2 + n2 * thr**2 + 8.0) / (4.0 * (n1 * e1 + n2 * thr) ** 2)
    nb = below.size
    np.testing.assert_allclose(sw.f[nb:], f_flat, rtol=1e-9)  # flat once saturated
    np.testing.assert_allclose(sw.tau[nb:], thr, rtol=1e-9)
    assert np.isinf(sw.tau[:nb]).all()
    # below the threshold: proportional weights, f strictly above the saturated value
    f_prop = (n1 * e1**2 + n2 * below**2 + 8.0) / (4.0 * (n1 * e1 + n2 * below) ** 2)
    np.testing.assert_allclose(sw.f[:nb], f_prop, rtol=1e-9)
    # f falls towards f_flat as eps2 nears the threshold (with slope 0 there)
    assert (np.diff(sw.f[: nb + 1]) <= 1e-12 * f_flat).all()
    np.testing.assert_allclose(sw.mse["ADPM"], sw.upper, rtol=1e-12)
    # PropDPM equals ADPM below the threshold, is worse above it, and collapses with public
    np.testing.assert_allclose(sw.mse["PropDPM"][:nb], np.minimum(sw.f[:nb], INF), rtol=1e-9)
    assert sw.mse["PropDPM"][-1] == pytest.approx(0.25 / n2)


def test_group_sweep_two_groups_preset():
    """900 users at 0.1, 100 whose level grows: ADPM improves until 0.1 + 8/90, then stays."""
    thr = 0.1 + 8.0 / 90.0
    sw = sweeps.group_sweep(900, 0.1, 100, [0.1, 0.15, thr, 1.0, INF], methods=("PropDPM",))
    f_flat = (900 * 0.01 + 100 * thr**2 + 8.0) / (4.0 * (90.0 + 100 * thr) ** 2)
    assert sw.f[0] == pytest.approx(f_single(1000, 0.1), rel=1e-12)
    assert sw.f[0] > sw.f[1] > f_flat * (1 + 1e-6)
    np.testing.assert_allclose(sw.f[2:], f_flat, rtol=1e-12)
    assert sw.mse["PropDPM"][3] > 1.5 * sw.upper[3]  # proportional weights lose once saturated


# ------------------------------------------------------------------------------ direct calls
eps_lists = st.lists(
    st.one_of(st.floats(0.01, 10.0), st.just(INF), st.just(0.0)), min_size=1, max_size=25
).filter(lambda v: any(x > 0 for x in v))


@settings(max_examples=25)
@given(eps_lists)
def test_scale_sweep_points_equal_direct_calls(eps):
    prof = hdp.EpsilonProfile.from_values(eps)
    factors = [0.01, 0.3, 1.0, 7.0, 200.0]
    sw = sweeps.scale_sweep(prof, factors)
    for i, c in enumerate(factors):
        p = hdp.EpsilonProfile.from_values(np.asarray(eps) * c)  # per user, not grouped
        assert sw.upper[i] == pytest.approx(hdp.upper_bound(p), rel=1e-9)
        assert sw.lower[i] == pytest.approx(hdp.lower_bound(p), rel=1e-9)
        assert sw.H[i] == pytest.approx(h_brute(np.asarray(eps) * c), rel=1e-9)
        assert sw.tau[i] == pytest.approx(hdp.saturation_level(p), rel=1e-9)
        for m in hdp.METHODS:
            assert sw.mse[m][i] == pytest.approx(hdp.get_method(m, p).worst_case_mse, rel=1e-7), m


@settings(max_examples=25)
@given(eps_lists)
def test_n_sweep_points_equal_direct_calls(eps):
    prof = hdp.EpsilonProfile.from_values(eps)
    ns = [1, 3, len(eps), 1000, 10**8]
    sw = sweeps.n_sweep(prof, ns, methods=("ADPM", "FME", "UNI"))
    for i, n in enumerate(ns):
        p = prof.with_n(n)
        assert p.n == n
        assert sw.upper[i] == pytest.approx(hdp.upper_bound(p), rel=1e-9)
        assert sw.lower[i] == pytest.approx(hdp.lower_bound(p), rel=1e-9)
        for m in ("ADPM", "FME", "UNI"):
            assert sw.mse[m][i] == pytest.approx(hdp.get_method(m, p).worst_case_mse, rel=1e-9)
    # at the profile's own n, the point is the profile itself
    j = ns.index(len(eps))
    assert sw.upper[j] == pytest.approx(hdp.upper_bound(prof), rel=1e-9)
    assert sw.H[j] == pytest.approx(h_brute(eps), rel=1e-9)


# ------------------------------------------------------------------------------ baselines
@pytest.mark.parametrize(
    "eps",
    [
        [0.1] * 10 + [0.5, 1.0, 2.0, 3.0],
        list(np.exp(np.linspace(-3, 1.5, 30))),
        [0.05, 0.2, 0.2, 0.9, INF, INF],
        [INF, INF, INF],
    ],
)
def test_baseline_worst_cases_equal_their_definitions(eps):
    factors = [0.05, 0.5, 1.0, 4.0]
    sw = sweeps.scale_sweep(eps, factors, methods=BASELINES)
    for i, c in enumerate(factors):
        scaled = np.asarray(eps) * c
        for m in BASELINES:
            assert sw.mse[m][i] == pytest.approx(worst_case_by_definition(m, scaled), rel=1e-8), (
                m,
                c,
            )


def test_sweep_with_a_distribution_is_the_exact_mse():
    prof = hdp.preset("two_groups")
    dist = hdp.Beta(2, 3)
    sw = sweeps.scale_sweep(prof, [0.1, 1.0, 10.0], methods=("ADPM", "LDPE"), dist=dist)
    for i, c in enumerate([0.1, 1.0, 10.0]):
        for m in ("ADPM", "LDPE"):
            assert sw.mse[m][i] == pytest.approx(hdp.exact_mse(m, prof.scaled(c), dist), rel=1e-10)


def test_log_grid():
    g = sweeps.log_grid(1e-3, 1e3, 61)
    assert g.size == 61 and g[0] == pytest.approx(1e-3) and g[-1] == pytest.approx(1e3)
    np.testing.assert_allclose(g[1:] / g[:-1], 10**0.1, rtol=1e-12)
    for bad in ((0, 1, 5), (2, 1, 5), (1, INF, 5), (1, 2, 1)):
        with pytest.raises(ValueError):
            sweeps.log_grid(*bad)
