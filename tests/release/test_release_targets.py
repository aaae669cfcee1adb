"""release_mean(target=...) (issue 21) and its proven intervals.

Oracles, independent of the release code: hdp.table_mean and hdp.adpm on the levels (both
checked against cvxpy and exact arithmetic in their own tests), the interval functions of
hdp_core.intervals (proved there), numpy means of the clamped table, and the Laplace law's
CDF for EXACT coverage: a release's estimate is (pre-noise value) + Laplace(b), so with the
pre-noise value read through OpenDP's real measurement (its privacy map kept, its output
the input) the probability that the interval covers a target is a closed form, not a
simulation. A smaller run with OpenDP's real (unseedable) noise checks the same.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers import NoNoise

import hdp_core as hdp
import hdp_release
import hdp_release.cli
import hdp_release.engines.base
import hdp_release.finish
from hdp_core.errors import ReleaseError
from hdp_core.intervals import (
    population_half_width,
    population_half_width_for,
    release_error_95,
    table_half_width,
)
from hdp_core.rounding import grid_allowance, release_half_width
from hdp_core.units import affine_error
from hdp_release.release import release_mean

INF = math.inf
LO, HI = 0.0, 100.0


@pytest.fixture
def no_noise(monkeypatch):
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)


def laplace_cover(d: float, h: float, b: float) -> float:
    """P(|d + L| <= h), L ~ Laplace(b) (exact)."""

    def cdf(t):
        if b == 0:
            return float(t >= 0)
        return 1 - 0.5 * math.exp(-t / b) if t >= 0 else 0.5 * math.exp(t / b)

    return cdf(h - d) - cdf(-h - d)


def grid(v, lo=LO, hi=HI):
    """The release's grid values of the clamped data (2^30 steps), in data units."""
    y = np.rint((np.clip(np.asarray(v, float), lo, hi) - lo) / (hi - lo) * 2**30)
    return lo + (hi - lo) * y / 2**30


def assert_half_width(rel, h: float) -> None:
    """The stated half-width is the proven one for exact arithmetic, ``h`` (data units),
    plus at most the grid allowance (hdp_core.rounding, its own tests) and float terms."""
    g = grid_allowance(1.0, rel.lo, rel.hi)
    assert h * (1 - 1e-12) <= rel.half_width95 <= h * (1 + 1e-12) + g * (1 + 1e-9)


def tiers_frame(n=400, seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "v": rng.uniform(-20, 120, n),
            "e": rng.choice([0.05, 0.2, 1.0, 3.0, INF, 0.0], n, p=[0.3, 0.3, 0.2, 0.1, 0.05, 0.05]),
        }
    )


def penguin_like(seed=21):
    """342 rows like the penguin body masses (g), eps by species: 151 at 0.1, 68 at 1, 123
    public (the public species is heavier: the level depends on the value)."""
    rng = np.random.default_rng(seed)
    lo, hi = 2700.0, 6300.0
    groups = [(0.1, 151, 3700.0, 460.0), (1.0, 68, 3733.0, 380.0), (INF, 123, 5076.0, 500.0)]
    eps = np.concatenate([np.full(n, e) for e, n, _, _ in groups])
    vals = np.concatenate([np.clip(rng.normal(m, s, n), lo, hi) for _, n, m, s in groups])
    return pd.DataFrame({"mass": vals, "eps": eps}), lo, hi


# ------------------------------------------------------------------------------ the table target
def test_table_target_is_table_mean_on_the_same_levels(no_noise):
    df = tiers_frame()
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI, target="table")
    assert rel.target == "table" and rel.to_dict()["target"] == "table"
    sol = hdp.table_mean(df["e"].to_numpy())  # per user, eps = 0 rows included
    W = HI - LO
    x = (grid(df["v"]) - LO) / W - 0.5  # unit scale
    want = LO + W * (0.5 + float(np.dot(sol.weights, x)))  # mid + sum w (x - mid)
    assert rel.estimate == pytest.approx(want, abs=1e-9 * W)
    assert rel.noise_scale == pytest.approx(sol.noise_scale * W, rel=1e-9)
    assert rel.bias_bound == pytest.approx(sol.bias_bound * W, rel=1e-9)
    assert rel.saturation_level == pytest.approx(sol.cap_level, rel=1e-12)
    # the receipt: granted = min(eps, cap) = table_mean's granted levels, loss <= eps
    t = rel.tiers
    for _, row in t.iterrows():
        assert row["granted_eps"] == pytest.approx(min(row["eps"], sol.cap_level), rel=1e-12)
    assert (t["privacy_loss"] <= t["run_eps"]).all() and (t["run_eps"] == t["eps"]).all()
    assert rel.n_excluded == int((df["e"] == 0).sum())
    # the interval is table_half_width of the bias bound and the noise, times R (+ rounding)
    h = table_half_width(sol.bias_bound, sol.noise_scale) * W
    assert_half_width(rel, h)
    assert rel.ci95 == (
        max(rel.estimate - rel.half_width95, LO),
        min(rel.estimate + rel.half_width95, HI),
    )


