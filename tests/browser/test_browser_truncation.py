"""Issues 23 and 31: nothing cut on any page at a projector's 1024 x 768 nor at 1280 x 800, in
every state listed in VISITS (toggles on, a profile loaded, the CSV upload's example buttons,
a Simulation step's quick result and its button, every Tier designer section open, and on the
Release page a wage table in USD/week released under a dataset name: the released numbers,
the ledger's history, every expander open).

Two measures, in Chromium, on the rendered page:

* every element of the main column and the sidebar that clips its overflow (overflow-x not
  visible, or text-overflow: ellipsis) and holds text (metric values, labels, buttons, the
  file uploader's line, multiselect tags, code blocks, tables...) is cut when its content is
  wider than its box by more than 1 px (scrollWidth > clientWidth + 1); a dataframe (a canvas
  grid whose text is not in the DOM) is cut when its grid is wider than its box (columns
  hidden off the right edge);
* charts: every SVG text of a plotly chart (title, axis titles, tick labels, bar labels,
  annotations; not the legend, which scrolls, nor the hover layer) must lie inside the
  chart's own box (its main SVG, clipped to the element holding it) within 1 px.

The Saturation page's Algorithm 1 walk-through, on the load that shows it, is checked too
(CHECKS): its step slider and its chart within one 768 px screen, tick labels at least 14 px;
so are the elements issues 21 and 22 add (the Simulation page's what-if "values differ by
privacy level" and its chart, the Tier designer's k releases and its target cards): they are
on the page, so the measure saw them.
The test reports every cut item (page, state, size, kind, text) and fails if there is any.
One server, one browser and one page: each load's states are reached in turn on that load
(an upload, a release, a click) and measured at 1024 x 768; the last one is measured again
at 1280 x 800 once the charts have redrawn.
"""

from __future__ import annotations

import contextlib
import json
import pathlib

import pytest
from browser_support import new_page, runs_ended, wait_drawn

from hdp_app.views import group_sweep as gs
from hdp_app.views import simulation as simview
from hdp_app.views import simulation_controls as sc
from hdp_app.views import simulation_table as stv
from hdp_app.views import whatif as wv

pytestmark = pytest.mark.browser

SIZES = [(1024, 768), (1280, 800)]
MIN_TEXT = 3  # every state shows at least this many measured text elements
MIN_CHART_TEXT = 10  # and, with a chart, at least this many chart texts (ticks, titles)
TWO_TIERS = "profile=tiers&p_tier=0.1~10~A&p_tier=inf~5~B"  # 15 users, two levels
FEW_TRIALS = "sim_trials=500"  # the fewest trials the page allows: the same texts, quicker
LONG_TRIALS = 5_000  # x 1,000 users: QUICK_MIN_CELLS, the least run a step shows quickly
STEP_OPENED = "after a step: the spread, the sweep, the script and the grid opened"
OPEN_TD = (
    "/tier_designer?td_open_target=true&td_open_whatif=true&td_open_releases=true&td_open_save=true"
)
VISITS: list[tuple[str, str, int, list[str]]] = [
    # (page, path and query, min charts, the states measured on that one load, in order: the
    # first as loaded, each next one after its action in ACTIONS)
    ("Profile", "/", 1, ["default", "CSV upload chosen (example buttons)"]),
    ("Profile", "/?" + TWO_TIERS, 1, ["two tiers loaded"]),
    ("Saturation", "/saturation", 1, ["default"]),
    ("Saturation", f"/saturation?{TWO_TIERS}&sat_trace_example=true", 1, ["two tiers, example"]),
    ("Bounds", "/bounds", 1, ["default"]),
    (
        "Bounds",
        "/bounds?bnd_mode=Number+of+users&bnd_tuned=true&bnd_baselines=false&bnd_guides=false",
        1,
        ["users sweep, known spread, toggles off"],
    ),
    # (a long run, so that a step of its controls shows the quick result and its button)
    (
        "Simulation",
        f"/simulation?sim_trials={LONG_TRIALS}",
        1,
        ["default", "a step: the quick result and its button", STEP_OPENED],
    ),
    (
        "Simulation",
        f"/simulation?sim_real=true&sim_tuned=true&sim_wi=true&{FEW_TRIALS}",
        2,
        ["real units, tuned ADPM, values differ by level"],
    ),
    # every section open (the default page's sections 1 and 2, its chart and every header
    # too), with 12 releases in section 5
    ("Tier designer", OPEN_TD + "&td_releases=12", 2, ["every section open, 12 releases"]),
    (
        "Release",
        "/release",
        0,
        ["empty", "wage table uploaded", "released (named), every section open"],
    ),
    ("Tour", "/tour?tour_step=5&tour_eps2=100", 1, ["step 5, loose group public-ish"]),
    # every Tour step at 1024 x 768: tests/browser/test_browser_tour.py
]
"""Every page in the states a projector shows: each load's states are measured at 1024 x 768,
and its last state at 1280 x 800 too."""

