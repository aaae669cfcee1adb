"""hdp_app.views.simulation_table: the Simulation page's results as a static HTML table
(issue 29), tested without Streamlit.

Oracles: the cells computed in tests/simulation_table_support.py from hdp_core.simulate_mse's
results with Python's format mini-language (not the view's formats, not simulation_rows); the
results grid's column names (views.simulation.results_frame: the table shows each exactly
once); the chart colours (figures.style.METHOD_COLORS); hand-built rows whose cells must be
missing or wide.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from simulation_table_support import DASH, Tables, body_rows, column_names, merged, oracle

import hdp_core as hdp
from hdp_app.figures.style import METHOD_COLORS
from hdp_app.views import simulation as sv
from hdp_app.views import simulation_table as stv

PROFILE = hdp.EpsilonProfile.from_tiers([0.1, 1.0, math.inf], [40, 10, 5])


@pytest.fixture(scope="module")
def results():
    return hdp.simulate_mse(hdp.METHODS, PROFILE, hdp.Beta(2, 3), trials=500, seed=5)


def test_the_table_shows_every_number_of_the_results_grid_formatted_as_the_oracle(results):
    for data_range in (None, (10.0, 250.0)):
        rows = sv.simulation_rows(results, list(hdp.METHODS), data_range=data_range)
        body = stv.results_table_html(rows, data_range is not None, METHOD_COLORS)
        shown = merged(body)
        assert shown == oracle(results, data_range)
        grid = sv.results_frame(rows, data_range is not None)
        assert list(shown) == list(grid["Method"])  # the methods, in the grid's order
        names = [n for t in Tables(body).tables for n in column_names(t)]
        assert sorted(names) == sorted(grid.columns[1:])  # every grid column, once


def test_one_table_at_1024_px_and_stacked_tables_only_when_too_wide(results):
    """The default results fit the main column at 1024 px (TABLE_WIDTH_PX) in one table; the
    RMSEs in real units, or multiples of ADPM's MSE in scientific form, make it stack the
    exact numbers under the simulated ones, each table repeating every method; a wide
    budget keeps one table."""
    rows = sv.simulation_rows(results, list(hdp.METHODS))
    assert stv.table_parts(rows, False) == [[0, 1]]
    assert len(Tables(stv.results_table_html(rows, False)).tables) == 1
    real = sv.simulation_rows(results, list(hdp.METHODS), data_range=(0.0, 1.0))
    assert stv.table_parts(real, True) == [[0], [1]]
    tables = Tables(stv.results_table_html(real, True)).tables
    assert len(tables) == 2
    assert [[r[0] for r in body_rows(t)] for t in tables] == [
        list(merged(stv.results_table_html(real, True)))
    ] * 2
    wide = [dict(r, ratio=1234.5, ratio_exact=2345.6) for r in rows]
    assert stv.table_parts(wide, False) == [[0], [1]]
    assert stv.table_parts(real, True, width_px=2000) == [[0, 1]]


def test_the_estimate_of_a_table_width_grows_with_its_widest_cell():
    """table_parts estimates a column by its widest cell or its header's longest word: a long
    label or number can only add tables."""
    row = dict(method="ADPM", mse=1e-4, ci_low=1e-4, ci_high=1e-4, exact=1e-4, ln_mse=-9.2)
    row.update(ln_exact=-9.2, ratio=1.0, ratio_exact=1.0)
    assert stv.table_parts([row], False) == [[0, 1]]
    long_name = dict(row, method="A" * 60)  # one unbreakable word of 60 letters
    assert stv.table_parts([long_name], False) == [[0], [1]]


def test_missing_numbers_show_a_dash_and_every_text_is_escaped():
    """An MSE of 0 has no ln; without a positive ADPM MSE no multiple; NaN and infinities
    are not formatted as numbers; a method name is shown escaped (an unknown method keeps
    its name: views.simulation.method_label)."""
    zero = dict(method="ADPM", mse=0.0, ci_low=0.0, ci_high=0.0, exact=0.0, ln_mse=None)
    zero.update(ln_exact=None, ratio=None, ratio_exact=None)
    odd = dict(zero, method="<b>x</b>", mse=math.nan, exact=math.inf, ratio=1.5)
    body = stv.results_table_html([zero, odd], False, {"ADPM": "#123456"})
    assert "<b>x</b>" not in body and "&lt;b&gt;x&lt;/b&gt;" in body
    cells = merged(body)
    assert cells["ADPM (optimal)"]["ln MSE (simulated)"] == DASH
    assert cells["ADPM (optimal)"]["× ADPM (exact)"] == DASH
    assert cells["ADPM (optimal)"]["Simulated MSE"] == "0.000e+00"
    assert cells["<b>x</b>"]["Simulated MSE"] == DASH and cells["<b>x</b>"]["Exact MSE"] == DASH
    assert cells["<b>x</b>"]["× ADPM (simulated)"] == "1.5×"
    as_numpy = dict(zero, mse=np.float32(0.5), exact=np.int64(2), ratio=np.float64(3.0))
    numpy_cells = merged(stv.results_table_html([as_numpy], False))["ADPM (optimal)"]
    assert numpy_cells["Simulated MSE"] == "5.000e-01" and numpy_cells["Exact MSE"] == "2.000e+00"
    assert numpy_cells["× ADPM (simulated)"] == "3×"


def test_every_method_has_its_chart_colour_and_the_headers_say_what_they_hold(results):
    rows = sv.simulation_rows(results, [*hdp.METHODS])
    body = stv.results_table_html(rows, False, METHOD_COLORS)
    parsed = Tables(body)
    assert parsed.dots == [[METHOD_COLORS[m] for m in hdp.METHODS]]
    head = parsed.tables[0]
    groups = [c[1] for c in head[0][1:]]
    assert groups == ["Simulated", "Exact"]
    sub = ["MSE", "95% CI low", "95% CI high", "ln MSE", "× ADPM", "MSE", "ln MSE", "× ADPM"]
    assert [c[1] for c in head[1]] == sub
    assert "95% confidence interval" in head[0][1][2]["title"]
    assert "closed forms" in head[0][2][2]["title"]
    assert "[-0.5, 0.5]" in head[0][1][2]["title"]
    assert stv.GRID_LABEL and "grid" in stv.GRID_LABEL
