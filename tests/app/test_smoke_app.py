"""The app starts and every page in the navigation renders without an exception, with the
sidebar summary of the current profile, and the profile and its link survive page switches."""

import pytest
from helpers import open_page

import hdp_core as hdp
from hdp_app.views import links

PAGES = ["profile", "saturation", "bounds", "simulation", "tier_designer"]
SIDEBAR_METRICS = {
    "Users n",
    "Distinct levels",
    "min eps",
    "median eps",
    "max eps",
    "Public users",
    "tau*",
    "Users capped",
}


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_without_exception(app, page):
    at = open_page(app, page)
    assert not at.exception, at.exception


@pytest.mark.parametrize("page", PAGES)
def test_sidebar_summary_and_link_on_every_page(app, page):
    """app.py runs around every page (also after a switch): summary and URL are there."""
    app.query_params["profile"] = "preset"
    app.query_params["p_name"] = "strict_loose"
    at = open_page(app, page)
    assert not at.exception, at.exception
    labels = {m.label for m in at.sidebar.get("metric")}
    assert SIDEBAR_METRICS <= labels, labels
    metrics = {m.label: m.value for m in at.sidebar.get("metric")}
    sol = hdp.adpm(hdp.preset("strict_loose"))
    assert metrics["Users n"] == "1,200"
    assert metrics["tau*"] == f"{sol.saturation_level:.4g}" == "0.18"  # the paper's example
    assert metrics["Users capped"] == f"{sol.n_saturated:,}"
    assert links.decode(at.query_params) == {"kind": "preset", "name": "strict_loose", "seed": 0}


def test_profile_kept_across_pages(app):
    at = app
    at.run()
    at.selectbox(key="prof_preset").set_value("two_groups").run()
    want = hdp.preset("two_groups").key
    for page in [*PAGES[1:], "profile"]:
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
        assert at.session_state["profile"].key == want, page
        assert at.query_params["p_name"] == "two_groups", page
