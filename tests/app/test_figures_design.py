"""hdp_app.figures.design's menu figure, built from plain dicts in one validation (issue 31:
drawn on arrival, so built on every slider step): its traces carry the report's numbers, its
two panels sit where plotly.subplots.make_subplots would put them, and the Tour's one-panel
figure carries the same method errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from plotly.subplots import make_subplots

from hdp_app.figures.design import menu_figure, method_error_figure
from hdp_core import design as D
from hdp_core import menu as M


@pytest.mark.parametrize("metric", ["half_width", "rmse"])
def test_menu_figure_carries_the_report_and_the_subplot_layout(metric):
    menu = M.template_menu("product_menu", 5000, -10, 90, "kg")
    rep = D.evaluate_menu(menu)
    fig = menu_figure(rep, metric)
    asked, granted = fig.data[0], fig.data[1]
    finite = np.isfinite(menu.levels)
    assert list(asked.x) == list(menu.names)
    assert np.allclose(np.asarray(asked.y)[finite], menu.levels[finite])
    assert np.allclose(np.asarray(granted.y)[finite], rep.granted[finite])
    bars = next(t for t in fig.data if t.type == "bar" and t.orientation == "h")
    assert (bars.xaxis, bars.yaxis) == ("x2", "y2")
    want = {m: rep.errors[m].get(metric) for m in ("UNI", "PropDPM", "ADPM")}
    assert dict(zip(bars.y, bars.x)) == pytest.approx(want)
    ref = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.55, 0.45],
        horizontal_spacing=0.16,
        subplot_titles=("a", "b"),
    ).layout
    for ax in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
        assert fig.layout[ax].domain == pytest.approx(ref[ax].domain)
        assert fig.layout[ax].anchor == ref[ax].anchor
    xs = [a.x for a in fig.layout.annotations]
    assert xs == pytest.approx([a.x for a in ref.annotations])
    assert "kg" in fig.layout.annotations[1].text
    assert fig.layout.yaxis.type == "log" and math.isclose(fig.layout.height, 430)


def test_method_error_figure_is_the_right_panel_alone():
    rep = D.evaluate_menu(M.default_menu())
    one = method_error_figure(rep, "rmse")
    both = menu_figure(rep, "rmse")
    assert list(one.data[0].x) == list(both.data[2 + ("τ*" in both.data[2].name)].x)
    assert (one.data[0].xaxis, one.data[0].yaxis) == ("x", "y")
    assert one.layout.xaxis.domain == (0.0, 1.0)
