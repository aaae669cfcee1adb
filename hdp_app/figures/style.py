"""One style for every figure: the colour of each method and quantity (Okabe-Ito,
colour-blind safe), line styles, the light template, and small layout helpers.
"""

from __future__ import annotations

import math
import re
from typing import Any

import plotly.graph_objects as go

_FIG_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "{": "&#123;",
        "}": "&#125;",
        "%": "&#37;",
        "\n": " ",
        "\r": " ",
    }
)


def fig_text(text: object) -> str:
    """User-supplied text (a tier name, a unit) made safe for a plotly figure: plotly renders
    a subset of HTML in names, labels, titles, annotations and hover text (links, bold,
    <br>), and fills %{...} in hover templates; here & < > are HTML entities and % { } are
    numeric character references, which plotly shows as the characters themselves. Lone
    surrogates become U+FFFD (the figure's JSON could not be sent otherwise)."""
    s = str(text).encode("utf-8", "replace").decode("utf-8")
    return s.translate(_FIG_ESCAPES)


METHOD_COLORS: dict[str, str] = {
    "ADPM": "#0072B2",  # blue
    "PropDPM": "#E69F00",  # orange
    "LDPE": "#009E73",  # bluish green
    "SM": "#CC79A7",  # reddish purple
    "FME": "#D55E00",  # vermillion
    "UNI": "#000000",  # black
    "ADPM-tuned": "#56B4E9",  # sky blue: ADPM tuned to a known spread (issue 14)
    # wine (Paul Tol's colour-blind-safe "muted" scheme): Okabe-Ito's eight are all taken but
    # yellow, which is unreadable as a line on white (contrast 1.2:1) and marks public users
    "TableMean": "#882255",  # the table's own mean (issue 21)
}
"""Colour of each method on every page."""

LOWER_BOUND_COLOR = "#7F7F7F"  # grey, dashed: the minimax lower bound
REQUESTED_COLOR = "#56B4E9"  # sky blue: what users asked for
GRANTED_COLOR = "#0072B2"  # ADPM blue: what ADPM grants
SATURATION_COLOR = "#D55E00"  # vermillion: tau*, the saturation level
PUBLIC_COLOR = "#F0E442"  # yellow: public users

METHOD_DASH: dict[str, str] = {
    "ADPM": "solid",
    "PropDPM": "dash",
    "LDPE": "dot",
    "SM": "dashdot",
    "FME": "longdash",
    "UNI": "longdashdot",
    "ADPM-tuned": "6px,3px,2px,3px,2px,3px",  # dash-dot-dot
    "TableMean": "12px,4px",  # long dashes, wider than "longdash"
}
"""Line style per method, so lines stay distinguishable in greyscale too."""

LIGHT_TEMPLATE = go.layout.Template(
    layout=dict(
        paper_bgcolor="white",
        plot_bgcolor="white",
        font=dict(color="#2a3f5f"),
        hovermode="closest",
        xaxis=dict(
            gridcolor="#EBF0F8",
            linecolor="#EBF0F8",
            zerolinecolor="#EBF0F8",
            ticks="",
            automargin=True,
            zerolinewidth=2,
            title=dict(standoff=15),
        ),
        yaxis=dict(
            gridcolor="#EBF0F8",
            linecolor="#EBF0F8",
            zerolinecolor="#EBF0F8",
            ticks="",
            automargin=True,
            zerolinewidth=2,
            title=dict(standoff=15),
        ),
    )
)
"""The layout part of plotly's 'plotly_white' look as a small template: applying the named
template (defaults for every trace type) costs about 50 ms per figure, most of a page's budget
for a slider move."""

X_TITLE_MARGIN = 67
"""The bottom margin plotly's automargin settles on below an x axis with tick labels and a
title, in the app's fonts. Margins given up front at (at least) what automargin settles on
matter for speed (issue 11): whenever automargin has to push a margin, plotly draws the whole
figure a second time in the browser, about 40 ms a chart on every slider step (Streamlit
remounts a chart whose figure changed). The figures on a slider's path therefore ask for the
margins automargin was measured to settle on at 1400 px (left: their tick labels and axis
title); automargin stays on, so a longer label still gets its room."""

X_TITLE_LINE = 18
"""The height one more line of an axis title adds to X_TITLE_MARGIN (a title wrapped by
:func:`wrap_title` over two lines asks for X_TITLE_MARGIN + X_TITLE_LINE)."""

