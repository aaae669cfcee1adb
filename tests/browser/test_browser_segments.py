"""A mean per segment end to end in Chromium (issue 28), at a projector's 1024 x 768: upload a
table, answer which mean, choose "A mean per segment" and a segment column, release, and read
the table of segments, the chart of every segment's estimate with its 95% interval, the
receipt per segment and level, the downloads and the code. No raw value or id of the table
appears in the page's text, its HTML or its URL; no request leaves the machine; the release
is charged once (the budget left is shown, and a second release per segment is refused).

Uses the shared server and browser (tests/browser/conftest.py) and its waits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from browser_support import RequestLog, new_page, runs_ended, wait_drawn

pytestmark = pytest.mark.browser

SECRET = "87.654321"  # one raw value of the table: it must never be shown
REGIONS = ("north", "south", "east", "west")


def _table(path) -> None:
    rng = np.random.default_rng(9)
    n = 1200
    df = pd.DataFrame(
        {
            "wage": np.round(rng.uniform(0, 200, n), 2),
            "eps": rng.choice([0.5, 2.0, "public"], n),
            "region": rng.choice(REGIONS, n),
        }
    )
    df.loc[3, "wage"] = float(SECRET)
    df.to_csv(path, index=False)


def _after(page, action) -> None:
    """Do ``action`` and wait until the app's run it starts has been drawn."""
    before = runs_ended(page)
    action()
    wait_drawn(page, min_charts=0, runs_before=before)


def _pick(page, key: str, option: str) -> None:
    """Choose ``option`` in the select box or multiselect with widget key ``key``."""
    box = page.locator(f".st-key-{key}").get_by_role("combobox")
    box.click()
    box.fill(option)  # the list shows the matching option only
    _after(page, lambda: page.get_by_role("option", name=option, exact=True).click())


def test_a_mean_per_segment_from_the_page(server, browser, tmp_path):
    csv = tmp_path / "wages.csv"
    _table(csv)
    ctx, page = new_page(browser, viewport=(1024, 768))
    log = RequestLog(page, server)
    try:
        page.goto(server + "/release")
        wait_drawn(page, min_charts=0)
        main = page.get_by_test_id("stMain")
        _after(page, lambda: page.locator("input[type='file']").set_input_files(str(csv)))
        main.get_by_text("Loaded wages.csv").wait_for()
        # "wage" is not named like a value column: the user picks it (eps is guessed)
        _pick(page, "rel_value", "wage")
        for name, value in (("Lowest possible value", "0"), ("Highest possible value", "200")):
            box = page.get_by_role("spinbutton", name=name)
            box.fill(value)
            _after(page, lambda: page.keyboard.press("Enter"))
        main.get_by_text("Before releasing: what each level gets").wait_for()
        radios = page.locator(".st-key-rel_target")
        _after(page, lambda: radios.get_by_text("No", exact=True).click())
        mode = page.locator(".st-key-rel_seg_mode")
        _after(page, lambda: mode.get_by_text("A mean per segment").click())
        go = page.get_by_role("button", name="Release a private mean per segment")
        assert go.is_disabled()  # no segment column chosen yet
        _pick(page, "rel_seg_by", "region")
        page.keyboard.press("Escape")  # the multiselect's list stays open over the button
        go = page.get_by_role("button", name="Release a private mean per segment")
        assert not go.is_disabled()
        _after(page, go.click)
        main.get_by_text("Released a private mean per segment").wait_for()
        wait_drawn(page, min_charts=1)
        text = main.inner_text()
        assert not page.get_by_test_id("stException").count()
        # the table: one row per region, drawn on canvas, so read its accessible grid
        grids = page.get_by_test_id("stDataFrame")
        html = [grids.nth(i).inner_html() for i in range(grids.count())]
        assert any(all(r in h for r in REGIONS) for h in html), "no table of the segments"
        # the chart of every segment's estimate and its interval, within the screen's width
        chart = main.locator(".js-plotly-plot")
        assert chart.count() == 1
        box = chart.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1024
        # the receipt, the downloads and the code
        assert "Privacy receipt per segment and level" in text
        for label in ("Segments (CSV)", "Result and receipts (JSON)", "Receipt (CSV)"):
            assert page.get_by_role("button", name=label).count() == 1, label
        main.get_by_text("Reproduce in Python").click()  # an expander: no run
        code = main.get_by_test_id("stCode").last.inner_text()
        assert "release_means(" in code and "by=['region']" in code
        # the raw data: never in the text, the HTML or the URL
        assert SECRET not in main.inner_text()
        assert SECRET not in page.content() and SECRET not in page.url
        # charged once, the whole budget: a second release per segment is refused
        assert page.get_by_role("button", name="Release a private mean per segment").is_disabled()
        assert not log.foreign(), log.foreign()
    finally:
        ctx.close()
