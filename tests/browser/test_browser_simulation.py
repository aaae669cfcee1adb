"""The Simulation page's quick result in a real browser (issue 29): a step of its live
controls (a fragment rerun, which AppTest does not model) shows a long run's first trials,
said so, and "Run all ... trials" shows the whole run. Oracle: hdp_core.simulate_mse called
here with the same inputs. Uses the shared server and browser (tests/browser/conftest.py)."""

from __future__ import annotations

import math

import pytest
from browser_support import runs_ended, wait_drawn
from simulation_table_support import merged, oracle

import hdp_core as hdp
from hdp_app.views import group_sweep as gs
from hdp_app.views import simulation_controls as sc
from hdp_app.views import simulation_table as stv
from hdp_app.views.simulation import QUICK_LABEL, QUICK_MIN_CELLS, QUICK_TRIALS
from hdp_core.simulate import CHUNK_CELLS

pytestmark = pytest.mark.browser

SEED = 11
WHOLE = 5_000  # trials: a long run (5 million simulated values) at a quarter of the default
PROFILE = hdp.paper_profile("high")  # the app's default profile: 1,000 users, one by one


def _adpm_metric(page) -> str:
    card = page.get_by_test_id("stMetric").filter(has_text="ADPM simulated MSE")
    return card.get_by_test_id("stMetricValue").inner_text().strip()


def _adpm_mse(dist: hdp.Distribution, trials: int) -> str:
    res = hdp.simulate_mse(["ADPM"], PROFILE, dist, trials=trials, seed=SEED)
    return f"{res['ADPM'].mse:.3e}"


def test_a_step_shows_a_quick_result_then_the_whole_run_on_request(server, page):
    """Opened: the whole run. A step (the two-point data): the first whole chunks of the run
    reaching QUICK_TRIALS (1,048 trials a chunk here), the note, its numbers. The button: the
    whole run's numbers, no note."""
    whole = WHOLE
    assert whole * PROFILE.n >= QUICK_MIN_CELLS
    chunk = CHUNK_CELLS // PROFILE.n
    quick = chunk * math.ceil(QUICK_TRIALS / chunk)
    page.goto(f"{server}/simulation?sim_seed={SEED}&sim_trials={whole}")
    wait_drawn(page)
    assert page.get_by_text(f"{whole:,} trials, seed {SEED}").count() == 1
    assert page.get_by_text(QUICK_LABEL).count() == 0
    assert _adpm_metric(page) == _adpm_mse(hdp.Beta(sc.A.start, sc.B.start), whole)

    before = runs_ended(page)
    page.get_by_test_id("stRadio").first.get_by_text("Two-point", exact=True).click()
    wait_drawn(page, runs_before=before)
    two_point = hdp.TwoPoint(sc.P.start)
    assert page.get_by_text(f"the first {quick:,} of the {whole:,} trials").count() == 1
    assert page.get_by_text(f"{quick:,} trials, seed {SEED}").count() == 1
    assert _adpm_metric(page) == _adpm_mse(two_point, quick)

    before = runs_ended(page)
    page.get_by_role("button", name=f"Run all {whole:,} trials").click()
    wait_drawn(page, runs_before=before)
    assert page.get_by_text(QUICK_LABEL).count() == 0
    assert page.get_by_text(f"{whole:,} trials, seed {SEED}").count() == 1
    assert _adpm_metric(page) == _adpm_mse(two_point, whole)


def _open(page, label: str) -> None:
    """Open the main column's expander whose header starts with ``label`` (a rerun)."""
    before = runs_ended(page)
    page.get_by_test_id("stMain").get_by_test_id("stExpander").filter(has_text=label).locator(
        "summary"
    ).first.click()
    wait_drawn(page, runs_before=before)


def test_a_step_leaves_closed_sections_empty_and_opening_one_draws_it_for_the_step(server, page):
    """A step (two-point data, then p one step up) draws the results only: the spread of the
    estimates, the sweep, the script and the results grid sit in closed expanders and are
    left empty; the static results table shows the step's quick result (oracle:
    simulate_mse). Opening each draws it for the stepped settings: the sweep's caption names
    the stepped data and keeps a linked setting of its own (500 fixed users), the script
    holds both; a next step redraws what is open."""
    page.goto(f"{server}/simulation?sim_seed={SEED}&sim_trials={WHOLE}&sim_sw_n1=500")
    wait_drawn(page)
    before = runs_ended(page)
    page.get_by_test_id("stRadio").first.get_by_text("Two-point", exact=True).click()
    wait_drawn(page, runs_before=before)
    slider = page.get_by_role("slider").first
    before = runs_ended(page)
    slider.focus()
    slider.press("ArrowRight")  # p 0.50 -> 0.51
    wait_drawn(page, runs_before=before)
    charts = page.get_by_test_id("stPlotlyChart")
    assert charts.count() == 1  # the MSE chart only
    assert page.get_by_test_id("stCode").count() == 0
    assert page.get_by_text(QUICK_LABEL).count() == 1
    # the results: the static table shows the step's quick result; the grid, folded, is empty
    assert page.get_by_test_id("stDataFrame").count() == 0
    chunk = CHUNK_CELLS // PROFILE.n
    quick = chunk * math.ceil(QUICK_TRIALS / chunk)
    res = hdp.simulate_mse(hdp.METHODS, PROFILE, hdp.TwoPoint(0.51), trials=quick, seed=SEED)
    table = page.get_by_test_id("stHtml").filter(has=page.locator(".hdp-sim-table"))
    shown = merged(table.first.inner_html())
    assert shown == oracle(res)
    _open(page, stv.GRID_LABEL)
    assert page.get_by_test_id("stDataFrame").count() >= 1

    _open(page, gs.BOX_LABEL)
    assert page.locator(".st-key-sim_sweep_chart .main-svg").count() >= 1
    sweep_caption = page.get_by_test_id("stCaptionContainer").filter(has_text="closed forms")
    assert "data Two-point (p = 0.51)" in sweep_caption.inner_text()
    assert page.get_by_role("spinbutton", name=gs.N_FIXED.label).input_value() == "500"
    _open(page, sc.HIST_LABEL)
    assert page.locator(".st-key-sim_hist_chart .main-svg").count() >= 1
    _open(page, "Reproduce in Python")
    code = page.get_by_test_id("stCode").first.inner_text()
    assert "TwoPoint(0.51)" in code.replace(" ", "") and "group_sweep(500," in code

    before = runs_ended(page)
    slider.focus()
    slider.press("ArrowRight")  # p 0.52, every section open: all redrawn
    wait_drawn(page, 3, runs_before=before)
    assert charts.count() == 3
    assert "data Two-point (p = 0.52)" in sweep_caption.inner_text()
    assert "TwoPoint(0.52)" in page.get_by_test_id("stCode").first.inner_text().replace(" ", "")
