"""hdp_core.saturation: the Saturation and Bounds pages' numbers, against independent oracles
(a literal Python loop of Algorithm 1, closed forms for two groups and single levels, brute-force
sums, scipy integration of the normal-Laplace law and Monte Carlo)."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

import hdp_core as hdp
from hdp_app.views import bounds as bviews
from hdp_app.views import saturation as sat
from hdp_core import sweeps

INF = math.inf


# ------------------------------------------------------------------------------------ oracles
def algorithm1(eps) -> tuple[list[float], list[float], float, int]:
    """The paper's Algorithm 1 as a plain loop over the sorted positive levels.

    Returns (sorted levels, r, tau* (inf if no saturation and no public user), k = number of
    users before the first saturated one)."""
    e = sorted(float(x) for x in eps if x > 0)
    r = [e[0]]
    l1, l2 = e[0], e[0] ** 2
    k = len(e)
    for j in range(1, len(e)):
        cap = (l2 + 8.0) / l1 if math.isfinite(l1) else INF
        if e[j] >= cap and k == len(e):
            k = j
        rj = min(e[j], cap)
        r.append(rj)
        l1 += rj
        l2 += rj * rj
    tau = r[k] if k < len(e) else INF
    return e, r, tau, k


def two_group_tau(n1: int, e1: float) -> float:
    """tau after n1 users at e1: (n1 e1^2 + 8)/(n1 e1) = e1 + 8/(n1 e1) (Remark, two groups)."""
    return e1 + 8.0 / (n1 * e1)


levels = st.floats(0.01, 20.0, allow_nan=False, allow_infinity=False)
profiles = st.lists(st.one_of(levels, st.just(INF), st.just(0.0)), min_size=1, max_size=60)


# ------------------------------------------------------------------------------------ r_curve
@given(profiles)
def test_r_curve_matches_algorithm1(eps):
    if not any(x > 0 for x in eps):
        return
    e, r, tau, k = algorithm1(eps)
    c = sat.r_curve(eps)
    assert c.n_usable == len(e)
    assert c.n_excluded == sum(1 for x in eps if x == 0)
    np.testing.assert_array_equal(c.requested, e)
    np.testing.assert_allclose(c.granted, r, rtol=1e-12)
    np.testing.assert_array_equal(c.rank_start, np.arange(1, len(e) + 1))
    if all(math.isinf(x) for x in e):  # all public: the plain mean, nobody capped
        assert c.k_unsaturated == len(e) and math.isinf(c.tau)
        return
    assert c.k_unsaturated == k
    if k < len(e):
        assert c.tau == pytest.approx(tau, rel=1e-12)
        assert not c.saturated[:k].any() and c.saturated[k:].all()
    # weights: r / sum(r), independently
    np.testing.assert_allclose(c.weight, np.array(r) / math.fsum(r), rtol=1e-10)
    assert not c.per_tier and not c.downsampled


def test_r_curve_tiers_span_their_users():
    prof = hdp.EpsilonProfile.from_tiers(
        [1.0, 0.1, INF, 0.0, 0.5],
        [10**11, 10**12, 7, 3, 0],
        ["mid", "strict", "open", "none", "empty"],
    )
    c = sat.r_curve(prof)
    assert c.per_tier and c.names == ("strict", "mid", "open")
    np.testing.assert_array_equal(c.rank_start, [1, 10**12 + 1, 10**12 + 10**11 + 1])
    np.testing.assert_array_equal(c.rank_end, [10**12, 10**12 + 10**11, 10**12 + 10**11 + 7])
    tau = two_group_tau(10**12, 0.1)  # 0.1 + 8e-11: the 1.0 tier is far above it
    assert c.tau == pytest.approx(tau, rel=1e-12)
    assert c.k_unsaturated == 10**12 and c.n_usable == 10**12 + 10**11 + 7
    np.testing.assert_allclose(c.granted, [0.1, tau, tau], rtol=1e-12)
    assert c.n_excluded == 3


def test_r_curve_downsamples_keeping_the_saturation_point():
    rng = np.random.default_rng(3)
    eps = np.exp(rng.uniform(-4, 2, 30_000))
    eps[:50] = INF
    c = sat.r_curve(eps, max_points=2000)
    e, _r, tau, k = algorithm1(eps)
    assert c.downsampled and 1000 < c.requested.size <= 2010
    assert c.k_unsaturated == k
    ranks = c.rank_start
    assert (np.diff(ranks) > 0).all() and ranks[0] == 1 and ranks[-1] == len(e)
    # the last unsaturated and the first saturated user are drawn, exactly
    assert k in ranks and k + 1 in ranks
    i = int(np.flatnonzero(ranks == k + 1)[0])
    assert c.requested[i] == e[k] and c.granted[i] == pytest.approx(tau, rel=1e-12)
    assert not c.saturated[i - 1] and c.saturated[i]
    # every drawn point is the true user at that rank
    np.testing.assert_array_equal(c.requested, np.array(e)[ranks - 1])
    np.testing.assert_allclose(c.granted, np.minimum(c.requested, tau), rtol=1e-12)
    assert np.isinf(c.requested[-1])  # public users are drawn too


# ------------------------------------------------------------------------------- free privacy
def test_free_privacy_paper_example():
    """1000 users at 0.1 and others from 0.5 to public: all the latter get exactly 0.18."""
    rng = np.random.default_rng(0)
    loose = np.concatenate([np.exp(rng.uniform(math.log(0.5), math.log(50), 190)), [INF] * 10])
    fp = sat.free_privacy(np.concatenate([np.full(1000, 0.1), loose]))
    assert fp.tau == pytest.approx(0.18, rel=1e-12)
    assert fp.n_saturated == 200 and fp.n_public == 10 and fp.n == 1200
    assert fp.requested_min == pytest.approx(loose.min())
    assert fp.weight_share == pytest.approx(200 * 0.18 / (1000 * 0.1 + 200 * 0.18), rel=1e-12)


@given(
    st.integers(1, 10**9), st.integers(1, 10**9), st.floats(0.001, 5.0), st.floats(1.0001, 100.0)
)
def test_free_privacy_two_groups_closed_form(n1, n2, e1, mult):
    tau = two_group_tau(n1, e1)
    e2 = tau * mult  # above the boundary: the looser group saturates
    fp = sat.free_privacy(hdp.EpsilonProfile.from_tiers([e1, e2], [n1, n2]))
    assert fp.tau == pytest.approx(tau, rel=1e-10)
    assert fp.n_saturated == n2 and fp.saturated_share == pytest.approx(n2 / (n1 + n2))
    assert fp.requested_median == e2 and fp.gain == pytest.approx(mult, rel=1e-10)
    assert fp.weight_share == pytest.approx(n2 * tau / (n1 * e1 + n2 * tau), rel=1e-9)


def test_free_privacy_nobody_capped():
    fp = sat.free_privacy([0.5, 0.5, 0.6])
    assert fp.n_saturated == 0 and math.isinf(fp.tau) and fp.weight_share == 0.0
    assert math.isnan(fp.gain)
    pub = sat.free_privacy([INF, INF])
    assert pub.n_saturated == 0 and pub.n_public == 2


def _check_table_against_oracle(eps, table):
    """Every user accounted for once; weights and shares from Algorithm 1, independently."""
    e, r, tau, _ = algorithm1(eps)
    total = math.fsum(r) if not all(math.isinf(x) for x in e) else INF
    cols = table.columns
    assert int(cols["users"].sum()) == len(eps)
    assert cols["share of total weight"].sum() == pytest.approx(1.0, rel=1e-9)
    return e, r, tau, total


@given(st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.3, 1.0, 4.0, INF]), min_size=1, max_size=80))
def test_free_privacy_table_levels(eps):
    if not any(x > 0 for x in eps):
        return
    t = sat.free_privacy_table(eps)
    assert t.grouping == "level"
    _e, _r, tau, total = _check_table_against_oracle(eps, t)
    cols = t.columns
    for lv, users, g, w, share, s in zip(
        cols["requested eps"],
        cols["users"],
        cols["granted eps"],
        cols["weight of one user"],
        cols["share of total weight"],
        cols["saturated"],
    ):
        assert users == sum(1 for x in eps if x == lv)
        if lv == 0:
            assert g == 0 and w == 0 and share == 0 and not s
            continue
        if math.isinf(total):  # all usable users public: equal weights, no noise
            assert w == pytest.approx(1.0 / sum(1 for x in eps if math.isinf(x)))
            continue
        want = min(lv, tau)
        assert g == pytest.approx(want, rel=1e-12)
        assert w == pytest.approx(want / total, rel=1e-10)
        assert share == pytest.approx(users * want / total, rel=1e-10)
        assert s == (lv >= tau)


def test_free_privacy_table_tiers_and_csv():
    prof = hdp.EpsilonProfile.from_tiers(
        [2.0, 0.1, 0.5, INF], [300, 10**12, 0, 5], ["Relaxed", "Strict", "Empty", "Public"]
    )
    t = sat.free_privacy_table(prof)
    cols = t.columns
    assert t.grouping == "tier"
    assert list(cols["group"]) == ["Strict", "Relaxed", "Public"]  # sorted, empty tier dropped
    tau = two_group_tau(10**12, 0.1)
    np.testing.assert_allclose(cols["granted eps"], [0.1, tau, tau], rtol=1e-12)
    s1 = 10**12 * 0.1 + 305 * tau
    np.testing.assert_allclose(
        cols["weight of one user"], np.array([0.1, tau, tau]) / s1, rtol=1e-10
    )
    np.testing.assert_array_equal(cols["saturated"], [False, True, True])
    # the table survives a CSV round trip (what the page's download button serves)
    df = pd.DataFrame(cols)
    back = pd.read_csv(io.BytesIO(df.to_csv(index=False).encode()))
    assert list(back["group"]) == ["Strict", "Relaxed", "Public"]
    np.testing.assert_allclose(back["users"], [10**12, 300, 5])
    assert np.isinf(back["requested eps"].iloc[-1])


def test_free_privacy_table_bins():
    rng = np.random.default_rng(1)
    eps = np.concatenate([np.exp(rng.uniform(-4, 2, 5000)), [INF] * 20, [0.0] * 7])
    t = sat.free_privacy_table(eps, max_rows=30)
    assert t.grouping == "bin"
    _e, _r, tau, total = _check_table_against_oracle(eps, t)
    c = t.columns
    assert t.n_rows <= 32
    assert c["group"][0] == "eps = 0 (not used)" and c["users"][0] == 7
    assert c["group"][-1] == "public (∞)" and c["users"][-1] == 20 and c["saturated"][-1]
    mid = slice(1, -1)
    lo, hi = c["requested eps from"][mid], c["requested eps to"][mid]
    assert (lo <= hi).all() and (hi[:-1] < lo[1:]).all()  # disjoint, increasing bins
    fin = np.sort(eps[np.isfinite(eps) & (eps > 0)])
    for a, b_, n, s, g_lo, g_hi, share in zip(
        lo,
        hi,
        c["users"][mid],
        c["saturated"][mid],
        c["granted eps from"][mid],
        c["granted eps to"][mid],
        c["share of total weight"][mid],
    ):
        inside = fin[(fin >= a) & (fin <= b_)]
        assert n == inside.size
        assert s == (a >= tau) and (s or b_ < tau)  # a bin never straddles tau*
        assert g_lo == pytest.approx(min(a, tau)) and g_hi == pytest.approx(min(b_, tau))
        assert share == pytest.approx(np.minimum(inside, tau).sum() / total, rel=1e-9)


# ------------------------------------------------------------------------------- two groups
@given(st.integers(2, 10**7), st.floats(0.01, 0.99), st.floats(0.001, 10.0))
def test_phase_boundary_is_where_adpm_saturates(n, frac, e1):
    n1 = round(frac * n)
    if not 1 <= n1 < n:
        return
    f = n1 / n
    _, b = sat.phase_boundary(n, f, [e1])
    thr = float(b[0])
    assert thr == pytest.approx(hdp.two_group_threshold(n, f, e1), rel=1e-12)
    gap = 8.0 / (n1 * e1)  # margins relative to the distance from eps1 to the boundary
    above = hdp.adpm(hdp.EpsilonProfile.from_tiers([e1, e1 + gap * (1 + 1e-4)], [n1, n - n1]))
    below = hdp.adpm(hdp.EpsilonProfile.from_tiers([e1, e1 + gap * (1 - 1e-4)], [n1, n - n1]))
    assert above.saturated[1] and not below.saturated[1]
    p = sat.two_level_point(above)
    assert p is not None and p.saturated and p.n == n and p.frac == pytest.approx(f)
    assert p.threshold == pytest.approx(thr, rel=1e-12)
    q = sat.two_level_point(below)
    assert q is not None and not q.saturated


def test_phase_boundary_grid_and_errors():
    e1, b = sat.phase_boundary(1000, 0.5, lo=1e-3, hi=1e2, points=50)
    assert e1.size == 50 and e1[0] == pytest.approx(1e-3) and e1[-1] == pytest.approx(1e2)
    np.testing.assert_allclose(b, e1 + 8.0 / (500 * e1), rtol=1e-14)
    for bad in ((0, 0.5), (100, 0.0), (100, 1.5)):
        with pytest.raises(ValueError):
            sat.phase_boundary(*bad)


def test_two_level_point_only_for_two_positive_levels():
    assert sat.two_level_point([0.1, 0.2, 0.3]) is None
    assert sat.two_level_point([0.1, 0.1]) is None
    assert sat.two_level_point([0.0, 0.1, 0.1]) is None  # 0 = excluded, not a group
    p = sat.two_level_point(hdp.preset("two_groups"))
    assert p.n == 1000 and p.frac == pytest.approx(0.9) and p.eps2 == 1.0
    assert p.threshold == pytest.approx(two_group_tau(900, 0.1))
    assert p.saturated == (1.0 >= two_group_tau(900, 0.1))
    pub = sat.two_level_point([0.1] * 5 + [INF] * 2)
    assert math.isinf(pub.eps2) and pub.saturated


# ------------------------------------------------------------------------------ Algorithm 1
def test_teaching_example_and_step_texts():
    prof = sat.teaching_example()
    assert prof.n == 50 and prof.n_public == 3
    e, _r, tau, k = algorithm1(prof.levels)
    assert 10 < k < 40  # saturation happens mid-way, so the walk-through shows both phases
    trace = hdp.adpm_trace(prof)
    texts = [sat.trace_step_text(trace, s) for s in range(1, 51)]
    sub = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")  # the texts' subscript notation
    assert "r₁ = ε₁" in texts[0] and f"{e[0]:.4g}" in texts[0]
    for s in range(2, k + 1):  # unsaturated steps: eps_s < tau_{s-1}
        assert f"ε{str(s).translate(sub)} = {e[s - 1]:.4g} <" in texts[s - 1]
        assert f"r{str(s).translate(sub)} = {e[s - 1]:.4g}" in texts[s - 1]
    assert "saturation!" in texts[k]  # step k+1 is the first saturated one
    assert f"{tau:.4g}" in texts[k] and "Lemma 3" in texts[k]
    for s in range(k + 2, 51):
        assert "saturated" in texts[s - 1] and f"τ* = {tau:.4g}" in texts[s - 1]
    assert "public (∞)" in texts[-1]
    with pytest.raises(ValueError):
        sat.trace_step_text(trace, 51)


def test_step_text_when_everyone_is_public():
    trace = hdp.adpm_trace([INF, INF, INF])
    assert "plain sample mean" in sat.trace_step_text(trace, 2)


# ------------------------------------------------------------------------------ sweep helpers
@given(st.integers(1, 10**6), st.floats(0.001, 50.0))
def test_regime_guides_are_the_two_terms_of_f(n, eps):
    """For n users at one level, f = 1/(4n) + 2/(n eps)^2 exactly: the two guides."""
    prof = hdp.EpsilonProfile.from_tiers([eps], [n])
    x = sweeps.log_grid(0.01, 100, 9)
    g = bviews.regime_guides(prof, x, "scale")
    sw = sweeps.scale_sweep(prof, x, methods=())
    np.testing.assert_allclose(g["loose"] + g["strict"], sw.f, rtol=1e-9)
    np.testing.assert_allclose(g["strict"], 2.0 / (x * n * eps) ** 2, rtol=1e-12)
    ns = np.array([1, 10, 1000, 10**7])
    gn = bviews.regime_guides(prof, ns, "n")
    np.testing.assert_allclose(
        gn["loose"] + gn["strict"], (ns * eps**2 + 8) / (4.0 * ns**2 * eps**2), rtol=1e-9
    )


def test_regime_guides_with_public_and_excluded_users():
    g = bviews.regime_guides([0.0, 1.0, INF, INF], [1.0, 2.0], "scale")
    assert np.isnan(g["strict"]).all()
    np.testing.assert_allclose(g["loose"], 1 / 12)  # 3 users whose data is used
    with pytest.raises(ValueError):
        bviews.regime_guides([1.0], [1.0], "other")


def test_sweep_points():
    e = bviews.SWEEP_EXPONENTS
    assert e.size == 31 and e[15] == 0.0 and e[0] == -3.0 and e[-1] == 3.0
    np.testing.assert_allclose(np.diff(e), bviews.SWEEP_STEP, rtol=1e-12)
    np.testing.assert_allclose(bviews.sweep_points([1.0] * 20, "scale"), 10.0**e)
    ns = bviews.sweep_points([1.0] * 20, "n")
    assert ns[15] == 20 and ns[0] == 1 and ns[-1] == 20_000 and ns.dtype == np.int64
    big = bviews.sweep_points(hdp.EpsilonProfile.from_tiers([1.0], [10**14]), "n")
    assert big.max() == hdp.profile.MAX_TOTAL_USERS
    with pytest.raises(ValueError):
        bviews.sweep_points([1.0], "x")


# ------------------------------------------------------------------------------ real units
def _normal_laplace_cdf(h: float, s: float, b: float) -> float:
    """P(|Z + L| <= h) by numerical integration over the Laplace variable L = b u (scipy);
    the integrand is even in u, so twice the integral over u >= 0."""

    def integrand(u):
        return math.exp(-u) * (stats.norm.cdf((h - b * u) / s) - stats.norm.cdf((-h - b * u) / s))

    val, _ = integrate.quad(integrand, 0.0, 60.0, limit=400, epsabs=1e-12, epsrel=1e-12)
    return val


@pytest.mark.parametrize("lo,hi", [(0.0, 100_000.0), (-3.0, 5.0)])
def test_affine_error_real_against_integration(lo, hi):
    R = hi - lo
    w = np.array([0.2, 0.3, 0.5])
    b = 0.7
    e = bviews.affine_error_real(w, b, lo, hi, counts=[10, 10, 10], level=0.95)
    ssq = 10 * (0.04 + 0.09 + 0.25)
    assert e.rmse == pytest.approx(R * math.sqrt(ssq / 4 + 2 * b * b), rel=1e-12)
    assert e.data_sd == pytest.approx(R * math.sqrt(ssq / 4), rel=1e-12)
    assert e.noise_scale == pytest.approx(R * b)
    assert _normal_laplace_cdf(e.half_width, e.data_sd, e.noise_scale) == pytest.approx(
        0.95, abs=1e-6
    )


def test_affine_error_real_limits():
    # no noise: a normal quantile; no data part: a Laplace quantile b ln(1/(1-level))
    e = bviews.affine_error_real(np.full(100, 0.01), 0.0, 0, 10)
    assert e.half_width == pytest.approx(stats.norm.ppf(0.975) * e.data_sd, rel=1e-8)
    e = bviews.affine_error_real([1e-12], 0.5, 0, 10, level=0.9)
    assert e.half_width == pytest.approx(0.5 * 10 * math.log(10), rel=1e-6)
    z = bviews.affine_error_real([1.0], 0.1, 10, 30, outputs_zero=True)
    assert z.rmse == 10 and z.half_width == 10
    with pytest.raises(ValueError):
        bviews.affine_error_real([1.0], 0.1, 5, 5)
    with pytest.raises(ValueError):
        bviews.affine_error_real([1.0], 0.1, 0, 1, level=1.0)


def test_affine_error_real_by_monte_carlo():
    """Worst-case data (half the users at each end of the range) plus Laplace noise."""
    prof = hdp.paper_profile("high", 300, seed=2)
    sol = hdp.adpm(prof)
    lo, hi = 0.0, 100.0
    e = bviews.affine_error_real(sol.weights, sol.noise_scale, lo, hi)
    rng = np.random.default_rng(5)
    trials = 40_000
    x = rng.integers(0, 2, (trials, prof.n)).astype(np.float64) - 0.5
    err = (x @ sol.weights + rng.laplace(0, sol.noise_scale, trials)) * (hi - lo)
    assert np.sqrt(np.mean(err**2)) == pytest.approx(e.rmse, rel=0.02)
    assert np.mean(np.abs(err) <= e.half_width) == pytest.approx(0.95, abs=0.006)
    assert (e.rmse / (hi - lo)) ** 2 == pytest.approx(sol.worst_case_mse, rel=1e-12)


def test_method_errors_real():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 1.0, INF], [500, 300, 10])
    lo, hi = 20.0, 120.0
    errs = bviews.method_errors_real(prof, lo, hi)
    assert list(errs) == list(hdp.METHODS)
    for m, e in errs.items():
        est = hdp.get_method(m, prof)
        assert e.rmse == pytest.approx(math.sqrt(est.worst_case_mse) * 100, rel=1e-9), m
        if m in ("LDPE", "SM"):
            assert math.isnan(e.half_width)
        else:
            assert 0 < e.half_width < 5 * e.rmse
    # tiers and the expanded per-user profile agree
    flat = bviews.method_errors_real(prof.expand(), lo, hi)
    for m in ("ADPM", "PropDPM", "UNI", "FME"):
        assert flat[m].half_width == pytest.approx(errs[m].half_width, rel=1e-8)
