"""Figures for the Saturation page: the r-versus-eps curve, the two-group phase diagram and
Algorithm 1 step by step. Data in (from :mod:`hdp_app.views.saturation`), ``go.Figure`` out.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from hdp_app.figures.style import (
    FIXED_X_MARGIN,
    GRANTED_COLOR,
    PROJECTOR_CHART_PX,
    PUBLIC_COLOR,
    REQUESTED_COLOR,
    SATURATION_COLOR,
    X_TITLE_MARGIN,
    build,
    decade_ticks,
    fast_layout,
    fig_text,
    hline,
    log_axis,
    projector,
    public_y,
    vline,
)
from hdp_app.views.formatting import subscript
from hdp_app.views.saturation import RCurve, TwoLevelPoint
from hdp_core.adpm import AlgorithmTrace

__all__ = [
    "phase_figure",
    "r_curve_figure",
    "tau_spread_figure",
    "trace_figure",
    "walkthrough_figure",
]

PUBLIC_EDGE = "#7a7000"
UNSAT_FILL = "rgba(0, 114, 178, 0.10)"  # ADPM blue, light: users get what they ask
SAT_FILL = "rgba(213, 94, 0, 0.12)"  # saturation vermillion, light: the looser group is capped


def _span(*arrays: np.ndarray, tau: float = math.inf) -> tuple[float, float]:
    """(smallest positive, largest) finite level over ``arrays`` and tau."""
    vals = np.concatenate(
        [np.asarray(a, dtype=np.float64).ravel() for a in arrays] + [np.array([tau])]
    )
    vals = vals[np.isfinite(vals) & (vals > 0)]
    return (float(vals.min()), float(vals.max())) if vals.size else (0.1, 10.0)


def _top(*arrays: np.ndarray, tau: float = math.inf) -> float:
    """A y value well above every finite level (style.public_y), where public users
    (eps = inf) are drawn, on the axis's single "public (∞)" tick."""
    return public_y(_span(*arrays, tau=tau)[1])


