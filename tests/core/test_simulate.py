"""Monte Carlo (hdp.simulate_mse) against the exact MSE, hdp.estimate, and huge tiered profiles.

Agreement rule for exact vs simulated MSE (fixed seeds, so the outcome is reproducible):
each comparison must satisfy |sim - exact| <= 4 standard errors (a false alarm has probability
about 6e-5 per comparison, so ~170 comparisons fail by chance with probability about 1%),
and overall at least 88% of the reported 95% confidence intervals must contain the exact value
(the expected share is 95%; comparisons share data through common random numbers, so the share
varies more than a binomial count would). Deterministic outputs (a method that always outputs
0 has standard error 0) must match to rounding.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_core.simulate import EXPAND_MAX

INF = math.inf
DISTS = [hdp.Beta(2, 3), hdp.Uniform(), hdp.TwoPoint(0.5), hdp.TwoPoint(0.9)]

_rng = np.random.default_rng(2024)
_small = np.exp(_rng.uniform(math.log(0.05), math.log(5.0), 33))

PROFILES = {
    "paper high": hdp.paper_profile("high", 1000, 0),
    "paper low": hdp.paper_profile("low", 1000, 0),
    "public + excluded (per user)": hdp.EpsilonProfile.from_values(
        np.concatenate([_small, [INF] * 4, [0.0] * 3])
    ),
    "saturating (per user)": hdp.EpsilonProfile.from_values([0.1] * 30 + [0.5, 2.0, 10.0]),
    "ADPM outputs 0": hdp.EpsilonProfile.from_values([0.2, 0.5, 1.0]),
    "small tiers": hdp.EpsilonProfile.from_tiers([0.3, 2.0, 0.0], [50, 20, 4]),
    "large tiers (aggregate)": hdp.EpsilonProfile.from_tiers(
        [0.05, 0.3, 1.0, 4.0, INF, 0.0], [6000, 2500, 300, 40, 5, 10]
    ),
}
TRIALS = 5000


def _agreement_table():
    rows = []
    for (pname, prof), d in itertools.product(PROFILES.items(), DISTS):
        res = hdp.simulate_mse(hdp.METHODS, prof, d, trials=TRIALS, seed=7)
        for m, r in res.items():
            rows.append((pname, d.label(), m, r, hdp.exact_mse(m, prof, d)))
    return rows


@pytest.fixture(scope="module")
def agreement():
    return _agreement_table()


@pytest.mark.slow
def test_exact_and_simulated_mse_agree(agreement):
    """Every method x distribution x profile: |sim - exact| <= 4 SE; >= 88% CI coverage."""
    assert len(agreement) == len(PROFILES) * len(DISTS) * len(hdp.METHODS)
    bad = []
    covered = 0
    for pname, dname, m, r, exact in agreement:
        assert r.exact == pytest.approx(exact, rel=1e-12)
        assert r.trials == TRIALS
        assert math.isfinite(r.mse) and r.mse >= 0
        tol = 4 * r.std_err + 1e-12 * max(exact, 1e-300)
        if abs(r.mse - exact) > tol:
            bad.append((pname, dname, m, r.mse, exact, r.std_err))
        covered += r.ci_low <= exact <= r.ci_high
    assert not bad, bad
    share = covered / len(agreement)
    assert share >= 0.88, share


def test_ci_bounds_are_consistent(agreement):
    for *_, r, _exact in agreement:
        assert r.ci_low <= r.mse <= r.ci_high
        # the log-scale interval mse * exp(+-1.96 se / mse) (simulate.mse_interval)
        if r.mse > 0:
            spread = 1.96 * r.std_err / r.mse
            assert r.ci_high == pytest.approx(r.mse * math.exp(spread), rel=1e-12)
            assert r.ci_low == pytest.approx(r.mse * math.exp(-spread), rel=1e-12)
            assert r.ci_low * r.ci_high == pytest.approx(r.mse**2, rel=1e-12)
        else:
            assert r.ci_low == r.ci_high == 0.0
        assert r.log_mse == (math.log(r.mse) if r.mse > 0 else -math.inf)


def test_approximate_flag(agreement):
    """Only Beta/Uniform data on a profile with a tier above EXPAND_MAX users is approximate."""
    for pname, dname, _m, r, _ in agreement:
        big = int(PROFILES[pname].counts.max()) > EXPAND_MAX
        expect = big and not dname.startswith("Two-point")
        assert r.approximate == expect, (pname, dname)


def test_adpm_outputs_zero_is_simulated_as_zero():
    prof = PROFILES["ADPM outputs 0"]
    assert hdp.adpm(prof).outputs_zero
    d = hdp.Beta(2, 3)
    r = hdp.simulate_mse(["ADPM"], prof, d, trials=100, seed=1, return_estimates=True)["ADPM"]
    assert (r.estimates == 0).all()
    assert r.mse == pytest.approx(d.mean**2, rel=1e-12) and r.std_err == pytest.approx(0, abs=1e-15)


# --------------------------------------------------------------------------- simulate_mse API
def test_return_estimates_and_mse_definition():
    prof, d = PROFILES["saturating (per user)"], hdp.Beta(2, 3)
    res = hdp.simulate_mse(["ADPM", "SM"], prof, d, trials=3000, seed=3, return_estimates=True)
    for r in res.values():
        assert r.estimates.shape == (3000,)
        err2 = (r.estimates - d.mean) ** 2
        assert r.mse == pytest.approx(err2.mean(), rel=1e-10)
        assert r.std_err == pytest.approx(err2.std(ddof=1) / math.sqrt(3000), rel=1e-6)
    assert hdp.simulate_mse("UNI", prof, d, trials=10)["UNI"].estimates is None


def test_seeded_and_common_random_numbers():
    """Same seed, same numbers; a method's numbers do not depend on which others run (per-user
    profile); different seeds differ."""
    prof, d = PROFILES["public + excluded (per user)"], hdp.Uniform()
    a = hdp.simulate_mse(hdp.METHODS, prof, d, trials=500, seed=5, return_estimates=True)
    b = hdp.simulate_mse(["LDPE", "ADPM"], prof, d, trials=500, seed=5, return_estimates=True)
    c = hdp.simulate_mse(["ADPM"], prof, d, trials=500, seed=6)
    for m in ("ADPM", "LDPE"):
        np.testing.assert_array_equal(a[m].estimates, b[m].estimates)
    assert c["ADPM"].mse != a["ADPM"].mse
    # common data: ADPM and UNI errors are correlated through the shared x
    corr = np.corrcoef(a["ADPM"].estimates, a["PropDPM"].estimates)[0, 1]
    assert corr > 0.3


def test_chunking_does_not_change_results(monkeypatch):
    prof, d = PROFILES["small tiers"], hdp.Beta(2, 3)
    import hdp_core.simulate as sim

    full = hdp.simulate_mse(hdp.METHODS, prof, d, trials=2000, seed=9)
    monkeypatch.setattr(sim, "CHUNK_CELLS", 1000)  # many small chunks
    chunked = hdp.simulate_mse(hdp.METHODS, prof, d, trials=2000, seed=9)
    for m in hdp.METHODS:  # statistically the same (different draws, same distribution)
        se = math.hypot(full[m].std_err, chunked[m].std_err)
        assert abs(full[m].mse - chunked[m].mse) <= 4 * se + 1e-15


@pytest.mark.parametrize(
    "kwargs",
    [
        {"methods": ["NOPE"]},
        {"methods": []},
        {"trials": 1},
        {"trials": 0},
    ],
)
def test_simulate_invalid_arguments(kwargs):
    args = {"methods": ["ADPM"], "eps": [0.5, 1.0], "dist": hdp.Beta(2, 3), "trials": 10}
    args.update(kwargs)
    with pytest.raises(hdp.HdpError):
        hdp.simulate_mse(**args)


# --------------------------------------------------------------------------- estimate()
EST_PROFILES = {
    "with public": [0.4, 0.9, 1.5, 2.0, INF, 0.0, 3.0],  # SM keeps only the public user
    "private": [0.4, 0.9, 1.5, 2.0, 1.1, 0.0, 3.0],  # SM samples (t = 3)
}
est_profiles = pytest.mark.parametrize("eps", EST_PROFILES.values(), ids=EST_PROFILES.keys())


@est_profiles
def test_estimate_finite_and_unbiased_for_constant_data(eps):
    """With every x_i = c, mean(x) = c and each method's expected output is c."""
    rng = np.random.default_rng(21)
    draws = 1500
    c = -0.3 if math.isinf(max(eps)) else 0.25
    x = np.full(len(eps), c)
    for m in hdp.METHODS:
        est = hdp.get_method(m, eps)
        out = np.array([est.estimate(x, rng) for _ in range(draws)])
        assert np.isfinite(out).all()
        se = out.std() / math.sqrt(draws)
        assert abs(out.mean() - c) <= 5 * se + 1e-12, (m, c, out.mean())