def test_penguin_like_table_target_covers_the_tables_mean(no_noise):
    """The issue's case: exact coverage of the table's mean >= 95% for target="table";
    the population target (ADPM) misses it far more often."""
    df, lo, hi = penguin_like()
    mean = float(np.mean(grid(df["mass"], lo, hi)))
    rel = release_mean(df, value="mass", eps="eps", lo=lo, hi=hi, target="table")
    cov = laplace_cover(rel.estimate - mean, rel.half_width95, rel.noise_scale)
    assert cov >= 0.95
    assert abs(rel.estimate - mean) <= rel.bias_bound
    pop = release_mean(df, value="mass", eps="eps", lo=lo, hi=hi)
    pop_cov = laplace_cover(pop.estimate - mean, pop.half_width95, pop.noise_scale)
    assert pop_cov < 0.95 or abs(pop.estimate - mean) > 250  # ADPM is biased here
    assert rel.half_width95 < 400  # grams: a useful interval


def test_table_coverage_is_tight_at_the_worst_table(no_noise):
    """The table attaining the bias bound (held users at the bottom, the others at the top)
    is covered with probability 95% exactly (the bound is attained, so the interval is not
    wider than it must be); every other table more."""
    e = np.array([0.05] * 6 + [0.3] * 3 + [INF] * 3 + [0.0] * 2)
    sol = hdp.table_mean(e)
    held = sol.weights < 1 / e.size
    worst = np.where(held, LO, HI)
    for v in (worst, np.where(held, HI, LO), np.linspace(LO, HI, e.size)):
        df = pd.DataFrame({"v": v, "e": e})
        rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI, target="table")
        cov = laplace_cover(rel.estimate - float(np.mean(v)), rel.half_width95, rel.noise_scale)
        assert cov >= 0.95 - 1e-12
        if v is worst:
            assert cov == pytest.approx(0.95, abs=1e-6)


@pytest.mark.parametrize("target", ["population", "table"])
@pytest.mark.slow
def test_coverage_with_opendps_real_noise(target):
    """800 releases with OpenDP's real (unseedable) noise on a fixed 12-user table whose
    every level group has half its values at each end (so ADPM's weighted mean is the
    table's mean too): the interval covers the table's mean in at least 95% minus 4
    standard errors (3.1 points) of releases. The exact-coverage tests above are the sharp
    ones; this one checks the real sampler and the interval together."""
    e = np.array([0.5] * 4 + [2.0] * 4 + [INF] * 4)
    v = np.array([0, 100, 0, 100, 100, 0, 100, 0, 0, 100, 0, 100], dtype=float)
    df = pd.DataFrame({"v": v, "e": e})
    mean = float(v.mean())
    rels = [release_mean(df, value="v", eps="e", lo=LO, hi=HI, target=target) for _ in range(800)]
    cov = np.mean([r.ci95[0] <= mean <= r.ci95[1] for r in rels])
    assert cov >= 0.95 - 4 * math.sqrt(0.95 * 0.05 / 800)


