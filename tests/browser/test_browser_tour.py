"""The Tour page in a real browser at a projector's 1024 x 768 (issues 23 and 31): a teacher
walks the five steps with "Next" without leaving the page, each step drawn with its title,
its chart and no cut text (tests/test_browser_truncation's measure: text elements and chart
text), a control moved in step 1 carries on and lands in the link, and the sidebar leaves the
page its width (the summary's details are folded). Each step's controls and its chart (step
2: its cards and table) fit in one 768 px screen (bounding boxes: from the top of the first
slider to the bottom of the chart), every chart's tick labels are at least 14 px, and step 2
shows one row of cards without a delta (the Saturation page's Algorithm 1 walk-through is
measured the same way on a load of tests/browser/test_browser_truncation.py). A step with a
problem is saved as a screenshot (tmp_path)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from browser_support import new_page, runs_ended, wait_drawn
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
SCREEN = 768
MIN_TICK_PX = 14

FIT_JS = """(picture) => {
  // from the top of the first slider of the main column to the bottom of the last picture
  // (a chart, or a table for a step without one); bounding boxes, so scrolling cancels out
  const main = document.querySelector('[data-testid=stMain]');
  const sliders = [...main.querySelectorAll('[data-testid=stSlider]')];
  const pics = [...main.querySelectorAll(picture)];
  if (!sliders.length || !pics.length) return {ok: false, sliders: sliders.length,
                                               pictures: pics.length};
  const top = Math.min(...sliders.map(s => s.getBoundingClientRect().top));
  const bottom = Math.max(...pics.map(p => p.getBoundingClientRect().bottom));
  const ticks = [...main.querySelectorAll('[data-testid=stPlotlyChart] .xtick text, '
                                          + '[data-testid=stPlotlyChart] .ytick text')]
    .map(t => parseFloat(getComputedStyle(t).fontSize));
  return {ok: true, span: bottom - top, ticks};
}"""


def _fits(page, picture: str, where: str) -> list[str]:
    """What is wrong with the screen now: controls and picture over one screen, a tick label
    under MIN_TICK_PX (or no tick measured on a page with a chart)."""
    r = page.evaluate(FIT_JS, picture)
    assert r["ok"], f"{where}: nothing to measure {r}"
    bad = []
    if r["span"] > SCREEN:
        bad.append(f"{where}: controls to picture {r['span']:.0f} px > {SCREEN}")
    if "Plotly" in picture and not r["ticks"]:
        bad.append(f"{where}: no tick label measured")
    small = [t for t in r["ticks"] if t < MIN_TICK_PX]
    if small:
        bad.append(f"{where}: {len(small)} tick labels under {MIN_TICK_PX} px ({min(small)})")
    return bad


def _query(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_walk_the_five_steps_at_1024x768(server, browser, tmp_path):
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
        unfit: list[str] = []
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
            picture = "[data-testid=stPlotlyChart]" if CHARTS[i] else "[data-testid=stDataFrame]"
            unfit += _fits(page, picture, f"step {i}")
            if i == 2:  # one row of cards, none with a delta (an arrow reads as an increase)
                cards = main_el.get_by_test_id("stMetric")
                tops = {round(cards.nth(k).bounding_box()["y"]) for k in range(cards.count())}
                assert cards.count() == 4 and len(tops) == 1, (cards.count(), tops)
                assert not main_el.get_by_test_id("stMetricDelta").count()
            if cut or unfit:  # a picture of the step for the report
                page.screenshot(path=str(tmp_path / f"tour_step{i}.png"), full_page=True)
        assert main_el.get_by_role("button", name="Next ▶").is_disabled()
        assert not cut, f"{len(cut)} cut items (screenshots in {tmp_path}):\n" + report(cut)
        assert not unfit, unfit
    finally:
        ctx.close()