def r_curve_figure(curve: RCurve, height: int = 440) -> go.Figure:
    """Requested eps and granted r against the users' rank (sorted by eps), log y axis, with
    tau* (dashed) and the saturation index (dotted) marked. Tiers are drawn as flat segments
    over their users; public users (eps = inf) sit on a labelled line at the top."""
    c = curve
    if c.per_tier:  # two points per tier: its first and last user
        x = np.column_stack([c.rank_start, c.rank_end]).ravel().astype(np.float64)
        rep = 2
    else:
        x = c.rank_start.astype(np.float64)
        rep = 1
    req = np.repeat(c.requested, rep)
    gra = np.repeat(c.granted, rep)
    top = _top(c.requested, c.granted, tau=c.tau)
    custom = np.column_stack(
        [
            np.repeat(c.rank_start, rep),
            np.repeat(c.rank_end, rep),
            np.where(np.isfinite(req), req, np.nan),
            np.where(np.isfinite(gra), gra, np.nan),
            np.repeat(c.weight, rep),
        ]
    )
    names = (
        np.repeat(np.array([fig_text(nm) for nm in c.names], dtype=object), rep)
        if c.names
        else None
    )
    who = (
        "%{text}<br>users %{customdata[0]:,} to %{customdata[1]:,}"
        if c.per_tier
        else "user %{customdata[0]:,} (sorted by eps)"
    )
    hover = (
        who + "<br>asked eps = %{customdata[2]:.4g}<br>granted eps = %{customdata[3]:.4g}"
        "<br>weight of one user = %{customdata[4]:.3e}<extra></extra>"
    )
    fin = np.isfinite(req)
    gfin = np.isfinite(gra)
    mode = "lines" if (c.per_tier or x.size > 200) else "lines+markers"
    data = [
        dict(
            type="scatter",
            x=x[fin],
            y=req[fin],
            mode=mode,
            name="asked for (eps)",
            line=dict(color=REQUESTED_COLOR, width=3, dash="dot"),
            marker=dict(size=5),
            customdata=custom[fin],
            hovertemplate=hover,
            **({"text": names[fin]} if names is not None else {}),
        ),
        dict(
            type="scatter",
            x=x[gfin],
            y=gra[gfin],
            mode=mode,
            name="granted by ADPM (r)",
            line=dict(color=GRANTED_COLOR, width=3),
            marker=dict(size=5),
            customdata=custom[gfin],
            hovertemplate=hover,
            **({"text": names[gfin]} if names is not None else {}),
        ),
    ]
    pub = ~fin
    if pub.any():
        pub_hover = (
            (
                "%{text}<br>users %{customdata[0]:,} to %{customdata[1]:,}"
                if c.per_tier
                else "user %{customdata[0]:,}"
            )
            + "<br>asked: public (∞)<br>granted eps = %{customdata[3]:.4g}"
            "<br>weight of one user = %{customdata[4]:.3e}<extra></extra>"
        )
        data.append(
            dict(
                type="scatter",
                x=x[pub],
                y=np.full(int(pub.sum()), top),
                mode="lines+markers",
                name="asked: public (∞), drawn at the top",
                line=dict(color=PUBLIC_EDGE, width=2),
                marker=dict(color=PUBLIC_COLOR, size=8, line=dict(color=PUBLIC_EDGE, width=1)),
                customdata=custom[pub],
                hovertemplate=pub_hover,
                **({"text": names[pub]} if names is not None else {}),
            )
        )
    shapes, notes = [], []
    if math.isfinite(c.tau):
        shapes.append(hline(c.tau, SATURATION_COLOR, "dash"))
        notes.append(
            dict(
                x=0.0,
                xref="paper",
                y=math.log10(c.tau),
                yref="y",
                yanchor="bottom",
                xanchor="left",
                showarrow=False,
                text=f"τ* = {c.tau:.4g}",
                font=dict(color=SATURATION_COLOR),
            )
        )
        if c.n_usable > c.k_unsaturated:
            xv = c.k_unsaturated + 0.5
            shapes.append(vline(xv, SATURATION_COLOR, "dot"))
            notes.append(
                dict(
                    x=xv,
                    xref="x",
                    y=1.0,
                    yref="paper",
                    yanchor="bottom",
                    # in the right half the label runs leftwards, so it stays in the chart
                    xanchor="right" if xv > 0.5 * float(c.rank_end[-1]) else "left",
                    showarrow=False,
                    text=f"saturation after user k = {c.k_unsaturated:,}",
                    font=dict(color=SATURATION_COLOR),
                )
            )
    x_hi = float(c.rank_end[-1]) if c.rank_end.size else 1.0
    layout = fast_layout(
        margin=dict(l=76, r=20, t=80, b=X_TITLE_MARGIN),  # what automargin settles on
        height=height,
        shapes=shapes,
        annotations=notes,
        xaxis=dict(
            title=dict(text="users sorted by the eps they asked for (rank)"),
            range=[0.5 - 0.02 * x_hi, x_hi * 1.02 + 0.5],
        ),
        yaxis=log_axis(
            *_span(c.requested, c.granted, tau=c.tau),
            public=bool(pub.any()),
            title=dict(text="privacy level eps (log scale; smaller = more privacy)"),
        ),
    )
    return build(data, layout)