TITLE_CHARS = 44
"""The longest title line that fits a chart in half of the main column at a projector's
1024 px (about 300 px of plot at the template's 12-14 px fonts): longer axis and chart
titles are wrapped onto more lines by :func:`wrap_title` instead of being cut at the edges."""

WIDE_TITLE_CHARS = 64
"""The same for a chart as wide as the main column at 1024 px (about 600 px)."""


def wrap_title(text: str, width: int = TITLE_CHARS) -> str:
    """``text`` broken at spaces into lines of at most ``width`` characters, joined by
    plotly's ``<br>`` (a single word longer than ``width`` keeps its own line). Plotly never
    wraps a title itself: a title wider than the chart is cut at both ends."""
    lines: list[str] = []
    for part in str(text).split("<br>"):
        cur = ""
        for word in part.split(" "):
            if cur and len(_visible(cur)) + 1 + len(_visible(word)) > width:
                lines.append(cur)
                cur = word
            else:
                cur = f"{cur} {word}" if cur else word
        lines.append(cur)
    return "<br>".join(lines)


def _visible(s: str) -> str:
    """The characters a plotly label shows: tags dropped, entities counted as one."""
    return re.sub(r"&#?\w+;", "x", re.sub(r"<[^>]*>", "", s))


def x_title_margin(title: str) -> int:
    """The bottom margin automargin settles on below an x axis titled ``title`` (one line:
    X_TITLE_MARGIN, each more line X_TITLE_LINE more)."""
    return X_TITLE_MARGIN + X_TITLE_LINE * str(title).count("<br>")


LAYOUT_DEFAULTS = dict(
    template=LIGHT_TEMPLATE,
    margin=dict(l=60, r=20, t=50, b=50),
    legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),
    hoverlabel=dict(namelength=-1),
)
"""Common layout for every figure."""


def fast_layout(**overrides) -> dict:
    """LAYOUT_DEFAULTS (with the light template) plus ``overrides``."""
    out = dict(LAYOUT_DEFAULTS)
    out["template"] = LIGHT_TEMPLATE
    out.update(overrides)
    return out


def hline(y: float, color: str, dash: str = "dash", width: float = 2) -> dict:
    """A horizontal line across the plot at data value ``y`` (a layout shape)."""
    return dict(
        type="line",
        xref="paper",
        x0=0,
        x1=1,
        yref="y",
        y0=y,
        y1=y,
        line=dict(color=color, dash=dash, width=width),
    )


def vline(x: float, color: str, dash: str = "dot", width: float = 2) -> dict:
    """A vertical line across the plot at data value ``x`` (a layout shape)."""
    return dict(
        type="line",
        yref="paper",
        y0=0,
        y1=1,
        xref="x",
        x0=x,
        x1=x,
        line=dict(color=color, dash=dash, width=width),
    )


def build(data: list[dict], layout: dict) -> go.Figure:
    """One go.Figure from trace dicts and a layout dict, validated once (adding traces, lines
    and annotations one call at a time costs several times more)."""
    return go.Figure(data=data, layout=layout)


def _tick_label(v: float) -> str:
    """A full, unambiguous label: '0.5', '20', '2000', '1e+06' (never '5' for 0.5)."""
    if 1e-3 <= v < 1e5:
        return f"{v:.6g}"
    return f"{v:.0e}".replace("e-0", "e-").replace("e+0", "e")


def public_y(finite_max: float) -> float:
    """Where public users (eps = inf) are drawn on a log axis whose largest level is
    ``finite_max``: one and a half decades above it, clear of every 1-2-5 level tick."""
    return float(finite_max) * 10**1.5


def log_axis(lo: float, hi: float, public: bool = False, **extra) -> dict:
    """A log axis for privacy levels in [lo, hi] with ticks at 1, 2, 5 per decade, each
    labelled in full ("0.5", "20"), so no label reads as another level. With ``public`` the
    axis reaches public_y(hi), where a single tick reads "public (∞)" and nothing else is
    labelled above hi (public users must not look like a finite level)."""
    lo, hi = float(lo), float(hi)
    if not (lo > 0 and hi >= lo):
        lo, hi = 0.1, 10.0
    d0, d1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    vals = [m * 10.0**d for d in range(d0, d1 + 1) for m in (1, 2, 5)]
    vals = [v for v in vals if lo / 1.5 <= v <= hi * 1.5]
    if len(vals) > 12:  # many decades: 1 per decade only
        vals = [10.0**d for d in range(d0, d1 + 1) if lo / 3 <= 10.0**d <= hi * 3]
    text = [_tick_label(v) for v in vals]
    top = hi * 1.6
    if public:
        py = public_y(hi)
        vals.append(py)
        text.append("public (∞)")
        top = py * 1.8
    ax = dict(
        type="log", tickvals=vals, ticktext=text, range=[math.log10(lo / 1.6), math.log10(top)]
    )
    ax.update(extra)
    return ax


