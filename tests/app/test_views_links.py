"""Shareable links (hdp_app.views.links): spec <-> query string, strict validation, tier sizes.

Oracles: the spec a person wrote (round trips must give it back and rebuild the very same
profile, same key), the preset/generator functions called directly, hand-made query strings,
exact rational arithmetic for largest-remainder rounding.
"""

from __future__ import annotations

import math
from fractions import Fraction
from urllib.parse import parse_qs, urlencode

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_app.views import links
from hdp_core import presets
from hdp_core.errors import LinkError, NotShareable
from hdp_core.validate import parse_level

SPECS = [
    {"kind": "preset", "name": "paper_low", "seed": 3},
    {"kind": "preset", "name": "product_menu", "seed": 0},
    {"kind": "log_uniform", "n": 1000, "lo": 0.0183, "hi": 7.39, "seed": 0},
    {"kind": "two_groups", "n": 10**9, "frac": 0.9, "eps1": 0.1, "eps2": math.inf},
    {"kind": "mixture", "n": 500, "lo": 0.05, "hi": 1.0, "public": 0.25, "seed": 7},
    {
        "kind": "tiers",
        "levels": [0.1, 1.0, math.inf, 0.0],
        "counts": [600, 300, 100, 5],
        "names": ["Strict", "Bal anced~x", "Public & co", "Opt-out"],
    },
    {"kind": "tiers", "levels": [0.5, 2.0], "counts": [3, 4], "names": None},
    {"kind": "values", "levels": [0.1, 0.25, 1e-05, math.inf, 0.0]},
]


# round trips ----------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s["kind"])
def test_round_trip_gives_the_same_spec_and_profile(spec):
    qs = links.to_query_string(spec)
    back = links.from_query_string("?" + qs)
    assert back == links.normalize_spec(spec)
    assert links.profile_from_spec(back).key == links.profile_from_spec(spec).key
    assert set(parse_qs(qs)) <= links.QUERY_KEYS
    assert len(qs) <= links.MAX_QUERY_CHARS


def test_query_strings_are_readable():
    assert links.to_query_string(SPECS[0]) == "profile=preset&p_name=paper_low&p_seed=3"
    assert (
        links.to_query_string(
            {"kind": "tiers", "levels": [0.1, math.inf], "counts": [9, 1], "names": ["A", "B"]}
        )
        == "profile=tiers&p_tier=0.1~9~A&p_tier=inf~1~B"
    )
    assert links.to_query_string({"kind": "values", "levels": [0.5, 2]}) == (
        "profile=values&p_eps=0.5_2"
    )


def test_hand_written_link_is_read():
    spec = links.from_query_string("profile=log_uniform&p_n=200&p_lo=.5&p_hi=2E1&p_seed=12")
    assert spec == {"kind": "log_uniform", "n": 200, "lo": 0.5, "hi": 20.0, "seed": 12}
    # seed is optional; the paper's low-variance preset without a seed is draw 0
    assert links.from_query_string("profile=preset&p_name=paper_low") == {
        "kind": "preset",
        "name": "paper_low",
        "seed": 0,
    }


def test_other_parameters_are_ignored_and_no_profile_is_none():
    assert links.decode({"sim_trials": "500", "bnd_n": ["1", "2"]}) is None
    assert links.from_query_string("") is None
    spec = links.decode({"sim_trials": "x", "profile": "preset", "p_name": "two_groups"})
    assert spec == {"kind": "preset", "name": "two_groups", "seed": 0}


def test_seed_of_a_non_random_preset_is_dropped():
    s = links.normalize_spec({"kind": "preset", "name": "product_menu", "seed": 99})
    assert s["seed"] == 0
    assert links.normalize_spec({"kind": "preset", "name": "paper_high", "seed": 99})["seed"] == 99


levels_st = st.one_of(
    st.just(0.0),
    st.just(math.inf),
    st.floats(min_value=hdp.LEVEL_MIN, max_value=hdp.LEVEL_MAX),
)
name_st = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda s: s.strip() == s and s != "")


