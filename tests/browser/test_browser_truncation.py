"""Issue 23: no cut text on any page at a projector's 1024 x 768 nor at 1280 x 800, in every
state listed in STATES (toggles on, a profile loaded, a table uploaded on the Release page).

Two measures, in Chromium, on the rendered page:

* text elements (metric labels, values and deltas, widget labels of toggles, checkboxes,
  radios, selects, sliders and inputs, radio options, the value shown in a select box,
  buttons, tabs, expander headers), in the main column and the sidebar: an element is cut
  when some node of it (or the element itself) that clips its overflow (overflow not
  visible, or text-overflow: ellipsis) has scrollWidth > clientWidth + 1 px;
* charts: every SVG text of a plotly chart (title, axis titles, tick labels, bar labels,
  annotations; not the legend, which scrolls, nor the hover layer) must lie inside the
  chart's own box (its main SVG, clipped to the element holding it) within 1 px.

The test reports every cut item (page, size, kind, text) and fails if there is any.
One server and one browser; each state is opened once at 1024 x 768, then the viewport is
set to 1280 x 800 and the page measured again once the charts have redrawn.
"""

from __future__ import annotations

import contextlib
import json
import pathlib

import pytest
from browser_support import new_page, runs_ended, wait_drawn
from test_browser import browser, server  # noqa: F401  (pytest fixtures)

pytestmark = pytest.mark.browser

SIZES = [(1024, 768), (1280, 800)]
MIN_TEXT = 3  # every state shows at least this many measured text elements
MIN_CHART_TEXT = 10  # and, with a chart, at least this many chart texts (ticks, titles)
TWO_TIERS = "profile=tiers&p_tier=0.1~10~A&p_tier=inf~5~B"  # 15 users, two levels
STATES: list[tuple[str, str, str, int]] = [
    # (page, state, path and query, min charts)
    ("Profile", "default", "/", 1),
    ("Profile", "two tiers loaded", "/?" + TWO_TIERS, 1),
    ("Saturation", "default", "/saturation", 1),
    (
        "Saturation",
        "two tiers, teaching example on",
        f"/saturation?{TWO_TIERS}&sat_trace_example=true",
        1,
    ),
    ("Bounds", "default", "/bounds", 1),
    (
        "Bounds",
        "users sweep, known spread, toggles off",
        "/bounds?bnd_mode=Number+of+users&bnd_tuned=true&bnd_baselines=false&bnd_guides=false",
        1,
    ),
    ("Simulation", "default", "/simulation", 1),
    ("Simulation", "real units and tuned ADPM on", "/simulation?sim_real=true&sim_tuned=true", 1),
    ("Tier designer", "default", "/tier_designer", 0),
    (
        "Tier designer",
        "chart and sections 3 to 6 open",
        "/tier_designer?td_open_chart=true&td_open_target=true&td_open_whatif=true"
        "&td_open_releases=true&td_open_save=true",
        2,
    ),
    ("Release", "empty", "/release", 0),
    ("Release", "small table uploaded", "/release", 0),  # upload below
    ("Release", "range set, answered, released", "/release", 0),  # and released below
    ("Tour", "step 1", "/tour", 1),  # every step at 1024: tests/test_browser_tour.py
    ("Tour", "step 5, loose group public-ish", "/tour?tour_step=5&tour_eps2=100", 1),
]

TEXT_SELECTORS = ", ".join(
    f"[data-testid={root}] {sel}"
    for root in ("stMain", "stSidebar")
    for sel in (
        "[data-testid=stMetricLabel]",
        "[data-testid=stMetricValue]",
        "[data-testid=stMetricDelta]",
        "[data-testid=stWidgetLabel]",
        "[data-testid=stCheckbox] label",
        "[data-testid=stToggle] label",
        "[data-testid=stRadio] [role=radiogroup] label",
        "[data-testid=stSelectbox] [data-baseweb=select]",
        "[data-testid=stMultiSelect] [data-baseweb=select]",
        "button",
        "[data-testid=stPageLink] a",
        "[role=tab]",
        "[data-testid=stExpander] summary",
    )
)

