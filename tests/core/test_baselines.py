"""ADPM and the five baselines against independent oracles.

* weights and noise of every affine method recomputed here from the hdp_core.baselines
  docstring (and ADPM
  from a literal loop over Algorithm 1), including public (inf) and excluded (0) users;
* the privacy each affine method grants, w_i / b, is within every user's request;
* the affine MSE formula V ||w||^2 + 2 b^2, LDPE's and SM's closed forms against direct
  high-trial simulations written here with plain numpy (not hdp.simulate_mse);
* SM's count moments against a brute-force Poisson-binomial pmf (an O(n^2) convolution loop),
  and the large-mean expansion against pmf sums from scipy.stats;
* worst-case MSE against a search over distributions, and the paper's worked examples.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import hdp_core as hdp
from hdp_core.baselines import count_moments, sm_keep_probabilities

AFFINE = ("ADPM", "PropDPM", "UNI", "FME")
INF = math.inf


# ----------------------------------------------------------------------------- oracles
def adpm_loop(eps) -> tuple[np.ndarray, float]:
    """Algorithm 1 literally (sorted, one user at a time); weights in the input order.

    eps = 0 users are dropped first; public users take the recursion's cap; if every usable
    user is public, the plain mean of the public users."""
    e = np.asarray(eps, dtype=float)
    w = np.zeros(e.size)
    use = np.flatnonzero(e > 0)
    fin = use[np.isfinite(e[use])]
    pub = use[np.isinf(e[use])]
    if fin.size == 0:
        w[pub] = 1.0 / pub.size
        return w, 0.0
    order = use[np.argsort(e[use], kind="stable")]
    r = np.zeros(e.size)
    L1 = L2 = 0.0
    for k, i in enumerate(order):
        r[i] = e[i] if k == 0 else min(e[i], (L2 + 8.0) / L1)
        L1 += r[i]
        L2 += r[i] ** 2
    return r / L1, 1.0 / L1


def baseline_oracle(name: str, eps) -> tuple[np.ndarray, float]:
    """(weights, central noise scale) of an affine baseline, from the hdp_core.baselines
    docstring."""
    e = np.asarray(eps, dtype=float)
    use = e > 0  # eps = 0 users are never used
    n = int(use.sum())
    fin = use & np.isfinite(e)
    pub = use & np.isinf(e)
    w = np.zeros(e.size)
    if name == "ADPM":
        return adpm_loop(e)
    if name == "UNI":
        w[use] = 1.0 / n
        return w, (1.0 / (n * e[fin].min()) if fin.any() else 0.0)
    if name == "PropDPM":
        if pub.any():
            w[pub] = 1.0 / pub.sum()
            return w, 0.0
        return np.where(use, e, 0) / e[use].sum(), 1.0 / e[use].sum()
    if name == "FME":
        if not fin.any():  # "when every user is public the answer is the plain sample mean"
            w[pub] = 1.0 / pub.sum()
            return w, 0.0
        r = np.where(use, np.minimum(e, 1.0 / math.sqrt(n)), 0.0)
        return r / r.sum(), 1.0 / r.sum()
    raise KeyError(name)


def ldpe_oracle(eps) -> np.ndarray:
    """LDPE weights ∝ 1/(sigma^2 + 2/eps^2), sigma^2 = 1/4 (public: ∝ 1/sigma^2)."""
    e = np.asarray(eps, dtype=float)
    raw = np.array(
        [0.0 if x == 0 else 1.0 / (0.25 + (0.0 if math.isinf(x) else 2 / x**2)) for x in e]
    )
    return raw / raw.sum()


def poisson_binomial_pmf(p, counts) -> np.ndarray:
    """pmf of a sum of independent Bernoulli(p_j) (counts[j] copies): O(n^2) convolution."""
    pmf = np.array([1.0])
    for pj, cj in zip(p, counts):
        for _ in range(int(cj)):
            new = np.zeros(pmf.size + 1)
            new[:-1] += pmf * (1.0 - pj)
            new[1:] += pmf * pj
            pmf = new
    return pmf


def moments_from_pmf(pmf) -> tuple[float, float, float]:
    k = np.arange(1, pmf.size, dtype=float)
    return float(pmf[0]), float(np.sum(pmf[1:] / k)), float(np.sum(pmf[1:] / k**2))


def close(a, b, rel):
    return abs(a - b) <= rel * abs(b) + 1e-300


PROFILES = {
    "mixed": [0.05, 0.3, 0.3, 1.2, 2.0, 7.0],
    "public": [0.1, 0.2, 0.5, INF, INF],
    "excluded": [0.0, 0.4, 1.0, 0.0, 3.0],
    "pub+excl": [0.0, 0.02, 5.0, INF, 0.7],
    "saturating": [0.1] * 50 + [0.5, 3.0, 40.0, INF],
    "one": [0.8],
    "all public": [INF, INF, INF],
    "homogeneous": [0.5] * 20,
    "paper high": hdp.paper_profile("high", 1000, 0).levels,
}


# ----------------------------------------------------------------------------- weights
@pytest.mark.parametrize("name", AFFINE)
@pytest.mark.parametrize("prof", PROFILES.values(), ids=PROFILES.keys())
def test_affine_weights_match_definitions(name, prof):
    est = hdp.get_method(name, prof)
    w, b = baseline_oracle(name, prof)
    np.testing.assert_allclose(est.weights, w, rtol=1e-12, atol=1e-15)
    assert est.noise_scale == pytest.approx(b, rel=1e-12, abs=1e-15)
    assert est.weights.sum() == pytest.approx(1.0, rel=1e-12)
    assert (est.weights >= 0).all()


@pytest.mark.parametrize("prof", PROFILES.values(), ids=PROFILES.keys())
def test_ldpe_weights_and_sm_probabilities_match_definitions(prof):
    est = hdp.get_method("LDPE", prof)
    np.testing.assert_allclose(est.weights, ldpe_oracle(prof), rtol=1e-12)
    e = np.asarray(prof, dtype=float)
    sm = hdp.get_method("SM", prof)
    if np.isinf(e).any():  # t = inf: keep only the public users
        np.testing.assert_array_equal(sm.p, np.isinf(e).astype(float))
    else:
        t = e.max()
        np.testing.assert_allclose(sm.p, np.expm1(e) / np.expm1(t), rtol=1e-12)


def test_sm_probabilities_huge_levels_against_decimal():
    """p_i = (e^eps_i - 1)/(e^t - 1) with t up to 1000 (float exp overflows at ~710)."""
    getcontext().prec = 60
    levels = np.array([1e-6, 0.5, 3.0, 650.0, 709.0, 750.0, 999.0, 1000.0])
    p, t = sm_keep_probabilities(levels, np.ones(levels.size, dtype=bool))
    assert t == 1000.0
    den = Decimal(1000).exp() - 1
    for pi, e in zip(p, levels):
        ref = float((Decimal(float(e)).exp() - 1) / den)
        assert np.isfinite(pi)
        assert close(pi, ref, 1e-12) or (ref < 1e-300 and pi < 1e-300)
    assert p[-1] == 1.0


def test_tiered_weights_equal_expanded_weights():
    levels, counts = [0.05, 0.4, 2.0, INF, 0.0], [30, 12, 5, 2, 3]
    tiers = hdp.EpsilonProfile.from_tiers(levels, counts)
    users = np.repeat(levels, counts)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    for name in ("ADPM", "PropDPM", "UNI", "FME", "LDPE"):
        a, b = hdp.get_method(name, tiers), hdp.get_method(name, users)
        np.testing.assert_allclose(a.weights, b.weights[first], rtol=1e-12)
        if name != "LDPE":
            assert a.noise_scale == pytest.approx(b.noise_scale, rel=1e-12)
    for name in hdp.METHODS:
        for d in (hdp.Beta(2, 3), hdp.TwoPoint(0.9)):
            assert hdp.exact_mse(name, tiers, d) == pytest.approx(
                hdp.exact_mse(name, users, d), rel=1e-9
            )


# ----------------------------------------------------------------------------- privacy
profiles_st = st.lists(
    st.one_of(
        st.floats(1e-4, 50.0),
        st.just(INF),
        st.just(0.0),
        st.floats(1e-4, 1e-2),
    ),
    min_size=1,
    max_size=40,
).filter(lambda v: any(x > 0 for x in v))


@given(profiles_st)
def test_granted_privacy_within_request(eps):
    """Affine sum w_i x_i + Laplace(b) gives user i privacy w_i / b: never above eps_i."""
    e = np.asarray(eps, dtype=float)
    for name in AFFINE:
        est = hdp.get_method(name, e)
        w, b = est.weights, est.noise_scale
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(w > 0, w / b, 0.0) if b > 0 else np.where(w > 0, INF, 0.0)
        assert (g <= e * (1 + 1e-12)).all(), (name, g, e)
        assert (w[e == 0] == 0).all()
        if np.isfinite(e[e > 0]).any():  # private data used: b > 0 unless noise-free public
            assert np.all(np.isfinite(g[np.isfinite(e)]))
        np.testing.assert_allclose(est.granted_eps, g, rtol=1e-12)
    for name in ("LDPE", "SM"):
        est = hdp.get_method(name, e)
        np.testing.assert_array_equal(est.granted_eps, e)


# ----------------------------------------------------------------------------- exact MSE
@pytest.mark.parametrize("name", AFFINE)
@pytest.mark.parametrize("prof", PROFILES.values(), ids=PROFILES.keys())
def test_affine_exact_mse_is_the_formula(name, prof):
    w, b = baseline_oracle(name, prof)
    for d in (hdp.Beta(2, 3), hdp.Uniform(), hdp.TwoPoint(0.9)):
        expect = d.variance * float(w @ w) + 2 * b * b
        if name == "ADPM" and hdp.adpm(prof).outputs_zero:
            expect = d.mean**2
        assert hdp.exact_mse(name, prof, d) == pytest.approx(expect, rel=1e-11)


@pytest.mark.parametrize("prof", PROFILES.values(), ids=PROFILES.keys())
def test_ldpe_and_sm_exact_mse_formulas(prof):
    e = np.asarray(prof, dtype=float)
    w = ldpe_oracle(e)
    with np.errstate(divide="ignore"):
        inv2 = np.where(np.isinf(e) | (e == 0), 0.0, 1.0 / e**2)
    for d in (hdp.Beta(2, 3), hdp.TwoPoint(0.5)):
        assert hdp.exact_mse("LDPE", e, d) == pytest.approx(
            float(np.sum(w * w * (d.variance + 2 * inv2))), rel=1e-12
        )
    if e.size <= 100:  # SM: brute-force pmf of the number kept
        sm = hdp.get_method("SM", e)
        p0, e1, e2 = moments_from_pmf(poisson_binomial_pmf(sm.p, np.ones(e.size)))
        t = sm.t
        noise = 0.0 if math.isinf(t) else 2.0 / t**2
        for d in (hdp.Beta(2, 3), hdp.TwoPoint(0.9)):
            expect = d.variance * e1 + noise * e2 + d.mean**2 * p0
            assert hdp.exact_mse("SM", e, d) == pytest.approx(expect, rel=1e-9)


@pytest.mark.slow
def test_affine_formula_against_direct_simulation():
    """V ||w||^2 + 2 b^2 vs 10^6 draws of <w, x> + Laplace(b) made here with plain numpy."""
    rng = np.random.default_rng(11)
    w = np.array([0.5, 0.3, 0.15, 0.05])
    b = 0.07
    trials = 1_000_000
    for d in (hdp.Beta(2, 3), hdp.TwoPoint(0.5), hdp.Uniform()):
        x = d.sample(rng, (trials, w.size))
        err2 = (x @ w + rng.laplace(0, b, trials) - d.mean) ** 2
        formula = d.variance * float(w @ w) + 2 * b * b
        assert abs(err2.mean() - formula) <= 4 * err2.std() / math.sqrt(trials)


def test_ldpe_and_sm_formulas_against_direct_simulation():
    """LDPE (local Laplace per user) and SM (Bernoulli sampling per user) simulated here user by
    user with plain numpy, 4*10^5 trials, against hdp.exact_mse."""
    rng = np.random.default_rng(12)
    e = np.array([0.3, 0.6, 1.0, 1.5, 2.5])
    trials = 400_000
    d = hdp.Beta(2, 3)
    x = d.sample(rng, (trials, e.size))
    # LDPE
    w = ldpe_oracle(e)
    y = x + rng.laplace(0.0, 1.0 / e, (trials, e.size))
    err2 = (y @ w - d.mean) ** 2
    assert abs(err2.mean() - hdp.exact_mse("LDPE", e, d)) <= 4 * err2.std() / math.sqrt(trials)
    # SM
    t = e.max()
    p = np.expm1(e) / math.expm1(t)
    keep = rng.random((trials, e.size)) < p
    n_kept = keep.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.where(
            n_kept > 0,
            (keep * x).sum(axis=1) / n_kept + rng.laplace(0.0, 1.0, trials) / (n_kept * t),
            0.0,
        )
    err2 = (est - d.mean) ** 2
    assert abs(err2.mean() - hdp.exact_mse("SM", e, d)) <= 4 * err2.std() / math.sqrt(trials)


# ----------------------------------------------------------------------------- SM moments
MOMENT_CASES = {
    "small": ([0.3, 0.7, 0.5], [1, 2, 3]),
    "single": ([0.4], [1]),
    "p tiny": ([1e-12], [10]),
    "p tiny mixed": ([1e-6, 1e-8], [5, 100]),
    "p near 1": ([1 - 1e-12, 0.5], [1, 3]),
    "p = 1 (public)": ([1.0, 0.2], [2, 50]),
    "only public": ([1.0], [7]),
    "random 300": (np.random.default_rng(1).random(300), [1] * 300),
    "random tiny 300": (np.random.default_rng(2).random(300) * 1e-3, [1] * 300),
    "large n": ([0.01, 0.5, 0.999], [3000, 200, 10]),
    "many groups": (np.random.default_rng(3).random(2000) * 0.01, [1] * 2000),
}


@pytest.mark.parametrize("case", MOMENT_CASES.values(), ids=MOMENT_CASES.keys())
def test_count_moments_against_brute_force_pmf(case):
    p, c = case
    got = count_moments(np.asarray(p, float), np.asarray(c))
    ref = moments_from_pmf(poisson_binomial_pmf(p, c))
    for g, r in zip(got, ref):
        assert close(g, r, 1e-9), (got, ref)


def test_count_moments_huge_levels_and_public_users_via_sm():
    """SM's probabilities for levels up to 1000 (and with public users) fed to count_moments."""
    for levels in ([0.5, 2.0, 30.0, 700.0, 800.0, 800.0], [0.1, 1.0, 5.0, INF, INF]):
        e = np.asarray(levels)
        p, _ = sm_keep_probabilities(e, np.ones(e.size, dtype=bool))
        ref = moments_from_pmf(poisson_binomial_pmf(p, np.ones(e.size)))
        for g, r in zip(count_moments(p, np.ones(e.size)), ref):
            assert close(g, r, 1e-9)