def _sm_conditional_mean(p, x) -> float:
    """E[mean of kept x] for SM by enumerating every kept subset (n small)."""
    n = len(x)
    total = 0.0
    for mask in itertools.product([0, 1], repeat=n):
        mk = np.array(mask, dtype=bool)
        prob = float(np.prod(np.where(mk, p, 1 - p)))
        if mk.any():
            total += prob * float(x[mk].mean())
    return total


@est_profiles
@pytest.mark.slow
def test_estimate_expectation_given_data(eps):
    """For fixed heterogeneous x: affine methods and LDPE have E = <w, x> (unbiased for the
    population mean when x is i.i.d.; equal to mean(x) only for uniform weights), SM's
    expectation is the kept-subset mean averaged over every subset (enumerated here)."""
    rng = np.random.default_rng(22)
    x = np.array([-0.5, -0.2, 0.1, 0.45, 0.3, 0.5, -0.4])
    draws = 3000
    for m in hdp.METHODS:
        est = hdp.get_method(m, eps)
        out = np.array([est.estimate(x, rng) for _ in range(draws)])
        if m == "SM":
            target = _sm_conditional_mean(est.p, x)
        else:
            target = float(est.weights @ x)
        if m == "UNI":
            assert target == pytest.approx(float(x[np.array(eps) > 0].mean()))
        se = out.std() / math.sqrt(draws)
        assert abs(out.mean() - target) <= 5 * se + 1e-12, (m, out.mean(), target)


