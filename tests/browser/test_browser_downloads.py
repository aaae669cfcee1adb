"""Issue 12 item 4 in a real browser: what the download buttons serve, read as Chromium saves
it (Playwright's download API; no Streamlit internals), for names that a spreadsheet would run
as formulas. A tiers link whose names start with = + - @: the profile CSV and the Saturation
table CSV escape them, and the profile CSV uploaded back gives the same profile; a menu link
with such names: the Tier designer's CSV escapes them and reads back as the same tiers, and its
JSON download is the JSON the page previews.

The shared server and browser (tests/browser/conftest.py); waits are
tests/browser_support.wait_drawn (script idle, charts drawn, no skeleton, stable).
"""

from __future__ import annotations

import io
import json
import pathlib
from urllib.parse import urlencode

import pandas as pd
import pytest
from browser_support import RequestLog, new_page, runs_ended, wait_drawn

import hdp_core as hdp
from hdp_app.views import links
from hdp_core import design_io
from hdp_core import menu as M

pytestmark = pytest.mark.browser

FORMULAS = ['=HYPERLINK("http://host/x","y")', "+1", "-x", "@SUM(A1)", "\tx", "'=q"]


def _cells(data: bytes, col: str | int) -> list[str]:
    df = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    return list(df[df.columns[col]] if isinstance(col, int) else df[col])


def _formula_cells(cells: list[str]) -> list[str]:
    return [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]


def _download(page, label: str, folder: pathlib.Path, reruns: bool) -> tuple[str, bytes]:
    """Click the download button labelled ``label``; returns the file name the browser was
    given and the bytes it saved. With ``reruns`` (a button without on_click="ignore") waits
    until the rerun its click starts has been drawn."""
    button = page.get_by_test_id("stDownloadButton").filter(has_text=label)
    assert button.count() == 1, f"{button.count()} download buttons labelled {label!r}"
    before = runs_ended(page)
    with page.expect_download() as info:
        button.get_by_role("button").click()
    dl = info.value
    assert dl.failure() is None, dl.failure()
    path = folder / dl.suggested_filename
    dl.save_as(path)
    if reruns:
        wait_drawn(page, min_charts=0, runs_before=before)
    return dl.suggested_filename, path.read_bytes()


def _open_page(page, title: str) -> None:
    before = runs_ended(page)
    nav = page.get_by_test_id("stSidebar").get_by_test_id("stPageLink-NavLink")
    nav.filter(has_text=title).click()
    wait_drawn(page, runs_before=before)


def test_profile_link_names_export_escaped_and_import_unchanged(server, browser, tmp_path):
    """A tiers link whose names are formulas: the downloaded profile CSV escapes them (and
    keeps eps exactly), the Saturation table's CSV escapes them, and uploading the profile
    CSV gives back the same profile: its export is byte for byte the first one."""
    spec = {
        "kind": "tiers",
        "levels": [0.05, 0.1, 0.3, 1.0, 3.0, float("inf")],
        "counts": [300, 200, 100, 50, 25, 10],
        "names": FORMULAS,
    }
    ctx, page = new_page(browser)
    log = RequestLog(page, server)
    try:
        page.goto(f"{server}/?{urlencode(links.encode(spec), doseq=True)}")
        wait_drawn(page)
        name, data = _download(page, "Download profile (CSV)", tmp_path, reruns=False)
        assert name == "privacy_profile.csv"
        names = _cells(data, "name")
        assert len(names) == 6 and not _formula_cells(names), names
        assert _cells(data, "eps")[0] == "0.050000000000000003"  # 0.05 to 17 digits
        back = hdp.profile_from_csv(data)
        assert back.names[:4] == tuple(FORMULAS[:4])  # (the link reader strips the tab of "\tx")
        assert back.names == links.profile_from_spec(spec).names

        _open_page(page, "Saturation")
        name, table = _download(page, "Download this table (CSV)", tmp_path, reruns=False)
        assert name == "free_privacy.csv"
        cells = _cells(table, 0)
        assert len(cells) == 6 and not _formula_cells(cells), cells

        _open_page(page, "Profile")
        before = runs_ended(page)
        page.get_by_test_id("stRadio").first.get_by_text("Upload", exact=True).click()
        wait_drawn(page, runs_before=before)
        before = runs_ended(page)
        page.locator("input[type='file']").set_input_files(str(tmp_path / "privacy_profile.csv"))
        wait_drawn(page, runs_before=before)
        page.get_by_test_id("stMain").get_by_text("Using privacy_profile.csv").wait_for()
        (tmp_path / "privacy_profile.csv").rename(tmp_path / "first_export.csv")
        name, again = _download(page, "Download profile (CSV)", tmp_path, reruns=False)
        assert name == "privacy_profile.csv"
        assert again == data  # the same names, levels and counts
        assert not page.get_by_test_id("stException").count()
        assert not log.foreign(), log.foreign()
    finally:
        ctx.close()


def test_menu_csv_escaped_and_reads_back_as_tiers(server, browser, tmp_path):
    """A ?menu= link whose tier names are formulas: the per-tier CSV escapes them and reads
    back as the same tiers; the JSON download is the page's JSON preview and reads back as
    the link's menu."""
    m = M.make_menu(
        FORMULAS[:4], [0.1, 0.5, 1.0, float("inf")], [40, 30, 20, 10], 1000, 0, 1, "", None
    )
    ctx, page = new_page(browser)
    log = RequestLog(page, server)
    try:
        # the link opens section 6 (Save, share and use the menu) with the downloads
        q = urlencode({"menu": links.encode_menu_link(m), "td_open_save": "true"})
        page.goto(f"{server}/tier_designer?{q}")
        wait_drawn(page, min_charts=0)
        name, data = _download(page, "Per-tier results (CSV)", tmp_path, reruns=True)
        assert name == "tier_menu.csv"
        assert not _formula_cells(_cells(data, "name")), _cells(data, "name")
        prof = hdp.profile_from_csv(data)
        assert prof.names == tuple(FORMULAS[:4])
        assert list(prof.counts) == [400, 300, 200, 100]
        name, text = _download(page, "Menu and results (JSON)", tmp_path, reruns=True)
        assert name == "tier_menu.json"
        assert design_io.menu_from_json(text) == m
        assert [t["name"] for t in json.loads(text)["tiers"]] == FORMULAS[:4]
        # the preview the page shows is the file it serves
        main = page.get_by_test_id("stMain")
        main.get_by_text("Preview the JSON").click()
        # the innermost expander with that title (section 6's own expander holds it too)
        code = main.get_by_test_id("stExpander").filter(has_text="Preview the JSON").last
        code = code.get_by_test_id("stCode")
        code.wait_for()
        assert json.loads(code.inner_text()) == json.loads(text)
        assert not page.get_by_test_id("stException").count()
        assert not log.foreign(), log.foreign()
    finally:
        ctx.close()