@given(
    st.lists(st.tuples(levels_st, st.integers(0, 10**12)), min_size=1, max_size=12),
    st.one_of(st.none(), st.lists(name_st, min_size=12, max_size=12)),
)
def test_tiers_round_trip_property(tiers, names):
    levels = [t[0] for t in tiers]
    counts = [t[1] for t in tiers]
    if sum(counts) == 0 or sum(counts) > links.TIER_MAX_USERS:
        with pytest.raises(LinkError):
            links.normalize_spec({"kind": "tiers", "levels": levels, "counts": counts})
        return
    spec = {
        "kind": "tiers",
        "levels": levels,
        "counts": counts,
        "names": None if names is None else names[: len(levels)],
    }
    try:
        qs = links.to_query_string(spec)
    except NotShareable:
        # refused only because it is too long: measured independently of the encoder
        items = [("profile", "tiers")]
        for j, (lv, ct) in enumerate(zip(levels, counts)):
            t = f"{'inf' if math.isinf(lv) else repr(lv)}~{ct}"
            items.append(("p_tier", t if names is None else f"{t}~{names[j]}"))
        assert len(urlencode(items)) > links.MAX_QUERY_CHARS - 10 * len(levels)
        return
    back = links.from_query_string(qs)
    assert back["levels"] == levels  # exact floats (repr round trip)
    assert back["counts"] == counts
    prof = links.profile_from_spec(back)
    assert prof.key == hdp.EpsilonProfile.from_tiers(levels, counts, spec["names"]).key


# malformed links: always a LinkError, never another exception ----------------------------------
BAD_LINKS = [
    "profile=preset&p_name=nope",  # unknown preset
    "profile=preset&p_name=paper_high&p_seed=-1",  # negative seed
    "profile=preset&p_name=paper_high&p_seed=1e3",  # seed not an integer literal
    "profile=preset&p_name=paper_high&p_seed=99999999999999999",  # seed too large
    "profile=wat",  # unknown kind
    "p_n=5",  # fields without a kind
    "profile=preset&profile=tiers",  # two kinds
    "profile=log_uniform&p_n=1000&p_lo=0.1&p_hi=1",  # missing field? no: seed optional -> ok
    "profile=log_uniform&p_n=abc&p_lo=0.1&p_hi=1",  # bad number
    "profile=log_uniform&p_n=0&p_lo=0.1&p_hi=1",  # n = 0
    "profile=log_uniform&p_n=" + "9" * 30 + "&p_lo=0.1&p_hi=1",  # absurd n
    "profile=log_uniform&p_n=1000000&p_lo=0.1&p_hi=1",  # too many per-user draws
    "profile=log_uniform&p_n=10&p_lo=nan&p_hi=1",
    "profile=log_uniform&p_n=10&p_lo=inf&p_hi=1",
    "profile=log_uniform&p_n=10&p_lo=1e400&p_hi=1e401",
    "profile=log_uniform&p_n=10&p_lo=-0.1&p_hi=1",
    "profile=log_uniform&p_n=10&p_lo=2&p_hi=1",  # lo > hi
    "profile=log_uniform&p_n=10&p_lo=0x10&p_hi=1",
    "profile=log_uniform&p_n=1_000&p_lo=0.1&p_hi=1",  # python-only syntax
    "profile=log_uniform&p_n=10&p_lo=0.1&p_hi=1&p_frac=0.5",  # field of another kind
    "profile=log_uniform&p_n=10&p_n=20&p_lo=0.1&p_hi=1",  # repeated field
    "profile=log_uniform&p_n=10&p_lo=0&p_hi=1",  # 0 is not a range end
    "profile=two_groups&p_n=10&p_frac=1.5&p_eps1=0.1&p_eps2=1",
    "profile=two_groups&p_n=10&p_frac=0.5&p_eps1=public&p_eps2=1",
    "profile=two_groups&p_n=10&p_frac=0.5&p_eps1=0.1",  # missing eps2
    "profile=mixture&p_n=10&p_lo=0.1&p_hi=1&p_public=-0.1",
    "profile=tiers",  # no tiers
    "profile=tiers&p_tier=0.1",  # no count
    "profile=tiers&p_tier=0.1~-3",
    "profile=tiers&p_tier=0.1~2.5",
    "profile=tiers&p_tier=abc~2",
    "profile=tiers&p_tier=0.1~0",  # nobody
    "profile=tiers&p_tier=0.1~1~A&p_tier=1~1",  # names on some tiers only
    "profile=tiers&p_tier=0.1~1~" + "x" * 41,  # name too long
    "profile=tiers&p_tier=0.1~1~%00evil",  # control character
    "profile=tiers&" + "&".join(["p_tier=1~1"] * 51),  # too many tiers
    "profile=values&p_eps=0.1_x",
    "profile=values&p_eps=" + "_".join(["1"] * 501),
    "profile=preset&p_name=<script>alert(1)</script>",
    "profile=preset&p_name=paper_high'; DROP TABLE users;--",
    "profile=../../etc/passwd",
    "profile=preset&p_name=" + "A" * 100_000,  # huge
    "profile=%ff%fe&p_name=%c0%af",  # invalid utf-8 escapes
]


