"""At 1024 px wide with the sidebar open (a laptop), no page cuts a metric's value or label
("0.3…", "Best other method: Pro…"): numbers people act on must be readable. Checked in
Chromium on every page, from the rendered widths (an element whose text is wider than its box
is cut with an ellipsis).

Uses the server and browser fixtures of tests/test_browser.py and its waits.
"""

from __future__ import annotations

import pytest
from browser_support import app_pages, charts_on_arrival, new_page, wait_drawn
from test_browser import browser, server  # noqa: F401  (pytest fixtures)

pytestmark = pytest.mark.browser

CUT_JS = """() => [...document.querySelectorAll(
    '[data-testid=stMain] [data-testid=stMetricValue], ' +
    '[data-testid=stMain] [data-testid=stMetricLabel]'
  )].filter(e => {
    const d = e.querySelector('div') || e;
    return d.scrollWidth > d.clientWidth + 1;
  }).map(e => e.innerText)"""


def test_no_metric_is_cut_at_1024_px(server, browser, tmp_path):  # noqa: F811
    ctx, page = new_page(browser, viewport=(1024, 800))
    cut = {}
    try:
        for i, (script, title) in enumerate(app_pages()):
            path = "" if i == 0 else script.rsplit("/", 1)[-1].removesuffix(".py")
            page.goto(f"{server}/{path}")
            wait_drawn(page, min_charts=charts_on_arrival(title))
            found = page.evaluate(CUT_JS)
            if found:
                cut[title] = found
                page.screenshot(path=str(tmp_path / f"{path or 'root'}.png"))
    finally:
        ctx.close()
    assert not cut, f"metrics cut at 1024 px (screenshots in {tmp_path}): {cut}"
