"""Tier designer helpers (views/design_link.py): the target in the link, a menu from a tiered
profile, the sentence on whose numbers the page shows; and the page using them."""

from __future__ import annotations

import math
import pathlib

import pytest
from streamlit.testing.v1 import AppTest

import hdp_core as hdp
from hdp_app.common import PROFILE, PROFILE_LABEL, PROFILE_SPEC
from hdp_app.views import design_link as dl
from hdp_core import design as D
from hdp_core import menu as M

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_goal_round_trip_and_bad_goals():
    for metric, t in (("rmse", 3.5), ("half_width", 0.125), ("half_width", 1e-9)):
        assert dl.decode_goal(dl.encode_goal(metric, t)) == (metric, t)
    for bad in ("", "rmse", "mse~1", "rmse~x", "rmse~-1", "rmse~inf", None, "rmse~nan"):
        with pytest.raises(hdp.LinkError):
            dl.decode_goal(bad)


def test_menu_from_profile_keeps_tiers_and_range():
    prof = hdp.EpsilonProfile.from_tiers(
        [0.1, 1.0, math.inf], [600, 300, 100], ["Strict", "Mid", "Open"]
    )
    like = M.make_menu(["a"], [1.0], [100], 10, low=0, high=500, unit="USD", data_sd=40)
    m = dl.menu_from_profile(prof, like)
    assert m.names == ("Strict", "Mid", "Open") and m.n_users == 1000
    assert list(m.levels) == [0.1, 1.0, math.inf]
    assert list(m.counts) == [600, 300, 100]
    assert (m.low, m.high, m.unit, m.data_sd) == (0, 500, "USD", 40)
    # the menu's ADPM is the profile's ADPM, tuned to the menu's spread (sd 40 on a width of 500)
    assert D.evaluate_menu(m).tau_star == pytest.approx(
        hdp.adpm(prof, data_sd=40 / 500).saturation_level
    )
    with pytest.raises(hdp.MenuError, match="one row per user"):
        dl.menu_from_profile(hdp.EpsilonProfile.from_values([0.1, 0.2]), like)
    with pytest.raises(hdp.MenuError, match="eps = 0"):
        dl.menu_from_profile(hdp.EpsilonProfile.from_tiers([0.0, 1.0], [1, 2]), like)


def test_whose_numbers_singular_and_plain():
    m = M.make_menu(["a"], [1.0], [100], 1)
    s = dl.whose_numbers(m, math.inf, "My *profile*", 0.3352)
    assert "(1 tier, 1 user; τ* = none)" in s and "τ* = 0.3352" in s and "\\*profile\\*" in s


def _app():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    return at


@pytest.mark.slow
def test_page_restores_target_from_link_and_loads_profile_tiers():
    at = _app()
    at.query_params["goal"] = "rmse~7.5"
    at.run()
    at.switch_page("pages/tier_designer.py").run()
    assert not at.exception
    assert at.session_state["td_target"] == 7.5 and at.session_state["td_metric"] == "rmse"
    assert any("not for the current profile in the sidebar" in c.value for c in at.caption)
    prof = hdp.EpsilonProfile.from_tiers([0.2, 2.0], [70, 30], ["Low", "High"])
    at.session_state[PROFILE] = prof
    at.session_state[PROFILE_SPEC] = None
    at.session_state[PROFILE_LABEL] = "test tiers"
    at.run()
    at.button(key="td_load_profile").click().run()
    assert not at.exception
    menu = at.session_state["td_menu"]
    assert menu.names == ("Low", "High") and list(menu.counts) == [70, 30]
    assert any("Loaded the current profile's tiers" in i.value for i in at.info)
