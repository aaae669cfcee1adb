"""The what-if "values differ by privacy level" (hdp_core.whatif) against simulation through
every method's own ``estimate`` and against the registry's closed forms when nothing moves."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_core.estimators import METHOD_CLASSES
from hdp_core.whatif import Shifted, group_moments, shift_factor, whatif

INF = math.inf
PROF = [0.05] * 6 + [0.3] * 4 + [2.0] * 6 + [INF] * 3 + [0.0]


@pytest.mark.parametrize("dist", [hdp.Beta(2, 3), hdp.TwoPoint(0.3), hdp.Uniform()])
def test_no_shift_is_the_registry_exact_mse(dist):
    res = whatif(PROF, dist, threshold=1.0, shift=0.0)
    assert set(res) == set(METHOD_CLASSES)
    for m, r in res.items():
        est = hdp.get_method(m, PROF, math.sqrt(dist.variance))
        assert r.mse_population == pytest.approx(est.exact_mse(dist), rel=1e-10, abs=1e-15)


def test_shifted_distribution_moments():
    rng = np.random.default_rng(0)
    for base in (hdp.Beta(2, 3), hdp.TwoPoint(0.7), hdp.Uniform()):
        for d in (-0.3, -0.05, 0.1, 0.25):
            if not -0.5 <= base.mean + d <= 0.5:
                continue
            s = Shifted(base, d)
            x = s.sample(rng, 400_000)
            assert x.min() >= -0.5 and x.max() <= 0.5
            assert x.mean() == pytest.approx(base.mean + d, abs=4e-3)
            assert x.var() == pytest.approx(s.variance, rel=2e-2, abs=1e-4)
    with pytest.raises(ValueError, match="outside the range"):
        shift_factor(0.3, 0.3)


@pytest.mark.parametrize("shift", [-0.25, 0.15])
@pytest.mark.slow
def test_against_simulation(shift):
    """Mean error and mean squared error of 4,000 estimates from each method's own
    ``estimate`` (fresh table per estimate) agree with the exact numbers within 4.5 standard
    errors, against both targets."""
    dist = hdp.Beta(2, 3)
    res = whatif(PROF, dist, threshold=1.0, shift=shift)
    rng = np.random.default_rng(42)
    strict = np.array(PROF) < 1.0
    trials = 4000
    moved = Shifted(dist, shift)
    x = np.where(
        strict[None, :],
        moved.sample(rng, (trials, len(PROF))),
        dist.sample(rng, (trials, len(PROF))),
    )
    m_table = x.mean(axis=1)
    mu_bar = float(np.mean(np.where(strict, moved.mean, dist.mean)))
    for m, r in res.items():
        if r.mse_table is None:
            continue
        est = hdp.get_method(m, PROF, math.sqrt(dist.variance))
        t = np.array([est.estimate(row, rng) for row in x])
        for target, bias, mse in (
            (m_table, r.bias_table, r.mse_table),
            (mu_bar, r.bias_population, r.mse_population),
        ):
            err = t - target
            se = err.std() / math.sqrt(trials)
            assert abs(err.mean() - bias) <= 4.5 * se + 1e-12, m
            sq = err**2
            assert abs(sq.mean() - mse) <= 4.5 * sq.std() / math.sqrt(trials) + 1e-12, m


def test_adpm_drifts_and_table_mean_stays_honest():
    """Strict users' values lower by 0.3 of the range: ADPM's bias grows with the shift, the
    table-mean estimator's stays within its worst-case bias bound."""
    eps = [0.1] * 151 + [1.0] * 68 + [INF] * 123
    tm = hdp.table_mean(eps)
    prev = 0.0
    for d in (-0.05, -0.15, -0.3):
        r = whatif(eps, hdp.Beta(2, 3), 0.5, d, methods=["ADPM", "TableMean"])
        assert abs(r["ADPM"].bias_table) > prev
        prev = abs(r["ADPM"].bias_table)
        assert abs(r["TableMean"].bias_table) <= tm.bias_bound
    assert prev > 5 * tm.bias_bound


@pytest.mark.parametrize(
    "eps",
    [
        [0.05] * 3 + [0.3] * 2 + [2.0] * 3 + [0.0],
        [0.5, 1.0, 1.0, 3.0, INF, INF],
        [4.0] * 6,
        [0.01] * 5 + [0.02] * 4,
    ],
)
def test_sampling_mechanism_against_every_kept_set(eps):
    """SM's exact numbers against enumeration of all 2^n kept sets (closed form given the
    kept set: mean of the kept users' means, their variances over |S|^2, Laplace 2/(|S| t)^2)."""
    dist, thr, d = hdp.Beta(2, 3), 1.0, -0.2
    r = whatif(eps, dist, thr, d, ["SM"])["SM"]
    est = hdp.get_method("SM", eps)
    _, mu, var = group_moments(eps, dist, thr, d)
    n = len(eps)
    et = et2 = etm = 0.0
    for kept in itertools.product([False, True], repeat=n):
        s = np.array(kept)
        k = int(s.sum())
        if k == 0:
            continue
        pr = float(np.prod(np.where(s, est.p, 1 - est.p)))
        mean_s = mu[s].mean()
        noise = 2 / (k * est.t) ** 2 if math.isfinite(est.t) else 0.0
        et += pr * mean_s
        et2 += pr * (var[s].sum() / k**2 + mean_s**2 + noise)
        etm += pr * (var[s].sum() / k + mean_s * mu.sum()) / n
    mbar = mu.mean()
    assert r.bias_table == pytest.approx(et - mbar, rel=1e-10, abs=1e-14)
    assert r.mse_table == pytest.approx(et2 - 2 * etm + mbar**2 + var.sum() / n**2, rel=1e-10)
    assert r.mse_population == pytest.approx(et2 - 2 * mbar * et + mbar**2, rel=1e-10)


def test_huge_tiers_without_shift_match_closed_forms():
    prof = hdp.EpsilonProfile.from_tiers([0.01, 0.5, 3.0, INF], [10**9, 10**8, 10**6, 10**3])
    dist = hdp.Uniform()
    res = whatif(prof, dist, 1.0, 0.0)
    for m, r in res.items():
        est = hdp.get_method(m, prof, math.sqrt(dist.variance))
        assert r.mse_population == pytest.approx(est.exact_mse(dist), rel=1e-8), m
    moved = whatif(prof, dist, 1.0, 0.1)
    assert abs(moved["ADPM"].bias_table) > 10 * abs(moved["TableMean"].bias_table)


def test_table_mse_against_simulation():
    """E[(T - table mean)^2] under i.i.d. data, by simulation with each method's estimate."""
    from hdp_core.whatif import table_mse

    dist = hdp.TwoPoint(0.3)
    rng = np.random.default_rng(9)
    x = dist.sample(rng, (4000, len(PROF)))
    for m in ("ADPM", "TableMean", "SM", "LDPE"):
        est = hdp.get_method(m, PROF, math.sqrt(dist.variance))
        sq = (np.array([est.estimate(row, rng) for row in x]) - x.mean(axis=1)) ** 2
        exact = table_mse(m, PROF, dist)
        assert exact is not None
        assert abs(sq.mean() - exact) <= 4.5 * sq.std() / math.sqrt(sq.size), m