def test_count_moments_edge_inputs():
    assert count_moments(np.array([0.0, 0.0]), np.array([3, 4])) == (1.0, 0.0, 0.0)
    assert count_moments(np.array([0.5]), np.array([0])) == (1.0, 0.0, 0.0)


def _pmf_moments_scipy(groups) -> tuple[float, float, float]:
    pmf = np.array([1.0])
    for p, c in groups:
        pmf = np.convolve(pmf, stats.binom.pmf(np.arange(c + 1), c, p))
    return moments_from_pmf(pmf)


@pytest.mark.slow
@pytest.mark.parametrize(
    "groups",
    [
        [(0.5, 20_000)],  # mean 1e4: just inside the expansion branch, largest variance
        [(0.9, 15_000), (0.3, 8_000)],
        [(0.999, 12_000), (0.02, 30_000)],
    ],
)
def test_count_moments_large_mean_branch_against_scipy_pmf(groups):
    p = np.array([g[0] for g in groups])
    c = np.array([g[1] for g in groups])
    assert float(p @ c) >= 1e4  # the expansion branch
    got = count_moments(p, c)
    ref = _pmf_moments_scipy(groups)
    assert got[0] < 1e-300 and ref[0] < 1e-300
    assert close(got[1], ref[1], 1e-9)
    assert close(got[2], ref[2], 1e-9)


