"""Figures for the Tier designer page: asked versus granted privacy per tier, each method's
error in real units, and the what-if curve. Data in (from :mod:`hdp_core.design`),
``go.Figure`` out.
"""

from __future__ import annotations

import math

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
    fig_text,
    log_axis,
    public_y,
    wrap_title,
)
from hdp_core.design import MenuReport, ShareSweep

__all__ = ["menu_figure", "method_error_figure", "whatif_figure"]

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


def menu_figure(report: MenuReport, metric: str = "half_width") -> go.Figure:
    """The menu at a glance, one figure with two panels side by side (one chart to redraw
    per slider step, not two):

    * left, per tier: the eps it offers (asked) and the eps ADPM grants, on a log axis, with
      tau* dashed; public tiers are drawn at the top, labelled 'public (∞)';
    * right, horizontal bars: the error of the mean (RMSE or 95% half-width, real units) of
      ADPM, PropDPM and UNI, with the all-users-public error as a dotted grey line.

    Titles are wrapped and the bar labels sit inside a long bar, so nothing is cut at a
    projector's 1024 px."""
    rep = report
    unit = fig_text(rep.menu.unit)
    word = "RMSE" if metric == "rmse" else "95% error half-width"
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.55, 0.45],
        horizontal_spacing=0.16,
        subplot_titles=(
            "Privacy per tier: offered vs granted<br><sup>smaller eps = more privacy</sup>",
            wrap_title(f"Error of the mean{_unit(rep.menu.unit)}", 28)
            + f"<br><sup>{word}; smaller is better</sup>",
        ),
    )
    for ann in fig.layout.annotations:
        ann.font = dict(size=14)
    _tier_panel(fig, rep)
    _method_panel(fig, rep, metric, word, unit, col=2)
    fig.update_layout(
        **LAYOUT_DEFAULTS,
        height=MENU_FIGURE_HEIGHT,
        barmode="group",
    )
    fig.update_layout(
        margin=MENU_MARGIN,
        legend=dict(orientation="h", y=-0.1, yanchor="top", x=0, xanchor="left"),
    )
    return fig


def _tier_panel(fig: go.Figure, rep: MenuReport) -> None:
    """The left panel of :func:`menu_figure`: asked vs granted eps per tier."""
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
    fig.add_bar(
        x=names,
        y=y_asked,
        name="offered (eps asked)",
        marker_color=REQUESTED_COLOR,
        marker_line=dict(
            color=[PUBLIC_COLOR if math.isinf(a) else REQUESTED_COLOR for a in asked], width=3
        ),
        text=txt_asked,
        textposition="outside",
        customdata=users,
        hovertemplate="%{x}: offers eps = %{text}<br>%{customdata} users<extra></extra>",
        row=1,
        col=1,
    )
    fig.add_bar(
        x=names,
        y=y_granted,
        name="granted by ADPM",
        marker_color=GRANTED_COLOR,
        text=txt_granted,
        textposition="outside",
        customdata=users,
        hovertemplate="%{x}: granted eps = %{text}<br>%{customdata} users<extra></extra>",
        row=1,
        col=1,
    )
    cap = rep.worth_offering
    if math.isfinite(cap):
        label = (
            f"τ* = {cap:.4g} (looser tiers get τ*)"
            if math.isfinite(rep.tau_star)
            else f"{cap:.4g}: a looser tier would be capped"
        )
        # the line as a trace across the panel: in the legend, not on the bars
        fig.add_scatter(
            x=[-0.5, len(names) - 0.5],
            y=[cap, cap],
            mode="lines",
            name=label,
            line=dict(color=SATURATION_COLOR, dash="dash", width=2),
            hoverinfo="skip",
            row=1,
            col=1,
        )
    fig.update_yaxes(
        **log_axis(
            lo,
            hi,
            public=bool(np.isinf(asked).any()),
            title=dict(text="eps (log scale; top = public)"),
        ),
        row=1,
        col=1,
    )
    fig.update_xaxes(type="category", range=[-0.5, len(names) - 0.5], row=1, col=1)


def method_error_figure(
    report: MenuReport, metric: str = "half_width", height: int = 320
) -> go.Figure:
    """The right panel of :func:`menu_figure` on its own (the Tour's tier-menu step):
    horizontal bars of the error of the mean (RMSE or 95% half-width, real units) for ADPM,
    PropDPM and UNI, with the all-users-public error as a dotted grey line."""
    rep = report
    unit = fig_text(rep.menu.unit)
    word = "RMSE" if metric == "rmse" else "95% error half-width"
    fig = make_subplots(
        rows=1,
        cols=1,
        subplot_titles=(
            wrap_title(f"Error of the mean{_unit(rep.menu.unit)}", 28)
            + f"<br><sup>{word}; smaller is better</sup>",
        ),
    )
    _method_panel(fig, rep, metric, word, unit, col=1)
    fig.update_layout(**LAYOUT_DEFAULTS, height=height)
    fig.update_layout(
        margin=dict(l=80, r=20, t=66, b=80),
        legend=dict(orientation="h", y=-0.12, yanchor="top", x=0, xanchor="left"),
    )
    return fig


def _method_panel(
    fig: go.Figure, rep: MenuReport, metric: str, word: str, unit: str, col: int
) -> None:
    """Each method's error in real units, in column ``col`` of ``fig`` (the right panel of
    :func:`menu_figure`)."""
    methods = ["UNI", "PropDPM", "ADPM"]
    vals = [rep.errors[m].get(metric) for m in methods]
    fig.add_bar(
        y=methods,
        x=vals,
        orientation="h",
        marker_color=[METHOD_COLORS[m] for m in methods],
        text=[f"{v:.4g}{' ' + unit if unit else ''}" for v in vals],
        textposition="auto",  # inside a long bar, beside a short one: never past the edge
        customdata=[_METHOD_LABELS[m] for m in methods],
        hovertemplate=f"%{{customdata}}: {word} %{{x:.4g}}<extra></extra>",
        showlegend=False,
        row=1,
        col=col,
    )
    ref = rep.all_public.get(metric)
    fig.add_scatter(
        x=[ref, ref],
        y=[-0.5, len(methods) - 0.5],
        mode="lines",
        name=f"all users public: {ref:.3g}{' ' + unit if unit else ''}",
        line=dict(color=LOWER_BOUND_COLOR, dash="dot", width=2),
        hoverinfo="skip",
        row=1,
        col=col,
    )
    xmax = max(max(vals), ref)
    fig.update_xaxes(
        rangemode="tozero", range=[0, 1.15 * xmax] if xmax > 0 else None, row=1, col=col
    )
    fig.update_yaxes(type="category", range=[-0.5, len(methods) - 0.5], row=1, col=col)


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