CUT_JS = """() => {
  // every element of the main column and the sidebar that clips its overflow (overflow-x not
  // visible, or text-overflow: ellipsis) and holds text: cut when its content is wider than
  // its box. Dataframes (a canvas grid, its text not in the DOM): cut when the grid's
  // scroller is wider than its box (columns hidden off the right edge).
  const kindOf = (el) => {
    const t = (x) => el.closest(x);
    if (t('[data-testid=stMetricLabel]')) return 'metric label';
    if (t('[data-testid=stMetricValue]')) return 'metric value';
    if (t('[data-testid=stMetricDelta]')) return 'metric delta';
    if (t('[data-testid=stDataFrame]')) return 'dataframe';
    if (t('[data-testid=stTable]')) return 'table';
    if (t('[data-testid=stCode]')) return 'code';
    if (t('[role=tab]')) return 'tab';
    if (t('[data-testid=stExpander] summary')) return 'expander header';
    if (t('[data-testid=stFileUploader]')) return 'file uploader';
    if (t('[data-testid=stMultiSelect]')) return 'multiselect';
    if (t('[data-testid=stSelectbox]')) return 'select';
    if (t('[data-testid=stRadio]')) return 'radio';
    if (t('[data-testid=stCheckbox]') || t('[data-testid=stToggle]')) return 'toggle/checkbox';
    if (t('[data-testid=stWidgetLabel]')) return 'widget label';
    if (t('button') || t('a')) return 'button';
    return 'text';
  };
  const textOf = (el) => {
    let t = el.innerText || '';
    el.querySelectorAll('[data-testid^=stIcon], [role=img]').forEach(i => {
      t = t.replace(i.innerText || '', '');
    });
    return t.trim();
  };
  const out = [];
  const seen = new Set();
  let measured = 0;
  for (const root of document.querySelectorAll('[data-testid=stMain], [data-testid=stSidebar]')) {
    const where = root.getAttribute('data-testid') === 'stSidebar' ? 'sidebar' : 'main';
    for (const el of root.querySelectorAll('*')) {
      if (el.closest('[data-testid=stPlotlyChart]')) continue;  // CHART_JS measures charts
      if (el.clientWidth <= 2 || el.clientHeight === 0) continue;  // hidden, or a 1 px wrapper
      if (el.closest('[data-testid^=stIcon], [role=img]')) continue;
      const s = getComputedStyle(el);
      if (s.overflowX === 'visible' && s.textOverflow !== 'ellipsis') continue;
      const grid = el.closest('[data-testid=stDataFrame]');
      if (grid && !el.classList.contains('dvn-scroller')) continue;
      const text = grid ? 'columns of a table' : textOf(el);
      if (!text) continue;
      measured++;
      if (el.scrollWidth > el.clientWidth + 1) {
        const holder = el.closest('[data-testid=stElementContainer]') || el;
        const item = {kind: kindOf(el), where,
                      text: text.replace(/\\s+/g, ' ').slice(0, 120),
                      by_px: el.scrollWidth - el.clientWidth};
        const id = item.kind + '|' + where + '|' + item.text;
        if (!seen.has(id)) { seen.add(id); out.push(item); }
        holder.setAttribute('data-hdp-cut', '1');
      }
    }
  }
  return {cut: out, measured};
}"""

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
      // a chart in a closed expander is not shown: plotly sizes it when it is opened (a
      // state of VISITS opens the Simulation page's), so its width is not waited for
      if (c.closest('details:not([open])')) return true;
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
    text = page.evaluate(CUT_JS)
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


