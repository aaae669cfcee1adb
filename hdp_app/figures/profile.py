"""Figures for the Profile page: who asks for which privacy level, with tau* marked.

The x axis is log10(eps) drawn on a linear axis with tick labels in eps units, so that
histogram bins and tier bars have honest widths, and so that public users (eps = inf) and
excluded users (eps = 0) can sit in their own labelled bars at the right and left ends.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from hdp_app.figures.style import (
    PUBLIC_COLOR,
    REQUESTED_COLOR,
    SATURATION_COLOR,
    build,
    fast_layout,
    fig_text,
    wrap_title,
    x_title_margin,
)
from hdp_app.views.formatting import count_noun
from hdp_core.profile import EpsilonProfile

__all__ = ["EXCLUDED_COLOR", "eps_ticks", "level_histogram", "profile_figure"]

EXCLUDED_COLOR = "#BBBBBB"
"""Light grey: users with eps = 0 (their data is not used)."""

PUBLIC_LABEL = "public (∞)"
EXCLUDED_LABEL = "0 (not used)"
MAX_TIER_BARS = 200
"""A tiered profile with more tiers than this is drawn as a histogram of levels (users
grouped by level bins), not one bar (one plotly trace) per tier."""


def _fmt_eps(x: float) -> str:
    if math.isinf(x):
        return PUBLIC_LABEL
    return f"{x:.3g}"


def level_histogram(
    levels: np.ndarray, counts: np.ndarray | None = None, max_bins: int = 40
) -> tuple[np.ndarray, np.ndarray]:
    """Histogram of positive finite levels on a log scale.

    Returns (edges, heights): ``edges`` are bin edges in log10(eps) (length b+1, equal widths)
    and ``heights`` the number of users per bin (length b, summing to the users given).
    The number of bins is about sqrt(users), between 5 and ``max_bins``.
    """
    lv = np.asarray(levels, dtype=np.float64)
    ct = np.ones(lv.size) if counts is None else np.asarray(counts, dtype=np.float64)
    keep = np.isfinite(lv) & (lv > 0) & (ct > 0)
    lv, ct = np.log10(lv[keep]), ct[keep]
    if lv.size == 0:
        return np.array([0.0, 1.0]), np.zeros(1)
    lo, hi = float(lv.min()), float(lv.max())
    if hi - lo < 1e-9:
        lo, hi = lo - 0.1, hi + 0.1
    n_bins = int(np.clip(round(math.sqrt(ct.sum())), 5, max_bins))
    heights, edges = np.histogram(lv, bins=n_bins, range=(lo, hi), weights=ct)
    return edges, heights


def eps_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Tick positions (log10 eps) in [lo, hi] and their labels in eps units: powers of ten
    over three decades or more; 1, 2, 5 times them over fewer; every digit 1..9 over a
    narrow range; the range's two ends when even that gives fewer than two ticks."""
    span = hi - lo
    choices = [(1,), (1, 2, 5), tuple(range(1, 10))]
    if span < 3:
        choices = choices[1:]
    for mults in choices:
        vals, text = [], []
        for k in range(math.floor(lo) - 1, math.ceil(hi) + 1):
            for m in mults:
                x = math.log10(m) + k
                if lo - 1e-9 <= x <= hi + 1e-9:
                    vals.append(x)
                    text.append(f"{m * 10.0**k:g}")
        if len(vals) >= 3:
            return vals, text
    if len(vals) < 2:  # a very narrow range: label its ends
        vals = [lo, hi]
        text = [f"{10**lo:.3g}", f"{10**hi:.3g}"]
    return vals, text


def _y_top(data: list[dict]) -> float:
    """Room above the tallest bar of the traces ``data`` for its label and the tau* note
    (30%)."""
    heights: dict[float, float] = {}  # bars at one x are stacked
    for tr in data:
        if tr["type"] == "bar" and tr.get("x") is not None:
            for x, y in zip(tr["x"], tr["y"]):
                if x is not None and y is not None:
                    heights[x] = heights.get(x, 0.0) + float(y)
    return 1.3 * max(heights.values(), default=1.0) or 1.0


