"""The Tier designer's texts and number fields moved out of the page (issue 27), and the
Profile page's limits: every help key a page uses exists, every field's bounds are the
menu's own limits. Milliseconds."""

from __future__ import annotations

import pathlib
import re

from hdp_app.views import design_controls as T
from hdp_app.views import profile_controls as pc
from hdp_app.views import whatif as wv
from hdp_app.views.limits import query_value_problem
from hdp_core import menu as M
from hdp_core.profile import MAX_TOTAL_USERS

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_help_key_the_tier_designer_uses_exists_and_every_help_is_used():
    text = (ROOT / "pages/tier_designer.py").read_text()
    text += (ROOT / "hdp_app/views/design_controls.py").read_text()
    used = set(re.findall(r'HELP\["([^"]+)"\]', text)) | set(T.TIER_PICKS)
    assert used <= set(T.HELP), used - set(T.HELP)
    assert set(T.HELP) <= used, set(T.HELP) - used
    assert all(len(h) > 20 and h.strip() == h for h in T.HELP.values())


def test_fields_take_the_menus_limits():
    assert T.USERS.limit is not None and T.USERS.limit.hi == M.MAX_USERS
    assert query_value_problem("0", T.USERS.limit) and not query_value_problem("1", T.USERS.limit)
    assert T.RELEASES.limit == wv.RELEASES and T.RELEASES.key == "td_releases"
    share = T.share_field(2)
    assert share.key == "td_share_2" and "tier 3" in share.label
    assert share.limit is not None and (share.limit.lo, share.limit.hi) == (0.0, 100.0)
    assert T.target_field("USD").label == "Target error (USD)"
    assert T.target_field("").label == "Target error (data units)"
    assert T.import_label(64 * 1024) == "Import a menu (JSON or CSV, at most 64 KB)"
    assert "tier 2" in T.remove_help(1) and "A" in T.share_slider_help("A", "B")


def test_profile_limits():
    assert (pc.SHARE.lo, pc.SHARE.hi) == (0.0, 1.0) and pc.USERS_MIN == 1.0
    assert pc.TIER_TOTAL.integer and pc.TIER_TOTAL.hi <= MAX_TOTAL_USERS


def test_labels_and_the_share_slider_top():
    assert T.name_label(0) == "Tier 1 name" and T.eps_label(2) == "eps of tier 3"
    assert T.share_slider_max(37.5) == 37.5 and T.share_slider_max(0.0) == 1.0


def test_the_tier_slider_edits_a_row_that_exists():
    assert pc.pick_index(None, 3) == 0 and pc.pick_index(2, 3) == 2
    assert pc.pick_index(5, 3) == 2  # the chosen row was deleted: the last one


def test_the_tour_steps_stay_within_the_tour():
    from hdp_app.views import tour as teach

    last = len(teach.TOUR)
    assert teach.next_step(None, 1) == 2 and teach.next_step(1, -1) == 1
    assert teach.next_step(last, 1) == last and teach.next_step(3, -1) == 2