WAGES = "USD/week"


def _wage_table(path: pathlib.Path) -> None:
    """400 users with weekly wages in cents (0 to 1,900 USD) and four privacy levels: the
    released numbers and the interval are as long as a real table's."""
    rows = ["value,eps"] + [
        f"{(37 * i) % 1900 + 0.25},{[0.1, 0.5, 1, 'inf'][i % 4]}" for i in range(400)
    ]
    path.write_text("\n".join(rows) + "\n")


def _act(page, do, min_charts: int = 0) -> None:
    before = runs_ended(page)
    do()
    wait_drawn(page, min_charts=min_charts, runs_before=before)


def _upload_wages(page, tmp_path: pathlib.Path) -> None:
    table = tmp_path / "wages.csv"
    _wage_table(table)
    _act(page, lambda: page.locator("input[type='file']").set_input_files(str(table)))
    page.get_by_test_id("stMain").get_by_text("Loaded wages.csv").wait_for()
    wait_drawn(page, min_charts=0)


def _release_wages(page, tmp_path: pathlib.Path) -> None:
    """Range 0 to 2,000 USD/week, a dataset name, the question answered, released once (so
    the budget's history has a row), then every expander opened: the budget, the answers'
    errors, the preview, the result, the history, the receipt, the code and the details."""
    main = page.get_by_test_id("stMain")
    for role, label, value in (
        ("spinbutton", "Lowest possible value", "0"),
        ("spinbutton", "Highest possible value", "2000"),
        ("textbox", "Unit (for display)", WAGES),
        ("textbox", "Dataset name (optional)", "Weekly wages of 2026, north region"),
    ):
        box = main.get_by_role(role, name=label)
        _act(page, lambda box=box, value=value: (box.fill(value), box.press("Enter")))
    _act(page, main.get_by_test_id("stRadioGroup").get_by_text("Yes, or maybe").click)
    _act(page, main.get_by_role("button", name="Release the private mean").click)
    main.get_by_text("Released. Safe to share").wait_for()
    main.get_by_test_id("stDataFrame").first.wait_for()
    for summary in main.locator("[data-testid=stExpander] summary").all():
        if summary.get_attribute("aria-expanded") != "true":
            summary.click()
    wait_drawn(page, min_charts=0)


SCREEN = 768
MIN_TICK_PX = 14


def _walkthrough_problems(page) -> list[str]:
    """The Saturation page's Algorithm 1 walk-through at 1024 x 768 (issue 31): its step
    slider (and buttons) and its chart within one 768 px screen (bounding boxes), the chart's
    tick labels at least 14 px. Returns what is wrong."""
    chart = page.locator(".st-key-sat_trace_chart")
    chart.scroll_into_view_if_needed()
    step = page.get_by_test_id("stMain").get_by_test_id("stSlider").filter(has_text="Step k")
    top, box = step.bounding_box()["y"], chart.bounding_box()
    span = box["y"] + box["height"] - top
    sizes = chart.locator(".xtick text, .ytick text").evaluate_all(
        "ts => ts.map(t => parseFloat(getComputedStyle(t).fontSize))"
    )
    out = []
    if span > SCREEN:
        out.append(f"walk-through: slider to chart {span:.0f} px > {SCREEN}")
    if not sizes or min(sizes) < MIN_TICK_PX:
        out.append(f"walk-through: tick labels {min(sizes or [0])} px < {MIN_TICK_PX}")
    return out


