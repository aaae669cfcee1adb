"""Log-scale privacy axes read unambiguously: every tick label is the full number at its
position (no "5" for 0.5, no "2" for 20), and public users sit on their own "public (∞)" tick,
well above every finite level (not at y = 3 x the largest level, which read as a level)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.figures.design import menu_figure
from hdp_app.figures.saturation import r_curve_figure, trace_figure
from hdp_app.figures.style import METHOD_COLORS, METHOD_DASH, log_axis
from hdp_app.views import saturation as sat
from hdp_core import design as D
from hdp_core import menu as M
from hdp_core.estimators import METHOD_CLASSES


def _check_axis(ax, finite_max: float, public_ys=()) -> None:
    vals, text = list(ax.tickvals), list(ax.ticktext)
    assert len(vals) == len(text) >= 2
    for v, t in zip(vals, text, strict=True):
        if t == "public (∞)":
            assert v >= 10 * finite_max
            for y in public_ys:
                assert y == pytest.approx(v)
        else:
            assert float(t) == pytest.approx(v, rel=1e-9), (t, v)
            assert v <= 1.5 * finite_max
    assert ("public (∞)" in text) == bool(len(public_ys))


@pytest.mark.parametrize(("lo", "hi"), [(0.05, 20.0), (0.2, 8.0), (1e-4, 1e3), (0.5, 0.5)])
def test_log_axis_labels_are_the_numbers(lo, hi):
    ax = log_axis(lo, hi)
    for v, t in zip(ax["tickvals"], ax["ticktext"], strict=True):
        assert float(t) == pytest.approx(v, rel=1e-9)
    if lo <= 0.5 <= hi and hi / lo < 1e3:  # 1-2-5 ticks (one per decade over many decades)
        assert "0.5" in ax["ticktext"]
    assert ax["range"][0] < math.log10(lo) and ax["range"][1] > math.log10(hi)


def test_saturation_rank_chart_and_trace_chart():
    prof = sat.teaching_example()  # 0.2 .. 8 and three public users
    fig = r_curve_figure(sat.r_curve(hdp.adpm(prof)))
    pub = [t for t in fig.data if "public" in (t.name or "")]
    assert pub
    _check_axis(fig.layout.yaxis, 8.0, list(pub[0].y))
    assert {"0.2", "0.5", "1", "2", "5"} <= set(fig.layout.yaxis.ticktext)
    trace = hdp.adpm_trace(prof)
    tf = trace_figure(trace, 50)
    asked = tf.data[0]
    pub_y = [y for y, e in zip(asked.y, trace.eps, strict=True) if math.isinf(e)]
    _check_axis(tf.layout.yaxis, 8.0, pub_y)


def test_tier_designer_chart():
    rep = D.evaluate_menu(M.default_menu())
    fig = menu_figure(rep)
    fin = rep.menu.levels[np.isfinite(rep.menu.levels)]
    asked = fig.data[0]
    pub_y = [y for y, e in zip(asked.y, rep.menu.levels, strict=True) if math.isinf(e)]
    _check_axis(
        fig.layout.yaxis, float(max(fin.max(), rep.granted[np.isfinite(rep.granted)].max())), pub_y
    )


@pytest.mark.parametrize("metric", ["half_width", "rmse"])
def test_tier_designer_menu_figure_has_both_panels(metric):
    """Issue 23: the two menu charts are one figure with two panels (one chart to redraw per
    slider step); the left panel holds the tiers, the right one each method's error, read
    from the report (an independent evaluation of the same menu), with the all-public line."""
    menu = M.default_menu()
    rep = D.evaluate_menu(menu)
    fig = menu_figure(rep, metric)
    left = [t for t in fig.data if t.xaxis == "x"]
    right = [t for t in fig.data if t.xaxis == "x2"]
    assert [t.name for t in left[:2]] == ["offered (eps asked)", "granted by ADPM"]
    assert list(left[0].x) == list(menu.names)
    tau = [t for t in left if t.type == "scatter"]
    assert len(tau) == 1 and list(tau[0].y) == pytest.approx([rep.worth_offering] * 2)
    bars = [t for t in right if t.type == "bar"]
    assert len(bars) == 1 and bars[0].orientation == "h"
    for m, v in zip(bars[0].y, bars[0].x, strict=True):
        assert v == pytest.approx(D.evaluate_menu(menu).errors[m].get(metric))
    assert bars[0].textposition == "auto"  # never 'outside': no label past the chart's edge
    ref = [t for t in right if t.type == "scatter"]
    assert len(ref) == 1 and list(ref[0].x) == pytest.approx([rep.all_public.get(metric)] * 2)
    assert ref[0].name.startswith("all users public")
    titles = [a.text for a in fig.layout.annotations]
    assert len(titles) == 2 and "smaller eps = more privacy" in titles[0]


def test_what_if_and_spread_charts_label_their_log_axes_in_full():
    """Found by a new user: the what-if chart's tau* axis and the Saturation page's tau*-spread
    chart showed plotly's minor labels ("9 8 7 ... 2 0.1"), which read as levels 9, 8, 7."""
    from hdp_app.figures.design import whatif_figure
    from hdp_app.figures.saturation import tau_spread_figure
    from hdp_app.views import tuned as tview

    m = M.default_menu()
    sw = D.share_sweep(m, 0, m.k - 1, points=21)
    share = m.tiers[0].share_percent
    fig = whatif_figure(
        sw,
        "rmse",
        (m.tiers[0].name, m.tiers[-1].name),
        m.unit,
        share,
        float(sw.errors["ADPM"][10]),
        share,
    )
    ax = fig.layout.yaxis2
    assert ax.type == "log" and ax.tickvals and len(ax.tickvals) == len(ax.ticktext)
    for v, t in zip(ax.tickvals, ax.ticktext):
        assert float(t) == pytest.approx(v)
    prof = hdp.preset("two_groups")
    s, tau = tview.tau_vs_spread(prof)
    fig = tau_spread_figure(s, tau)
    for ax in (fig.layout.xaxis, fig.layout.yaxis):
        assert ax.tickvals and all(
            float(t) == pytest.approx(v) for v, t in zip(ax.tickvals, ax.ticktext)
        )