def phase_figure(
    eps1: np.ndarray,
    boundary: np.ndarray,
    n: float,
    frac: float,
    point: TwoLevelPoint | None = None,
    y_max: float = 1e4,
    height: int = 440,
    point_name: str = "current profile",
) -> go.Figure:
    """The two-group phase diagram: eps1 (strict group, x) against eps2 (looser group, y), log
    axes, the boundary eps2 = eps1 + 8/(n f eps1) and the two regions; ``point`` marks the
    current profile, or the levels ``point_name`` names (public eps2 drawn at the top edge)."""
    e1 = np.asarray(eps1, dtype=np.float64)
    b = np.minimum(np.asarray(boundary, dtype=np.float64), y_max)
    lo, hi = float(e1[0]), float(e1[-1])
    data: list[dict] = [
        dict(
            type="scatter",
            x=e1,
            y=np.full(e1.size, lo),
            mode="lines",
            line=dict(width=0),
            hoverinfo="skip",
            showlegend=False,
        ),
        dict(
            type="scatter",
            x=e1,
            y=e1,
            mode="lines",
            line=dict(color="#999999", width=1),
            fill="tonexty",
            fillcolor="rgba(200, 200, 200, 0.25)",
            name="eps2 = eps1 (equal groups)",
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            x=e1,
            y=b,
            mode="lines",
            fill="tonexty",
            fillcolor=UNSAT_FILL,
            line=dict(color=SATURATION_COLOR, width=3),
            name="boundary eps2 = eps1 + 8/(n f eps1)",
            hovertemplate="eps1 = %{x:.4g}<br>looser group saturates from eps2 = %{y:.4g}"
            "<extra></extra>",
        ),
        dict(
            type="scatter",
            x=e1,
            y=np.full(e1.size, y_max),
            mode="lines",
            fill="tonexty",
            fillcolor=SAT_FILL,
            line=dict(width=0),
            hoverinfo="skip",
            showlegend=False,
        ),
    ]
    i = max(e1.size // 12, 1)
    notes = [
        dict(
            x=math.log10(hi),
            y=math.log10(y_max),
            xanchor="right",
            yanchor="top",
            showarrow=False,
            align="right",
            text="<b>saturated</b>: the looser group is capped<br>at eps1 + 8/(n f eps1), for free",
            font=dict(color=SATURATION_COLOR),
        ),
        dict(
            x=math.log10(float(e1[i])),
            y=0.5 * (math.log10(float(e1[i])) + math.log10(float(b[i]))),
            xanchor="left",
            yanchor="middle",
            showarrow=False,
            align="left",
            text="<b>unsaturated</b>: everyone gets<br>what they asked (weights ∝ eps)",
            font=dict(color=GRANTED_COLOR),
        ),
        dict(
            x=math.log10(hi),
            y=math.log10(lo),
            xanchor="right",
            yanchor="bottom",
            showarrow=False,
            text="eps2 < eps1: swap the two groups",
            font=dict(color="#777777"),
        ),
    ]
    if point is not None:
        public = math.isinf(point.eps2)
        y = y_max if public else point.eps2
        state = "saturated" if point.saturated else "unsaturated"
        data.append(
            dict(
                type="scatter",
                x=[point.eps1],
                y=[y],
                mode="markers",
                name=point_name,
                marker=dict(
                    symbol="triangle-up" if public else "star",
                    size=16,
                    color="#000000",
                    line=dict(color="white", width=1),
                ),
                hovertemplate=(
                    f"{point_name} ({state})<br>n = {point.n:,}, f = {point.frac:.3g}<br>"
                    f"eps1 = {point.eps1:.4g}, eps2 = "
                    + ("public (∞)" if public else f"{point.eps2:.4g}")
                    + f"<br>its own boundary: eps2 = {point.threshold:.4g}<extra></extra>"
                ),
            )
        )
    layout = fast_layout(
        margin=dict(l=82, r=21, t=70, b=X_TITLE_MARGIN),  # what automargin settles on
        height=height,
        annotations=notes,
        title=dict(
            text=f"Two groups: n = {n:,.0f} users, a share f = {frac:.3g} at eps1",
            x=0,
            y=0.99,
            yanchor="top",
            font=dict(size=14),
        ),
        xaxis=dict(
            title=dict(text="eps1: the stricter group's level (log scale)"),
            type="log",
            range=[math.log10(lo), math.log10(hi)],
            **decade_ticks(lo, hi),
            **FIXED_X_MARGIN,
        ),
        yaxis=dict(
            title=dict(text="eps2: the looser group's level (log scale)"),
            type="log",
            range=[math.log10(lo), math.log10(y_max)],
            **decade_ticks(lo, y_max),
        ),
    )
    return build(data, layout)


def trace_figure(trace: AlgorithmTrace, step: int, height: int = 380) -> go.Figure:
    """Algorithm 1 after ``step`` steps: every user's requested eps (sorted), the r granted to
    users 1..step, the cap tau_step for the next user, and the current user highlighted."""
    m = int(trace.eps.size)
    step = int(min(max(step, 1), m))
    k = np.arange(1, m + 1)
    top = _top(trace.eps, trace.r[:step])
    req = np.where(np.isfinite(trace.eps), trace.eps, top)
    r = trace.r[:step]
    rf = np.where(np.isfinite(r), r, top)
    data = [
        dict(
            type="scatter",
            x=k,
            y=req,
            mode="markers",
            name="asked for (εₖ; public at the top)",
            marker=dict(color=REQUESTED_COLOR, size=7, symbol="circle-open"),
            customdata=np.where(np.isfinite(trace.eps), trace.eps, np.nan),
            hovertemplate="user %{x}<br>asked eps = %{customdata:.4g}<extra></extra>",
        ),
        dict(
            type="scatter",
            x=k[:step],
            y=rf,
            mode="lines+markers",
            name="granted so far (rₖ)",
            line=dict(color=GRANTED_COLOR, width=2),
            marker=dict(size=7),
            hovertemplate="user %{x}<br>granted r = %{y:.4g}<extra></extra>",
        ),
        dict(
            type="scatter",
            x=[step],
            y=[rf[-1]],
            mode="markers",
            name=f"step {step}",
            marker=dict(
                color=SATURATION_COLOR if trace.saturated[step - 1] else GRANTED_COLOR,
                size=14,
                symbol="diamond",
                line=dict(color="white", width=1),
            ),
            hoverinfo="skip",
        ),
    ]
    t = float(trace.tau[step - 1])
    if math.isfinite(t):
        data.append(
            dict(
                type="scatter",
                x=[0.5, m + 0.5],
                y=[t, t],
                mode="lines",
                name=f"cap for the next user, τ{subscript(step)} = {t:.4g}",
                line=dict(color=SATURATION_COLOR, dash="dash", width=2),
                hoverinfo="skip",
            )
        )
    layout = fast_layout(
        margin=dict(l=105, r=20, t=90, b=X_TITLE_MARGIN),  # what automargin settles on
        height=height,
        xaxis=dict(title=dict(text="user k (sorted by asked eps)"), range=[0.5, m + 0.5]),
        yaxis=log_axis(
            *_span(trace.eps, trace.r[:step]),
            public=bool(np.isinf(trace.eps).any()),
            title=dict(text="eps (log scale)"),
        ),
    )
    return build(data, layout)


def _finite_span(y: np.ndarray) -> tuple[float, float]:
    fin = y[np.isfinite(y) & (y > 0)]
    return (float(fin.min()), float(fin.max())) if fin.size else (0.1, 10.0)


def tau_spread_figure(
    spreads: np.ndarray, tau: np.ndarray, marked: float | None = None, height: int = 340
) -> go.Figure:
    """tau* of ADPM tuned to each assumed spread (hdp_app.views.tuned.tau_vs_spread), log-log;
    the worst case s = 1/2 (the paper's tau*) and an optional ``marked`` spread are marked.
    Spreads where nothing saturates (tau* = inf) are left out of the line."""
    s = np.asarray(spreads, dtype=np.float64)
    t = np.asarray(tau, dtype=np.float64)
    y = np.where(np.isfinite(t), t, np.nan)
    data = [
        dict(
            type="scatter",
            x=s,
            y=y,
            mode="lines",
            name="tau* tuned to the spread",
            line=dict(color=SATURATION_COLOR, width=2.5),
            hovertemplate="assumed sd %{x:.3g}<br>tau* %{y:.4g}<extra></extra>",
        )
    ]
    shapes = [vline(0.5, "#444444", "dot", 1)]
    if marked is not None and 0 < marked <= 0.5:
        shapes.append(vline(float(marked), REQUESTED_COLOR, "dash", 1))
    layout = fast_layout(
        margin=dict(l=70, r=20, t=50, b=X_TITLE_MARGIN),  # what automargin settles on
        height=height,
        shapes=shapes,
        title=dict(text="Saturation level tau* against the assumed spread of the data"),
        xaxis=log_axis(
            float(s.min()),
            float(s.max()),
            title=dict(text="assumed standard deviation s (on [-0.5, 0.5]; 0.5 = worst case)"),
        ),
        yaxis=log_axis(*_finite_span(y), title=dict(text="tau* (log scale)")),
    )
    return build(data, layout)


def walkthrough_figure(trace: AlgorithmTrace, step: int) -> go.Figure:
    """The Algorithm 1 walk-through's chart (trace_figure) for a projector: every text at
    least style.PROJECTOR_FONT_PX, PROJECTOR_CHART_PX high (its slider and buttons above it
    share one 768 px screen), at the margins automargin settles on with that text."""
    fig = projector(trace_figure(trace, step), PROJECTOR_CHART_PX)
    fig.update_layout(margin=dict(l=114, b=X_TITLE_MARGIN + 3))  # measured, 14 px ticks
    return fig
