"""Figures for the Tier designer page: asked versus granted privacy per tier, each method's
error in real units, and the what-if curve. Data in (from :mod:`hdp_core.design`),
``go.Figure`` out.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hdp_app.figures.style import (
    GRANTED_COLOR,
    LAYOUT_DEFAULTS,
    LOWER_BOUND_COLOR,
    METHOD_COLORS,
    METHOD_DASH,
    PUBLIC_COLOR,
    REQUESTED_COLOR,
    SATURATION_COLOR,
    X_TITLE_MARGIN,
    build,
    fast_layout,
    fig_text,
    log_axis,
    public_y,
    wrap_title,
)
from hdp_core.design import MenuReport, ShareSweep

__all__ = ["MENU_FIGURE_CONFIG", "menu_figure", "method_error_figure", "whatif_figure"]

_METHOD_LABELS = {
    "ADPM": "ADPM (optimal weights)",
    "PropDPM": "PropDPM (weights ∝ eps)",
    "UNI": "UNI (everyone at the strictest tier)",
}


def _unit(u: str) -> str:
    return f" ({fig_text(u)})" if u else ""


MENU_FIGURE_HEIGHT = 430
"""Height (px) of the menu figure (its two panels side by side)."""

MENU_MARGIN = dict(l=105, r=20, t=66, b=92)
"""The margins plotly's automargin settles on for the menu figure (style.X_TITLE_MARGIN's
note: asked for up front, the figure is drawn once per slider step)."""


def _panel_title(text: str, x: float, size: int = 14) -> dict:
    """A panel's title where plotly.subplots.make_subplots puts it (above the panel, centred
    on it), at ``size`` px."""
    return dict(
        font=dict(size=size),
        showarrow=False,
        text=text,
        x=x,
        xanchor="center",
        xref="paper",
        y=1.0,
        yanchor="bottom",
        yref="paper",
    )


def _error_title(rep: MenuReport, word: str) -> str:
    return (
        wrap_title(f"Error of the mean{_unit(rep.menu.unit)}", 28)
        + f"<br><sup>{word}; smaller is better</sup>"
    )


def menu_figure(report: MenuReport, metric: str = "half_width") -> go.Figure:
    """The menu at a glance, one figure with two panels side by side (one chart to redraw
    per slider step, not two):

    * left, per tier: the eps it offers (asked) and the eps ADPM grants, on a log axis, with
      tau* dashed; public tiers are drawn at the top, labelled 'public (∞)';
    * right, horizontal bars: the error of the mean (RMSE or 95% half-width, real units) of
      ADPM, PropDPM and UNI, with the all-users-public error as a dotted grey line.

    Titles are wrapped and the error bars' labels sit inside a long bar, so nothing is cut at
    a projector's 1024 px; the tier bars carry no label (their levels are in the tier table
    right above, and labels cost a fifth of a slider step's redraw). Built from plain dicts
    and validated once (the layout of make_subplots(1, 2, column_widths=[0.55, 0.45],
    horizontal_spacing=0.16)): a new figure on every slider step, so its cost is on the
    step's path."""
    rep = report
    unit = fig_text(rep.menu.unit)
    word = "RMSE" if metric == "rmse" else "95% error half-width"
    tiers, x1, y1 = _tier_panel(rep)
    methods, x2, y2 = _method_panel(rep, metric, word, unit, "x2", "y2")
    layout = fast_layout(
        xaxis=dict(anchor="y", domain=[0.0, 0.462], **x1),
        yaxis=dict(anchor="x", domain=[0.0, 1.0], **y1),
        xaxis2=dict(anchor="y2", domain=[0.622, 1.0], **x2),
        yaxis2=dict(anchor="x2", domain=[0.0, 1.0], **y2),
        annotations=[
            _panel_title(
                "Privacy per tier: offered vs granted<br><sup>smaller eps = more privacy</sup>",
                0.231,
            ),
            _panel_title(_error_title(rep, word), 0.811),
        ],
        height=MENU_FIGURE_HEIGHT,
        barmode="group",
        margin=MENU_MARGIN,
        legend=dict(orientation="h", y=-0.1, yanchor="top", x=0, xanchor="left"),
    )
    return build(tiers + methods, layout)


