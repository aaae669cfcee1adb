"""ADPM tuned to a known data spread s (issue 14, beyond the paper).

For data of standard deviation s on [-1/2, 1/2], the unbiased affine estimator
sum w_i x_i + Laplace(eta) with sum w = 1 has MSE s^2 ||w||^2 + 2 eta^2 and gives user i the
privacy w_i / eta. The oracles below are written from these definitions: a convex solver on
exactly that problem, a grouped run of Algorithm 1 with the constant c = 2/s^2, PropDPM's
proportional weights, Monte Carlo, and the closed-form MSE of any affine estimator.
"""

from __future__ import annotations

import itertools
import math
import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_core.adpm import _BRACKET_MIN, _RANDOM_SAMPLE_MIN, _SAMPLE, _SELECT_MIN
from hdp_core.adpm import _first_saturated_bracket as bracket
from hdp_core.adpm import _first_saturated_select as select

INF = math.inf


# --------------------------------------------------------------------------------------------
# strategies and oracles (from the definitions, not from hdp_core)
# --------------------------------------------------------------------------------------------
@st.composite
def profiles(draw, max_n: int = 40, specials: bool = True):
    """Per-user levels 10^k e^U[-4, 4] drawn from a small pool (ties), with public (inf) and
    excluded (0) users; at least one usable user."""
    n = draw(st.integers(1, max_n))
    scale = 10.0 ** draw(st.integers(-3, 2))
    pool_size = draw(st.integers(1, n))
    pool = np.asarray(draw(st.lists(st.floats(-4, 4), min_size=pool_size, max_size=pool_size)))
    idx = draw(st.lists(st.integers(0, pool_size - 1), min_size=n, max_size=n))
    eps = scale * np.exp(pool[idx])
    if specials:
        tags = np.asarray(draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)))
        eps[tags == 0] = INF
        eps[tags == 1] = 0.0
    if not (eps > 0).any():
        eps[0] = scale
    return eps


spreads = st.floats(0.01, 0.5)


def affine_mse(w: np.ndarray, eta: float, var: float) -> float:
    """var ||w||^2 + 2 eta^2: the MSE of sum w_i x_i + Laplace(eta), sum w = 1."""
    return var * float(w @ w) + 2.0 * eta * eta


def least_noise(w: np.ndarray, eps: np.ndarray) -> float:
    """The smallest eta giving every user their eps: max_i w_i / eps_i (public users: none)."""
    fin = np.isfinite(eps) & (w > 0)
    return float(np.max(w[fin] / eps[fin])) if fin.any() else 0.0


