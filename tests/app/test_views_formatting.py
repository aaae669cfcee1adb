"""hdp_app.views.formatting: the short level formats used in sentences and tables."""

from __future__ import annotations

import math

import pytest

from hdp_app.views.formatting import count_noun, short_eps, telling_eps


def test_short_eps():
    assert short_eps(0.123456) == "0.1235"
    assert short_eps(math.inf) == "public"
    assert short_eps(math.inf, "public (∞)") == "public (∞)"


@pytest.mark.parametrize(
    "x, others, want",
    [
        (0.10003, [0.1, 1.0], "0.10003"),  # the Tier designer's case: not "0.1"
        (0.100003, [0.1], "0.100003"),
        (0.2278, [0.1, 1.0, math.inf], "0.2278"),  # nothing near: 4 digits
        (0.1, [0.1, 1.0], "0.1"),  # equal to a tier: the same text is true
        (1.23456789, [1.2345678], "1.2345679"),
        (2.5, [], "2.5"),
        (math.inf, [1.0], "public"),
    ],
)
def test_telling_eps_reads_apart_from_nearby_levels(x, others, want):
    got = telling_eps(x, others)
    assert got == want
    assert float(got) == pytest.approx(x, rel=1e-3) if math.isfinite(x) else True
    for o in others:  # a different level never reads the same
        if o != x and math.isfinite(o):
            assert got != telling_eps(o)


def test_count_noun():
    assert count_noun(1, "user") == "1 user"
    assert count_noun(2, "tier") == "2 tiers"
    assert count_noun(1000, "user") == "1,000 users"