def _tier_panel(rep: MenuReport) -> tuple[list[dict], dict, dict]:
    """The left panel of :func:`menu_figure`: asked vs granted eps per tier (its traces, and
    its x and y axes' settings)."""
    names = [fig_text(nm) for nm in rep.menu.names]
    asked = rep.menu.levels
    granted = rep.granted
    fin = np.concatenate([asked[np.isfinite(asked)], granted[np.isfinite(granted)]])
    fin = fin[fin > 0]
    lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.1, 10.0)
    top = public_y(hi)
    y_asked = np.where(np.isfinite(asked), asked, top)
    y_granted = np.where(np.isfinite(granted), granted, top)
    txt_asked = ["public" if math.isinf(a) else f"{a:.3g}" for a in asked]
    txt_granted = [
        ("public" if math.isinf(g) else f"{g:.4g}") + (" (capped)" if s else "")
        for g, s in zip(granted, rep.saturated)
    ]
    users = [f"{int(c):,}" for c in rep.counts]
    data: list[dict] = [
        dict(
            type="bar",
            x=names,
            y=y_asked,
            name="offered (eps asked)",
            marker=dict(
                color=REQUESTED_COLOR,
                line=dict(
                    color=[PUBLIC_COLOR if math.isinf(a) else REQUESTED_COLOR for a in asked],
                    width=3,
                ),
            ),
            text=txt_asked,
            textposition="none",  # the levels are in the tier table above (cheaper redraw)
            customdata=users,
            hovertemplate="%{x}: offers eps = %{text}<br>%{customdata} users<extra></extra>",
            xaxis="x",
            yaxis="y",
        ),
        dict(
            type="bar",
            x=names,
            y=y_granted,
            name="granted by ADPM",
            marker=dict(color=GRANTED_COLOR),
            text=txt_granted,
            textposition="none",  # the levels are in the tier table above (cheaper redraw)
            customdata=users,
            hovertemplate="%{x}: granted eps = %{text}<br>%{customdata} users<extra></extra>",
            xaxis="x",
            yaxis="y",
        ),
    ]
    cap = rep.worth_offering
    if math.isfinite(cap):
        label = (
            f"τ* = {cap:.4g} (looser tiers get τ*)"
            if math.isfinite(rep.tau_star)
            else f"{cap:.4g}: a looser tier would be capped"
        )
        # the line as a trace across the panel: in the legend, not on the bars
        data.append(
            dict(
                type="scatter",
                x=[-0.5, len(names) - 0.5],
                y=[cap, cap],
                mode="lines",
                name=label,
                line=dict(color=SATURATION_COLOR, dash="dash", width=2),
                hoverinfo="skip",
                xaxis="x",
                yaxis="y",
            )
        )
    yaxis = log_axis(
        lo,
        hi,
        public=bool(np.isinf(asked).any()),
        title=dict(text="eps (log scale; top = public)"),
    )
    return data, dict(type="category", range=[-0.5, len(names) - 0.5]), yaxis


def method_error_figure(
    report: MenuReport, metric: str = "half_width", height: int = 320
) -> go.Figure:
    """The right panel of :func:`menu_figure` on its own (the Tour's tier-menu step):
    horizontal bars of the error of the mean (RMSE or 95% half-width, real units) for ADPM,
    PropDPM and UNI, with the all-users-public error as a dotted grey line."""
    rep = report
    unit = fig_text(rep.menu.unit)
    word = "RMSE" if metric == "rmse" else "95% error half-width"
    data, xaxis, yaxis = _method_panel(rep, metric, word, unit, "x", "y")
    layout = fast_layout(
        xaxis=dict(anchor="y", domain=[0.0, 1.0], **xaxis),
        yaxis=dict(anchor="x", domain=[0.0, 1.0], **yaxis),
        annotations=[_panel_title(_error_title(rep, word), 0.5, size=16)],
        height=height,
        margin=dict(l=80, r=20, t=66, b=80),
        legend=dict(orientation="h", y=-0.12, yanchor="top", x=0, xanchor="left"),
    )
    return build(data, layout)