def solver_optimum(eps: np.ndarray, s: float, tol: float = 1e-10):
    """cvxpy + Clarabel on min s^2 ||w||^2 + 2 eta^2 s.t. w >= 0, sum w = 1, w_i <= eta eps_i
    (finite eps_i; eps_i = 0 forces w_i = 0). The constraints are linear in (w, eta), so the
    problem is convex as it stands. Preconditioned: eta = sig*u and the objective divided by
    an upper bound ub from feasible points, so the solver sees O(1) numbers.
    Returns (optimum, w)."""
    fin = np.isfinite(eps)
    pos = fin & (eps > 0)
    pub = np.isinf(eps)
    ubs = []
    if pub.any():
        ubs.append(s * s / pub.sum())
    if pos.any():
        s1 = eps[pos].sum()
        ubs.append((s * s * float(eps[pos] @ eps[pos]) + 2) / s1**2)
    ub = min(ubs)
    sig = math.sqrt(ub / 2)
    w = cp.Variable(eps.size)
    u = cp.Variable()
    cons = [w >= 0, cp.sum(w) == 1]
    if fin.any():
        cons.append(w[fin] <= u * (sig * eps[fin]))
    obj = (s * s * cp.sum_squares(w) + 2 * sig * sig * cp.square(u)) / ub
    prob = cp.Problem(cp.Minimize(obj), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
    assert prob.status in ("optimal", "optimal_inaccurate"), prob.status
    return prob.value * ub, np.asarray(w.value)


def algorithm1_grouped(levels, counts, c: float) -> np.ndarray:
    """Algorithm 1 with the constant c, run over distinct ascending levels: the first level
    at or above tau = (S2 + c)/S1 of everything before it saturates, and so does everything
    after (no user of a tie group can saturate after the first: e < tau_prev implies e is
    below the next tau). Returns r = min(eps, tau) per input entry (0 for eps = 0)."""
    lv = np.asarray(levels, dtype=float)
    ct = np.asarray(counts, dtype=float)
    use = (lv > 0) & np.isfinite(lv) & (ct > 0)
    u, inv = np.unique(lv[use], return_inverse=True)
    uc = np.bincount(inv, weights=ct[use])
    s1 = np.concatenate(([0.0], np.cumsum(uc * u)))
    s2 = np.concatenate(([0.0], np.cumsum(uc * u * u)))
    tau = INF
    for j in range(1, u.size):
        t = (s2[j] + c) / s1[j]
        if u[j] >= t:
            tau = t
            break
    else:
        if (np.isinf(lv) & (ct > 0)).any() and u.size:
            tau = (s2[-1] + c) / s1[-1]
    r = np.minimum(lv, tau)
    r[lv == 0] = 0.0
    return r


def propdpm_weights(eps: np.ndarray) -> np.ndarray:
    """PropDPM: w proportional to eps; with public users, equal weight on them only."""
    pub = np.isinf(eps)
    if pub.any():
        return pub / pub.sum()
    return eps / eps.sum()


# --------------------------------------------------------------------------------------------
# 1. the convex solver
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
@given(profiles(), spreads)
def test_tuned_weights_match_convex_solver(eps, s):
    sol = hdp.adpm(eps, data_sd=s)
    opt, w_cvx = solver_optimum(eps, s)
    w = sol.user_weights
    eta = least_noise(w, eps)
    ours = affine_mse(w, eta, s * s)
    assert math.fsum(w) == pytest.approx(1.0, rel=1e-12)
    assert sol.noise_scale == pytest.approx(eta, rel=1e-12, abs=0)
    assert sol.tuned_objective == pytest.approx(ours, rel=1e-12)
    assert ours <= opt * (1 + 1e-6)  # no feasible point beats it
    assert ours == pytest.approx(opt, rel=1e-5)
    # the objective is s^2-strongly convex in w: |w - w*|^2 <= gap / s^2
    assert np.abs(w_cvx - w).max() <= math.sqrt(2e-5 * opt) / s + 1e-6
    # its worst case over all data is the same weights at variance 1/4
    assert sol.objective == pytest.approx(affine_mse(w, eta, 0.25), rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_tiers_match_convex_solver_on_expanded_users(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    levels = np.exp(rng.uniform(-3, 2, k))
    levels[rng.integers(0, k)] = INF
    levels[rng.integers(0, k)] = 0.0
    counts = rng.integers(1, 25, k)
    s = float(rng.uniform(0.05, 0.5))
    sol = hdp.adpm(hdp.EpsilonProfile.from_tiers(levels, counts), data_sd=s)
    eps = np.repeat(levels, counts)
    opt, _ = solver_optimum(eps, s)
    w = np.repeat(sol.weights, counts)
    assert affine_mse(w, least_noise(w, eps), s * s) == pytest.approx(opt, rel=1e-5)
    assert sol.tuned_objective == pytest.approx(opt, rel=1e-5)


def test_paper_profile_against_convex_solver():
    eps = hdp.paper_profile("high").expand()
    sol = hdp.adpm(eps, data_sd=0.2)
    opt, _ = solver_optimum(eps, 0.2)
    assert sol.tuned_objective == pytest.approx(opt, rel=1e-5)


# --------------------------------------------------------------------------------------------
# 2. s = 1/2 is the paper's ADPM, bit for bit, on every path
# --------------------------------------------------------------------------------------------
def assert_identical(a, b):
    assert np.array_equal(a.r, b.r)
    assert np.array_equal(a.weights, b.weights)
    assert np.array_equal(a.saturated, b.saturated)
    for name in (
        "noise_scale",
        "saturation_level",
        "objective",
        "tuned_objective",
        "worst_case_mse",
        "tuned_mse",
        "outputs_zero",
        "data_sd",
    ):
        x, y = getattr(a, name), getattr(b, name)
        assert x == y or (math.isnan(x) and math.isnan(y)), name


@given(profiles())
def test_half_is_adpm_bit_for_bit_small(eps):
    a, b = hdp.adpm(eps), hdp.adpm(eps, data_sd=0.5)
    assert_identical(a, b)
    assert a.constant == 8.0 and a.data_sd == 0.5
    assert a.tuned_objective == a.objective
    assert hdp.saturation_level(eps, 0.5) == hdp.saturation_level(eps)
    if eps.size <= 40:
        ta, tb = hdp.adpm_trace(eps), hdp.adpm_trace(eps, data_sd=np.float64(0.5))
        for f in ("r", "l1", "l2", "tau", "f", "saturated"):
            assert np.array_equal(getattr(ta, f), getattr(tb, f), equal_nan=f != "saturated")


def _large(kind: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    eps = np.exp(rng.uniform(-4, 2, n))
    if kind == "public":
        eps[rng.random(n) < 0.2] = INF
    elif kind == "zeros":
        eps[rng.random(n) < 0.2] = 0.0
    elif kind == "rare":  # the fixed-seed sample misses the decisive users: selection
        sampled = np.random.default_rng(n).integers(0, n, _SAMPLE)
        unseen = np.setdiff1d(np.arange(n), sampled)
        eps = np.full(n, 1e6)
        eps[rng.choice(unseen, 10, replace=False)] = 5.0
    return eps


LARGE = [
    ("plain", 100_000),
    ("public", 100_000),
    ("zeros", 300_000),
    ("plain", 300_000),
    ("rare", 3 * _RANDOM_SAMPLE_MIN),
]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "n"), LARGE)
def test_half_is_adpm_bit_for_bit_large(kind, n):
    assert n > max(_BRACKET_MIN, _SELECT_MIN)
    eps = _large(kind, n)
    # white box: the bracket decides the plain cases, selection the rare one
    assert (bracket(eps, 8.0) is None) == (kind == "rare")
    assert_identical(hdp.adpm(eps), hdp.adpm(eps, data_sd=0.5))


def test_half_is_adpm_bit_for_bit_tiers():
    rng = np.random.default_rng(3)
    levels = np.concatenate([np.exp(rng.uniform(-4, 2, 98)), [INF, 0.0]])
    prof = hdp.EpsilonProfile.from_tiers(levels, rng.integers(1, 10**7, 100))
    assert_identical(hdp.adpm(prof), hdp.adpm(prof, data_sd=0.5))
    assert hdp.saturation_level(prof, 0.5) == hdp.saturation_level(prof)


# --------------------------------------------------------------------------------------------
# 3. every path solves Algorithm 1 with c = 2/s^2
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("s", [0.05, 0.2, 0.45])
@pytest.mark.parametrize(("kind", "n"), LARGE)
def test_large_paths_match_grouped_algorithm(kind, n, s):
    eps = _large(kind, n)
    c = 2.0 / (s * s)
    if kind == "rare":
        assert bracket(eps, c) is None  # selection with c
    sol = hdp.adpm(eps, data_sd=s)
    r = algorithm1_grouped(eps, np.ones(n), c)
    np.testing.assert_allclose(sol.r, r, rtol=1e-10)
    assert hdp.saturation_level(eps, s) == pytest.approx(sol.saturation_level, rel=0)
    if math.isfinite(sol.saturation_level):
        # the saturated users get tau*, everyone else less
        assert sol.saturation_level == pytest.approx(float(r.max()), rel=1e-10)


@pytest.mark.parametrize("s", [0.05, 0.2, 0.45, 0.5])
def test_selection_path_with_c(s):
    """White box: the quickselect fallback (used when the sampled bracket misses) with c."""
    eps = np.exp(np.random.default_rng(2).uniform(-4, 2, 4 * _SELECT_MIN))
    c = 2.0 / (s * s)
    r = algorithm1_grouped(eps, np.ones(eps.size), c)
    tau, sat, cut = select(eps.copy(), c)
    assert sat and tau == pytest.approx(float(r.max()), rel=1e-10)
    assert np.array_equal(eps >= cut, eps >= tau * (1 - 1e-9))  # exactly the capped users


@pytest.mark.slow
@given(profiles(max_n=200), spreads)
def test_small_paths_match_grouped_algorithm_and_literal_trace(eps, s):
    c = 2.0 / (s * s)
    sol = hdp.adpm(eps, data_sd=s)
    np.testing.assert_allclose(sol.r, algorithm1_grouped(eps, np.ones(eps.size), c), rtol=1e-11)
    tr = hdp.adpm_trace(eps, data_sd=s)
    if np.isfinite(tr.l1[-1]):
        assert tr.f[-1] == pytest.approx(sol.tuned_objective, rel=1e-11)


@pytest.mark.slow
@given(profiles(max_n=60), spreads)
def test_tuned_is_paper_adpm_on_rescaled_levels(eps, s):
    """Scaling: G(t) = sum eps (t - eps) over eps < t is homogeneous of degree 2, so G = c on
    eps is G = 8 on 2s eps (c = 2/s^2): tau*(eps; c) = tau*(2s eps; 8) / (2s) and the weights
    are the paper's ADPM weights for 2s eps (weights do not depend on the scale of r)."""
    a = hdp.adpm(eps, data_sd=s)
    b = hdp.adpm(eps * (2 * s))
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-11, atol=0)
    assert a.saturation_level == pytest.approx(b.saturation_level / (2 * s), rel=1e-11)


@pytest.mark.parametrize("s", [0.03, 0.2, 0.5])
def test_huge_tiers(s):
    rng = np.random.default_rng(11)
    levels = np.concatenate([np.exp(rng.uniform(-4, 2, 98)), [INF, 0.0]])
    counts = rng.integers(1, 10**7, 100)
    sol = hdp.adpm(hdp.EpsilonProfile.from_tiers(levels, counts), data_sd=s)
    np.testing.assert_allclose(sol.r, algorithm1_grouped(levels, counts, 2 / s**2), rtol=1e-10)
    s1 = float(np.dot(counts, sol.r))
    s2 = float(np.dot(counts, sol.r**2))
    assert sol.tuned_objective == pytest.approx(s * s * s2 / s1**2 + 2 / s1**2, rel=1e-10)


# --------------------------------------------------------------------------------------------
# 4. privacy, spread limits, PropDPM as s -> 0
# --------------------------------------------------------------------------------------------
@given(profiles(), st.floats(1e-4, 0.5))
def test_granted_privacy_never_exceeds_request(eps, s):
    sol = hdp.adpm(eps, data_sd=s)
    w, eta = sol.weights, sol.noise_scale
    assert (sol.granted_eps <= eps).all()
    est = hdp.TunedADPMEstimator(eps, data_sd=s)
    assert (est.granted_eps <= eps).all()
    if eta > 0:  # the definition: user i's loss is w_i / eta
        assert (w / eta <= eps * (1 + 1e-12)).all()
    assert (w[eps == 0] == 0).all()


@given(profiles(max_n=30))
def test_small_spread_tends_to_propdpm(eps):
    target = propdpm_weights(eps[eps > 0])
    dist = []
    for s in (0.5, 0.1, 1e-2, 1e-3, 1e-5):
        w = hdp.adpm(eps, data_sd=s).weights[eps > 0]
        dist.append(float(np.abs(w - target).sum()))
    assert all(b <= a * (1 + 1e-9) + 1e-15 for a, b in itertools.pairwise(dist))
    # without public users nobody saturates once c = 2/s^2 passes G(max eps): exact equality
    # up to rounding; with public users their pull on tau is of order s^2 S1^2 / n_public
    fin = eps[np.isfinite(eps) & (eps > 0)]
    bound = 1e-12 if not np.isinf(eps).any() else 4e-10 * max(fin.sum(), 1.0) ** 2
    assert dist[-1] <= bound


def test_saturation_sets_in_later_for_smaller_spreads():
    eps = hdp.paper_profile("high")
    taus = [hdp.saturation_level(eps, s) for s in (0.5, 0.3, 0.2, 0.1, 0.05)]
    assert all(b > a for a, b in itertools.pairwise(taus))
    # the two-group threshold with c: eps1 + c/(n f eps1), checked on both sides
    n, frac, e1, s = 1000, 0.9, 0.1, 0.2
    thr = hdp.two_group_threshold(n, frac, e1, data_sd=s)
    assert thr == pytest.approx(e1 + 50.0 / (n * frac * e1), rel=1e-12)
    for e2, sat in ((thr * (1 - 1e-6), False), (thr * (1 + 1e-6), True)):
        prof = hdp.EpsilonProfile.from_tiers([e1, e2], [900, 100])
        assert bool(hdp.adpm(prof, data_sd=s).saturated[1]) == sat
    assert hdp.two_group_threshold(n, frac, e1, data_sd=0.5) == hdp.two_group_threshold(n, frac, e1)


# --------------------------------------------------------------------------------------------
# 5. the answer-0 rule, worst cases, the estimator
# --------------------------------------------------------------------------------------------
def test_worst_case_over_the_range_can_pass_a_quarter():
    # one user at eps 4, tuned to s = 0.1: at spread 0.1 the MSE is 0.01 + 2/16 = 0.135 (it
    # answers); over all data (TwoPoint(1/2), variance 1/4) it is 0.25 + 0.125 = 0.375
    sol = hdp.adpm([4.0], data_sd=0.1)
    assert not sol.outputs_zero
    assert sol.tuned_mse == pytest.approx(0.135, rel=1e-14)
    assert sol.worst_case_mse == pytest.approx(0.375, rel=1e-14)
    est = hdp.get_method("ADPM-tuned", [4.0], data_sd=0.1)
    assert est.worst_case_mse == pytest.approx(0.375, rel=1e-14)
    assert est.exact_mse(hdp.TwoPoint(0.5)) == pytest.approx(0.375, rel=1e-14)
    # the paper's ADPM answers 0 here (f = 0.375 > 1/4)
    assert hdp.adpm([4.0]).outputs_zero and hdp.adpm([4.0]).worst_case_mse == 0.25


def test_answers_zero_when_mse_at_its_spread_passes_a_quarter():
    sol = hdp.adpm([2.0], data_sd=0.4)  # 0.16 + 2/4 > 1/4
    assert sol.outputs_zero and sol.tuned_mse == 0.25 and sol.worst_case_mse == 0.25
    dist = hdp.Beta(2, 3)
    res = hdp.simulate_mse(["ADPM-tuned"], [2.0], dist, trials=500, data_sd=0.4)["ADPM-tuned"]
    assert res.mse == pytest.approx(dist.mean**2, rel=1e-12) and res.std_err < 1e-15
    # nobody usable: answers 0 at every spread
    none = hdp.adpm([0.0, 0.0], data_sd=0.1)
    assert none.outputs_zero and none.worst_case_mse == 0.25


@given(profiles(max_n=20), spreads)
def test_tuned_mse_bounds_every_distribution_of_smaller_spread(eps, s):
    est = hdp.TunedADPMEstimator(eps, data_sd=s)
    cands = [hdp.TwoPoint(p) for p in (0.0, 0.1, 0.5, 0.9, 1.0)]
    cands += [hdp.Beta(2, 3), hdp.Beta(5, 1), hdp.Uniform(), hdp.Beta(30, 30)]
    for d in cands:
        if d.variance <= s * s:
            assert est.exact_mse(d) <= est.tuned_mse * (1 + 1e-12)
        assert est.exact_mse(d) <= est.worst_case_mse * (1 + 1e-12)


@pytest.mark.parametrize(
    ("prof", "dist", "s"),
    [
        (hdp.paper_profile("high"), hdp.Beta(2, 3), None),
        (hdp.paper_profile("low"), hdp.Uniform(), 0.1),
        (hdp.EpsilonProfile.from_tiers([0.05, 0.5, INF], [3000, 500, 5]), hdp.TwoPoint(0.3), 0.3),
    ],
)
@pytest.mark.slow
def test_monte_carlo_agrees_with_exact_mse(prof, dist, s):
    sd = math.sqrt(dist.variance) if s is None else s
    res = hdp.simulate_mse(["ADPM-tuned"], prof, dist, trials=20_000, seed=7, data_sd=s)
    r = res["ADPM-tuned"]
    sol = hdp.adpm(prof, data_sd=sd)
    w = sol.user_weights if not prof.is_tiered else np.repeat(sol.weights, prof.counts)
    exact = affine_mse(w, sol.noise_scale, dist.variance)
    assert r.exact == pytest.approx(exact, rel=1e-12)
    assert abs(r.mse - exact) <= 4 * r.std_err
    assert r.std_err < 0.05 * exact  # the test has power


def test_beats_adpm_and_propdpm_on_the_paper_profiles_with_beta_data():
    """The issue's claim: with Beta(2, 3) data (s = 0.2) the tuned estimator's exact MSE is at
    most both ADPM's and PropDPM's on the paper's profiles."""
    dist = hdp.Beta(2, 3)
    assert dist.variance == pytest.approx(0.04, rel=1e-14)
    for kind in ("high", "low"):
        prof = hdp.paper_profile(kind)
        eps = prof.expand()
        tuned = hdp.adpm(eps, data_sd=0.2)
        plain = hdp.adpm(eps)
        m_tuned = affine_mse(tuned.weights, least_noise(tuned.weights, eps), 0.04)
        m_adpm = affine_mse(plain.weights, least_noise(plain.weights, eps), 0.04)
        w_prop = propdpm_weights(eps)
        m_prop = affine_mse(w_prop, least_noise(w_prop, eps), 0.04)
        # (on the low profile nobody saturates at either spread: all three are proportional
        # weights and agree to rounding)
        assert m_tuned <= m_adpm * (1 + 1e-12) and m_tuned <= m_prop * (1 + 1e-12)
        if kind == "high":  # a real gain where ADPM saturates
            assert m_tuned < 0.9 * min(m_adpm, m_prop)
        assert hdp.exact_mse("ADPM-tuned", prof, dist) == pytest.approx(m_tuned, rel=1e-12)
        assert hdp.exact_mse("ADPM", prof, dist) == pytest.approx(m_adpm, rel=1e-12)
        assert hdp.exact_mse("PropDPM", prof, dist) == pytest.approx(m_prop, rel=1e-12)
        # and it beats any other feasible affine estimator, e.g. other caps and powers
        for t in np.quantile(eps, [0.5, 0.8, 0.95]):
            w = np.minimum(eps, t) / np.minimum(eps, t).sum()
            assert m_tuned <= affine_mse(w, least_noise(w, eps), 0.04)


# --------------------------------------------------------------------------------------------
# 6. registry, sweeps, validation
# --------------------------------------------------------------------------------------------
def test_registry_and_common_random_numbers():
    assert hdp.METHODS == ("ADPM", "PropDPM", "LDPE", "SM", "FME", "UNI")
    prof = hdp.paper_profile("low")
    dist = hdp.Beta(2, 3)
    est = hdp.get_method("ADPM-tuned", prof, data_sd=0.2)
    assert est.name == "ADPM-tuned" and est.label == "ADPM tuned to s = 0.2"
    assert hdp.exact_mse("ADPM-tuned", prof, dist) == hdp.exact_mse(
        "ADPM-tuned", prof, dist, data_sd=0.2
    )
    assert hdp.exact_mse(est, prof, dist) == est.exact_mse(dist)
    a = hdp.simulate_mse(["ADPM", "PropDPM"], prof, dist, trials=2_000, seed=3)
    b = hdp.simulate_mse(["ADPM", "ADPM-tuned", "PropDPM"], prof, dist, trials=2_000, seed=3)
    for m in ("ADPM", "PropDPM"):
        assert a[m].mse == b[m].mse  # adding the tuned method changes nobody else's numbers


def test_sweeps_carry_the_tuned_method():
    from hdp_core.sweeps import scale_sweep

    eps = hdp.paper_profile("high")
    factors = [0.1, 1.0, 10.0]
    dist = hdp.Beta(2, 3)
    sw = scale_sweep(eps, factors, methods=("ADPM", "ADPM-tuned", "PropDPM"), dist=dist)
    for i, c in enumerate(factors):
        tuned = hdp.adpm(hdp.EpsilonProfile.from_values(eps.expand() * c), data_sd=0.2)
        assert sw.mse["ADPM-tuned"][i] == pytest.approx(tuned.tuned_mse, rel=1e-10)
        assert sw.mse["ADPM-tuned"][i] <= min(sw.mse["ADPM"][i], sw.mse["PropDPM"][i])
    half = scale_sweep(eps, factors, methods=("ADPM", "ADPM-tuned"), data_sd=0.5)
    np.testing.assert_allclose(half.mse["ADPM-tuned"], half.mse["ADPM"], rtol=1e-12)
    with pytest.raises(ValueError, match="data_sd"):
        scale_sweep(eps, factors, methods=("ADPM-tuned",))  # worst case, no spread given


@pytest.mark.parametrize("bad", [0, 0.0, -0.1, 0.5000001, 1.0, math.nan, INF, "0.2", True, 1e-200])
def test_bad_spread_is_refused(bad):
    with pytest.raises(ValueError, match="data_sd"):
        hdp.adpm([0.1, 1.0], data_sd=bad)
    with pytest.raises(ValueError, match="data_sd"):
        hdp.TunedADPMEstimator([0.1, 1.0], data_sd=bad)


def test_tuned_method_needs_a_spread():
    with pytest.raises(ValueError, match="data_sd"):
        hdp.get_method("ADPM-tuned", [0.1, 1.0])
    with pytest.raises(ValueError, match="data_sd"):  # a point mass has no spread to tune to
        hdp.exact_mse("ADPM-tuned", [0.1, 1.0], hdp.TwoPoint(1.0))
    with pytest.raises(hdp.UnknownMethod, match=r"unknown method.*ADPM-tuned"):
        hdp.get_method("ADPM-tuned-typo", [0.1])
