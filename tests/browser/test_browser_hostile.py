"""Issue 12 in a real browser against a served app: sessions at the same time, and a link too
long for the server (what the visitor sees there is the browser's page, not the app's).

Uses the shared server and browser (tests/browser/conftest.py) and the waits of
tests/browser_support.py (drawn = script idle, charts present, no skeleton, stable).
"""

from __future__ import annotations

import http.client
import math
from urllib.parse import urlencode, urlparse

import pytest
from browser_support import new_page, runs_ended, wait_drawn

import hdp_core as hdp
from hdp_app.common import compact_count
from hdp_app.views import links

pytestmark = pytest.mark.browser


def _expected(prof) -> tuple[str, str]:
    sol = hdp.adpm(prof)
    tau = sol.saturation_level
    return compact_count(prof.n), ("none" if math.isinf(tau) else f"{tau:.4g}")


def _sidebar(page) -> tuple[str, str]:
    side = page.get_by_test_id("stSidebar")
    vals = {}
    for m in side.get_by_test_id("stMetric").all():  # text content: in a folded expander
        label = (m.get_by_test_id("stMetricLabel").text_content() or "").strip()
        vals[label] = (m.get_by_test_id("stMetricValue").text_content() or "").strip()
    return vals["Users n"], vals["tau*"]


def test_sessions_at_the_same_time_each_see_their_own_profile(server, browser, tmp_path):
    """Five visitors at the same moment (their script runs overlap on the server, sharing one
    st.cache_data): one uploads a file while the four others open tier or preset links, then
    all five reload at once. Each sidebar shows its own profile's users and tau*, both
    times."""
    specs = [
        {
            "kind": "tiers",
            "levels": [0.1, 1.0, math.inf],
            "counts": [700, 250, 50],
            "names": ["A", "B", "C"],
        },
        {"kind": "tiers", "levels": [0.2, 2.0], "counts": [10**9, 10**6], "names": ["X", "Y"]},
        {"kind": "preset", "name": "paper_high", "seed": 3},
        {"kind": "preset", "name": "paper_high", "seed": 11},
    ]
    expected = [_expected(links.profile_from_spec(s)) for s in specs]
    urls = [f"{server}/?{urlencode(links.encode(s), doseq=True)}" for s in specs]
    upload = tmp_path / "mine.csv"
    upload.write_text("eps\n" + "\n".join(f"{0.05 + 0.01 * i:.2f}" for i in range(37)) + "\n")
    expected_up = _expected(hdp.profile_from_csv(upload.read_bytes()))
    made = [new_page(browser) for _ in range(len(urls) + 1)]
    contexts, pages = [m[0] for m in made], [m[1] for m in made]
    try:
        up = pages[-1]
        up.goto(server + "/")
        wait_drawn(up)
        n = runs_ended(up)
        up.get_by_test_id("stRadio").first.get_by_text("Upload", exact=True).click()
        wait_drawn(up, min_charts=0, runs_before=n)
        for pg, url in zip(pages[:-1], urls):  # the others are loading while the file goes up
            pg.goto(url, wait_until="commit")
        n = runs_ended(up)
        up.locator("input[type='file']").set_input_files(str(upload))
        wait_drawn(up, runs_before=n)
        for rnd in range(2):
            for pg in pages:
                wait_drawn(pg)
                # attached, not visible: the summary's metrics sit in a folded expander
                pg.get_by_test_id("stSidebar").get_by_test_id("stMetric").first.wait_for(
                    state="attached"
                )
            shown = [_sidebar(pg) for pg in pages]
            assert shown == [*expected, expected_up], f"round {rnd}"
            assert not any(pg.get_by_test_id("stException").count() for pg in pages)
            if rnd == 0:  # everyone at once again (the uploader keeps its file's profile)
                for pg in pages:
                    pg.reload(wait_until="commit")
    finally:
        for c in contexts:
            c.close()


def test_link_too_long_for_the_server(server, browser):
    """What Streamlit does with a huge query string: the app's own limit (8,000 characters)
    answers a long link with a note; the web server (tornado) resets the connection for a
    request line of about 128 KB and more, before the app runs, so a 200 KB link can only show
    the browser's error page. Documented here rather than worked around."""
    long_link = f"{server}/?profile=" + "a" * 20_000
    ctx, pg = new_page(browser)
    try:
        pg.goto(long_link)
        wait_drawn(pg)
        alert = pg.get_by_test_id("stAlert").filter(has_text="could not be used")
        alert.wait_for(timeout=30_000)
        assert "is longer than" in alert.inner_text()
        assert not pg.get_by_test_id("stException").count()
    finally:
        ctx.close()
    host = urlparse(server)
    conn = http.client.HTTPConnection(host.hostname, host.port, timeout=10)
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        conn.request("GET", "/?profile=" + "a" * 200_000)
        conn.getresponse().read()


def test_hostile_menu_link_fetches_nothing_and_renders_text(server, browser):
    """Issue 12 item 3 as the visitor sees it: a ?menu= link whose tier names are an image, an
    anchor and Streamlit directives and whose unit is an image: the browser requests no
    outside URL, the page has no such <img> or <a>, and the names appear as text."""
    from hdp_core import menu as M

    m = M.make_menu(
        ["![x](http://host.invalid/x.png)", "<a href=x>L</a>", ":material/home: $x$ :red[hi]"],
        [0.1, 1.0, math.inf],
        [50, 30, 20],
        1000,
        0,
        100,
        "![](//h.invalid/u)",
        None,
    )
    # every section open: the names are drawn everywhere they can be
    url = (
        f"{server}/tier_designer?menu={links.encode_menu_link(m)}"
        "&td_open_target=true"
        "&td_open_whatif=true&td_open_releases=true&td_open_save=true"
    )
    ctx, pg = new_page(browser, viewport=(1400, 3000))
    requested: list[str] = []
    try:
        pg.on("request", lambda r: requested.append(r.url))
        pg.goto(url)
        wait_drawn(pg)
        n = runs_ended(pg)
        pg.get_by_text("use this menu as the current profile", exact=False).first.click()
        wait_drawn(pg, runs_before=n)
        assert not [u for u in requested if "invalid" in u], requested
        assert pg.locator("img[src*='invalid']").count() == 0
        assert pg.locator("[data-testid='stPlotlyChart'] a").count() == 0
        assert pg.locator("[data-testid='stMain'] a[href='x']").count() == 0
        assert pg.locator(".stMarkdown .katex").count() == 0
        body = pg.get_by_test_id("stSidebar").inner_text()
        assert "![x](http://host.invalid/x.png)" in body, body[:500]
        charts = " ".join(pg.locator("[data-testid='stPlotlyChart']").all_inner_texts())
        assert "<a href=x>L</a>" in charts or "L</a>" in charts, charts[:500]
        assert not pg.get_by_test_id("stException").count()
    finally:
        ctx.close()
