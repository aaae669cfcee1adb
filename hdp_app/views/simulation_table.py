"""The Simulation page's results as a static HTML table (issue 29): the numbers of the results
grid (views.simulation.results_frame) with its formats (views.simulation.TABLE_FORMATS), laid
out once by the browser, where the dataframe grid drew a canvas and rewrote an accessibility
table per part, three parts stacked at 1024 px, on every step of the page's controls. The grid
stays on request, folded (GRID_LABEL). No streamlit: the page puts the string in ``st.html``.

Layout: one row per method, its chart colour (figures.style.METHOD_COLORS) as a dot before its
label; a two-row header: the simulated numbers (MSE on data scaled to [-0.5, 0.5], its 95% CI,
ln MSE, the multiple of ADPM's MSE; with a data range the RMSE in the data's units), then the
same from the closed forms. Numbers never wrap, headers and labels do; when the columns would
not fit the main column at 1024 px (TABLE_WIDTH_PX) the groups are stacked as tables of their
own, each repeating the method, and the table scrolls rather than cut a column.
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from hdp_app.views.formatting import TABLE_WIDTH_PX, fitting_parts
from hdp_app.views.simulation import TABLE_FORMATS, method_label

__all__ = [
    "CHAR_PX",
    "EXACT",
    "GRID_LABEL",
    "MISSING",
    "SIMULATED",
    "column_groups",
    "results_table_html",
    "table_cells",
    "table_parts",
]

MISSING = "–"
"""What a cell shows for a number that is not defined (the ln of an MSE of 0, a multiple of
ADPM's MSE when ADPM's is 0)."""

GRID_LABEL = "The same numbers as a grid (sort, copy)"
"""The folded section holding the results as a dataframe grid (views.simulation.results_frame),
built on a full run of the page and while open (views.simulation.builds_closed)."""

Column = tuple[str, str, str]
"""A column: (row key of views.simulation.simulation_rows, its header under its group's, the
results grid's column name (views.simulation.results_frame), whose format in
views.simulation.TABLE_FORMATS it takes)."""

SIMULATED: tuple[Column, ...] = (
    ("mse", "MSE", "Simulated MSE"),
    ("ci_low", "95% CI low", "95% CI low"),
    ("ci_high", "95% CI high", "95% CI high"),
    ("ln_mse", "ln MSE", "ln MSE (simulated)"),
    ("ratio", "× ADPM", "× ADPM (simulated)"),
)
EXACT: tuple[Column, ...] = (
    ("exact", "MSE", "Exact MSE"),
    ("ln_exact", "ln MSE", "ln MSE (exact)"),
    ("ratio_exact", "× ADPM", "× ADPM (exact)"),
)
REAL_SIMULATED: Column = ("rmse_real", "RMSE (real units)", "RMSE (real units)")
REAL_EXACT: Column = ("rmse_real_exact", "RMSE (real units)", "RMSE exact (real units)")

SIMULATED_HELP = (
    "Over the trials: the mean of the squared errors (MSE, data scaled to [-0.5, 0.5]) with "
    "its 95% confidence interval, its natural log (the unit of the paper's Table 1) and its "
    "multiple of ADPM's (the same random draws)."
)
EXACT_HELP = "The same from the closed forms (no simulation)."

CHAR_PX = 6.6
"""An upper estimate of a character's width in the table's 14 px font (measured in Chromium at
1024 px: digits 6.25 px, a label's letters about 6)."""
CELL_PAD_PX = 13  # a cell's padding (0.4 rem each side)
DOT_PX = 16  # the colour dot before a method's label and its margin


def column_groups(real: bool) -> list[tuple[str, str, tuple[Column, ...]]]:
    """The table's column groups: (header, its explanation, columns). Simulated (MSE, its 95%
    CI, ln MSE, the multiple of ADPM's MSE; with ``real`` the RMSE in the data's units), then
    the same from the closed forms."""
    sim = SIMULATED + ((REAL_SIMULATED,) if real else ())
    exact = EXACT + ((REAL_EXACT,) if real else ())
    return [("Simulated", SIMULATED_HELP, sim), ("Exact", EXACT_HELP, exact)]


def _cell(v: Any, fmt: str) -> str:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
        return MISSING  # None, NaN or an infinity: not a number to show
    return fmt % float(v)


def table_cells(rows: Sequence[Mapping[str, Any]], real: bool) -> list[list[str]]:
    """The table's body as text, one list per method of ``rows`` (views.simulation's
    simulation_rows): the method's label, then every column of column_groups(real) in order,
    formatted as the results grid formats it (MISSING where a number is not defined)."""
    cols = [c for _, _, cs in column_groups(real) for c in cs]
    fmts = [TABLE_FORMATS[name] for _, _, name in cols]
    return [
        [method_label(r["method"]), *(_cell(r.get(c[0]), f) for c, f in zip(cols, fmts))]
        for r in rows
    ]


def _width(texts: Sequence[str], head: str) -> float:
    """Upper estimate (px) of a column: its widest cell or its header's longest word."""
    longest = max([len(t) for t in texts] + [len(w) for w in head.split()])
    return longest * CHAR_PX + CELL_PAD_PX


def table_parts(
    rows: Sequence[Mapping[str, Any]], real: bool, width_px: float = TABLE_WIDTH_PX
) -> list[list[int]]:
    """The column groups (indices into column_groups(real)) of each stacked table: consecutive
    groups share a table while its estimated width fits ``width_px``: the method column,
    which wraps at its words (its longest word, or its first after the colour dot), and each
    column's widest cell or its header's longest word (headers wrap, numbers do not)."""
    cells = table_cells(rows, real)
    labels = [c[0].split() or [""] for c in cells] + [["Method"]]
    longest = max(len(w) for words in labels for w in words) * CHAR_PX
    first = max(len(words[0]) for words in labels) * CHAR_PX + DOT_PX  # the dot's line
    method = max(longest, first) + CELL_PAD_PX
    widths: list[float] = []
    i = 1
    for _, _, cols in column_groups(real):
        widths.append(sum(_width([c[i + j] for c in cells], col[1]) for j, col in enumerate(cols)))
        i += len(cols)
    return fitting_parts(method, widths, width_px)


_STYLE = (
    "<style>"
    ".hdp-sim-wrap{overflow-x:auto;max-width:100%;margin:0 0 0.75rem 0}"
    ".hdp-sim-table{border-collapse:collapse;font-size:0.875rem;line-height:1.3;"
    "font-variant-numeric:tabular-nums}"
    ".hdp-sim-table th,.hdp-sim-table td{padding:0.25rem 0.4rem;"
    "border-bottom:1px solid rgba(128,128,128,0.25);text-align:right;vertical-align:bottom}"
    ".hdp-sim-table th{font-weight:600;white-space:normal}"
    ".hdp-sim-table td{white-space:nowrap}"
    ".hdp-sim-table th.m,.hdp-sim-table td.m{text-align:left;white-space:normal}"
    ".hdp-sim-table th.g{text-align:center;border-bottom:1px solid rgba(128,128,128,0.5)}"
    ".hdp-sim-table .dot{display:inline-block;width:0.6rem;height:0.6rem;"
    "border-radius:50%;margin-right:0.35rem}"
    "</style>"
)


def results_table_html(
    rows: Sequence[Mapping[str, Any]],
    real: bool,
    colors: Mapping[str, str] | None = None,
    width_px: float = TABLE_WIDTH_PX,
) -> str:
    """The results of ``rows`` (simulation_rows; with ``real`` the RMSEs in the data's units)
    as HTML: one table, or stacked tables (table_parts) when its columns would not fit
    ``width_px``, each with a two-row header (group, then column) and one row per method with
    its colour from ``colors`` (method -> CSS colour) as a dot before its label. Every text is
    escaped; the numbers are table_cells'."""
    esc = html.escape
    groups = column_groups(real)
    cells = table_cells(rows, real)
    starts = [1]
    for _, _, cols in groups:
        starts.append(starts[-1] + len(cols))
    out = [_STYLE]
    for part in table_parts(rows, real, width_px):
        top = ['<th class="m" rowspan="2" scope="col">Method</th>']
        sub: list[str] = []
        picked: list[int] = []
        for g in part:
            head, why, cols = groups[g]
            top.append(
                f'<th class="g" colspan="{len(cols)}" scope="colgroup" title="{esc(why)}">'
                f"{esc(head)}</th>"
            )
            sub += [f'<th scope="col" title="{esc(name)}">{esc(h)}</th>' for _, h, name in cols]
            picked += list(range(starts[g], starts[g + 1]))
        body = []
        for r, row in zip(rows, cells, strict=True):
            color = (colors or {}).get(r["method"])
            dot = f'<span class="dot" style="background:{esc(color)}"></span>' if color else ""
            tds = "".join(f"<td>{esc(row[k])}</td>" for k in picked)
            body.append(f'<tr><td class="m">{dot}{esc(row[0])}</td>{tds}</tr>')
        out.append(
            f'<div class="hdp-sim-wrap"><table class="hdp-sim-table"><thead>'
            f"<tr>{''.join(top)}</tr><tr>{''.join(sub)}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>"
        )
    return "".join(out)
