"""The Tour page in a real browser at a projector's 1024 x 768 (issue 23): a teacher walks the
five steps with "Next" without leaving the page, each step drawn with its title, its chart
and no cut text (tests/test_browser_truncation's measure: text elements and chart text), a
control moved in step 1 carries on and lands in the link, and the sidebar leaves the page its
width (the summary's details are folded). Screenshots of every step are saved (tmp_path)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from browser_support import new_page, runs_ended, wait_drawn
from test_browser import browser, server  # noqa: F401  (fixtures)
from test_browser_truncation import _measure, report

pytestmark = pytest.mark.browser

TITLES = [
    "1. Who saturates",
    "2. Privacy for free",
    "3. The bound gap",
    "4. The simulation",
    "5. A tier menu",
]
CHARTS = {1: 1, 2: 0, 3: 1, 4: 1, 5: 1}


def _query(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_walk_the_five_steps_at_1024x768(server, browser, tmp_path):  # noqa: F811
    ctx, page = new_page(browser, viewport=(1024, 768))
    try:
        page.goto(server + "/tour")
        wait_drawn(page)
        # room on a projector: a narrow sidebar, the summary's two lines, details folded
        side = page.get_by_test_id("stSidebar").bounding_box()
        main = page.get_by_test_id("stMain").bounding_box()
        assert side["width"] <= 240 and main["width"] >= 1024 - 240, (side, main)
        sidebar = page.get_by_test_id("stSidebar")
        assert sidebar.get_by_text("1,000 users").is_visible()
        assert not sidebar.get_by_test_id("stMetric").first.is_visible()  # folded
        main_el = page.get_by_test_id("stMain")
        # step 1: move the loose group's eps to its smallest value: nobody is capped
        n = runs_ended(page)
        loose = main_el.get_by_role("slider").nth(3)
        loose.focus()
        loose.press("Home")
        wait_drawn(page, runs_before=n)
        assert main_el.get_by_text("Nobody is capped: every user gets the eps").is_visible()
        assert _query(page).get("tour_eps2") == "0.01"
        cut: list[dict] = []
        for i in range(1, 6):
            if i > 1:
                n = runs_ended(page)
                main_el.get_by_role("button", name="Next ▶").click()
                wait_drawn(page, min_charts=CHARTS[i], runs_before=n)
            heading = main_el.get_by_role("heading", name=TITLES[i - 1])
            assert heading.count() == 1, f"step {i}: no heading {TITLES[i - 1]!r}"
            assert _query(page).get("tour_step", "1") == str(i)
            assert _query(page).get("tour_eps2") == "0.01"  # carried through every step
            charts = main_el.get_by_test_id("stPlotlyChart")
            assert charts.count() == CHARTS[i]
            assert not page.get_by_test_id("stException").count()
            for item in _measure(page, CHARTS[i]):
                cut.append({"page": "Tour", "state": f"step {i}", "size": "1024x768", **item})
            page.set_viewport_size({"width": 1024, "height": 2600})
            page.screenshot(path=str(tmp_path / f"tour_step{i}.png"))
            page.set_viewport_size({"width": 1024, "height": 768})
        assert main_el.get_by_role("button", name="Next ▶").is_disabled()
        assert not cut, f"{len(cut)} cut items (screenshots in {tmp_path}):\n" + report(cut)
    finally:
        ctx.close()