@pytest.mark.parametrize("seed", range(3))
def test_table_target_on_per_user_levels(seed, no_noise):
    """The level-bins plan: privacy per row, the bias bound holds for this table, and the
    worst-case MSE is within 2% of TableMean's optimum on the exact levels (never below)."""
    rng = np.random.default_rng(seed)
    n = 5000
    e = np.exp(rng.uniform(-4, 1.5, n))
    e[rng.random(n) < 0.05] = 0.0
    e[rng.random(n) < 0.05] = INF
    v = rng.beta(2, 5, n) * 100 + (e < 0.1) * 30  # values depend on the level
    df = pd.DataFrame({"v": v, "e": e})
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI, target="table")
    assert rel.plan.startswith("level bins")
    W = HI - LO
    t = rel.tiers
    assert (t["granted_eps"] <= t["eps"]).all() and (t["granted_eps_max"] <= t["eps_max"]).all()
    assert (t["privacy_loss"] <= t["run_eps"]).all()
    assert (t["privacy_loss_max"] <= t["run_eps_max"]).all()
    assert t["users"].sum() == int((e > 0).sum())
    mean = float(np.mean(grid(v)))
    assert abs(rel.estimate - mean) <= rel.bias_bound
    opt = hdp.table_mean(e)
    got = (rel.bias_bound / W) ** 2 + 2 * (rel.noise_scale / W) ** 2
    assert opt.worst_case_mse * (1 - 1e-9) <= got <= opt.worst_case_mse * 1.02
    h = table_half_width(rel.bias_bound / W, rel.noise_scale / W) * W
    assert_half_width(rel, h)


def test_table_target_fails_closed(monkeypatch):
    calls = []
    real = hdp_release.finish.measurement

    class Spy:
        def __init__(self, s):
            self.m = real(s)

        def map(self, d):
            return self.m.map(d)

        def __call__(self, x):
            calls.append(x)
            return self.m(x)

    monkeypatch.setattr(hdp_release.finish, "measurement", Spy)
    real_scale = hdp_release.finish.noise_scale
    monkeypatch.setattr(
        hdp_release.finish, "noise_scale", lambda w, s1, k: real_scale(w, s1, k) * 0.999
    )
    with pytest.raises(ReleaseError, match="privacy check failed"):
        release_mean(tiers_frame(), value="v", eps="e", lo=LO, hi=HI, target="table")
    assert calls == []


def test_all_public_and_zero_rows_under_both_targets(no_noise):
    df = pd.DataFrame({"v": [10.0, 20.0, 30.0, 90.0], "e": [INF, INF, INF, 0.0]})
    pop = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    tab = release_mean(df, value="v", eps="e", lo=LO, hi=HI, target="table")
    assert pop.estimate == pytest.approx(20.0) and pop.noise_scale == tab.noise_scale == 0
    assert tab.estimate == pytest.approx((10 + 20 + 30 + 50) / 4)  # mid-range for eps = 0
    assert tab.bias_bound == pytest.approx(100 / 8)  # 1 of 4 rows unseen: 1/(2*4) of R
    # the population interval is no longer a point (issue 21: 0% coverage when all public)
    assert pop.half_width95 == pytest.approx(population_half_width([1 / 3], [3], 0.0) * 100)
    assert pop.ci95[0] < pop.estimate < pop.ci95[1]


def test_bad_target_is_refused():
    with pytest.raises(ReleaseError, match="target must be one of 'population', 'table'"):
        release_mean(tiers_frame(50), value="v", eps="e", lo=LO, hi=HI, target="tabel")


# ------------------------------------------------------------------------------ population
@pytest.mark.parametrize("data_sd", [None, 20.0])
def test_population_interval_is_the_proven_one_and_wider_than_the_normal(data_sd):
    df = tiers_frame()
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI, data_sd=data_sd)
    assert rel.target == "population" and rel.bias_bound == 0
    lv, ct = np.unique(df["e"][df["e"] > 0], return_counts=True)
    prof = hdp.EpsilonProfile.from_tiers(lv, ct)
    sd = None if data_sd is None else data_sd / (HI - LO)
    want = population_half_width_for(prof, data_sd=sd) * (HI - LO)
    assert rel.half_width95 == pytest.approx(want, rel=1e-5)
    sol = hdp.adpm(prof, data_sd=sd)
    var = 0.25 if sd is None else sd * sd
    old = affine_error(
        float(np.dot(sol.weights**2, ct)), sol.noise_scale, LO, HI, variance=var
    ).half_width
    assert rel.half_width95 >= old  # the normal approximation under-covers
    assert release_error_95(lv, ct, LO, HI, "population", data_sd) == pytest.approx(
        rel.half_width95, rel=1e-5
    )


