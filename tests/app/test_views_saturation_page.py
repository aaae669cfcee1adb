"""hdp_app.views.saturation, the Saturation page's cards and sentences (issue 20: moved out
of pages/saturation.py and tested here without Streamlit).

Oracle: the paper's two-group remark (the looser group saturates iff
eps2 >= eps1 + 8/(n f eps1)), counted users, and the levels of hand-built profiles.
"""

from __future__ import annotations

import math

import pytest

import hdp_core as hdp
from hdp_app.views import saturation as sat

INF = math.inf


def test_cards_when_users_are_capped():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 10.0, INF], [900, 60, 40])
    fp = sat.free_privacy(prof)
    cards = sat.free_privacy_metrics(fp)
    tau = 0.1 + 8 / (1000 * 0.9 * 0.1)  # both looser tiers saturate (two-group remark)
    assert fp.tau == pytest.approx(tau, rel=1e-9)
    assert cards[0].value == f"{tau:.4g}"
    assert cards[1].value == "100" and cards[1].delta == "10% of users"
    # the 100 capped users asked for 10 (60 of them) and public (40): median 10, smallest 10
    assert cards[2].value == "10" and cards[2].delta == "smallest 10"
    assert cards[3].value == f"{tau:.4g}" and cards[3].delta == f"{10 / tau:.3g}× stricter"
    assert all(c.delta_color == "off" for c in cards[1:])


def test_cards_when_nobody_is_capped_or_the_median_is_public():
    fp = sat.free_privacy(hdp.EpsilonProfile.from_values([0.5] * 10))
    cards = sat.free_privacy_metrics(fp)
    assert cards[0].value == "none" and [c.value for c in cards[2:]] == ["—", "—"]
    pub = sat.free_privacy(hdp.EpsilonProfile.from_tiers([0.1, INF], [900, 100]))
    c = sat.free_privacy_metrics(pub)
    assert c[2].value == "public (∞)" and c[3].delta == "∞ (public → tau*) stricter"


def test_phase_seed_and_the_current_point_sentence():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 10.0], [900, 100])
    point = sat.two_level_point(prof)
    assert sat.phase_seed(point, prof.n) == (1000, 0.9, 0.1)
    text = sat.phase_point_text(point)
    thr = 0.1 + 8 / (1000 * 0.9 * 0.1)
    assert f"boundary is {thr:.4g}" in text and "**saturated**" in text
    low = sat.two_level_point(hdp.EpsilonProfile.from_tiers([0.1, 0.15], [900, 100]))
    assert "**unsaturated**" in sat.phase_point_text(low)  # 0.15 < 0.1889
    pub = sat.two_level_point(hdp.EpsilonProfile.from_tiers([0.1, INF], [500, 500]))
    assert sat.phase_point_text(pub).endswith("(public users always saturate).")
    assert sat.phase_seed(None, 0) == (1, 0.5, 0.1)
    odd = sat.TwoLevelPoint(n=1000, frac=0.004, eps1=2e6, eps2=INF, threshold=INF, saturated=True)
    assert sat.phase_seed(odd, 1000) == (1000, 0.01, 1e6)  # kept within the controls' bounds


def test_clamp_step_and_level_text():
    assert [sat.clamp_step(s, 5) for s in (-3, 0, 1, 4, 5, 9)] == [1, 1, 1, 4, 5, 5]
    assert sat.level_text(INF) == "public (∞)" and sat.level_text(0.123456) == "0.1235"
