"""The Algorithm 1 stepper in a real browser at a projector's 1024 px and at 1400 px: the
buttons keep whole labels, "Next" is disabled at the last step, a teacher can click back
through the steps, the step table follows the current step, and "Jump to the saturation
step" lands on it. Uses the shared server and browser (tests/browser/conftest.py)."""

from __future__ import annotations

import pytest
from browser_support import new_page, runs_ended, wait_drawn

pytestmark = pytest.mark.browser


def _label_whole(button) -> bool:
    return button.evaluate(
        "b => { const t = b.querySelector('p') || b;"
        " return t.scrollWidth <= t.clientWidth + 1 && !t.innerText.includes('…'); }"
    )


def _layout_holds(page, prev, nxt) -> None:
    """Both stepper buttons at least 120 px wide with whole labels, and the step table as wide
    as the page's content column (as the chart is), not a side column."""
    box_p, box_n = prev.bounding_box(), nxt.bounding_box()
    assert box_p["width"] >= 120 and box_n["width"] >= 120, (box_p, box_n)
    assert _label_whole(prev) and _label_whole(nxt)
    grid = page.get_by_test_id("stDataFrame").last
    chart = page.get_by_test_id("stPlotlyChart").last
    assert grid.bounding_box()["width"] >= 0.95 * chart.bounding_box()["width"]


def test_stepper_at_1024_then_1400(server, browser):
    """The whole walk at a projector's 1024 px; then the same page widened to 1400 px keeps the
    layout (the buttons, their labels, the table's width)."""
    width = 1024
    ctx, page = new_page(browser, viewport=(width, 2600))
    try:
        page.goto(server + "/saturation?sat_trace_step=50")
        wait_drawn(page)
        prev = page.get_by_role("button", name="◀ Previous")
        nxt = page.get_by_role("button", name="Next ▶")
        prev.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        assert nxt.is_disabled() and prev.is_enabled()
        box_p, box_n = prev.bounding_box(), nxt.bounding_box()
        assert box_p["width"] >= 120 and box_n["width"] >= 120, (box_p, box_n)
        assert _label_whole(prev) and _label_whole(nxt)
        info = page.get_by_test_id("stAlertContentInfo").filter(has_text="Step 50:")
        assert info.count() == 1
        n = runs_ended(page)
        prev.click()
        wait_drawn(page, runs_before=n)
        assert page.get_by_test_id("stAlertContentInfo").filter(has_text="Step 49:").count()
        assert nxt.is_enabled()
        n = runs_ended(page)
        nxt.click()
        wait_drawn(page, runs_before=n)
        assert page.get_by_test_id("stAlertContentInfo").filter(has_text="Step 50:").count()
        grid = page.get_by_test_id("stDataFrame").last
        grid.scroll_into_view_if_needed()
        chart = page.get_by_test_id("stPlotlyChart").last
        # the table spans the page's content column (as the chart does), not a side column
        assert grid.bounding_box()["width"] >= 0.95 * chart.bounding_box()["width"]
        # issue 23: one click to the saturation step (25 of the teaching example), its label
        # whole; the step names the sidebar's tau* in the same sentence
        jump = page.get_by_role("button", name="Jump to the saturation step")
        assert jump.is_enabled() and _label_whole(jump)
        n = runs_ended(page)
        jump.click()
        wait_drawn(page, runs_before=n)
        info = page.get_by_test_id("stAlertContentInfo").filter(has_text="Step 25:")
        assert info.count() == 1 and "not the sidebar's τ*" in info.inner_text()
        assert jump.is_disabled()
        weights = page.get_by_test_id("stMain").get_by_text("If the estimate used these 25 users")
        assert weights.count() == 1
        _layout_holds(page, prev, nxt)
        chart_width = page.get_by_test_id("stPlotlyChart").last.bounding_box()["width"]
        page.set_viewport_size({"width": 1400, "height": 2600})
        # the page is drawn again at the new width once its chart has grown
        for _ in range(100):
            if page.get_by_test_id("stPlotlyChart").last.bounding_box()["width"] > chart_width:
                break
            page.wait_for_timeout(100)
        page.wait_for_timeout(500)  # and has settled (the table follows the column)
        _layout_holds(page, prev, nxt)
    finally:
        ctx.close()
