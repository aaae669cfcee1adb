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


def test_column_groups_fit_the_width_and_repeat_the_label_column():
    """A wide table is split into consecutive groups of columns, each within the width by the
    estimate column_width_px (independently: characters times a character's width, plus the
    padding), each starting with the label column; every column appears exactly once more;
    a narrow table stays whole."""
    import pandas as pd

    from hdp_app.views.formatting import TABLE_WIDTH_PX, column_groups, column_width_px

    df = pd.DataFrame(
        {
            "Method": ["FME (reconstructed)", "ADPM"],
            **{f"column number {i}": [1.23456e-4, 2.5e-3] for i in range(9)},
        }
    )
    fmts = {"column": "%.3e"}
    groups = column_groups(df, fmts)
    assert len(groups) > 1
    assert all(g[0] == "Method" for g in groups)
    assert [c for g in groups for c in g[1:]] == list(df.columns[1:])
    for g in groups:
        assert (
            sum(column_width_px(df, c, fmts.get("column") if c != "Method" else None) for c in g)
            <= TABLE_WIDTH_PX
        )
    # the estimate: the longest of header and cells ("column number 0" is 15 characters,
    # "1.235e-04" 9), times 7 px, plus 20 px
    assert column_width_px(df, "column number 0", "%.3e") == 15 * 7.0 + 20
    assert column_width_px(df, "Method") == len("FME (reconstructed)") * 7.0 + 20
    assert column_groups(df[["Method", "column number 0"]], fmts) == [["Method", "column number 0"]]