def test_count_moments_continuous_across_branches():
    """Just below and just above the switch to the expansion the answers agree."""
    for p in (0.5, 0.05):
        lo = count_moments(np.array([p]), np.array([int(9_999 / p)]))
        hi = count_moments(np.array([p]), np.array([int(10_001 / p)]))
        scale = 10_001 / 9_999
        assert close(lo[1], hi[1] * scale, 1e-3)
        assert close(lo[2], hi[2] * scale**2, 1e-3)


# ----------------------------------------------------------------------------- worst case
def _worst_by_search(name, eps):
    """Max exact MSE over two-point distributions {a, b} ⊂ [-0.5, 0.5] on a grid: any
    distribution's (mean, variance) pair is dominated by one of these."""
    best = 0.0
    for p in np.linspace(0, 1, 41):
        best = max(best, hdp.exact_mse(name, eps, hdp.TwoPoint(float(p))))
    for a, b in ((2, 3), (0.5, 0.5), (0.05, 0.05)):
        best = max(best, hdp.exact_mse(name, eps, hdp.Beta(a, b)))
    return best


@pytest.mark.parametrize("name", hdp.METHODS)
@pytest.mark.parametrize(
    "prof",
    [PROFILES["mixed"], PROFILES["public"], PROFILES["pub+excl"], [0.1, 0.1, 0.1], [0.0, 0.0]],
    ids=["mixed", "public", "pub+excl", "adpm outputs 0", "nobody usable"],
)
def test_worst_case_mse_is_the_maximum_over_distributions(name, prof):
    est = hdp.get_method(name, prof)
    wc = est.worst_case_mse
    search = _worst_by_search(name, prof)
    assert wc >= search * (1 - 1e-12)
    assert wc == pytest.approx(search, rel=1e-9)