def test_four_users_at_eps_100_cover_exactly(no_noise):
    """Issue 21: 4 users at eps 100, data at both ends. For every p on a grid the exact
    coverage of the population mean (binomial over the data, Laplace over the noise) of the
    release's own interval is >= 95%."""
    from scipy import stats

    df = pd.DataFrame({"v": [0.0, 100.0, 0.0, 100.0], "e": [100.0] * 4})
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    h, b = rel.half_width95, rel.noise_scale
    for p in np.linspace(0.01, 0.99, 99):
        k = np.arange(5)
        cov = sum(stats.binom.pmf(kk, 4, p) * laplace_cover(100 * (kk / 4 - p), h, b) for kk in k)
        assert cov >= 0.95


# ------------------------------------------------------------------------------ planning figure
def test_release_error_95_is_the_intervals_functions_on_scaled_levels():
    lv = np.array([0.0, 0.1, 1.0, INF])
    ct = np.array([5, 600, 300, 100])
    for target in ("population", "table"):
        for spend, k, f in ((1, 1, 1.0), (0.5, 1, 0.5), (1, 4, 0.25), (0.5, 2, 0.25)):
            got = release_error_95(lv, ct, 0, 500, target, spend=spend, k=k)
            prof = hdp.EpsilonProfile.from_tiers(lv * f, ct)
            if target == "population":
                want = population_half_width_for(prof)
            else:
                s = hdp.table_mean(prof)
                want = table_half_width(s.bias_bound, s.noise_scale)
            # plus every rounding of the release (hdp_core.rounding): the grid's R / 2^31
            assert got == release_half_width(want, 1.0, 0, 500), (target, spend, k)
            assert want * 500 + 500 / 2**31 <= got <= want * 500 * (1 + 1e-12) + 500 / 2**30
    # k releases each cost more error than one at the whole budget
    one = release_error_95(lv, ct, 0, 500, "table")
    assert release_error_95(lv, ct, 0, 500, "table", k=3) > one
    # levels at the smallest supported level still plan at a small spend
    tiny = release_error_95([1e-6, 1.0], [10, 1000], 0, 500, "table", spend=0.01, k=10)
    from fractions import Fraction

    from hdp_core.spend import spend_levels

    run = spend_levels([1e-6, 1.0], Fraction(1, 1000))  # each of 10 releases: 1/1000
    assert run[0] < 1e-6  # below LEVEL_MIN: a profile of what users ask could not hold it
    want = hdp.table_mean(hdp.EpsilonProfile._make(run, np.array([10, 1000]), True, None, None))
    assert tiny == release_half_width(
        table_half_width(want.bias_bound, want.noise_scale), 1.0, 0, 500
    )
    with pytest.raises(ValueError):
        release_error_95(lv, ct, 0, 500, "table", k=0)
    with pytest.raises(ReleaseError):
        release_error_95(lv, ct, 0, 500, "table", spend=1.5)


def test_preview_matches_both_targets():
    df = tiers_frame()
    lv, ct = np.unique(df["e"], return_counts=True)
    for target in ("population", "table"):
        pv = hdp_release.preview_tiers(lv, ct, LO, HI, target=target)
        rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI, target=target)
        assert pv.target == target
        assert pv.noise_scale == pytest.approx(rel.noise_scale, rel=1e-6)
        assert pv.half_width95 == pytest.approx(rel.half_width95, rel=1e-5)
        assert pv.saturation_level == pytest.approx(rel.saturation_level, rel=1e-9)


# ------------------------------------------------------------------------------ engines


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["tiers", "per-user"])
def test_duckdb_and_spark_agree_on_the_table_target(kind, spark, tmp_path, no_noise):
    if kind == "tiers":
        df = tiers_frame(2000, 7)
    else:
        rng = np.random.default_rng(8)
        df = pd.DataFrame({"v": rng.uniform(0, 100, 3000), "e": np.exp(rng.uniform(-4, 1, 3000))})
    p = tmp_path / "t.parquet"
    df.to_parquet(p)
    a = release_mean(str(p), value="v", eps="e", lo=LO, hi=HI, target="table")
    b = release_mean(str(p), value="v", eps="e", lo=LO, hi=HI, target="table", engine="spark")
    assert a.estimate == b.estimate and a.noise_scale == b.noise_scale
    assert a.bias_bound == b.bias_bound and a.half_width95 == b.half_width95
    pd.testing.assert_frame_equal(a.tiers, b.tiers)
