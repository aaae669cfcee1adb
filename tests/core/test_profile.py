"""EpsilonProfile: construction, validation (every bad input names the entry), tiers that are
never expanded, immutability, cache keys and the summary helpers."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_core.profile import MAX_EXPAND, MAX_TOTAL_USERS, parse_eps_text
from hdp_core.validate import format_eps

INF = math.inf
EP = hdp.EpsilonProfile


# --------------------------------------------------------------------------------------------
# 9. invalid input raises ProfileError naming the entry
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("values", "words"),
    [
        ([0.1, 0.2, math.nan], ["level 2", "NaN"]),
        (np.array([0.5, np.nan]), ["level 1", "NaN"]),
        ([0.1, -0.5], ["level 1", "-0.5", "≥ 0"]),
        (np.array([1.0, 2.0, -3.0]), ["level 2", "-3", "≥ 0"]),
        ([0.1, -INF], ["level 1", "-inf"]),
        (np.array([-np.inf]), ["level 0", "-inf"]),
        ([0.1, "abc"], ["level 1", "'abc'", "not a number"]),
        ([0.1, "0.3"], ["level 1", "not a number"]),
        ([True, 0.1], ["level 0", "True", "not a number"]),
        ([0.1, np.True_], ["level 1", "not a number"]),
        (np.array([True, False]), ["level 0", "not a number"]),
        ([0.1, None], ["level 1", "None", "not a number"]),
        ([0.1, [0.2, 0.3]], ["level 1", "not a number"]),
        ([0.1, 1 + 2j], ["level 1", "not a number"]),
        ([], ["empty"]),
        (np.array([]), ["empty"]),
        ("0.1, 0.2", ["text"]),
        (b"0.1", ["text"]),
    ],
)
def test_from_values_rejects_bad_input_with_a_useful_message(values, words):
    with pytest.raises(hdp.ProfileError) as info:
        EP.from_values(values)
    for w in words:
        assert w in str(info.value), (w, str(info.value))
    # every public entry point raises the same error, and it is a ValueError
    with pytest.raises(ValueError):
        hdp.adpm(values)
    with pytest.raises(hdp.ProfileError):
        hdp.lower_bound_H(values)


@pytest.mark.parametrize(
    ("levels", "counts", "words"),
    [
        ([0.1, 0.2], [10, -1], ["tier 1", "-1", "≥ 0"]),
        ([0.1, 0.2], np.array([10, -1]), ["tier 1", "-1"]),
        ([0.1, 0.2], [10, 2.5], ["tier 1", "2.5", "whole"]),
        ([0.1, 0.2], np.array([10.0, 2.5]), ["tier 1", "2.5", "whole"]),
        ([0.1, 0.2], [10, math.nan], ["tier 1", "NaN"]),
        ([0.1, 0.2], [10, INF], ["tier 1", "whole"]),
        ([0.1, 0.2], [True, 3], ["tier 0", "not a number"]),
        ([0.1, 0.2], [3, "many"], ["tier 1", "'many'", "not a number"]),
        ([0.1, 0.2], [3], ["2 tier levels", "1 count"]),
        ([0.1], [3, 4], ["1 tier levels", "2 counts"]),
        ([0.1], np.array([3, 4]), ["1 tier levels", "2 counts"]),
        ([0.1, 0.2], [0, 0], ["count 0"]),
        ([0.1], [MAX_TOTAL_USERS * 2], ["tier 0", "at most"]),
        ([0.1, 0.2], [MAX_TOTAL_USERS, MAX_TOTAL_USERS], ["in total", "at most"]),
        ([0.1, math.nan], [1, 1], ["tier level 1", "NaN"]),
        ([-0.1, 0.2], [1, 1], ["tier level 0", "-0.1", "≥ 0"]),
        (["x", 0.2], [1, 1], ["tier level 0", "not a number"]),
        ([], [], ["empty"]),
        ([0.1], "3", ["whole numbers"]),
    ],
)
def test_from_tiers_rejects_bad_input_with_a_useful_message(levels, counts, words):
    with pytest.raises(hdp.ProfileError) as info:
        EP.from_tiers(levels, counts)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_from_tiers_names_must_match():
    with pytest.raises(hdp.ProfileError, match="2 tiers but 1 names"):
        EP.from_tiers([0.1, 0.2], [1, 2], names=["only one"])


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([1.0], ["2 levels", "1 data"]),
        ([1.0, math.nan], ["data value 1"]),
        ([1.0, INF], ["data value 1"]),
    ],
)
def test_from_values_data_is_validated(data, words):
    with pytest.raises(hdp.ProfileError) as info:
        EP.from_values([0.1, 0.2], data=data)
    for w in words:
        assert w in str(info.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.5", 0.5),
        (" 2 ", 2.0),
        ("inf", INF),
        ("Infinity", INF),
        ("PUBLIC", INF),
        ("∞", INF),
        ("0", 0.0),
        ("1e-3", 1e-3),
    ],
)
def test_parse_eps_text_accepts(text, expected):
    assert parse_eps_text(text) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", ["empty"]),
        ("nan", ["NaN"]),
        ("-1", ["negative"]),
        ("-inf", ["negative"]),
        ("abc", ["'abc'", "not a number"]),
        ("1,5", ["not a number"]),
    ],
)
def test_parse_eps_text_rejects(text, words):
    with pytest.raises(hdp.ProfileError) as info:
        parse_eps_text(text, where="the level box")
    assert "the level box" in str(info.value)
    for w in words:
        assert w in str(info.value)


# --------------------------------------------------------------------------------------------
# valid input
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "values",
    [
        [0.1, 0.2],
        (0.1, INF),
        np.array([1, 2, 3]),
        np.array([[0.1, 0.2], [0.3, 0.4]]),
        0.7,
        np.float32(0.5),
        range(1, 5),
        (x / 10 for x in range(1, 4)),
        [np.int64(3), 0, INF],
    ],
)
def test_from_values_accepts_array_likes(values):
    prof = EP.from_values(values)
    assert prof.levels.dtype == np.float64
    assert not prof.is_tiered
    assert (prof.counts == 1).all() and prof.n == prof.k == prof.levels.size


def test_from_values_passes_a_profile_through():
    prof = EP.from_values([0.1, 0.2])
    assert EP.from_values(prof) is prof


def test_profile_is_a_private_read_only_copy():
    src = np.array([0.1, 0.2, 0.3])
    prof = EP.from_values(src)
    src[0] = 99.0
    assert prof.levels[0] == 0.1
    with pytest.raises(ValueError):
        prof.levels[0] = 5.0
    with pytest.raises(ValueError):
        prof.counts[0] = 5
    counts = np.array([5, 6])
    tiers = EP.from_tiers([0.1, 0.2], counts)
    counts[0] = 0
    assert tiers.counts.tolist() == [5, 6]


def test_huge_tiers_are_never_expanded():
    tracemalloc.start()
    try:
        prof = EP.from_tiers([0.1, 1.0, INF], [10**12, 3 * 10**12, 10**11])
        sol = hdp.adpm(prof)
        h = hdp.lower_bound_H(prof)
        summ = prof.summary()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000  # bytes: nothing proportional to the 4.1e12 users
    assert prof.n == 4_100_000_000_000 and prof.k == 3
    assert sol.r.shape == sol.weights.shape == (3,)
    assert math.isfinite(h) and summ["n"] == prof.n
    with pytest.raises(hdp.ProfileError, match="limited to"):
        prof.expand()
    with pytest.raises(hdp.ProfileError, match="limited to"):
        _ = sol.user_weights


def test_counts_accept_floats_that_are_whole_and_numpy_ints():
    a = EP.from_tiers([0.1, 0.2], [1e12, 3.0])
    b = EP.from_tiers(np.array([0.1, 0.2]), np.array([10**12, 3], dtype=np.uint64))
    assert a.counts.tolist() == b.counts.tolist() == [10**12, 3]
    assert a.counts.dtype == np.int64
    assert EP.from_tiers([0.5], 7).n == 7


def test_tiers_with_zero_counts_are_allowed_and_ignored():
    prof = EP.from_tiers([0.1, 5.0, 0.2], [10, 0, 20])
    lv, ct = prof.grouped()
    assert lv.tolist() == [0.1, 0.2] and ct.tolist() == [10, 20]
    sol = hdp.adpm(prof)
    assert sol.weights[1] == 0 and not sol.saturated[1]
    assert prof.n_distinct == 2


def test_expand_and_grouped():
    prof = EP.from_tiers([0.5, 0.1, 0.5, INF, 0.0], [2, 3, 1, 2, 1])
    assert prof.expand().tolist() == [0.5, 0.5, 0.1, 0.1, 0.1, 0.5, INF, INF, 0.0]
    lv, ct = prof.grouped()
    assert lv.tolist() == [0.0, 0.1, 0.5, INF] and ct.tolist() == [1, 3, 3, 2]
    assert prof.n == 9 and prof.k == 5
    assert prof.n_public == 2 and prof.n_excluded == 1 and prof.n_distinct == 4
    per_user = EP.from_values([0.5, 0.1, 0.5, INF])
    lv, ct = per_user.grouped()
    assert lv.tolist() == [0.1, 0.5, INF] and ct.tolist() == [1, 2, 1]
    assert per_user.expand().tolist() == [0.5, 0.1, 0.5, INF]


@given(
    st.lists(
        st.tuples(st.one_of(st.just(0.0), st.floats(1e-6, 10)), st.integers(0, 50)),
        min_size=1,
        max_size=8,
    ),
    st.floats(0, 1),
)
def test_quantile_matches_the_expanded_profile(tiers, q):
    levels = [t[0] for t in tiers]
    counts = [t[1] for t in tiers]
    if sum(counts) == 0:
        counts[0] = 1
    prof = EP.from_tiers(levels, counts)
    flat = np.sort(np.repeat(levels, counts))
    # lower value at ties: the element at position floor(q (n - 1)) of the sorted users
    assert prof.quantile(q) == flat[math.floor(q * (flat.size - 1))]


def test_summary():
    prof = EP.from_values([0.1, 0.2, 0.3, INF, 0.0])
    s = prof.summary()
    assert s["n"] == 5 and s["distinct"] == 5
    assert s["min"] == 0.0 and s["median"] == 0.2 and s["max"] == INF
    assert s["public_share"] == 0.2 and s["n_public"] == 1 and s["n_excluded"] == 1


def test_with_n_keeps_shares_and_total():
    prof = EP.from_tiers([0.1, 1.0, INF], [1, 1, 1])
    big = prof.with_n(10**12)
    assert big.n == 10**12
    assert big.counts.tolist() == [333_333_333_334, 333_333_333_333, 333_333_333_333]
    small = EP.from_values([0.1] * 6 + [0.5] * 3 + [INF]).with_n(7)
    assert small.n == 7 and small.counts.tolist() == [4, 2, 1]  # 4.2, 2.1, 0.7 -> 4, 2, 1
    with pytest.raises(hdp.ProfileError):
        prof.with_n(0)


def test_scaled():
    prof = EP.from_tiers([0.1, INF, 0.0], [3, 2, 1], names=["a", "b", "c"])
    s = prof.scaled(10)
    assert s.levels.tolist() == [1.0, INF, 0.0] and s.names == ("a", "b", "c")
    assert s.counts.tolist() == [3, 2, 1]
    for bad in (0, -1, INF, math.nan):
        with pytest.raises(hdp.ProfileError):
            prof.scaled(bad)
    # scaling every level by c > 0 scales tau* by c (the +8 does not scale: only in the limit)
    assert EP.from_values([0.2]).scaled(3).levels.tolist() == [pytest.approx(0.6)]


def test_keys_identify_content():
    a = EP.from_values([0.1, 0.2])
    assert a.key == EP.from_values(np.array([0.1, 0.2])).key
    assert a.key != EP.from_values([0.2, 0.1]).key
    assert a.key != EP.from_tiers([0.1, 0.2], [1, 1]).key  # tiers differ from per-user
    t = EP.from_tiers([0.1, 0.2], [1, 2])
    assert t.key != EP.from_tiers([0.1, 0.2], [2, 1]).key
    assert t.key != EP.from_tiers([0.1, 0.2], [1, 2], names=["x", "y"]).key
    assert a.key != EP.from_values([0.1, 0.2], data=[1.0, 2.0]).key
    assert isinstance(a.key, str) and len(a.key) >= 16


def test_expand_limit():
    prof = EP.from_tiers([0.1], [MAX_EXPAND + 1])
    with pytest.raises(hdp.ProfileError):
        prof.expand()
    assert EP.from_tiers([0.1, 0.2], [3, 4]).expand().size == 7


def test_format_eps():
    assert "public" in format_eps(INF)
    assert "excluded" in format_eps(0.0)
    assert format_eps(0.123456) == "0.123"


def test_repr_is_short():
    assert repr(EP.from_tiers([0.1], [10**12])) == "EpsilonProfile(tiers, n=1000000000000, k=1)"