def profile_figure(
    profile: EpsilonProfile,
    tau: float = math.inf,
    n_saturated: int | None = None,
    height: int = 420,
) -> go.Figure:
    """The profile as a chart: a log-scale histogram (per-user) or one bar per tier with its
    count, a separate 'public (∞)' bar, a '0 (not used)' bar when there are such users, and
    tau* (the saturation level of Lemma 3) as a dashed line with the capped region shaded."""
    lv, ct = profile.levels, profile.counts
    n = profile.n
    n_pub = profile.n_public
    n_zero = profile.n_excluded
    finite = np.isfinite(lv) & (lv > 0) & (ct > 0)
    data: list[dict] = []  # traces as dicts, validated once by style.build (issue 29)

    if finite.any():
        logs = np.log10(lv[finite])
        lo, hi = float(logs.min()), float(logs.max())
    else:
        lo, hi = -1.0, 1.0
    if math.isfinite(tau) and tau > 0:
        lo, hi = min(lo, math.log10(tau)), max(hi, math.log10(tau))
    if hi - lo < 0.5:
        mid = (hi + lo) / 2
        lo, hi = mid - 0.25, mid + 0.25
    span = hi - lo
    pad = 0.04 * span
    gap = max(0.12 * span, 0.25)
    bar_w = 0.6 * gap
    x_pub = hi + pad + gap
    x_zero = lo - pad - gap

    if profile.is_tiered and int(finite.sum()) <= MAX_TIER_BARS:
        names = (
            tuple(fig_text(nm) for nm in profile.names)
            if profile.names
            else tuple(f"Tier {j + 1}" for j in range(profile.k))
        )
        xs = np.log10(lv[finite])
        uniq = np.unique(xs)
        min_gap = float(np.diff(uniq).min()) if uniq.size > 1 else span
        w = float(np.clip(0.8 * min_gap, 0.02 * span, 0.08 * span + 0.02))
        for j in np.flatnonzero(finite):
            share = ct[j] / n
            data.append(
                dict(
                    type="bar",
                    x=[math.log10(lv[j])],
                    y=[int(ct[j])],
                    width=w,
                    name=names[j],
                    marker=dict(color=REQUESTED_COLOR),
                    text=[f"{int(ct[j]):,} ({100 * share:.3g}%)"],
                    textposition="outside",
                    textfont=dict(size=12),
                    constraintext="none",
                    cliponaxis=False,
                    hovertemplate=(
                        f"<b>{names[j]}</b><br>eps = {_fmt_eps(lv[j])}<br>"
                        f"{int(ct[j]):,} users ({100 * share:.3g}%)<extra></extra>"
                    ),
                    showlegend=False,
                )
            )
        data.append(
            dict(
                type="bar",
                x=[None],
                y=[None],
                name="tiers (asked eps)",
                marker=dict(color=REQUESTED_COLOR),
            )
        )
    else:
        edges, heights = level_histogram(lv, ct)
        centers = (edges[:-1] + edges[1:]) / 2
        lo_e, hi_e = 10 ** edges[:-1], 10 ** edges[1:]
        data.append(
            dict(
                type="bar",
                x=centers,
                y=heights,
                width=float(edges[1] - edges[0]),
                name="users by asked eps"
                + (f" ({int(finite.sum()):,} tiers grouped)" if profile.is_tiered else ""),
                marker=dict(color=REQUESTED_COLOR, line=dict(width=0.5, color="white")),
                customdata=np.column_stack([lo_e, hi_e]),
                hovertemplate=(
                    "eps %{customdata[0]:.3g} to %{customdata[1]:.3g}<br>%{y:,} users"
                    "<extra></extra>"
                ),
            )
        )

    pub_name = (
        fig_text(profile.names[int(np.flatnonzero(np.isinf(lv))[0])])
        if profile.is_tiered and profile.names and n_pub
        else None
    )
    if n_pub:
        data.append(
            dict(
                type="bar",
                x=[x_pub],
                y=[n_pub],
                width=bar_w,
                name=PUBLIC_LABEL,
                marker=dict(color=PUBLIC_COLOR, line=dict(color="#7a7000", width=1)),
                text=[f"{n_pub:,} ({100 * n_pub / n:.3g}%)"],
                textposition="outside",
                textfont=dict(size=12),
                constraintext="none",
                cliponaxis=False,
                hovertemplate=(
                    (f"<b>{pub_name}</b><br>" if pub_name else "")
                    + f"public data (eps = ∞)<br>{n_pub:,} users<extra></extra>"
                ),
            )
        )
    if n_zero:
        data.append(
            dict(
                type="bar",
                x=[x_zero],
                y=[n_zero],
                width=bar_w,
                name="eps = 0: data not used",
                marker=dict(color=EXCLUDED_COLOR),
                text=[f"{n_zero:,}"],
                textposition="outside",
                textfont=dict(size=12),
                constraintext="none",
                cliponaxis=False,
                hovertemplate=f"eps = 0 (data not used)<br>{n_zero:,} users<extra></extra>",
            )
        )

    x_left = (x_zero - gap / 2) if n_zero else (lo - pad)
    x_right = (x_pub + gap / 2) if n_pub else (hi + pad)
    shapes: list[dict] = []
    if math.isfinite(tau) and tau > 0:
        xt = math.log10(tau)
        capped = "" if n_saturated is None else f" (caps {count_noun(n_saturated, 'user')})"
        shapes += [
            dict(  # the capped region (what fig.add_vrect draws)
                type="rect",
                x0=xt,
                x1=x_right,
                xref="x",
                y0=0,
                y1=1,
                yref="y domain",
                fillcolor=SATURATION_COLOR,
                opacity=0.07,
                line=dict(width=0),
                layer="below",
            ),
            dict(  # tau* (what fig.add_vline draws)
                type="line",
                x0=xt,
                x1=xt,
                xref="x",
                y0=0,
                y1=1,
                yref="y domain",
                line=dict(dash="dash", color=SATURATION_COLOR, width=2),
            ),
        ]
        # the label goes in the legend: on the plot it collided with bar labels and was
        # clipped at the right edge
        data.append(
            dict(  # legend entry for the line
                type="scatter",
                x=[None],
                y=[None],
                mode="lines",
                name=f"τ* = {tau:.4g}{capped}",
                line=dict(color=SATURATION_COLOR, dash="dash", width=2),
            )
        )

    tv, tt = eps_ticks(lo, hi)
    if n_pub:
        tv, tt = [*tv, x_pub], [*tt, PUBLIC_LABEL]
    if n_zero:
        tv, tt = [x_zero, *tv], [EXCLUDED_LABEL, *tt]
    x_title = wrap_title("privacy level asked for, eps (log scale; smaller = more privacy)")
    layout = fast_layout(
        # what automargin settles on
        margin=dict(l=67, r=20, t=70, b=x_title_margin(x_title)),
        height=height,
        barmode="stack",
        bargap=0,
        xaxis=dict(
            title=x_title,
            tickvals=tv,
            ticktext=tt,
            range=[x_left, x_right],
            zeroline=False,
        ),
        yaxis=dict(title="users", rangemode="tozero", range=[0, _y_top(data)]),
        shapes=shapes,
    )
    return build(data, layout)
