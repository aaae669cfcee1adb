"""Figures for the Bounds page: ADPM's worst case against the minimax lower bound, along a sweep
and at a glance, the baselines on the same axes, and the paper's optimality-constant scatter.
Data in (a :class:`hdp_core.sweeps.Sweep`, numbers, arrays), ``go.Figure`` out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from hdp_app.figures.style import (
    FIXED_X_MARGIN,
    GRANTED_COLOR,
    LAYOUT_DEFAULTS,
    LOWER_BOUND_COLOR,
    METHOD_COLORS,
    METHOD_DASH,
    REQUESTED_COLOR,
    X_TITLE_MARGIN,
    build,
    decade_ticks,
    fast_layout,
    hline,
    vline,
)
from hdp_core.sweeps import Sweep

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
    tuned: tuple[float, np.ndarray] | None = None,
) -> go.Figure:
    """Worst-case MSE along a sweep on log-log axes: ADPM's f ∧ 1/4 (upper bound), the lower
    bound (H ∧ 1/4)/512 with the band between them shaded (the minimax risk lies inside), each
    method in ``methods`` in its colour, optional regime guides, and point ``marker`` marked.
    ``tuned`` = (s, mse): the exact MSE of ADPM tuned to a known spread s at each point
    (hdp_app.views.tuned.tuned_sweep_mse), drawn beside the worst-case curves."""
    x = sweep.x
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = sweep.ratio  # NaN where f and H are both infinite (no data may be used)
    data = [
        dict(
            type="scatter",
            x=x,
            y=sweep.lower,
            mode="lines",
            name="lower bound (H ∧ 1/4)/512 (Thm 3)",
            line=dict(color=LOWER_BOUND_COLOR, dash="dash", width=2),
            hovertemplate="x = %{x:.4g}<br>lower bound %{y:.3e}<extra></extra>",
        ),
        dict(
            type="scatter",
            x=x,
            y=sweep.upper,
            mode="lines",
            name="ADPM worst case f ∧ 1/4 (Thm 2)",
            line=dict(color=METHOD_COLORS["ADPM"], width=3),
            fill="tonexty",
            fillcolor=BAND_FILL,
            customdata=np.column_stack([ratio, sweep.tau]),
            hovertemplate="x = %{x:.4g}<br>ADPM worst case %{y:.3e}<br>f/H = "
            "%{customdata[0]:.3g}<br>tau* = %{customdata[1]:.4g}<extra></extra>",
        ),
    ]
    for m in methods:
        if m == "ADPM" or m not in sweep.mse:
            continue
        data.append(
            dict(
                type="scatter",
                x=x,
                y=sweep.mse[m],
                mode="lines",
                name=f"{m} worst case",
                line=dict(color=METHOD_COLORS[m], dash=METHOD_DASH[m], width=2),
                hovertemplate=f"x = %{{x:.4g}}<br>{m} worst case %{{y:.3e}}<extra></extra>",
            )
        )
    if tuned is not None:
        s_t, y_t = tuned
        data.append(
            dict(
                type="scatter",
                x=x,
                y=np.asarray(y_t, dtype=np.float64),
                mode="lines",
                name=f"ADPM tuned to s = {s_t:.3g}: exact MSE at that spread",
                line=dict(
                    color=METHOD_COLORS["ADPM-tuned"], dash=METHOD_DASH["ADPM-tuned"], width=2.5
                ),
                hovertemplate="x = %{x:.4g}<br>tuned ADPM, exact MSE %{y:.3e}<extra></extra>",
            )
        )
    if guides:
        shown = [sweep.upper, sweep.lower, *(sweep.mse[m] for m in methods if m in sweep.mse)]
        vals = np.concatenate([np.asarray(v, dtype=np.float64) for v in shown])
        vals = vals[np.isfinite(vals) & (vals > 0)]
        y_lo, y_hi = (vals.min() / 10, vals.max() * 10) if vals.size else (0.0, np.inf)
        labels = {
            "loose": "≈ 1/(4n): loose privacy (no-privacy error)",
            "strict": "≈ 2/(n·mean eps)²: strict privacy (noise dominates)",
        }
        for key, y in guides.items():
            y = np.asarray(y, dtype=np.float64)
            y = np.where((y >= y_lo) & (y <= y_hi), y, np.nan)  # keep the data's y range
            if not np.isfinite(y).any():
                continue
            data.append(
                dict(
                    type="scatter",
                    x=x,
                    y=y,
                    mode="lines",
                    name=labels.get(key, key),
                    line=dict(color=GUIDE_COLOR, dash="dot", width=1),
                    hoverinfo="skip",
                )
            )
    shapes = [hline(0.25, "#BBBBBB", "dot", 1)]
    notes = [
        dict(
            x=1.0,
            xref="paper",
            y=math.log10(0.25),
            yref="y",
            xanchor="right",
            yanchor="bottom",
            showarrow=False,
            font=dict(color="#888888", size=11),
            text="1/4: the worst case of always answering the mid-range",
        )
    ]
    if marker is not None and 0 <= marker < x.size:
        xm = float(x[marker])
        shapes.append(vline(xm, "#444444", "dot", 1))
        data.append(
            dict(
                type="scatter",
                x=[xm, xm],
                y=[sweep.upper[marker], sweep.lower[marker]],
                mode="markers",
                name="selected point",
                marker=dict(color="#000000", size=11, symbol="circle-open", line=dict(width=2)),
                hovertemplate="x = %{x:.4g}<br>%{y:.3e}<extra></extra>",
            )
        )
    layout = fast_layout(
        margin=dict(l=80, r=24, t=123, b=X_TITLE_MARGIN),  # what automargin settles on
        height=height,
        shapes=shapes,
        annotations=notes,
        legend=dict(LAYOUT_DEFAULTS["legend"], traceorder="normal"),
        xaxis=dict(title=dict(text=x_title), type="log", **_x_ticks(x), **FIXED_X_MARGIN),
        yaxis=dict(
            title=dict(text="worst-case MSE (data in [-0.5, 0.5]; log scale)"),
            type="log",
            exponentformat="power",
        ),
    )
    return build(data, layout)


def _x_ticks(x: np.ndarray) -> dict:
    """Decade ticks for a sweep's x values (style.decade_ticks over their positive range)."""
    pos = np.asarray(x, dtype=np.float64)
    pos = pos[np.isfinite(pos) & (pos > 0)]
    return decade_ticks(float(pos.min()), float(pos.max())) if pos.size else {}


