"""The Release page's chart of a mean per segment: every segment's private mean with its 95%
interval, sorted, in the method's colour (ADPM or TableMean, hdp_app.figures.style); for the
table target the bias bound is drawn as a thicker inner bar."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from hdp_app.figures.style import METHOD_COLORS, build, fast_layout, fig_text
from hdp_app.views.segments import TOO_FEW

MAX_LABEL = 40


def _label(s: str) -> str:
    s = str(s)
    return fig_text(s if len(s) <= MAX_LABEL else s[: MAX_LABEL - 1] + "…")


def segments_figure(table: Any, target: str, lo: float, hi: float, unit: str = "") -> go.Figure:
    """Horizontal chart of ``table`` (hdp_app.views.segments.segments_table, sorted): a dot
    per segment at its private mean, a bar for its 95% interval; segments marked 'too few
    users to say much' in grey; for the table target the bias bound as a thicker bar."""
    method = "ADPM" if target == "population" else "TableMean"
    color = METHOD_COLORS[method]
    labels = [f"{i + 1}. {_label(s)}" for i, s in enumerate(table["segment"])]
    est = list(table["private mean"])
    lo_i, hi_i = list(table["95% low"]), list(table["95% high"])
    few = [n == TOO_FEW for n in table["note"]]
    data: list[dict] = [
        dict(
            type="scatter",
            x=est,
            y=labels,
            mode="markers",
            name=f"private mean ({method}) and 95% interval",
            marker=dict(color=["#7F7F7F" if f else color for f in few], size=8),
            error_x=dict(
                type="data",
                symmetric=False,
                array=[h - e for h, e in zip(hi_i, est, strict=True)],
                arrayminus=[e - low for e, low in zip(est, lo_i, strict=True)],
                color=color,
                thickness=1.5,
                width=4,
            ),
            hovertemplate="%{y}: %{x:.4g}<extra></extra>",
        )
    ]
    if target == "table" and "bias bound ±" in table:
        b = list(table["bias bound ±"])
        data.append(
            dict(
                type="scatter",
                x=est,
                y=labels,
                mode="markers",
                name="bias bound (table target)",
                marker=dict(color=color, size=1, opacity=0),
                error_x=dict(type="data", array=b, color=color, thickness=5, width=0),
                hovertemplate="%{y}: bias bound ±%{error_x.array:.3g}<extra></extra>",
            )
        )
    height = max(260, 60 + 22 * len(labels))
    layout = fast_layout(
        height=height,
        xaxis=dict(
            title=fig_text(f"private mean ({unit})" if unit else "private mean"), range=[lo, hi]
        ),
        yaxis=dict(autorange="reversed", automargin=True),
        showlegend=True,
    )
    return build(data, layout)
