"""The Tier designer's "k releases" with the per-person ledger (hdp_app.views.slack): what
saturated users keep after the equal split's k releases and how many more releases that
affords, checked against the saturation lemma computed here by hand, and on the page."""

from __future__ import annotations

import pytest
from helpers import open_page, open_sections

from hdp_app.views.slack import slack_caption, slack_plan
from hdp_core.intervals import release_error_95


def test_two_tiers_one_release_by_hand():
    # 1,500 users at 0.05 and 200 at 1.0: G(t) = 1500 x 0.05 x (t - 0.05) reaches 8 at tau*
    tau = (8 + 1500 * 0.05**2) / (1500 * 0.05)
    assert tau < 1.0
    plan = slack_plan([0.05, 1.0], [1500, 200], 0, 100, 1)
    assert plan.kept == pytest.approx(200 * (1 - tau) / (1500 * 0.05 + 200), rel=1e-12)
    # the lenient users alone, at what they kept: one tier never saturates (G(t) = 200 r
    # (t - r) reaches 8 only above r), so one more release spends the rest
    assert plan.extra == 1
    want = release_error_95([0.0, 1 - tau], [1500, 200], 0, 100)
    assert plan.extra_error == pytest.approx(want, rel=1e-9)
    assert "enough for 1 more" in slack_caption(plan)


def test_nobody_saturated_keeps_nothing():
    plan = slack_plan([0.01], [100], 0, 1, 3)  # G(t) = 100 x 0.01 x (t - 0.01): tau* ~ 8
    assert plan.kept == pytest.approx(0.0, abs=1e-12) and plan.extra == 0
    assert slack_caption(plan).endswith("no more releases.")


def test_more_releases_keep_less_and_both_targets_run():
    a = slack_plan([0.1, 0.5, 2.0], [300, 500, 200], 0, 100, 2)
    b = slack_plan([0.1, 0.5, 2.0], [300, 500, 200], 0, 100, 6)
    assert 0 < b.kept <= a.kept < 1
    t = slack_plan([0.1, 0.5, 2.0], [300, 500, 200], 0, 100, 2, "table")
    assert 0 <= t.kept < 1 and t.extra >= 0


def test_the_tier_designer_shows_the_slack(app):
    at = open_sections(open_page(app, "tier_designer"), "releases")
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert sum("per-person ledger" in c for c in captions) == 2