def bounds_glance_figure(
    upper: float,
    lower: float,
    h_capped: float | None = None,
    baselines: Mapping[str, float] | None = None,
    height: int = 300,
) -> go.Figure:
    """Horizontal bars on a log axis: the lower bound (H ∧ 1/4)/512, H ∧ 1/4 (512 times it,
    labelled as not a bound: ADPM's worst case can be below it), ADPM's worst case f ∧ 1/4 and
    optionally each baseline's worst case. ``h_capped`` (H ∧ 1/4) defaults to 512 x ``lower``
    (exact: a power of two)."""
    h_capped = 512 * lower if h_capped is None else h_capped
    rows = [
        ("lower bound (H ∧ 1/4)/512", lower, LOWER_BOUND_COLOR),
        ("512 × lower bound (not a bound)", h_capped, "#BBBBBB"),
        ("ADPM worst case f ∧ 1/4", upper, METHOD_COLORS["ADPM"]),
    ]
    for m, v in (baselines or {}).items():
        if m != "ADPM":
            rows.append((f"{m} worst case", v, METHOD_COLORS[m]))
    labels = [r[0] for r in rows][::-1]
    vals = np.array([r[1] for r in rows], dtype=np.float64)[::-1]
    colors = [r[2] for r in rows][::-1]
    pos = vals[np.isfinite(vals) & (vals > 0)]
    lo = math.log10(float(pos.min())) - 0.5 if pos.size else -6
    hi = math.log10(float(pos.max())) + 0.8 if pos.size else 0
    data = [
        dict(
            type="bar",
            y=labels,
            x=vals,
            orientation="h",
            marker=dict(color=colors),
            text=[f"{v:.3g}" for v in vals],
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{y}: %{x:.4g}<extra></extra>",
            showlegend=False,
        )
    ]
    layout = fast_layout(
        # what automargin settles on (powers of ten on the x axis: 4 px more below)
        margin=dict(l=204, r=20, t=20, b=X_TITLE_MARGIN + 4),
        height=height + 24 * max(len(rows) - 3, 0),
        xaxis=dict(
            title=dict(text="worst-case MSE (log scale)"),
            type="log",
            range=[lo, hi],
            exponentformat="power",
        ),
        yaxis=dict(automargin=True),
    )
    return build(data, layout)


