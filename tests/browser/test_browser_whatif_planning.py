"""No cut text at 1024 x 768 (and 1280 x 800) in what issues 21 and 22 add to the Simulation
page (the what-if "values differ by privacy level", on through its link) and the Tier
designer (section 5 with 12 releases), with tests/test_browser_truncation.py's measure. Cut
text elsewhere on these pages is that test's business; here only the added elements count,
and the test first checks that they are on the page (so it cannot pass by measuring nothing).
"""

from __future__ import annotations

import pytest
import test_browser_truncation as trunc
from browser_support import new_page, wait_drawn

from hdp_app.views import whatif as wv

pytestmark = pytest.mark.browser

SIM_TEXTS = {"Values differ by privacy level", "Stricter than eps", "Their values move by"}
DESIGNER_TEXTS = {"Releases (k)", *wv.TARGET_LABELS.values()}
CHART_TITLE = "Error against the table's own mean"
STATES = [
    ("/simulation?sim_wi=true&sim_trials=500", 2, SIM_TEXTS),
    ("/simulation?sim_wi=true&sim_real=true&sim_trials=500", 2, SIM_TEXTS),
    ("/tier_designer?td_releases=12", 0, DESIGNER_TEXTS),
]


def mine(item: dict, texts: set[str]) -> bool:
    """An item of the added elements: one of their labels, a target card's value or delta,
    or any text of the what-if chart."""
    t = str(item["text"])
    return (
        t in texts
        or CHART_TITLE in str(item.get("where", ""))
        or "one release" in t
        or (texts is DESIGNER_TEXTS and t.startswith("± "))
    )


def test_no_cut_text_in_the_whatif_and_k_releases(server, browser):
    found = []
    ctx, page = new_page(browser, viewport=trunc.SIZES[0])
    try:
        for url, charts, texts in STATES:
            page.set_viewport_size({"width": trunc.SIZES[0][0], "height": trunc.SIZES[0][1]})
            page.goto(server + url)
            wait_drawn(page, min_charts=charts)
            main = page.get_by_test_id("stMain")
            for t in texts:
                main.get_by_text(t, exact=True).first.wait_for()
            if texts is SIM_TEXTS:
                main.get_by_text(CHART_TITLE).first.wait_for()
            for i, (w, h) in enumerate(trunc.SIZES):
                if i:
                    page.set_viewport_size({"width": w, "height": h})
                    trunc._settle(page)
                found += [
                    {"url": url, "size": f"{w}x{h}", **it}
                    for it in trunc._measure(page, charts)
                    if mine(it, texts)
                ]
    finally:
        ctx.close()
    assert not found, found