@pytest.mark.parametrize("link", BAD_LINKS, ids=range(len(BAD_LINKS)))
def test_malformed_link_raises_share_error(link):
    if link == "profile=log_uniform&p_n=1000&p_lo=0.1&p_hi=1":
        assert links.from_query_string(link)["seed"] == 0  # the one valid entry above
        return
    with pytest.raises(LinkError) as e:
        links.from_query_string(link)
    assert 0 < len(str(e.value)) < 400  # short enough to show


@given(
    st.dictionaries(
        st.sampled_from(
            [
                "profile",
                "p_n",
                "p_lo",
                "p_hi",
                "p_seed",
                "p_name",
                "p_tier",
                "p_eps",
                "p_frac",
                "p_eps1",
                "p_eps2",
                "p_public",
                "p_x",
                "other",
            ]
        ),
        st.one_of(st.text(max_size=30), st.lists(st.text(max_size=12), max_size=4)),
    )
)
def test_decode_never_raises_anything_but_share_error(params):
    try:
        spec = links.decode(params)
    except LinkError:
        return
    if spec is not None:  # whatever it accepted must build
        links.profile_from_spec(spec)


@given(st.text(max_size=300))
def test_from_query_string_on_junk(text):
    try:
        links.from_query_string(text)
    except LinkError:
        pass


def test_encode_refuses_a_profile_too_long_for_a_link():
    n = 50
    spec = {
        "kind": "tiers",
        "levels": [0.001 * (j + 1) + 1e-9 for j in range(n)],
        "counts": [10**9] * n,
        "names": ["N" * 40] * n,
    }
    with pytest.raises(NotShareable, match="characters"):
        links.encode(spec)
    # the same tiers without names fit
    spec["names"] = None
    assert len(links.to_query_string(spec)) <= links.MAX_QUERY_CHARS


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "preset", "name": "paper_high", "seed": 0, "extra": 1},
        {"kind": "log_uniform", "n": True, "lo": 0.1, "hi": 1, "seed": 0},
        {"kind": "log_uniform", "n": 10.5, "lo": 0.1, "hi": 1, "seed": 0},
        {"kind": "two_groups", "n": 10, "frac": float("nan"), "eps1": 0.1, "eps2": 1},
        {"kind": "tiers", "levels": "0.1", "counts": [1]},
        {"kind": "tiers", "levels": [0.1, 1], "counts": [1]},
        {"kind": "values", "levels": [-1.0]},
        ["not", "a", "dict"],
        None,
    ],
)
def test_normalize_spec_rejects_wrong_types(spec):
    with pytest.raises(LinkError):
        links.normalize_spec(spec)


# building profiles ----------------------------------------------------------------------------
def test_profiles_match_the_generators_called_directly():
    assert links.profile_from_spec(SPECS[0]).key == presets.preset("paper_low", 3).key
    p = links.profile_from_spec(SPECS[2])
    assert p.n == 1000 and 0.0183 <= p.levels.min() and p.levels.max() <= 7.39
    assert p.key == presets.log_uniform(1000, 0.0183, 7.39, 0).key
    two = links.profile_from_spec(SPECS[3])
    assert two.is_tiered and list(two.counts) == [900_000_000, 100_000_000]
    assert math.isinf(two.levels[1])
    mix = links.profile_from_spec(SPECS[4])
    assert mix.n == 500 and mix.n_public == 125  # 25% of 500


def test_spec_from_profile_rebuilds_exactly_or_says_why_not():
    tiers = hdp.EpsilonProfile.from_tiers([0.1, 1, math.inf], [5, 6, 7], ["a", "b", "c"])
    assert links.profile_from_spec(links.spec_from_profile(tiers)).key == tiers.key
    few = hdp.EpsilonProfile.from_values([0.3, 0.1, math.inf, 0.3])
    assert links.profile_from_spec(links.spec_from_profile(few)).key == few.key
    with pytest.raises(NotShareable, match="data value"):
        links.spec_from_profile(hdp.EpsilonProfile.from_values([0.1, 0.2], data=[1.0, 2.0]))
    with pytest.raises(NotShareable, match="too many"):
        links.spec_from_profile(hdp.EpsilonProfile.from_values(np.full(1000, 0.5)))
    # a level outside the link's range cannot even make a profile: one range everywhere
    with pytest.raises(hdp.ProfileError, match="supported"):
        links.spec_from_profile(hdp.EpsilonProfile.from_values([1e9]))


