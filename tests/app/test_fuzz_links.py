"""Fuzz every parser and entry point (issue 12): each input builds a valid object or raises the
library's HdpError family, never another exception; no NaN and no negative MSE comes out.
Example counts are bounded so the whole file runs in a few seconds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_app.views import links
from hdp_core.design_io import menu_from_json
from hdp_core.distributions import WORST_CASE
from hdp_core.errors import HdpError
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN, parse_int, parse_level, parse_number

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))

_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**500), 10**500),
    st.sampled_from([0, 0.0, -0.0, LEVEL_MIN, LEVEL_MAX, 5e-324, 1e308, 10**15, 10**15 + 1]),
)
_texts = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "inf",
            "public",
            "-inf",
            "nan",
            "1e400",
            "١",
            "０.５",
            "1e-6",
            "1e6",
            "0x10",
            " 0.5 ",
            "1" * 5000,
            "\ud800",
            "1,5",
            "+1",
            "-0",
        ]
    ),
)
_anything = st.one_of(
    _numbers,
    _texts,
    st.none(),
    st.booleans(),
    st.lists(_numbers, max_size=3),
    st.dictionaries(st.text(max_size=3), _numbers, max_size=2),
)


def _ok_or_hdp(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except HdpError:
        return None


def _check_profile(p):
    if p is None:
        return
    lv = p.levels
    assert not np.isnan(lv).any()
    fin = lv[np.isfinite(lv) & (lv > 0)]
    assert ((fin >= LEVEL_MIN) & (fin <= LEVEL_MAX)).all() and (lv >= 0).all()
    assert p.n >= 1 and len(p.key) == 32
    if (lv > 0).any() and p.n <= 10**15:
        for m in hdp.METHODS:
            est = hdp.get_method(m, p)
            for v in (est.exact_mse(WORST_CASE), est.worst_case_mse):
                assert math.isfinite(v) and v >= 0, (m, p.levels, p.counts)


@FUZZ
@given(_anything, st.booleans(), st.booleans())
def test_parse_level(x, zero, public):
    v = _ok_or_hdp(parse_level, x, "x", allow_zero=zero, allow_public=public)
    if v is not None:
        assert v == 0 or v == math.inf or LEVEL_MIN <= v <= LEVEL_MAX
        assert not (v == 0 and not zero) and not (v == math.inf and not public)


@FUZZ
@given(_anything)
def test_parse_int_and_number(x):
    i = _ok_or_hdp(parse_int, x, "n", 1, 10**15)
    assert i is None or (isinstance(i, int) and 1 <= i <= 10**15)
    f = _ok_or_hdp(parse_number, x, "x", -1e6, 1e6)
    assert f is None or (math.isfinite(f) and -1e6 <= f <= 1e6)


@FUZZ
@given(
    st.one_of(st.lists(_numbers, max_size=6), _anything),
    st.one_of(st.none(), st.lists(_numbers, max_size=6)),
)
def test_from_values(values, data):
    _check_profile(_ok_or_hdp(hdp.EpsilonProfile.from_values, values, data=data))


@FUZZ
@given(
    st.lists(_numbers, max_size=5),
    st.one_of(st.lists(_numbers, max_size=5), _anything),
    st.one_of(st.none(), st.lists(st.text(max_size=4), max_size=5), _anything),
)
def test_from_tiers(levels, counts, names):
    _check_profile(_ok_or_hdp(hdp.EpsilonProfile.from_tiers, levels, counts, names))


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=300),
        st.builds(
            lambda rows: ("eps,count,name\n" + "\n".join(rows)).encode("utf-8", "replace"),
            st.lists(st.text(max_size=25), max_size=6),
        ),
        st.builds(
            lambda xs: ("eps\n" + "\n".join(map(str, xs))).encode(), st.lists(_numbers, max_size=6)
        ),
    )
)
@pytest.mark.slow
def test_profile_from_csv(content):
    _check_profile(_ok_or_hdp(hdp.profile_from_csv, content))


_keys = st.one_of(st.sampled_from(sorted(links.QUERY_KEYS)), st.text(max_size=6))
_vals = st.one_of(
    _texts,
    st.lists(_texts, max_size=3),
    st.sampled_from(
        [
            "tiers",
            "values",
            "preset",
            "two_groups",
            "0.5~10",
            "inf~3~Open",
            "paper_high",
            "1e-7~5",
            "0.5~1e13",
        ]
    ),
)


@FUZZ
@given(st.one_of(st.dictionaries(_keys, _vals, max_size=5), _anything))
def test_links_decode(params):
    spec = _ok_or_hdp(links.decode, params)
    if spec is not None:
        _check_profile(_ok_or_hdp(links.profile_from_spec, spec))


@FUZZ
@given(
    st.one_of(
        st.text(max_size=200),
        st.builds(
            lambda n, e, s, name: (
                f'{{"n_users": {n}, "tiers": '
                f'[{{"name": "{name}", "eps": {e}, "share_percent": {s}}}]}}'
            ),
            st.sampled_from(["10", "1e15", "1" + "0" * 5000, "-1", "1.5", "null"]),
            st.sampled_from(["0.5", "1e-7", '"public"', "Infinity", "1e400", "0"]),
            st.sampled_from(["100", "99.9", "1e999"]),
            st.text(max_size=5),
        ),
    )
)
def test_menu_from_json(text):
    menu = _ok_or_hdp(menu_from_json, text)
    if menu is not None:
        _check_profile(menu.to_profile())
