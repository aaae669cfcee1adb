"""The sidebar summary on a projector (issue 23): two lines always shown (users, levels, the
range of eps; tau* and the users it caps), the details in a folded expander, all from the
same summary as before (AppTest); the browser test of the Tour page measures the widths."""

from __future__ import annotations

import math

import pytest
from helpers import ok, show

import hdp_core as hdp
from hdp_app.views import explain


def _lines(at) -> str:
    return next(m.value for m in at.sidebar.markdown if "users**" in m.value)


@pytest.mark.parametrize(
    ("prof", "first", "second"),
    [
        # 900 users at 0.1, 100 at 1: tau* = 0.1 + 8/(900 0.1) = 0.1889 (the two-group remark)
        (hdp.preset("two_groups"), "**1,000 users** · 2 levels · eps 0.1 to 1", "0.1889"),
        (hdp.EpsilonProfile.from_values([0.5] * 10), "**10 users** · 1 level · eps 0.5", None),
    ],
)
def test_two_lines_and_folded_details(app, prof, first, second):
    at = show(app, prof, "saturation")
    ok(at)
    text = _lines(at)
    assert text.startswith(first)
    if second:
        assert f"**τ\\* = {second}** · 100 capped" in text
    else:
        assert "**No τ\\*** · nobody is capped" in text
    (exp,) = [e for e in at.sidebar.expander if e.label == "Profile at a glance"]
    labels = [m.label for m in exp.metric]
    assert labels[:2] == ["Users n", "Distinct levels"] and "tau*" in labels
    tau = hdp.adpm(prof).saturation_level
    got = {m.label: m.value for m in exp.metric}
    assert got["tau*"] == (f"{tau:.4g}" if math.isfinite(tau) else "none")


def test_sidebar_lines_public_and_huge():
    s = {"n": 10**12, "distinct": 3, "min": 0.1, "max": math.inf, "tau": 0.2, "n_saturated": 10**11}
    a, b = explain.sidebar_lines(s)
    assert a == "**1T users** · 3 levels · eps 0.1 to public"
    assert b == "**τ\\* = 0.2** · 100B capped"