WHATIF_TEXTS = ["Values differ by privacy level", "Stricter than eps", "Their values move by"]
WHATIF_CHART = "Error against the table's own mean"
RELEASES_TEXTS = ["Releases (k)", *wv.TARGET_LABELS.values()]


def _shown(*texts: str):
    """A state's check that each of ``texts`` is on the page (main column)."""

    def check(page) -> list[str]:
        main = page.get_by_test_id("stMain")
        return [f"not on the page: {t!r}" for t in texts if not main.get_by_text(t).count()]

    return check


def _step_simulation(page, _) -> None:
    """A step of the Simulation page's live controls (the data: two-point): a fragment rerun
    that shows the quick result of the long run's first trials."""
    main = page.get_by_test_id("stMain")
    _act(page, main.get_by_test_id("stRadio").first.get_by_text("Two-point", exact=True).click, 1)


def _open_closed_sections(page, _) -> None:
    """After a step the Simulation page's closed sections are empty; opening each (a rerun)
    draws it for the stepped settings (issue 29), the results grid too."""
    main = page.get_by_test_id("stMain")
    for label in (sc.HIST_LABEL, gs.BOX_LABEL, "Reproduce in Python", stv.GRID_LABEL):
        box = main.get_by_test_id("stExpander").filter(has_text=label).locator("summary")
        _act(page, box.first.click, 1)


CHECKS = {
    "two tiers, example": _walkthrough_problems,
    "real units, tuned ADPM, values differ by level": _shown(*WHATIF_TEXTS, WHATIF_CHART),
    "every section open, 12 releases": _shown(*RELEASES_TEXTS),
    "a step: the quick result and its button": _shown(
        simview.QUICK_LABEL, simview.whole_run_label(LONG_TRIALS)
    ),
    STEP_OPENED: _shown(gs.SWEEP_PUBLIC_LABEL, "Show the spread of the estimates of"),
}
"""A state's own check at 1024 x 768, beyond cut text: its problems are reported as cut items."""

ACTIONS = {
    "CSV upload chosen (example buttons)": lambda page, _: _act(
        page, page.get_by_test_id("stMain").get_by_text("Upload", exact=True).click, 1
    ),
    "wage table uploaded": _upload_wages,
    "released (named), every section open": _release_wages,
    "a step: the quick result and its button": _step_simulation,
    STEP_OPENED: _open_closed_sections,
}
"""How each state after a load's first is reached from the one before it."""


def cut_text(server: str, browser, tmp_path: pathlib.Path) -> list[dict]:
    """Every cut item in every state of VISITS: dicts with page, state, size, kind, where,
    text and by_px."""
    found: list[dict] = []
    ctx, page = new_page(browser, viewport=SIZES[0])
    try:
        for title, url, min_charts, states in VISITS:
            page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
            page.goto(server + url)
            wait_drawn(page, min_charts=min_charts)
            for k, state in enumerate(states):
                if k:
                    ACTIONS[state](page, tmp_path)
                sizes = SIZES if k == len(states) - 1 else SIZES[:1]
                for i, (w, h) in enumerate(sizes):
                    if i:
                        page.set_viewport_size({"width": w, "height": h})
                        _settle(page)
                    here = {"page": title, "state": state, "size": f"{w}x{h}"}
                    found += [{**here, **it} for it in _measure(page, min_charts)]
                    if not i and state in CHECKS:
                        found += [
                            {**here, "kind": "layout", "where": "main", "text": problem}
                            for problem in CHECKS[state](page)
                        ]
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


def test_no_text_is_cut_on_any_page_at_1024_and_1280(server, browser, tmp_path):
    found = cut_text(server, browser, tmp_path)
    (tmp_path / "cut.json").write_text(json.dumps(found, indent=1, ensure_ascii=False))
    assert not found, f"{len(found)} cut items (screenshots in {tmp_path}):\n" + report(found)


def test_every_check_and_action_names_a_visited_state():
    """A state's check or action under a misspelt name would never run."""
    states = [state for *_, names in VISITS for state in names]
    named = set(CHECKS) | set(ACTIONS)
    assert named <= set(states), named - set(states)
