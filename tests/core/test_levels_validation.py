"""Issue 23: the levels validator (profile._levels_array) is fast (two reductions on valid
input) and still refuses every bad level, naming the first one. The oracle is a plain Python
loop over the entries applying the rule of the README (0, a number in [1e-6, 1e6], or inf),
in the validator's documented order: the first NaN, else the first negative, else the first
level out of range. Each check is exercised with 0 and inf present, because those hide the
smallest positive and the largest finite level from a min/max pass.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hdp_core.errors import ProfileError
from hdp_core.profile import EpsilonProfile

LO, HI = 1e-6, 1e6  # the README's supported range, written out (not imported)
INF = math.inf


def oracle(levels: list[float]) -> tuple[str, int] | None:
    """(kind, index) of the entry the validator must name, or None if all are valid."""
    for i, v in enumerate(levels):
        if v != v:
            return "nan", i
    for i, v in enumerate(levels):
        if v < 0:
            return "negative", i
    for i, v in enumerate(levels):
        if not (v == 0 or v == INF or LO <= v <= HI):
            return "range", i
    return None


WORDS = {"nan": "NaN", "negative": "must be ≥ 0", "range": "supported privacy level"}


def check(levels: list[float]) -> None:
    want = oracle(levels)
    for given_as in (levels, np.array(levels, dtype=np.float64)):
        if want is None:
            p = EpsilonProfile.from_values(given_as)
            assert np.array_equal(p.levels, np.array(levels), equal_nan=False)
            continue
        kind, i = want
        with pytest.raises(ProfileError) as err:
            EpsilonProfile.from_values(given_as)
        msg = str(err.value)
        assert msg.startswith(f"level {i} (0-based) is"), msg
        assert WORDS[kind] in msg, msg
        with pytest.raises(ProfileError, match=f"tier level {i} "):
            EpsilonProfile.from_tiers(given_as, [1] * len(levels))


@pytest.mark.parametrize(
    "levels",
    [
        [0.0, 1e-7],  # a 0 hides a too-small positive from min
        [0.0, 5e-324],
        [INF, 1.000001e6],  # an inf hides a too-large finite level from max
        [INF, 1e308],
        [0.0, 0.5, INF, 2e6],
        [0.0, 0.5, INF, 1e-7, 2e6],  # the first bad one is named
        [INF, 0.0, 0.9e-6],
        [INF, math.nan],  # NaN with inf and 0 around
        [0.0, math.nan, -1.0],  # NaN is named before a negative
        [-0.5, math.nan],
        [0.0, -INF, INF],
        [0.5, -1e-300],
        [1e-7, 1e7],  # both ends out, no 0 or inf
        [2e6],
        [0.9e-6],
        [0.0, LO, HI, INF],  # valid: the ends themselves
        [0.0, 0.0],
        [INF, INF],
        [0.0, INF],
        [-0.0, 1.0],
        [LO],
        [HI],
    ],
)
def test_each_check_with_zero_and_public_around(levels):
    check(levels)


SPECIAL = st.sampled_from(
    [0.0, -0.0, INF, -INF, math.nan, LO, HI, 1e-7, 0.999999e-6, 1.0000001e6, 1e308, 5e-324, -1.0]
)
NORMAL = st.floats(min_value=1e-6, max_value=1e6)


@given(st.lists(st.one_of(SPECIAL, NORMAL, NORMAL, NORMAL), min_size=1, max_size=30))
def test_validator_matches_the_oracle(levels):
    check(levels)


def test_large_arrays_take_the_same_checks():
    """A large array (the fast path's case) with one bad entry deep inside is refused, and
    the entry is named."""
    rng = np.random.default_rng(0)
    base = np.exp(rng.uniform(math.log(LO), math.log(HI), 200_000))
    base[::7] = 0.0
    base[3::11] = INF
    EpsilonProfile.from_values(base)  # valid
    for bad, word in ((2e6, "supported"), (1e-7, "supported"), (math.nan, "NaN"), (-3, "≥ 0")):
        arr = base.copy()
        arr[123_457] = bad
        with pytest.raises(ProfileError, match=r"level 123457 \(0-based\)") as err:
            EpsilonProfile.from_values(arr)
        assert word in str(err.value)