# ----------------------------------------------------------------------------- worked cases
REMARK = [0.1] * 999 + [INF]  # the paper's Remark on proportional weighting


def test_propdpm_one_public_user_worst_case_quarter():
    est = hdp.get_method("PropDPM", REMARK)
    assert est.weights[-1] == 1.0 and (est.weights[:-1] == 0).all()
    assert est.noise_scale == 0.0
    assert est.worst_case_mse == pytest.approx(0.25, rel=1e-12)


def test_fme_and_adpm_in_the_remark_example():
    fme = hdp.get_method("FME", REMARK).worst_case_mse
    adpm = hdp.get_method("ADPM", REMARK).worst_case_mse
    assert 1e-3 < fme < 1e-2  # "of the order 1e-3"
    # by hand: everyone capped at 1/sqrt(1000): ||w||^2 = 1/1000, b = 1/sqrt(1000)
    assert fme == pytest.approx(0.25 / 1000 + 2 / 1000, rel=1e-12)
    assert adpm == pytest.approx(4.5e-4, rel=0.02)
    assert adpm < fme
    # ADPM grants the public user tau* = (999*0.01 + 8)/99.9 = 0.18
    assert hdp.adpm(REMARK).saturation_level == pytest.approx((9.99 + 8) / 99.9, rel=1e-12)


