"""Data distributions on [-0.5, 0.5]: moments against closed forms and large samples,
support of the samplers, exact vs normal-approximation sums, parameter validation.

Closed forms used as oracles (independent of the code):
Beta(a, b) has mean a/(a+b) and variance ab/((a+b)^2 (a+b+1)), shifted by -1/2;
Uniform[-1/2, 1/2] has mean 0 and variance 1/12; TwoPoint(p) is 1/2 with probability p and
-1/2 otherwise, so mean p - 1/2 and variance p(1-p).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_core.distributions import EXACT_SUM_MAX

DISTS = [
    hdp.Beta(2, 3),
    hdp.Beta(0.5, 0.5),
    hdp.Beta(7, 1.5),
    hdp.Uniform(),
    hdp.TwoPoint(0.5),
    hdp.TwoPoint(0.9),
    hdp.TwoPoint(0.0),
    hdp.TwoPoint(1.0),
]


def closed_form(d) -> tuple[float, float]:
    if isinstance(d, hdp.Beta):
        a, b = d.a, d.b
        return a / (a + b) - 0.5, a * b / ((a + b) ** 2 * (a + b + 1))
    if isinstance(d, hdp.Uniform):
        return 0.0, 1.0 / 12.0
    return d.p - 0.5, d.p * (1 - d.p)


@pytest.mark.parametrize("d", DISTS, ids=lambda d: d.label())
def test_moments_closed_form_and_sample(d):
    mu, var = closed_form(d)
    assert d.mean == pytest.approx(mu, abs=1e-15)
    assert d.variance == pytest.approx(var, abs=1e-15)
    assert 0.0 <= d.variance <= 0.25
    x = d.sample(np.random.default_rng(3), 400_000)
    assert x.shape == (400_000,)
    assert x.min() >= -0.5 and x.max() <= 0.5
    # sample mean within 5 standard errors; sample variance within 5 of its standard errors
    assert abs(x.mean() - mu) <= 5 * math.sqrt(var / x.size) + 1e-12
    sq = (x - mu) ** 2  # unbiased for the variance when mu is the true mean
    assert abs(sq.mean() - var) <= 5 * sq.std() / math.sqrt(x.size) + 1e-12


def test_worst_case_is_two_point_half():
    assert hdp.WORST_CASE.variance == 0.25
    assert hdp.WORST_CASE.mean == 0.0


@pytest.mark.parametrize("d", DISTS, ids=lambda d: d.label())
def test_sample_shapes_and_support(d):
    x = d.sample(np.random.default_rng(0), (30, 7))
    assert x.shape == (30, 7)
    assert np.isfinite(x).all()
    assert (x >= -0.5).all() and (x <= 0.5).all()


def test_two_point_values_are_the_endpoints():
    x = hdp.TwoPoint(0.3).sample(np.random.default_rng(1), 10_000)
    assert set(np.unique(x)) == {-0.5, 0.5}
    assert (hdp.TwoPoint(1.0).sample(np.random.default_rng(1), 100) == 0.5).all()
    assert (hdp.TwoPoint(0.0).sample(np.random.default_rng(1), 100) == -0.5).all()


@pytest.mark.parametrize("d", [hdp.Beta(2, 3), hdp.Uniform()], ids=lambda d: d.label())
def test_sample_sums_exact_and_normal_paths(d):
    rng = np.random.default_rng(5)
    small = np.array([0, 1, 5, EXACT_SUM_MAX])
    s, approx = d.sample_sums(rng, np.tile(small, (20_000, 1)))
    assert not approx  # every count <= EXACT_SUM_MAX is summed draw by draw
    assert s.shape == (20_000, small.size)
    assert (s[:, 0] == 0).all()
    # sums of c draws lie in [-c/2, c/2] (a normal draw would not be bounded)
    assert (np.abs(s) <= small / 2 + 1e-12).all()
    for j, c in enumerate(small[1:], start=1):
        se_m = math.sqrt(c * d.variance / s.shape[0])
        assert abs(s[:, j].mean() - c * d.mean) <= 5 * se_m
        assert s[:, j].var() == pytest.approx(c * d.variance, rel=0.05)

    big = np.array([EXACT_SUM_MAX + 1, 10**6, 10**12])
    s, approx = d.sample_sums(rng, np.tile(big, (20_000, 1)))
    assert approx  # large counts come from the normal approximation and say so
    for j, c in enumerate(big):
        z = (s[:, j] - c * d.mean) / math.sqrt(c * d.variance)
        assert abs(z.mean()) <= 5 / math.sqrt(z.size)
        assert z.var() == pytest.approx(1.0, rel=0.05)
    # mixing both kinds in one call: flagged approximate
    _, approx = d.sample_sums(rng, np.array([3, 1000]))
    assert approx


def test_two_point_sums_are_exact_binomials_at_any_size():
    d = hdp.TwoPoint(0.9)
    assert d.exact_sums
    counts = np.tile(np.array([1, 40, 10**9]), (20_000, 1))
    s, approx = d.sample_sums(np.random.default_rng(2), counts)
    assert not approx
    # sum + c/2 is the number of +1/2 draws: an integer between 0 and c
    k = s + 0.5 * counts
    assert np.array_equal(k, np.round(k))
    assert (k >= 0).all() and (k <= counts).all()
    for j, c in enumerate(counts[0]):
        sd = math.sqrt(c * 0.09)
        assert abs(k[:, j].mean() - 0.9 * c) <= 5 * sd / math.sqrt(k.shape[0])
        assert k[:, j].var() == pytest.approx(0.09 * c, rel=0.05)


@pytest.mark.parametrize(
    "make",
    [
        lambda: hdp.Beta(0, 3),
        lambda: hdp.Beta(2, -1),
        lambda: hdp.Beta(float("nan"), 1),
        lambda: hdp.Beta(float("inf"), 1),
        lambda: hdp.TwoPoint(1.5),
        lambda: hdp.TwoPoint(-0.1),
        lambda: hdp.TwoPoint(float("nan")),
    ],
)
def test_invalid_parameters_raise(make):
    with pytest.raises(ValueError):
        make()


def test_labels():
    assert hdp.Beta(2, 3).label() == "Beta(2, 3)"
    assert "0.9" in hdp.TwoPoint(0.9).label()
    assert "Uniform" in hdp.Uniform().label()