@est_profiles
def test_estimate_unbiased_for_population_mean_with_fresh_data(eps):
    rng = np.random.default_rng(23)
    d = hdp.Beta(2, 3)
    draws = 2000
    for m in hdp.METHODS:
        est = hdp.get_method(m, eps)
        out = np.array([est.estimate(d.sample(rng, len(eps)), rng) for _ in range(draws)])
        se = out.std() / math.sqrt(draws)
        assert abs(out.mean() - d.mean) <= 5 * se, m


def test_estimate_outputs_zero_by_design():
    rng = np.random.default_rng(24)
    x = np.array([0.4, 0.4, 0.4])
    assert all(hdp.estimate("ADPM", x, [0.2, 0.5, 1.0], rng) == 0.0 for _ in range(20))
    for m in hdp.METHODS:  # nobody allows use of their data
        assert hdp.estimate(m, [0.4, 0.4], [0.0, 0.0], rng) == 0.0


def test_estimate_tiered_profile_and_bad_data():
    prof = hdp.EpsilonProfile.from_tiers([0.5, INF], [5, 2])
    rng = np.random.default_rng(25)
    for m in hdp.METHODS:
        v = hdp.estimate(m, np.full(7, 0.1), prof, rng)
        assert math.isfinite(v)
        with pytest.raises(hdp.ProfileError):
            hdp.estimate(m, np.zeros(6), prof, rng)
        with pytest.raises(hdp.ProfileError):
            hdp.estimate(m, [0.1] * 6 + [math.nan], prof, rng)
    # public users only, no noise: every method returns the sample mean exactly
    for m in hdp.METHODS:
        assert hdp.estimate(m, [0.1, 0.3, -0.1], [INF] * 3, rng) == pytest.approx(0.1)