KINDS = """
const kindOf = (e) => {
  const t = (x) => e.closest(x);
  if (t('[data-testid=stMetricLabel]')) return 'metric label';
  if (t('[data-testid=stMetricValue]')) return 'metric value';
  if (t('[data-testid=stMetricDelta]')) return 'metric delta';
  if (t('[role=tab]')) return 'tab';
  if (t('[data-testid=stExpander] summary')) return 'expander header';
  if (t('[data-testid=stCheckbox]') || t('[data-testid=stToggle]'))
    return t('[data-testid=stWidgetLabel]') || t('label') ? 'toggle/checkbox label' : 'toggle';
  if (t('[data-testid=stRadio]'))
    return t('[data-testid=stWidgetLabel]') ? 'radio label' : 'radio option';
  if (t('[data-testid=stSelectbox]') || t('[data-testid=stMultiSelect]'))
    return t('[data-testid=stWidgetLabel]') ? 'select label' : 'select value';
  if (t('[data-testid=stWidgetLabel]')) return 'widget label';
  if (t('button') || t('a')) return 'button';
  return 'text';
};
"""

CUT_JS = (
    """(selector) => {"""
    + KINDS
    + """
  const clips = (el) => {
    const s = getComputedStyle(el);
    return s.textOverflow === 'ellipsis' || (s.overflowX !== 'visible');
  };
  const out = [];
  const seen = new Set();
  let measured = 0;
  for (const root of document.querySelectorAll(selector)) {
    if (seen.has(root)) continue;
    seen.add(root);
    const r = root.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;  // not displayed (a closed expander)
    // nodes that hold text; a visually hidden input's 1 px wrapper and icon glyphs are not
    // text a reader can lose
    // (an icon-only button, whose only "text" is its glyph's name, has nothing to lose)
    const textOf = (el) => {
      let t = el.innerText || '';
      el.querySelectorAll('[data-testid^=stIcon], [role=img]').forEach(i => {
        t = t.replace(i.innerText || '', '');
      });
      return t.trim();
    };
    const nodes = [root, ...root.querySelectorAll('*')].filter(el =>
      el.clientWidth > 2 && !el.closest('[data-testid^=stIcon], [role=img]') && textOf(el) !== '');
    const cut = nodes.some(el => clips(el) && el.scrollWidth > el.clientWidth + 1);
    if (cut) {
      const where = root.closest('[data-testid=stSidebar]') ? 'sidebar' : 'main';
      const item = {kind: kindOf(root), where,
                    text: (root.innerText || root.getAttribute('aria-label') || '').trim()
                          .replace(/\\s+/g, ' ').slice(0, 120)};
      const id = item.kind + '|' + item.where + '|' + item.text;
      if (!seen.has(id)) { seen.add(id); out.push(item); }
      root.setAttribute('data-hdp-cut', '1');
    }
    measured++;
  }
  return {cut: out, measured};
}"""
)

