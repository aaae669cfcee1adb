"""The private release end to end in Chromium, as a product manager does it (issue 15): from
the Tier designer's menu, follow "Release a private mean with this menu on your own table",
upload a CSV whose privacy column holds the menu's tier names, check the preview, answer which
mean to release (issue 21: no answer preselected, the button disabled until then), set the
spend, release, and read the result and the receipt; then the server's privacy ledger
(issue 22): what remains is shown, and after a reload (a new session) the same table, its
budget spent, is refused. No raw value of the table ever appears in the page's text, its HTML
or its URL, and no request leaves the machine.

Uses the shared server and browser (tests/browser/conftest.py) and its waits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from browser_support import RequestLog, new_page, runs_ended, wait_drawn

pytestmark = pytest.mark.browser

SECRET = "123.456789"  # one raw value of the table: it must never be shown


def _table(path) -> None:
    rng = np.random.default_rng(4)
    n = 2000
    tier = rng.choice(["Strict", "balanced", " OPEN", "0"], n, p=[0.4, 0.4, 0.15, 0.05])
    value = np.round(rng.uniform(0, 500, n), 2)
    df = pd.DataFrame({"row_no": np.arange(n), "value": value, "tier": tier})
    df.loc[7, "value"] = float(SECRET)
    df.to_csv(path, index=False)


def _click(page, locator, min_charts: int = 0) -> None:
    before = runs_ended(page)
    locator.click()
    wait_drawn(page, min_charts=min_charts, runs_before=before)


def test_from_the_tier_designer_to_a_released_mean(server, browser, tmp_path):
    csv = tmp_path / "users.csv"
    _table(csv)
    ctx, page = new_page(browser)
    log = RequestLog(page, server)
    try:
        page.goto(server + "/tier_designer")
        wait_drawn(page, min_charts=0)
        # a user opens section 6 (closed on a first visit) to find the link
        before = runs_ended(page)
        page.get_by_text("6. Save, share and use the menu").click()
        wait_drawn(page, min_charts=0, runs_before=before)
        assert "td_open_save=true" in page.url  # the address bar remembers the open section
        link = page.get_by_role("link", name="Release a private mean with this menu")
        _click(page, link)
        assert page.url.startswith(server + "/release?")
        assert "menu=" in page.url
        release_url = page.url
        main = page.get_by_test_id("stMain")
        main.get_by_text("Your tier menu").wait_for()
        assert "From the link: Strict: eps 0.1" in main.inner_text()

        before = runs_ended(page)
        page.locator("input[type='file']").set_input_files(str(csv))
        wait_drawn(page, min_charts=0, runs_before=before)
        main.get_by_text("Before releasing: what each level gets").wait_for()
        text = main.inner_text()
        # columns guessed by name (not the first column, row_no: not named like a person id,
        # so one budget for the dataset), range from the menu
        assert "Loaded users.csv: 2,000 rows" in text
        assert page.get_by_test_id("stSelectbox").nth(1).inner_text().count("tier") >= 1
        assert (
            page.get_by_role("spinbutton", name="Highest possible value").input_value() == "500.00"
        )
        assert "95% error: ±" in text and "tau* (saturation level)" in text

        assert "Budget remaining" in text and "100%" in text
        assert "Could people who chose stricter privacy have different values" in text
        go = page.get_by_role("button", name="Release the private mean")
        assert go.is_disabled()  # no answer preselected: nothing to release yet
        radios = page.locator(".st-key-rel_target").get_by_role("radio")  # not the segments'
        assert radios.count() == 2 and not any(
            radios.nth(i).is_checked() for i in range(radios.count())
        )
        _set_spend(page, 60)
        _click(page, page.get_by_test_id("stRadioGroup").get_by_text("Yes, or maybe"))
        go = page.get_by_role("button", name="Release the private mean")
        assert not go.is_disabled()
        _click(page, go)
        main.get_by_text("Released. Safe to share").wait_for()
        text = main.inner_text()
        assert "Private mean" in text and "Privacy receipt" in text
        assert "estimates this table's own mean (TableMean), spending 60%" in text
        assert "value column value, privacy-level column tier, range 0 to 500 USD" in text
        assert "Releases in this session" not in text and "release again" not in text
        assert not page.get_by_test_id("stException").count()
        # the raw data: never in the text, the HTML (tables are drawn on canvas, so check
        # their accessible data too) or the URL
        assert SECRET not in text and SECRET not in page.content() and SECRET not in page.url
        # the ledger: 40% remains, a 60% spend is refused until lowered
        assert "40% of every user's level remains" in text
        assert page.get_by_role("button", name="Release the private mean").is_disabled()
        # the downloads and the snippet are there
        for label in ("Result and receipt (JSON)", "Result (CSV)", "Receipt (CSV)"):
            assert page.get_by_role("button", name=label).count() == 1, label
        assert "Reproduce in Python" in main.inner_text()
        assert not log.foreign(), log.foreign()
    finally:
        ctx.close()
    # a reload: a new session on the same server (its ledger), the same table again, under
    # another file name, with 40% spent there: then the rest, then a refusal
    ctx, page = new_page(browser)
    try:
        page.goto(release_url)  # the same menu link
        wait_drawn(page, min_charts=0)
        main = page.get_by_test_id("stMain")
        renamed = tmp_path / "renamed.csv"
        renamed.write_bytes(csv.read_bytes())
        before = runs_ended(page)
        page.locator("input[type='file']").set_input_files(str(renamed))
        wait_drawn(page, min_charts=0, runs_before=before)
        main.get_by_text("Budget remaining").wait_for()
        text = main.inner_text()
        # no name: the budget is the levels' (no history of another session is shown)
        assert "remains for later releases of data with these privacy levels" in text
        assert "Only 40% of every user's level remains" in text
        _set_spend(page, 40)
        _click(page, page.get_by_test_id("stRadioGroup").get_by_text("No", exact=True))
        _click(page, page.get_by_role("button", name="Release the private mean"))
        main.get_by_text("Released. Safe to share").wait_for()
        text = main.inner_text()
        assert "estimates the population mean (ADPM), spending 40%" in text
        assert "privacy budget is spent" in text
        assert page.get_by_role("button", name="Release the private mean").is_disabled()
        assert not page.get_by_test_id("stException").count()
    finally:
        ctx.close()


def _set_spend(page, percent: int) -> None:
    """Move the spend slider to ``percent`` with the keyboard (from 100%, one step a press)."""
    slider = page.get_by_test_id("stSlider").filter(has_text="Spend").get_by_role("slider")
    now = int(slider.input_value() or -1)
    assert now > 0, slider.evaluate("e => e.outerHTML")
    before = runs_ended(page)
    slider.focus()
    key = "ArrowLeft" if percent < now else "ArrowRight"
    for _ in range(abs(now - percent)):
        page.keyboard.press(key)
    wait_drawn(page, min_charts=0, runs_before=before)
    assert int(slider.input_value() or -1) == percent
