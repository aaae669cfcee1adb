"""Figures for the Tier designer page: asked versus granted privacy per tier, each method's
error in real units, and the what-if curve. Data in (from :mod:`hdp_core.design`),
``go.Figure`` out.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..design import MenuReport, ShareSweep
from .style import (
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
)

__all__ = ["method_error_figure", "tier_privacy_figure", "whatif_figure"]

_METHOD_LABELS = {
    "ADPM": "ADPM (optimal weights)",
    "PropDPM": "PropDPM (weights ∝ eps)",
    "UNI": "UNI (everyone at the strictest tier)",
}


def _unit(u: str) -> str:
    return f" ({fig_text(u)})" if u else ""


def tier_privacy_figure(report: MenuReport, height: int = 400) -> go.Figure:
    """Per tier: the eps it offers (asked) and the eps ADPM grants, on a log axis, with tau*
    dashed. Public tiers are drawn at the top, labelled 'public'."""
    rep = report
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
    fig = go.Figure()
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
    )
    cap = rep.worth_offering
    if math.isfinite(cap):
        label = (
            f"τ* = {cap:.4g} (looser tiers get τ*)"
            if math.isfinite(rep.tau_star)
            else f"{cap:.4g}: a looser tier would be capped"
        )
        fig.add_hline(y=cap, line=dict(color=SATURATION_COLOR, dash="dash", width=2))
        fig.add_scatter(
            x=[None],
            y=[None],
            mode="lines",
            name=label,  # legend, not on bars
            line=dict(color=SATURATION_COLOR, dash="dash", width=2),
        )
    fig.update_layout(**LAYOUT_DEFAULTS, height=height, barmode="group")
    fig.update_layout(
        title=dict(
            text="Privacy per tier: offered vs granted<br><sup>smaller eps = more privacy</sup>",
            y=0.97,
        ),
        margin=dict(l=105, t=95, b=X_TITLE_MARGIN),  # what automargin settles on
        legend=dict(y=1.0, yanchor="bottom"),
    )
    fig.update_yaxes(
        **log_axis(
            lo,
            hi,
            public=bool(np.isinf(asked).any()),
            title=dict(text="eps (log scale; top = public)"),
        )
    )
    fig.update_xaxes(title="tier")
    return fig


def method_error_figure(
    report: MenuReport, metric: str = "half_width", height: int = 320
) -> go.Figure:
    """Horizontal bars: the error of the mean (RMSE or 95% half-width, real units) for ADPM,
    PropDPM and UNI, with the all-users-public error as a grey reference line."""
    rep = report
    unit = fig_text(rep.menu.unit)
    word = "RMSE" if metric == "rmse" else "95% error half-width"
    methods = ["UNI", "PropDPM", "ADPM"]
    vals = [rep.errors[m].get(metric) for m in methods]
    fig = go.Figure()
    for m, v in zip(methods, vals):
        fig.add_bar(
            y=[_METHOD_LABELS[m]],
            x=[v],
            orientation="h",
            name=m,
            marker_color=METHOD_COLORS[m],
            text=[f"{v:.4g}{' ' + unit if unit else ''}"],
            textposition="outside",
            hovertemplate=f"{m}: {word} %{{x:.4g}}<extra></extra>",
            showlegend=False,
        )
    ref = rep.all_public.get(metric)
    fig.add_vline(
        x=ref,
        line=dict(color=LOWER_BOUND_COLOR, dash="dot", width=2),
        annotation_text=f"all users public: {ref:.3g}",
        annotation_position="top right",
        annotation_font_color=LOWER_BOUND_COLOR,
    )
    fig.update_layout(**LAYOUT_DEFAULTS, height=height)
    fig.update_layout(
        title=dict(
            text=f"Error of the mean: {word}{_unit(unit)}<br><sup>smaller is better</sup>", y=0.95
        ),
        margin=dict(l=189, t=80, b=X_TITLE_MARGIN),  # what automargin settles on
    )
    fig.update_xaxes(title=f"{word}{_unit(unit)}", rangemode="tozero")
    xmax = max(max(vals), ref)
    fig.update_xaxes(range=[0, 1.3 * xmax] if xmax > 0 else None)
    return fig


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