CHART_JS = """() => {
  const kindOf = (t) => {
    const c = (x) => t.closest(x);
    if (c('.g-gtitle')) return 'chart title';
    if (c('.g-xtitle') || c('.g-ytitle') || c('[class*=g-x][class*=title]') ||
        c('[class*=g-y][class*=title]')) return 'axis title';
    if (c('.xtick') || c('.ytick') || c('[class$=tick]') || c('[class*=tick ]'))
      return 'tick label';
    if (c('.annotation')) return 'annotation';
    if (c('.bartext') || c('.textpoint') || c('.textpoints')) return 'bar label';
    if (c('.colorbar')) return 'colour bar';
    return 'chart text';
  };
  const out = [];
  let measured = 0;
  const charts = [...document.querySelectorAll('[data-testid=stPlotlyChart]')];
  charts.forEach((chart, i) => {
    const svg = chart.querySelector('svg.main-svg');
    if (!svg) return;
    // the chart's own box: its SVG, as far as the element holding it shows it (the SVG
    // can be wider than its container, which then clips it)
    const a = svg.getBoundingClientRect(), c = chart.getBoundingClientRect();
    const box = {left: Math.max(a.left, c.left), right: Math.min(a.right, c.right),
                 top: Math.max(a.top, c.top), bottom: Math.min(a.bottom, c.bottom)};
    if (a.width === 0 || a.height === 0 || box.right <= box.left) return;  // hidden
    const title = (chart.querySelector('.g-gtitle') || {}).textContent || '';
    for (const t of chart.querySelectorAll('svg text')) {
      if (t.closest('.legend') || t.closest('.hoverlayer')) continue;
      const text = (t.textContent || '').trim();
      if (!text) continue;
      const s = getComputedStyle(t);
      if (s.display === 'none' || s.visibility === 'hidden' || s.opacity === '0') continue;
      const b = t.getBoundingClientRect();
      if (b.width === 0 && b.height === 0) continue;
      measured++;
      // text drawn inside a clipped group (bar labels with cliponaxis) is cut at the plot
      // area: its box is then the subplot's drag rectangle (the plot area) within the chart's
      let tb = box;
      const sp = t.closest('[clip-path]') && t.closest('.subplot');
      if (sp) {
        const cls = [...sp.classList].find(x => x !== 'subplot');
        const drag = cls && chart.querySelector('.draglayer .' + cls + ' .nsewdrag');
        if (drag) {
          const d = drag.getBoundingClientRect();
          tb = {left: Math.max(box.left, d.left), right: Math.min(box.right, d.right),
                top: Math.max(box.top, d.top), bottom: Math.min(box.bottom, d.bottom)};
        }
      }
      const over = Math.max(tb.left - b.left, b.right - tb.right,
                            tb.top - b.top, b.bottom - tb.bottom);
      if (over > 1) {
        out.push({kind: kindOf(t), where: 'chart ' + (i + 1) +
                  (title ? ' "' + title.trim().slice(0, 50) + '"' : ''),
                  text: text.slice(0, 120), by_px: Math.round(over)});
        chart.setAttribute('data-hdp-cut', '1');
      }
    }
  });
  return {cut: out, measured};
}"""

SETTLE_JS = """async ({stableMs, timeoutMs}) => {
  // after a viewport change: wait until every chart's SVG has the width of its box and the
  // page's layout (chart sizes, text count, DOM changes) has not changed for stableMs
  const t0 = performance.now();
  let sig = null, since = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    const charts = [...document.querySelectorAll('[data-testid=stPlotlyChart]')];
    const fit = charts.every(c => {
      const s = c.querySelector('svg.main-svg');
      if (!s) return false;
      const a = s.getBoundingClientRect().width, b = c.getBoundingClientRect().width;
      return a === 0 || b === 0 || Math.abs(a - b) <= 2;
    });
    const s = [window.__hdp.changes, document.querySelectorAll('svg text').length,
               ...charts.map(c => { const r = (c.querySelector('svg.main-svg') ||
                 c).getBoundingClientRect(); return r.width + 'x' + r.height; })].join('/');
    const now = performance.now();
    if (!fit || s !== sig) { sig = s; since = now; }
    else if (now - since >= stableMs) return true;
    await new Promise(r => setTimeout(r, 50));
  }
  return false;
}"""


def _measure(page, min_charts: int) -> list[dict]:
    """The cut items on the page now. Also checks that the measure saw the page: at least
    MIN_TEXT text elements and, on a page with charts, MIN_CHART_TEXT chart texts (so a
    change of Streamlit's test ids cannot make the test pass by measuring nothing)."""
    text = page.evaluate(CUT_JS, TEXT_SELECTORS)
    chart = page.evaluate(CHART_JS)
    assert text["measured"] >= MIN_TEXT, f"only {text['measured']} text elements measured"
    if min_charts:
        assert chart["measured"] >= MIN_CHART_TEXT, f"only {chart['measured']} chart texts"
    return text["cut"] + chart["cut"]