def _method_panel(
    rep: MenuReport, metric: str, word: str, unit: str, x: str, y: str
) -> tuple[list[dict], dict, dict]:
    """Each method's error in real units on the axes ``x`` and ``y`` (the right panel of
    :func:`menu_figure`): its traces, and its x and y axes' settings."""
    methods = ["UNI", "PropDPM", "ADPM"]
    vals = [rep.errors[m].get(metric) for m in methods]
    ref = rep.all_public.get(metric)
    data: list[dict[str, Any]] = [
        dict(
            type="bar",
            y=methods,
            x=vals,
            orientation="h",
            marker=dict(color=[METHOD_COLORS[m] for m in methods]),
            text=[f"{v:.4g}{' ' + unit if unit else ''}" for v in vals],
            textposition="auto",  # inside a long bar, beside a short one: never past the edge
            customdata=[_METHOD_LABELS[m] for m in methods],
            hovertemplate=f"%{{customdata}}: {word} %{{x:.4g}}<extra></extra>",
            showlegend=False,
            xaxis=x,
            yaxis=y,
        ),
        dict(
            type="scatter",
            x=[ref, ref],
            y=[-0.5, len(methods) - 0.5],
            mode="lines",
            name=f"all users public: {ref:.3g}{' ' + unit if unit else ''}",
            line=dict(color=LOWER_BOUND_COLOR, dash="dot", width=2),
            hoverinfo="skip",
            xaxis=x,
            yaxis=y,
        ),
    ]
    xmax = max(max(vals), ref)
    xaxis: dict[str, Any] = dict(rangemode="tozero", range=[0, 1.15 * xmax] if xmax > 0 else None)
    return data, xaxis, dict(type="category", range=[-0.5, len(methods) - 0.5])


def whatif_figure(
    sweep: ShareSweep,
    metric: str,
    names: tuple[str, str],
    unit: str,
    current: float,
    current_value: float,
    chosen: float,
    height: int = 520,
) -> go.Figure:
    """Two panels against tier a's share: each method's error (real units) and the loosest
    level worth offering (tau*, log axis). A dashed line marks the slider's point, a diamond
    the menu as it is (``current`` share, ``current_value`` ADPM error)."""
    a_name, b_name = (fig_text(nm) for nm in names)
    word = "RMSE" if metric == "rmse" else "95% half-width"
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.1,
        subplot_titles=(
            f"Error of the mean ({word}{_unit(unit)})",
            "tau*: the loosest level worth offering",
        ),
    )
    x = sweep.share_a
    vals = sweep.values(metric)
    for m in ("UNI", "PropDPM", "ADPM"):
        fig.add_scatter(
            x=x,
            y=vals[m],
            mode="lines",
            name=m,
            row=1,
            col=1,
            line=dict(color=METHOD_COLORS[m], dash=METHOD_DASH[m], width=3 if m == "ADPM" else 2),
            hovertemplate=f"{a_name} %{{x:.3g}}%: {m} {word} %{{y:.4g}}<extra></extra>",
        )
    w = np.where(np.isfinite(sweep.worth), sweep.worth, np.nan)
    fig.add_scatter(
        x=x,
        y=w,
        mode="lines",
        name="tau* (cap)",
        row=2,
        col=1,
        line=dict(color=SATURATION_COLOR, width=3),
        hovertemplate=f"{a_name} %{{x:.3g}}%: tau* %{{y:.4g}}<extra></extra>",
    )
    fig.add_scatter(
        x=[current],
        y=[current_value],
        mode="markers",
        name="menu as it is (ADPM)",
        marker=dict(
            symbol="diamond", size=12, color=GRANTED_COLOR, line=dict(color="white", width=1)
        ),
        row=1,
        col=1,
        hovertemplate="menu as it is<extra></extra>",
    )
    for row in (1, 2):
        fig.add_vline(x=chosen, line=dict(color="#444444", dash="dash", width=1.5), row=row, col=1)
    fig.update_layout(**LAYOUT_DEFAULTS, height=height)
    fig.update_layout(
        title=dict(text=f"What if users move between {a_name} and {b_name}?", y=0.98),
        margin=dict(l=70, t=120, b=X_TITLE_MARGIN),  # what automargin settles on
        legend=dict(y=1.09, yanchor="bottom"),
    )
    fig.update_xaxes(
        title=f"share of all users in {a_name} (%); {b_name} takes the rest", row=2, col=1
    )
    fig.update_yaxes(title=f"{word}{_unit(unit)}", rangemode="tozero", row=1, col=1)
    fin = w[np.isfinite(w)]
    lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.1, 10.0)
    fig.update_yaxes(title="eps", row=2, col=1, **log_axis(lo, hi))  # full labels, no "2, 3"
    return fig


MENU_FIGURE_CONFIG = {"staticPlot": True}
"""The menu figure's plotly config: a static picture (no hover, zoom or toolbar), a third
cheaper to redraw on each slider step now that it is drawn on arrival (issue 31); its error
bars carry their numbers, and the tiers' levels are in the tier table above it."""
