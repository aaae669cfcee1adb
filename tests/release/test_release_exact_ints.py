"""The noise scale, the privacy map's input distances and the value handed to the noise are
each ONE correctly rounded division of an unreduced ratio of integers (hdp_release.noise,
hdp_release.finish): equal, bit for bit, to the same rationals computed with Fractions and
rounded once (the oracle: Python's Fraction arithmetic, float(Fraction))."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hdp_release.engines.base import Q
from hdp_release.finish import finish_planned
from hdp_release.noise import Planned, noise_scale

floats = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)
fracs = st.builds(
    Fraction,
    st.integers(min_value=1, max_value=1 << 120),
    st.sampled_from([1 << k for k in range(0, 130, 7)]),
)


@settings(max_examples=300, deadline=None)
@given(lo=floats, span=floats, s1=fracs, kappa=st.floats(min_value=0.0, max_value=1.0))
def test_noise_scale_is_the_rational_rounded_once(lo, span, s1, kappa):
    width = Fraction(lo + span) - Fraction(lo)
    oracle = math.nextafter(float(width * (1 + Fraction(kappa)) / s1), math.inf)
    assert noise_scale(width, s1, kappa) == oracle


class _Recording:
    """A measurement recording the privacy map's inputs and the value noised (no noise)."""

    def __init__(self, scale):
        self.scale, self.d_in, self.x = scale, [], None

    def map(self, d):
        self.d_in.append(d)
        return 0.0  # every check passes: what is tested is the input distances

    def __call__(self, x):
        self.x = x
        return x


@settings(max_examples=100, deadline=None)
@given(
    lo=st.floats(min_value=-1e6, max_value=1e6),
    span=floats,
    levels=st.lists(floats, min_size=1, max_size=6, unique=True),
    counts=st.lists(st.integers(min_value=1, max_value=10**7), min_size=6, max_size=6),
    ys=st.lists(st.integers(min_value=0, max_value=1 << 30), min_size=6, max_size=6),
)
def test_map_inputs_and_noised_value_equal_the_fraction_oracle(lo, span, levels, counts, ys):
    import hdp_release.finish as F

    hi = lo + span
    if not hi > lo:
        return
    levels = sorted(levels)
    k = len(levels)
    users = counts[:k]
    sy = [min(y, 1 << 30) * u for y, u in zip(ys, users, strict=False)]
    s1 = sum((Fraction(r) * u for r, u in zip(levels, users, strict=True)), Fraction(0))
    w_num = sum((Fraction(r) * y for r, y in zip(levels, sy, strict=True)), Fraction(0))
    made: list[_Recording] = []

    def meas(scale):
        made.append(_Recording(scale))
        return made[-1]

    p = Planned(levels, levels, users, levels, levels, [False] * k, s1, w_num, 0.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(F, "measurement", meas)
        rel = finish_planned(p, math.inf, lo, hi, None, None, "duckdb", sum(users), 0, 0, "t")
    if rel.outputs_midrange:
        return
    m = made[-1]
    width = Fraction(hi) - Fraction(lo)
    delta = rel.rounding_bound
    up = lambda x: math.nextafter(x, math.inf)  # noqa: E731
    want = [up(up(float(Fraction(r) * width / s1)) + 2.0 * delta) for r in levels]
    assert m.d_in == want
    assert m.x == float(width * w_num / (s1 * Q))
