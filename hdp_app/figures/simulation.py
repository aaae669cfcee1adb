"""Figures for the Simulation page: MSE per method with confidence intervals, the spread of the
estimates around the true mean, the group sweep, and the paper's Table 1 next to ours.

Every method keeps its colour (METHOD_COLORS) and line style (METHOD_DASH). MSEs are drawn on a
log axis: the methods differ by orders of magnitude. In the sweep, the x axis is log10(eps)
drawn on a linear axis with labels in eps units, so that the public level (eps = inf) can sit
at its own labelled point on the right.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from hdp_app.figures.profile import eps_ticks
from hdp_app.figures.style import (
    LAYOUT_DEFAULTS,
    METHOD_COLORS,
    METHOD_DASH,
    WIDE_TITLE_CHARS,
    X_TITLE_MARGIN,
    build,
    fast_layout,
    fig_text,
    wrap_title,
    x_title_margin,
)
from hdp_core.estimators import METHODS
from hdp_core.sweeps import Sweep

__all__ = [
    "TRUE_MEAN_COLOR",
    "estimate_histograms",
    "estimates_figure",
    "mse_figure",
    "paper_figure",
    "spread_figure",
    "sweep_figure",
    "whatif_figure",
]

TRUE_MEAN_COLOR = "#000000"
"""The true (population) mean in the estimates figure: a solid black line."""

PUBLIC_LABEL = "public (∞)"

LOG_Y_LEFT = 82
"""The left margin plotly's automargin settles on beside the MSE and sweep charts' log y axis
(tick labels such as 1e−4 and a title), measured at 1400 px (issue 29: asked for up front, so
that a slider step draws each chart once; automargin stays on for longer labels)."""


def _color(m: str) -> str:
    return METHOD_COLORS.get(m, "#7F7F7F")


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r}, {g}, {b}, {alpha})"


def _finish(fig: go.Figure, title: str, height: int, **layout: Any) -> go.Figure:
    """Common layout with the title above the legend (no overlap)."""
    fig.update_layout(**LAYOUT_DEFAULTS)
    fig.update_layout(
        height=height,
        title=dict(text=title, y=0.985, yanchor="top", x=0, xanchor="left", font=dict(size=15)),
        margin=dict(l=60, r=20, t=90, b=50),
        legend=dict(orientation="h", yanchor="bottom", y=1.01, xanchor="left", x=0),
        **layout,
    )
    return fig


def _layout(title: str, height: int, left: int = 60, bottom: int = 50, **layout: Any) -> dict:
    """:func:`_finish`'s layout as one dict, for figures built by style.build (validated once:
    the live figures are rebuilt on every slider step, so their cost is on the step's path).
    ``left`` and ``bottom``: the margins (px) the figure asks for; the live figures ask for what
    plotly's automargin settles on (style.X_TITLE_MARGIN: a pushed margin draws the figure
    twice in the browser on every step)."""
    return fast_layout(
        height=height,
        title=dict(text=title, y=0.985, yanchor="top", x=0, xanchor="left", font=dict(size=15)),
        margin=dict(l=left, r=20, t=90, b=bottom),
        legend=dict(orientation="h", yanchor="bottom", y=1.01, xanchor="left", x=0),
        **layout,
    )


def _vline(x: float, line: dict, text: str | None = None, side: str = "right") -> tuple:
    """A vertical line at data value ``x`` across the plot, and its label at the top on the
    ``side`` of it (what ``fig.add_vline`` with ``annotation_position="top <side>"`` adds):
    (shape, annotations)."""
    shape = dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain", line=line)
    if text is None:
        return shape, []
    xanchor = "left" if side == "right" else "right"
    note = dict(
        showarrow=False,
        text=text,
        x=x,
        xanchor=xanchor,
        xref="x",
        y=1,
        yanchor="top",
        yref="y domain",
    )
    return shape, [note]


def mse_figure(rows: Sequence[Mapping[str, Any]], height: int = 420) -> go.Figure:
    """Simulated MSE of each method (dot) with its 95% CI (error bar) and the exact MSE (open
    diamond), log scale. ``rows`` are hdp_core.report.simulation_rows output."""
    data: list[dict] = []
    for r in rows:
        m = r["method"]
        up = max(r["ci_high"] - r["mse"], 0.0)
        down = max(r["mse"] - r["ci_low"], 0.0)
        ratio = f"{r['ratio']:.3g}× ADPM" if r.get("ratio") is not None else ""
        data.append(
            dict(
                type="scatter",
                x=[m],
                y=[r["mse"]],
                mode="markers",
                name=m,
                legendgroup=m,
                marker=dict(color=_color(m), size=12, symbol="circle"),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=[up],
                    arrayminus=[down],
                    color=_color(m),
                    thickness=2,
                    width=8,
                ),
                hovertemplate=(
                    f"<b>{m}</b><br>simulated MSE %{{y:.3e}}<br>"
                    f"95% CI {r['ci_low']:.3e} to {r['ci_high']:.3e}<br>{ratio}<extra></extra>"
                ),
            )
        )
    if rows:
        data.append(
            dict(
                type="scatter",
                x=[r["method"] for r in rows],
                y=[r["exact"] for r in rows],
                mode="markers",
                name="exact MSE",
                marker=dict(
                    symbol="diamond-open",
                    size=16,
                    line=dict(width=2),
                    color=[_color(r["method"]) for r in rows],
                ),
                hovertemplate="<b>%{x}</b><br>exact MSE %{y:.3e}<extra></extra>",
            )
        )
    layout = _layout(
        "Mean squared error per method (dot: simulated, with 95% CI; ◇: exact)",
        height,
        left=LOG_Y_LEFT,
        yaxis=dict(type="log", title="MSE (data in [-0.5, 0.5], log scale)", exponentformat="e"),
        xaxis=dict(title=None, categoryorder="array", categoryarray=[r["method"] for r in rows]),
        showlegend=True,
    )
    return build(data, layout)


def estimate_histograms(
    estimates: Mapping[str, np.ndarray],
    bins: int = 150,
    central: float = 0.99,
    center: float | None = None,
) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, float]]:
    """Common-bin densities of each method's estimates.

    The range covers the central ``central`` share of every method's estimates (and
    ``center``, the true mean, if given). Returns (edges, {method: density per bin},
    {method: share of that method's estimates outside the range}).
    """
    arrays = {m: np.asarray(v, dtype=np.float64) for m, v in estimates.items() if len(v)}
    if not arrays:
        return np.array([-0.5, 0.5]), {}, {}
    q = (1.0 - central) / 2.0
    lows = [float(np.quantile(a, q)) for a in arrays.values()]
    highs = [float(np.quantile(a, 1.0 - q)) for a in arrays.values()]
    lo, hi = min(lows), max(highs)
    if center is not None:
        lo, hi = min(lo, center), max(hi, center)
    if not hi > lo:
        pad = max(abs(lo) * 1e-3, 1e-9)
        lo, hi = lo - pad, hi + pad
    edges = np.linspace(lo, hi, bins + 1)
    dens, outside = {}, {}
    for m, a in arrays.items():
        h, _ = np.histogram(a, bins=edges)
        dens[m] = h / (a.size * (edges[1] - edges[0]))
        outside[m] = 1.0 - h.sum() / a.size
    return edges, dens, outside


def estimates_figure(
    estimates: Mapping[str, np.ndarray],
    true_mean: float,
    unit: str = "data in [-0.5, 0.5]",
    height: int = 380,
) -> go.Figure:
    """Overlaid histograms (densities) of each method's estimates with the true mean marked.

    Pass estimates and the true mean in the same units; ``unit`` labels the x axis.
    """
    edges, dens, outside = estimate_histograms(estimates, center=true_mean)
    mid = 0.5 * (edges[:-1] + edges[1:])
    data: list[dict] = []
    order = [m for m in METHODS if m in dens] + [m for m in dens if m not in METHODS]
    for m in order:
        a = np.asarray(estimates[m], dtype=np.float64)
        rmse = float(np.sqrt(np.mean((a - true_mean) ** 2)))
        data.append(
            dict(
                type="scatter",
                x=mid,
                y=dens[m],
                name=f"{m} (typical error ±{rmse:.2g})",
                mode="lines",
                line=dict(color=_color(m), width=2, shape="hvh"),
                fill="tozeroy",
                fillcolor=_rgba(_color(m), 0.18),
                hovertemplate=f"<b>{m}</b><br>estimate %{{x:.4g}}<br>density %{{y:.3g}}"
                "<extra></extra>",
            )
        )
    line, notes = _vline(
        true_mean, dict(color=TRUE_MEAN_COLOR, width=2), f"true mean {true_mean:.4g}", "right"
    )
    hidden = [f"{m} {100 * s:.1f}%" for m, s in outside.items() if s > 0.0005]
    note = "central 99% of every method shown" + (
        f" (outside: {', '.join(hidden)})" if hidden else ""
    )
    x_title = wrap_title(f"estimate of the mean ({unit}); {note}", WIDE_TITLE_CHARS)
    layout = _layout(
        "Where the private answers land (one estimate per simulated trial)",
        height,
        left=X_TITLE_MARGIN,  # its density ticks and title: measured as the bottom's 67 px
        bottom=x_title_margin(x_title),
        xaxis=dict(title=x_title),
        yaxis=dict(title="density", rangemode="tozero"),
        shapes=[line],
        annotations=notes,
    )
    return build(data, layout)


def _sweep_x(values: np.ndarray) -> tuple[np.ndarray, float | None, float, float]:
    """Positions on the log10 axis; inf goes one tenth of the span right of the largest."""
    v = np.asarray(values, dtype=np.float64)
    fin = np.isfinite(v) & (v > 0)
    lx = np.log10(v[fin]) if fin.any() else np.array([0.0])
    lo, hi = float(lx.min()), float(lx.max())
    span = max(hi - lo, 0.5)
    pub = hi + 0.15 * span if np.isinf(v).any() else None
    x = np.where(fin, np.log10(np.where(fin, v, 1.0)), pub if pub is not None else np.nan)
    return x, pub, lo, hi


def sweep_figure(
    sweep: Sweep,
    methods: Sequence[str],
    saturation: float = math.inf,
    n_fixed: int | None = None,
    eps_fixed: float | None = None,
    n_var: int | None = None,
    height: int = 460,
) -> go.Figure:
    """Each method's MSE as one group's eps grows (log-log), from a ``group_sweep``.

    The public level (inf) is drawn as a separate point on the right, joined by a dotted
    segment; the saturation point (where ADPM starts capping the group) is a vertical line.
    """
    x, pub, lo, hi = _sweep_x(sweep.x)
    fin = np.isfinite(sweep.x)
    data: list[dict] = []
    for m in [m for m in METHODS if m in methods and m in sweep.mse]:
        y = np.asarray(sweep.mse[m])
        data.append(
            dict(
                type="scatter",
                x=x[fin],
                y=y[fin],
                mode="lines",
                name=m,
                legendgroup=m,
                line=dict(color=_color(m), dash=METHOD_DASH.get(m, "solid"), width=2.5),
                customdata=sweep.x[fin],
                hovertemplate=f"<b>{m}</b><br>eps %{{customdata:.3g}}<br>MSE %{{y:.3e}}"
                "<extra></extra>",
            )
        )
        if pub is not None:
            last = np.flatnonzero(fin)
            xs = [x[last[-1]], pub] if last.size else [pub]
            ys = [y[last[-1]], y[-1]] if last.size else [y[-1]]
            data.append(
                dict(
                    type="scatter",
                    x=xs,
                    y=ys,
                    mode="lines+markers",
                    legendgroup=m,
                    showlegend=False,
                    line=dict(color=_color(m), dash="dot", width=1.5),
                    marker=dict(color=_color(m), size=[0, 10] if last.size else [10]),
                    hovertemplate=f"<b>{m}</b><br>eps = ∞ (public)<br>MSE %{{y:.3e}}"
                    "<extra></extra>",
                )
            )
    shapes: list[dict] = []
    notes: list[dict] = []
    if math.isfinite(saturation) and saturation > 0:
        sx = math.log10(saturation)
        if lo <= sx <= hi:  # grey dotted: FME's curve is vermillion dashed (METHOD_COLORS)
            line, notes = _vline(
                sx,
                dict(color="#555555", dash="dot", width=1.5),
                f"saturates at eps = {saturation:.3g}",
                "left",
            )
            shapes.append(line)
    tv, tt = eps_ticks(lo, hi)
    if pub is not None:
        tv, tt = [*tv, pub], [*tt, PUBLIC_LABEL]
    title = "MSE as one group's privacy level grows (exact MSE)"
    if n_fixed is not None and eps_fixed is not None and n_var is not None:
        title = (
            f"{n_fixed:,} users at eps = {eps_fixed:g} and {n_var:,} users at the eps on the "
            "x axis (exact MSE)"
        )
    yaxis: dict[str, Any] = dict(type="log", title="MSE (log scale)", exponentformat="e")
    window = _y_window([np.asarray(sweep.mse[m]) for m in methods if m in sweep.mse])
    if window is not None:
        yaxis["range"] = list(window)
        cut = [
            m
            for m in METHODS
            if m in methods
            and m in sweep.mse
            and np.nanmax(np.log10(np.where(sweep.mse[m] > 0, sweep.mse[m], np.nan))) > window[1]
        ]
        if cut:
            notes.append(
                dict(
                    text=f"{', '.join(cut)} above the top (autoscale to see all)",
                    xref="paper",
                    yref="paper",
                    x=1,
                    y=1,
                    xanchor="right",
                    yanchor="top",
                    showarrow=False,
                    font=dict(size=11, color="#555555"),
                )
            )
    layout = _layout(
        title,
        height,
        left=LOG_Y_LEFT,
        bottom=X_TITLE_MARGIN,
        xaxis=dict(title="eps of the varying group (log scale)", tickvals=tv, ticktext=tt),
        yaxis=yaxis,
        shapes=shapes,
        annotations=notes,
    )
    return build(data, layout)


SWEEP_DECADES = 2.0
"""The sweep's y axis shows at most this many decades above the lowest curve."""


def _y_window(series: Sequence[np.ndarray]) -> tuple[float, float] | None:
    """A log10 y range starting just below the smallest positive value and spanning at most
    SWEEP_DECADES (so that one far-off method does not flatten the others), or None when
    everything already fits."""
    vals = np.concatenate([np.ravel(v) for v in series]) if series else np.zeros(0)
    vals = vals[np.isfinite(vals) & (vals > 0)]
    if vals.size == 0:
        return None
    lo, hi = float(np.log10(vals.min())), float(np.log10(vals.max()))
    if hi - lo <= SWEEP_DECADES:
        return None
    return lo - 0.1, lo + SWEEP_DECADES


def paper_figure(rows: Sequence[Mapping[str, Any]], height: int = 420) -> go.Figure:
    """The paper's Table 1 (open circles) next to our simulation (dots with 95% CI) and exact
    values (diamonds), ln MSE per method, high and low Var(eps) side by side.

    ``rows`` are hdp_core.experiments.table1 rows (method, paper_high, exact_high, sim_high,
    sim_high_lo, sim_high_hi and the same for low).
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        subplot_titles=("High Var(eps): log eps ~ U[-4, 2]", "Low Var(eps): log eps ~ U[-3, -2]"),
    )
    methods = [r["method"] for r in rows]
    for col, reg in ((1, "high"), (2, "low")):
        fig.add_trace(
            go.Scatter(
                x=methods,
                y=[r[f"paper_{reg}"] for r in rows],
                mode="markers",
                name="paper",
                legendgroup="paper",
                showlegend=col == 1,
                marker=dict(
                    symbol="circle-open",
                    size=16,
                    line=dict(width=2),
                    color=[_color(m) for m in methods],
                ),
                hovertemplate="<b>%{x}</b><br>paper ln MSE %{y:.2f}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        err = _ci_arrays(rows, reg)
        fig.add_trace(
            go.Scatter(
                x=methods,
                y=[r[f"sim_{reg}"] for r in rows],
                mode="markers",
                name="reproduced (simulated)",
                legendgroup="sim",
                showlegend=col == 1,
                marker=dict(size=9, color=[_color(m) for m in methods]),
                error_y=err,
                hovertemplate="<b>%{x}</b><br>simulated ln MSE %{y:.2f}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.add_trace(
            go.Scatter(
                x=methods,
                y=[r[f"exact_{reg}"] for r in rows],
                mode="markers",
                name="exact",
                legendgroup="exact",
                showlegend=col == 1,
                marker=dict(symbol="diamond-open", size=11, color="#555555"),
                hovertemplate="<b>%{x}</b><br>exact ln MSE %{y:.2f}<extra></extra>",
            ),
            row=1,
            col=col,
        )
    _finish(
        fig,
        "The paper's Table 1 next to ours: ln MSE per method (lower is better)",
        height,
    )
    fig.update_layout(
        margin=dict(l=60, r=20, t=70, b=90),
        legend=dict(orientation="h", yanchor="top", y=-0.12, xanchor="left", x=0),
    )
    fig.update_yaxes(title_text="ln MSE (natural log)", row=1, col=1)
    return fig


def _ci_arrays(rows: Sequence[Mapping[str, Any]], reg: str) -> dict:
    """Asymmetric error bars from the rows' 95% CI bounds sim_<reg>_lo/_hi (ln units); a
    bound that is not finite (a CI reaching MSE 0) draws no bar on that side."""
    up, down = [], []
    for r in rows:
        y, a, b = r[f"sim_{reg}"], r[f"sim_{reg}_lo"], r[f"sim_{reg}_hi"]
        fy = y is not None and math.isfinite(y)
        up.append(max(b - y, 0.0) if fy and b is not None and math.isfinite(b) else 0.0)
        down.append(max(y - a, 0.0) if fy and a is not None and math.isfinite(a) else 0.0)
    return dict(type="data", symmetric=False, array=up, arrayminus=down, thickness=1.5)


def spread_figure(curve: Any, height: int = 340) -> go.Figure:
    """Exact MSE against the data's true standard deviation (hdp_app.views.tuned.SpreadCurve)
    for ADPM, ADPM tuned to ``curve.tuned_sd`` and PropDPM, log-log, with the tuned spread
    marked: what a wrong guess of the spread costs."""
    from hdp_app.views.tuned import TUNED, tuned_label

    fig = go.Figure()
    for m, y in curve.mse.items():
        name = tuned_label(curve.tuned_sd) if m == TUNED else m
        fig.add_trace(
            go.Scatter(
                x=curve.true_sd,
                y=y,
                mode="lines",
                name=name,
                line=dict(color=_color(m), dash=METHOD_DASH.get(m, "solid"), width=2.5),
                hovertemplate=(
                    f"<b>{name}</b><br>true sd %{{x:.3g}}<br>MSE %{{y:.3e}}<extra></extra>"
                ),
            )
        )
    fig.add_vline(x=curve.tuned_sd, line=dict(color=_color(TUNED), dash="dot", width=1))
    return _finish(
        fig,
        "If the spread is guessed wrong: exact MSE against the true spread",
        height,
        xaxis=dict(type="log", title="true standard deviation of the data (on [-0.5, 0.5])"),
        yaxis=dict(type="log", title="exact MSE (log scale)", exponentformat="e"),
    )


def whatif_figure(curve: Any, shift: float, unit: str = "", height: int = 400) -> go.Figure:
    """The what-if "values differ by privacy level": each method's RMSE against the table's
    own mean (y, data units) against how far the strict users' values are moved (x, data
    units); the current shift is a dotted line. ``curve`` is views.whatif.whatif_curve's
    WhatIfCurve (NaN points are not drawn)."""
    u = f" ({fig_text(unit)})" if unit else ""
    fig = go.Figure()
    x = np.asarray(curve.shifts, dtype=np.float64)
    for m, y in curve.rmse.items():
        y = np.asarray(y, dtype=np.float64)
        if not np.isfinite(y).any():
            continue
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                name=m,
                line=dict(color=_color(m), dash=METHOD_DASH.get(m, "solid"), width=2.5),
                hovertemplate=f"<b>{m}</b><br>shift %{{x:.4g}}<br>RMSE %{{y:.4g}}<extra></extra>",
            )
        )
    fig.add_vline(x=float(shift), line=dict(color="#7F7F7F", dash="dot", width=2))
    return _finish(
        fig,
        "Error against the table's own mean when strict users' values move",
        height,
        xaxis=dict(title=f"shift of the strict users' values{u}"),
        yaxis=dict(title=f"RMSE vs the table's mean{u}", rangemode="tozero"),
    )