# --------------------------------------------------------------------------- huge tiers
HUGE_LEVELS = np.exp(np.linspace(-4, 2, 10))
HUGE_COUNTS = np.full(10, 10**8)  # 10^9 users in 10 tiers
HUGE = hdp.EpsilonProfile.from_tiers(
    np.append(HUGE_LEVELS, [INF, 0.0]), np.append(HUGE_COUNTS, [1000, 7])
)


def _tier_oracle(levels, counts, d) -> dict[str, float]:
    """Exact MSE of each method for a tiered profile, computed here from the definitions.

    ADPM on tiers: a tier at level e saturates iff e >= (S2 + 8)/S1 over the users before it
    (adding users at e leaves e S1 - S2 unchanged, so a tier saturates as a whole); from the
    first saturated tier on, everyone gets that tau. SM: N has mean m and variance k2 >= 10^8,
    E[1/N] = (1 + k2/m^2 + O(m^-2))/m and E[1/N^2] = (1 + 3 k2/m^2 + O(m^-2))/m^2."""
    lv = np.asarray(levels, float)
    ct = np.asarray(counts, float)
    use = lv > 0
    lv, ct = lv[use], ct[use]
    n = ct.sum()
    fin = np.isfinite(lv)
    V = d.variance
    out = {}

    def affine(r):
        s1 = float(ct @ r)
        return V * float(ct @ (r / s1) ** 2) + 2 / s1**2

    order = np.argsort(lv)
    r = np.empty_like(lv)
    S1 = S2 = 0.0
    tau = None
    for i in order:
        if tau is None and S1 > 0 and lv[i] >= (S2 + 8) / S1:
            tau = (S2 + 8) / S1
        r[i] = lv[i] if tau is None else tau
        S1 += ct[i] * r[i]
        S2 += ct[i] * r[i] ** 2
    out["ADPM"] = affine(r)
    out["FME"] = affine(np.minimum(lv, 1 / math.sqrt(n)))
    out["UNI"] = V / n + 2 / (n * lv[fin].min()) ** 2
    pub = ~fin
    out["PropDPM"] = V / ct[pub].sum() if pub.any() else affine(lv)
    lf = np.where(fin, lv, 1.0)
    raw = np.where(fin, lf**2 / (lf**2 + 8), 1.0)
    w = raw / float(ct @ raw)
    inv2 = np.where(fin, 1 / lf**2, 0.0)
    out["LDPE"] = float(ct @ (w * w * (V + 2 * inv2)))
    if pub.any():
        m_pub = ct[pub].sum()
        out["SM"] = V / m_pub
    else:
        t = lv.max()
        p = np.exp(lv - t) * np.expm1(-lv) / math.expm1(-t)
        m, k2 = float(ct @ p), float(ct @ (p * (1 - p)))
        out["SM"] = V * (1 + k2 / m**2) / m + 2 / t**2 * (1 + 3 * k2 / m**2) / m**2
    return out


@pytest.mark.parametrize(
    "prof",
    [HUGE, hdp.EpsilonProfile.from_tiers(HUGE_LEVELS, HUGE_COUNTS)],
    ids=["with public and excluded", "private only"],
)
@pytest.mark.parametrize(
    "d", [hdp.TwoPoint(0.5), hdp.TwoPoint(0.9), hdp.Beta(2, 3)], ids=lambda d: d.label()
)
def test_huge_tiers_exact_and_simulated(prof, d):
    assert prof.n >= 10**9
    oracle = _tier_oracle(prof.levels, prof.counts, d)
    res = hdp.simulate_mse(hdp.METHODS, prof, d, trials=4000, seed=11)
    for m in hdp.METHODS:
        exact = hdp.exact_mse(m, prof, d)
        assert exact == pytest.approx(oracle[m], rel=1e-6), m
        r = res[m]
        assert math.isfinite(r.mse)
        assert abs(r.mse - exact) <= 4 * r.std_err + 1e-12 * exact, (m, r.mse, exact)
        assert r.approximate == (not isinstance(d, hdp.TwoPoint))