def test_method_error_figure_alone_is_the_menu_figures_right_panel():
    """The Tour's tier-menu step draws the error panel on its own: the same bars."""
    from hdp_app.figures.design import method_error_figure

    rep = D.evaluate_menu(M.default_menu())
    alone = method_error_figure(rep, "rmse")
    both = menu_figure(rep, "rmse")
    bars = [t for t in alone.data if t.type == "bar"]
    right = [t for t in both.data if t.type == "bar" and t.xaxis == "x2"]
    assert len(bars) == len(right) == 1
    assert list(bars[0].y) == list(right[0].y) and list(bars[0].x) == list(right[0].x)
    for m, v in zip(bars[0].y, bars[0].x, strict=True):
        assert v == pytest.approx(rep.errors[m].rmse)


def test_registered_with_colour_and_dash():
    assert "TableMean" in METHOD_CLASSES and "TableMean" not in hdp.METHODS
    # every registered method has its own colour and line style
    for table in (METHOD_COLORS, METHOD_DASH):
        assert set(METHOD_CLASSES) <= set(table)
        shown = [table[m] for m in METHOD_CLASSES]
        assert len(set(shown)) == len(shown)


def test_projector_text_is_at_least_14_px_and_log_ticks_are_full_size():
    """style.projector (issue 31): base, tick, axis-title, legend and annotation text at
    least 14 px, the height asked for, and a log axis plotly would label itself (its 2s and
    5s at 3/4 size) gets its own ticks at 1-2-5 per decade, or every digit when the data span
    less than that, covering the data."""
    import plotly.graph_objects as go

    from hdp_app.figures.style import PROJECTOR_FONT_PX, projector

    fig = go.Figure(
        [go.Scatter(x=["a", "b", "c"], y=[2.1e-4, 3.0e-4, 2.3e-4])],
        layout=dict(yaxis=dict(type="log"), annotations=[dict(text="t", font=dict(size=9))]),
    )
    projector(fig, 400)
    assert fig.layout.height == 400 and fig.layout.font.size >= PROJECTOR_FONT_PX
    assert fig.layout.yaxis.tickfont.size >= PROJECTOR_FONT_PX
    assert fig.layout.annotations[0].font.size >= PROJECTOR_FONT_PX
    ticks = list(fig.layout.yaxis.tickvals)
    lo, hi = (10**r for r in fig.layout.yaxis.range)
    assert lo <= 2.1e-4 and hi >= 3.0e-4
    # 1-2-5 would give two ticks here: every digit times 1e-4 within the range instead
    assert ticks == pytest.approx([d * 1e-4 for d in range(1, 10) if lo <= d * 1e-4 <= hi])
    assert len(ticks) >= 3 and ticks[:2] == pytest.approx([2e-4, 3e-4])
    wide = projector(
        go.Figure(
            [go.Bar(x=[1e-6, 1e-3], y=["a", "b"], orientation="h")],
            layout=dict(xaxis=dict(type="log")),
        )
    )
    assert list(wide.layout.xaxis.tickvals)[:3] == pytest.approx([1e-6, 2e-6, 5e-6])