def test_sm_with_one_public_user_keeps_only_that_user():
    sm = hdp.get_method("SM", REMARK)
    assert sm.p[-1] == 1.0 and (sm.p[:-1] == 0).all()
    for d in (hdp.Beta(2, 3), hdp.TwoPoint(0.5)):
        assert hdp.exact_mse("SM", REMARK, d) == pytest.approx(d.variance / 1, rel=1e-9)
    x = np.full(1000, -0.5)
    x[-1] = 0.3
    rng = np.random.default_rng(0)
    assert all(hdp.estimate("SM", x, REMARK, rng) == 0.3 for _ in range(5))


def test_uni_strict_plus_public_far_worse_than_adpm():
    eps = [0.001] + [INF] * 999
    uni = hdp.get_method("UNI", eps).worst_case_mse
    adpm = hdp.get_method("ADPM", eps).worst_case_mse
    # UNI: 1/(4n) + 2/(n eps_1)^2 = 1/4000 + 2; ADPM close to the public-only 1/(4*999)
    assert uni == pytest.approx(0.25 / 1000 + 2.0, rel=1e-12)
    assert adpm < 1.01 * 0.25 / 999
    assert uni > 5000 * adpm


def test_all_public_is_the_sample_mean_for_every_method():
    eps = [INF] * 8
    for name in hdp.METHODS:
        for d in (hdp.Beta(2, 3), hdp.TwoPoint(0.5)):
            assert hdp.exact_mse(name, eps, d) == pytest.approx(d.variance / 8, rel=1e-9)


def test_homogeneous_adpm_uni_propdpm_coincide():
    """All users at the same eps: ADPM, UNI and PropDPM are the same estimator."""
    eps = [0.5] * 200
    vals = [hdp.exact_mse(m, eps, hdp.Beta(2, 3)) for m in ("ADPM", "UNI", "PropDPM")]
    assert vals[0] == pytest.approx(vals[1], rel=1e-12) == pytest.approx(vals[2], rel=1e-12)
    assert vals[0] == pytest.approx(hdp.Beta(2, 3).variance / 200 + 2 / 100**2, rel=1e-12)