def scatter_figure(
    ln_f: np.ndarray,
    ln_h: np.ndarray,
    n: np.ndarray | None = None,
    current: tuple[float, float] | None = None,
    constants: Sequence[float] = (4.0, 443.0),
    height: int = 460,
) -> go.Figure:
    """The paper's Figure 2: ln H against ln f for random unsaturated sequences, with the
    lines ln H = ln f - ln c for each c in ``constants`` (Theorem 4: every point lies above the
    c = 443 line), and ``current`` = (ln f, ln H) of the current profile."""
    ln_f = np.asarray(ln_f, dtype=np.float64)
    ln_h = np.asarray(ln_h, dtype=np.float64)
    custom = np.column_stack(
        [
            n if n is not None else np.full(ln_f.size, np.nan),
            np.exp(ln_f - ln_h),
        ]
    )
    data = [
        dict(
            type="scatter",
            x=ln_f,
            y=ln_h,
            mode="markers",
            name="random unsaturated sequences",
            marker=dict(color=REQUESTED_COLOR, size=6, opacity=0.6),
            customdata=custom,
            hovertemplate="n = %{customdata[0]}<br>ln f = %{x:.3f}<br>ln H = %{y:.3f}"
            "<br>f/H = %{customdata[1]:.3g}<extra></extra>",
        )
    ]
    has_cur = current is not None and all(map(math.isfinite, current))
    xs = list(ln_f[np.isfinite(ln_f)])
    if has_cur and current is not None:
        xs.append(current[0])
    x_lo, x_hi = (min(xs), max(xs)) if xs else (-10.0, 0.0)
    pad = 0.05 * (x_hi - x_lo) + 0.1
    line_x = np.array([x_lo - pad, x_hi + pad])
    styles = {4.0: ("#444444", "dot"), 443.0: ("#999999", "dash")}
    for c in constants:
        color, dash = styles.get(c, ("#666666", "dashdot"))
        data.append(
            dict(
                type="scatter",
                x=line_x,
                y=line_x - math.log(c),
                mode="lines",
                name=f"ln H = ln f − ln {c:g}  (f/H = {c:g})",
                line=dict(color=color, dash=dash, width=2),
                hoverinfo="skip",
            )
        )
    if has_cur and current is not None:
        data.append(
            dict(
                type="scatter",
                x=[current[0]],
                y=[current[1]],
                mode="markers",
                name="current profile",
                marker=dict(
                    color=GRANTED_COLOR, size=18, symbol="star", line=dict(color="white", width=1)
                ),
                hovertemplate=(
                    f"current profile<br>ln f = {current[0]:.3f}<br>ln H = "
                    f"{current[1]:.3f}<br>f/H = {math.exp(current[0] - current[1]):.3g}"
                    "<extra></extra>"
                ),
            )
        )
    layout = fast_layout(
        margin=dict(l=73, r=20, t=90, b=X_TITLE_MARGIN),  # what automargin settles on
        height=height,
        xaxis=dict(title=dict(text="ln f: ADPM's worst case (uncapped)"), range=list(line_x)),
        yaxis=dict(title=dict(text="ln H: the lower bound's H(eps)")),
    )
    return build(data, layout)