def _shoot_cut(page, path: pathlib.Path, slug: str) -> None:
    """A screenshot of every element marked as cut (whole-page shots miss what is below the
    fold: Streamlit scrolls inside its own container), then the marks are removed."""
    marked = page.locator("[data-hdp-cut]")
    for i in range(min(marked.count(), 40)):
        with contextlib.suppress(Exception):  # an element that went away: no picture
            marked.nth(i).screenshot(path=str(path / f"{slug}_{i}.png"), timeout=5000)
    page.evaluate(
        "() => document.querySelectorAll('[data-hdp-cut]')"
        ".forEach(e => e.removeAttribute('data-hdp-cut'))"
    )


def _settle(page) -> None:
    assert page.evaluate(SETTLE_JS, {"stableMs": 700, "timeoutMs": 30_000}), (
        "the charts did not settle after the viewport change"
    )


def _small_table(path: pathlib.Path) -> None:
    rows = ["value,eps"] + [f"{(7 * i) % 100},{[0.1, 0.5, 1, 'inf'][i % 4]}" for i in range(40)]
    path.write_text("\n".join(rows) + "\n")


def _release_small_table(page) -> None:
    """On the Release page with the small table loaded: set the range, answer the question
    (issue 21) and release, so the budget, the answers' errors, the preview, the result and
    the ledger's history are all on the page."""

    def act(do) -> None:
        before = runs_ended(page)
        do()
        wait_drawn(page, min_charts=0, runs_before=before)

    for label, value in (("Lowest possible value", "0"), ("Highest possible value", "100")):
        box = page.get_by_role("spinbutton", name=label)
        act(lambda box=box, value=value: (box.fill(value), box.press("Enter")))
    act(page.get_by_test_id("stRadioGroup").get_by_text("Yes, or maybe").click)
    act(page.get_by_role("button", name="Release the private mean").click)
    page.get_by_test_id("stMain").get_by_text("Released. Safe to share").wait_for()
    wait_drawn(page, min_charts=0)


def cut_text(server: str, browser, tmp_path: pathlib.Path) -> list[dict]:  # noqa: F811
    """Every cut item on every state at both sizes: dicts with page, state, size, kind,
    where, text (and by_px for chart text)."""
    found: list[dict] = []
    ctx, page = new_page(browser, viewport=SIZES[0])
    try:
        for title, state, url, min_charts in STATES:
            page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
            page.goto(server + url)
            wait_drawn(page, min_charts=min_charts)
            if state in ("small table uploaded", "range set, answered, released"):
                table = tmp_path / "small.csv"
                _small_table(table)
                before = runs_ended(page)
                page.locator("input[type='file']").set_input_files(str(table))
                wait_drawn(page, min_charts=0, runs_before=before)
                page.get_by_test_id("stMain").get_by_text("Loaded small.csv").wait_for()
                wait_drawn(page, min_charts=0)
            if state == "range set, answered, released":
                _release_small_table(page)
            for i, (w, h) in enumerate(SIZES):
                if i:
                    page.set_viewport_size({"width": w, "height": h})
                    _settle(page)
                items = _measure(page, min_charts)
                for it in items:
                    found.append({"page": title, "state": state, "size": f"{w}x{h}", **it})
                slug = f"{title}_{state}_{w}".replace(" ", "_").replace(",", "")
                _shoot_cut(page, tmp_path, slug)
    finally:
        ctx.close()
    return found


def report(found: list[dict]) -> str:
    lines = [
        f"{f['page']} [{f['state']}] {f['size']} {f['where']}: {f['kind']}: "
        f"{f['text']!r}" + (f" (out by {f['by_px']} px)" if "by_px" in f else "")
        for f in found
    ]
    return "\n".join(lines)


def test_no_text_is_cut_on_any_page_at_1024_and_1280(server, browser, tmp_path):  # noqa: F811
    found = cut_text(server, browser, tmp_path)
    (tmp_path / "cut.json").write_text(json.dumps(found, indent=1, ensure_ascii=False))
    assert not found, f"{len(found)} cut items (screenshots in {tmp_path}):\n" + report(found)