FIXED_X_MARGIN = {"automargin": False}
"""For the x axis of a chart redrawn on every slider step whose tick labels are short and never
rotated (powers of ten) and whose title is one line: its bottom margin is given
(X_TITLE_MARGIN, what automargin settles on) and automargin is off. Plotly's automargin
measures the axis again on every draw even when it pushes nothing, about 17-25 ms of a draw
of such a chart (issue 23), and each slider step draws it twice. The truncation browser test
checks that nothing is cut at 1024 and 1280 px."""


def decade_ticks(lo: float, hi: float) -> dict:
    """Tick settings for a log axis showing data values from ``lo`` to ``hi``: one labelled
    tick per power of ten (``dtick=1``) when that gives at least three ticks, else {} (plotly's
    own choice). Plotly's default for a few decades labels 1, 2 and 5 in each: three times
    the tick text and grid lines the browser lays out again on every redraw of a chart on a
    slider's path (issue 23: about 20 ms a draw, and a chart is drawn twice per step)."""
    if not (0 < lo <= hi < math.inf):
        return {}
    if math.floor(math.log10(hi)) - math.ceil(math.log10(lo)) + 1 < 3:
        return {}
    return {"dtick": 1}


PROJECTOR_FONT_PX = 14
"""The smallest chart text (ticks, legend, titles) of a chart shown on a projector (the Tour and
the Algorithm 1 walk-through): readable from the back of a room at 1024 px wide."""


def projector(fig: go.Figure, height: int | None = None) -> go.Figure:
    """``fig`` with every text at least PROJECTOR_FONT_PX (the base font, tick labels, axis and
    legend text) and, given ``height`` (px), that height: short enough that a step's controls
    and its chart share one 768 px screen. Returns the same figure, changed in place."""
    px = PROJECTOR_FONT_PX
    fig.update_layout(font_size=px, legend_font_size=px)
    fig.update_xaxes(tickfont_size=px, title_font_size=px)
    fig.update_yaxes(tickfont_size=px, title_font_size=px)
    # a log axis left to plotly labels its 2s and 5s at 3/4 of the font: ticks of its own
    fig.for_each_xaxis(lambda ax: _full_size_log_ticks(fig, ax, "x"))
    fig.for_each_yaxis(lambda ax: _full_size_log_ticks(fig, ax, "y"))
    for a in fig.layout.annotations or ():
        if a.font is None or a.font.size is None or a.font.size < px:
            a.font = {**(a.font.to_plotly_json() if a.font else {}), "size": px}
    if height is not None:
        fig.update_layout(height=height)
    return fig


def _full_size_log_ticks(fig: go.Figure, axis: Any, letter: str) -> None:
    """A log axis without tick values of its own gets ticks over the data drawn on it (its
    range: the data's, widened 1.6x below and 3x above, room for a bar's label) at 1, 2 and 5
    per decade, or at every digit when that gives fewer than three: every label at the axis's
    font size, none at plotly's 3/4."""
    if axis.type != "log" or axis.tickvals is not None or axis.dtick is not None:
        return
    ref = letter + axis.plotly_name.removeprefix(letter + "axis")
    vals: list[float] = []
    for tr in fig.data:
        data = getattr(tr, letter, None)
        if data is None or (getattr(tr, letter + "axis", None) or letter) != ref:
            continue
        for v in data:
            if isinstance(v, (int, float)) and math.isfinite(v) and v > 0:
                vals.append(float(v))
    if not vals:
        return
    lo, hi = min(vals) / 1.6, max(vals) * 3  # room above for a bar's label
    d0, d1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for mantissas in ((1, 2, 5), tuple(range(1, 10))):
        ticks = [m * 10.0**d for d in range(d0, d1 + 1) for m in mantissas]
        ticks = [v for v in ticks if lo <= v <= hi]
        if len(ticks) >= 3:
            break
    axis.update(
        tickvals=ticks,
        ticktext=[_tick_label(v) for v in ticks],
        range=[math.log10(lo), math.log10(hi)],
    )


PROJECTOR_CHART_PX = 400
"""The height (px) of a projector step's chart: with its controls above it (two rows of
sliders), within one 768 px screen (tests/browser/test_browser_tour.py measures it)."""
