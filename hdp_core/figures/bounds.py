"""Figures for the Bounds page: ADPM's worst case against the minimax lower bound, along a sweep
and at a glance, the baselines on the same axes, and the paper's optimality-constant scatter.
Data in (a :class:`hdp_core.sweeps.Sweep`, numbers, arrays), ``go.Figure`` out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ..sweeps import Sweep
from . import (
    GRANTED_COLOR,
    LAYOUT_DEFAULTS,
    LOWER_BOUND_COLOR,
    METHOD_COLORS,
    METHOD_DASH,
    REQUESTED_COLOR,
)

__all__ = ["bounds_glance_figure", "scatter_figure", "sweep_figure"]

BAND_FILL = "rgba(127, 127, 127, 0.12)"
GUIDE_COLOR = "#AAAAAA"


def sweep_figure(
    sweep: Sweep,
    x_title: str,
    marker: int | None = None,
    methods: Sequence[str] = (),
    guides: Mapping[str, np.ndarray] | None = None,
    height: int = 480,
) -> go.Figure:
    """Worst-case MSE along a sweep on log-log axes: ADPM's f ∧ 1/4 (upper bound), the lower
    bound (H ∧ 1/4)/512 with the band between them shaded (the minimax risk lies inside), each
    method in ``methods`` in its colour, optional regime guides, and point ``marker`` marked."""
    x = sweep.x
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = sweep.ratio  # NaN where f and H are both infinite (no data may be used)
    fig = go.Figure()
    fig.add_scatter(
        x=x, y=sweep.lower, mode="lines", name="lower bound (H ∧ 1/4)/512 (Thm 3)",
        line=dict(color=LOWER_BOUND_COLOR, dash="dash", width=2),
        hovertemplate="x = %{x:.4g}<br>lower bound %{y:.3e}<extra></extra>",
    )
    fig.add_scatter(
        x=x, y=sweep.upper, mode="lines", name="ADPM worst case f ∧ 1/4 (Thm 2)",
        line=dict(color=METHOD_COLORS["ADPM"], width=3), fill="tonexty", fillcolor=BAND_FILL,
        customdata=np.column_stack([ratio, sweep.tau]),
        hovertemplate="x = %{x:.4g}<br>ADPM worst case %{y:.3e}<br>f/H = %{customdata[0]:.3g}"
                      "<br>tau* = %{customdata[1]:.4g}<extra></extra>",
    )
    for m in methods:
        if m == "ADPM" or m not in sweep.mse:
            continue
        fig.add_scatter(
            x=x, y=sweep.mse[m], mode="lines", name=f"{m} worst case",
            line=dict(color=METHOD_COLORS[m], dash=METHOD_DASH[m], width=2),
            hovertemplate=f"x = %{{x:.4g}}<br>{m} worst case %{{y:.3e}}<extra></extra>",
        )
    if guides:
        shown = [sweep.upper, sweep.lower, *(sweep.mse[m] for m in methods if m in sweep.mse)]
        vals = np.concatenate([np.asarray(v, dtype=np.float64) for v in shown])
        vals = vals[np.isfinite(vals) & (vals > 0)]
        y_lo, y_hi = (vals.min() / 10, vals.max() * 10) if vals.size else (0.0, np.inf)
        labels = {"loose": "≈ 1/(4n): loose privacy (no-privacy error)",
                  "strict": "≈ 2/(n·mean eps)²: strict privacy (noise dominates)"}
        for key, y in guides.items():
            y = np.asarray(y, dtype=np.float64)
            y = np.where((y >= y_lo) & (y <= y_hi), y, np.nan)  # keep the data's y range
            if not np.isfinite(y).any():
                continue
            fig.add_scatter(
                x=x, y=y, mode="lines", name=labels.get(key, key),
                line=dict(color=GUIDE_COLOR, dash="dot", width=1), hoverinfo="skip",
            )
    if marker is not None and 0 <= marker < x.size:
        xm = float(x[marker])
        fig.add_vline(x=xm, line_color="#444444", line_width=1, line_dash="dot")
        fig.add_scatter(
            x=[xm, xm], y=[sweep.upper[marker], sweep.lower[marker]], mode="markers",
            name="selected point", marker=dict(color="#000000", size=11, symbol="circle-open",
                                                line=dict(width=2)),
            hovertemplate="x = %{x:.4g}<br>%{y:.3e}<extra></extra>",
        )
    layout = dict(LAYOUT_DEFAULTS)
    layout["margin"] = dict(l=70, r=20, t=110, b=50)
    layout["legend"] = dict(LAYOUT_DEFAULTS["legend"], traceorder="normal")
    fig.update_layout(
        **layout, height=height,
        xaxis=dict(title=x_title, type="log"),
        yaxis=dict(title="worst-case MSE (data in [-0.5, 0.5]; log scale)", type="log",
                   exponentformat="power"),
    )
    return fig


def bounds_glance_figure(
    upper: float, lower: float, h_capped: float, baselines: Mapping[str, float] | None = None,
    height: int = 300,
) -> go.Figure:
    """Horizontal bars on a log axis: the lower bound (H ∧ 1/4)/512, H ∧ 1/4 (the same without
    the loose 1/512), ADPM's worst case f ∧ 1/4 and optionally each baseline's worst case."""
    rows = [
        ("lower bound (H ∧ 1/4)/512", lower, LOWER_BOUND_COLOR),
        ("H ∧ 1/4 (lower bound without 1/512)", h_capped, "#BBBBBB"),
        ("ADPM worst case f ∧ 1/4", upper, METHOD_COLORS["ADPM"]),
    ]
    for m, v in (baselines or {}).items():
        if m != "ADPM":
            rows.append((f"{m} worst case", v, METHOD_COLORS[m]))
    labels = [r[0] for r in rows][::-1]
    vals = np.array([r[1] for r in rows], dtype=np.float64)[::-1]
    colors = [r[2] for r in rows][::-1]
    fig = go.Figure()
    fig.add_bar(
        y=labels, x=vals, orientation="h", marker_color=colors,
        text=[f"{v:.3g}" for v in vals], textposition="outside", cliponaxis=False,
        hovertemplate="%{y}: %{x:.4g}<extra></extra>", showlegend=False,
    )
    pos = vals[np.isfinite(vals) & (vals > 0)]
    lo = math.log10(float(pos.min())) - 0.5 if pos.size else -6
    hi = math.log10(float(pos.max())) + 0.8 if pos.size else 0
    layout = dict(LAYOUT_DEFAULTS)
    layout["margin"] = dict(l=20, r=20, t=20, b=50)
    fig.update_layout(
        **layout, height=height + 24 * max(len(rows) - 3, 0),
        xaxis=dict(title="worst-case MSE (log scale)", type="log", range=[lo, hi],
                   exponentformat="power"),
        yaxis=dict(automargin=True),
    )
    return fig


def scatter_figure(
    ln_f: np.ndarray,
    ln_h: np.ndarray,
    n: np.ndarray | None = None,
    current: tuple[float, float] | None = None,
    constants: Sequence[float] = (4.0, 443.0),
    height: int = 460,
) -> go.Figure:
    """The paper's Figure fig:scat: ln H against ln f for random unsaturated sequences, with the
    lines ln H = ln f - ln c for each c in ``constants`` (Theorem 4: every point lies above the
    c = 443 line), and ``current`` = (ln f, ln H) of the current profile."""
    ln_f = np.asarray(ln_f, dtype=np.float64)
    ln_h = np.asarray(ln_h, dtype=np.float64)
    fig = go.Figure()
    custom = np.column_stack([
        n if n is not None else np.full(ln_f.size, np.nan), np.exp(ln_f - ln_h),
    ])
    fig.add_scatter(
        x=ln_f, y=ln_h, mode="markers", name="random unsaturated sequences",
        marker=dict(color=REQUESTED_COLOR, size=6, opacity=0.6),
        customdata=custom,
        hovertemplate="n = %{customdata[0]}<br>ln f = %{x:.3f}<br>ln H = %{y:.3f}"
                      "<br>f/H = %{customdata[1]:.3g}<extra></extra>",
    )
    xs = list(ln_f[np.isfinite(ln_f)])
    if current is not None and all(map(math.isfinite, current)):
        xs.append(current[0])
    x_lo, x_hi = (min(xs), max(xs)) if xs else (-10.0, 0.0)
    pad = 0.05 * (x_hi - x_lo) + 0.1
    line_x = np.array([x_lo - pad, x_hi + pad])
    styles = {4.0: ("#444444", "dot"), 443.0: ("#999999", "dash")}
    for c in constants:
        color, dash = styles.get(c, ("#666666", "dashdot"))
        fig.add_scatter(
            x=line_x, y=line_x - math.log(c), mode="lines",
            name=f"ln H = ln f − ln {c:g}  (f/H = {c:g})",
            line=dict(color=color, dash=dash, width=2), hoverinfo="skip",
        )
    if current is not None and all(map(math.isfinite, current)):
        fig.add_scatter(
            x=[current[0]], y=[current[1]], mode="markers", name="current profile",
            marker=dict(color=GRANTED_COLOR, size=18, symbol="star",
                        line=dict(color="white", width=1)),
            hovertemplate=(f"current profile<br>ln f = {current[0]:.3f}<br>ln H = "
                           f"{current[1]:.3f}<br>f/H = {math.exp(current[0] - current[1]):.3g}"
                           "<extra></extra>"),
        )
    layout = dict(LAYOUT_DEFAULTS)
    layout["margin"] = dict(l=60, r=20, t=90, b=50)
    fig.update_layout(
        **layout, height=height,
        xaxis=dict(title="ln f: ADPM's worst case (uncapped)", range=list(line_x)),
        yaxis=dict(title="ln H: the lower bound's H(eps)"),
    )
    return fig