def test_labels_name_the_numbers():
    assert "1,000 users" in links.spec_label(SPECS[2])
    assert "(seed 3)" in links.spec_label(SPECS[0])
    assert "900,000,000 users at 0.1" in links.spec_label(SPECS[3])
    assert "public" in links.spec_label(SPECS[3])
    assert "25% public" in links.spec_label(SPECS[4])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.5", 0.5),
        ("public", math.inf),
        ("INF", math.inf),
        ("∞", math.inf),
        ("0", 0.0),
        (" 2e-3 ", 0.002),
        (3, 3.0),
    ],
)
def test_parse_level_accepts(text, expected):
    assert parse_level(text) == expected


@pytest.mark.parametrize(
    "text", ["", "nan", "-1", "abc", "1e999", "1e7", "1e-9", True, None, float("nan")]
)
def test_parse_level_refuses(text):
    with pytest.raises(hdp.HdpError):
        parse_level(text)


# tiers from the editor's rows ---------------------------------------------------------------
def test_rows_with_counts():
    rows = [
        {"name": "Strict", "eps": "0.1", "count": 600.0},
        {"name": None, "eps": "public", "count": 100},
        {"name": "", "eps": None, "count": float("nan")},  # a row just added: skipped
    ]
    spec = links.tiers_spec_from_rows(rows)
    assert spec == {
        "kind": "tiers",
        "levels": [0.1, math.inf],
        "counts": [600, 100],
        "names": ["Strict", "Tier 2"],
    }


def test_rows_with_shares_of_n():
    rows = [
        {"eps": "0.1", "share": 50.0},
        {"eps": "1", "share": 30.0},
        {"eps": "inf", "share": 20.0},
    ]
    spec = links.tiers_spec_from_rows(rows, "share", total=1001)
    assert sum(spec["counts"]) == 1001
    assert spec["counts"] == [501, 300, 200]  # 500.5 / 300.3 / 200.2: the .5 gets the user
    assert spec["names"] is None


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([{"eps": "abc", "count": 1}], "row 1: eps"),
        (
            [{"eps": "0.1", "count": 1}, {"name": "B", "eps": "-2", "count": 1}],
            r"row 2 \(B\).*negative",
        ),
        ([{"eps": "0.1", "count": None}], "give a number of users"),
        ([{"eps": "0.1", "count": 2.5}], "whole number"),
        ([{"eps": "0.1", "count": -1}], "negative"),
        ([{"eps": "", "count": 5}], "row 1: eps is empty"),
        ([{"eps": "0.1", "count": 0}], "0 users"),
        ([], "empty"),
    ],
)
def test_bad_rows_name_the_row(rows, match):
    with pytest.raises(LinkError, match=match):
        links.tiers_spec_from_rows(rows)


# largest remainder --------------------------------------------------------------------------
def _hamilton(shares, n):
    """Independent oracle: exact rationals, sort by remainder (earlier tier wins ties)."""
    fr = [Fraction(s) for s in shares]
    total = sum(fr)
    quotas = [f / total * n for f in fr]
    base = [math.floor(q) for q in quotas]
    left = n - sum(base)
    order = sorted(range(len(fr)), key=lambda i: (-(quotas[i] - base[i]), i))
    for i in order[:left]:
        base[i] += 1
    return base


@given(
    st.lists(st.one_of(st.integers(0, 1000), st.floats(0, 100)), min_size=1, max_size=10).filter(
        lambda s: sum(s) > 0
    ),
    st.integers(1, 10**6),
)
def test_counts_from_shares_is_hamiltons_method(shares, n):
    got = links.counts_from_shares(shares, n)
    assert int(got.sum()) == n
    assert list(got) == _hamilton(shares, n)


@pytest.mark.parametrize(
    ("shares", "n"), [([], 5), ([1, -1], 5), ([0, 0], 5), ([1, float("nan")], 5), ([1], 0)]
)
def test_counts_from_shares_refuses(shares, n):
    with pytest.raises(LinkError):
        links.counts_from_shares(shares, n)
