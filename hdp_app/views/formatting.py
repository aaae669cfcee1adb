"""Numbers and user-supplied text as the pages show them.

Text a user supplied (tier names, units, file cells) is shown as plain text: :func:`plain`
escapes it for places that render markdown, and :func:`csv_safe` keeps a spreadsheet from
reading an exported cell as a formula (OWASP's CSV-injection guidance).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import UTC
from typing import Any

from hdp_core.validate import csv_safe, csv_unescape, format_eps

__all__ = [
    "TABLE_WIDTH_PX",
    "column_groups",
    "column_width_px",
    "compact_count",
    "count_noun",
    "csv_safe",
    "csv_unescape",
    "fitting_parts",
    "format_eps",
    "frame_to_csv",
    "plain",
    "plain_table",
    "sci",
    "short_eps",
    "sidebar_eps",
    "subscript",
    "telling_eps",
    "utc_timestamp",
]

# Every ASCII punctuation character can be backslash-escaped in CommonMark, so escaping all
# of them is always safe. "/" matters because Streamlit rewrites ":material/" in the raw
# source before parsing (an escaped "\/" breaks that match); ":" stops :color[...] and other
# directives and emoji shortcodes; "$" stops LaTeX; "<" and "&" stop HTML and entities.
_MD_SPECIAL = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# Characters a markdown renderer would treat as line structure or drop: shown as spaces.
_BREAKS = re.compile(r"[\n\r\t\v\f\x85\u2028\u2029]")


def plain(text: object) -> str:
    """``text`` with every ASCII punctuation character backslash-escaped (and line breaks
    turned into spaces), so that st.markdown, st.caption, st.error, widget and metric labels
    show it literally: no links, images, HTML, emphasis, headings, lists, tables, LaTeX,
    :material/icons:, :color[directives] or emoji shortcodes. Lone surrogates (which the
    browser connection cannot encode) are shown as U+FFFD."""
    s = _BREAKS.sub(" ", str(text))
    s = s.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(s) else s
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in s)


def plain_table(df: Any) -> Any:
    """A copy of the pandas DataFrame ``df`` for st.table, which renders Markdown in every
    cell and header: each text cell and column name passed through :func:`plain` (shown
    literally); numeric columns unchanged."""
    out = df.copy()
    for col in out.columns:
        if not _is_numeric_dtype(out[col].dtype):
            out[col] = [plain(v) for v in out[col]]
    out.columns = [plain(c) for c in out.columns]
    return out


def _has_surrogate(s: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in s)


def frame_to_csv(df: Any) -> bytes:
    """A pandas DataFrame as UTF-8 CSV bytes (no index) with every text cell passed through
    :func:`csv_safe`; numeric columns (e.g. -3) are written as numbers, unescaped."""
    out = df.copy()
    for col in out.columns:
        if not _is_numeric_dtype(out[col].dtype):
            out[col] = [csv_safe(v) for v in out[col]]
    return out.to_csv(index=False).encode()


def _is_numeric_dtype(dtype: Any) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype))


def sci(x: float, digits: int = 3) -> str:
    """A number in scientific notation with ``digits`` significant digits ('∞' for inf)."""
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if math.isnan(x):
        return "n/a"
    return f"{x:.{digits - 1}e}"


def count_noun(n: float, noun: str, plural: str | None = None) -> str:
    """'1 user', '2 users', '1,000 users' (thousands separators; singular only for exactly 1)."""
    word = noun if n == 1 else (plural or noun + "s")
    shown = f"{int(n):,}" if float(n).is_integer() else f"{n:,.3g}"
    return f"{shown} {word}"


_SUBSCRIPT = str.maketrans("0123456789-", "₀₁₂₃₄₅₆₇₈₉₋")


def subscript(k: int | str) -> str:
    """Subscript digits: 12 -> '₁₂' (one notation with ‖r‖₂², no ASCII 'tau_{k-1}')."""
    return str(k).translate(_SUBSCRIPT)


def short_eps(x: float, public: str = "public") -> str:
    """A privacy level in 4 significant digits, ``public`` for +inf (tables, labels)."""
    return public if math.isinf(x) else f"{x:.4g}"


def telling_eps(x: float, others: Any = (), digits: int = 4, most: int = 12) -> str:
    """A level like :func:`short_eps`, with as many more significant digits (up to ``most``)
    as it takes not to read the same as any different level in ``others``: tau* = 0.10003
    next to a tier at 0.1 reads 0.10003, not 0.1."""
    if math.isinf(x):
        return short_eps(x)
    near = [float(o) for o in others if math.isfinite(float(o)) and float(o) != x]
    for d in range(digits, most + 1):
        text = f"{x:.{d}g}"
        if all(text != f"{o:.{d}g}" for o in near):
            return text
    return f"{x:.{most}g}"


def compact_count(n: int) -> str:
    """A user count that fits a narrow metric: 12,345, 500k, 1.2M, 3B, 1T (3 digits)."""
    if n < 100_000:
        return f"{n:,}"
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.3g}{suffix}"
    return f"{n:,}"  # pragma: no cover


def sidebar_eps(x: float) -> str:
    """A level as the sidebar's narrow metrics show it: format_eps without its words
    ("public", not "public (eps = inf)")."""
    return format_eps(x).split(" ")[0]


def utc_timestamp(now: Any = None) -> str:
    """``now`` (an aware datetime; default: the current time) as ISO 8601 in UTC to the
    second, e.g. '2026-11-27T08:30:12Z': a release's ``released_at`` (date and zone)."""
    from datetime import datetime

    t = datetime.now(UTC) if now is None else now.astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


TABLE_WIDTH_PX = 600
"""The width a dataframe may take without hiding columns off its right edge: the main column at
1024 x 768 with the sidebar open is 624 px (tests/browser/test_browser_truncation.py)."""
_CHAR_PX = 7.0  # a character of the grid's 14 px font, rounded up (measured: about 6.2)
_CELL_PAD_PX = 20  # a cell's padding and border (measured: about 16)


def _cell_text(v: Any, fmt: str | None) -> str:
    if fmt and fmt.startswith("%"):
        try:
            return fmt % v
        except (TypeError, ValueError):
            return str(v)
    if fmt == "percent" and isinstance(v, (int, float)):
        return f"{100 * v:.2f}%"
    if fmt == "localized" and isinstance(v, (int, float)):
        return f"{v:,}"
    return str(v)


def column_width_px(df: Any, column: str, fmt: str | None = None) -> float:
    """An upper estimate (px) of the width the dataframe grid gives ``column`` of the pandas
    DataFrame ``df``: its header or its widest cell shown with ``fmt`` (a printf format,
    'percent', 'localized' or None), whichever is longer, plus the cell's padding."""
    longest = max([len(str(column)), *(len(_cell_text(v, fmt)) for v in df[column])])
    return longest * _CHAR_PX + _CELL_PAD_PX


def column_groups(
    df: Any, formats: dict[str, str] | None = None, width_px: float = TABLE_WIDTH_PX
) -> list[list[str]]:
    """The columns of the pandas DataFrame ``df`` in consecutive groups that each fit
    ``width_px`` (estimated by :func:`column_width_px`; a column's format is the value of the
    first key of ``formats`` its name starts with), the first column (the rows' label)
    repeated at the head of every group: a wide table shown as stacked tables, none of whose
    columns is hidden off the right edge at 1024 px. One group when everything fits."""
    cols = [str(c) for c in df.columns]

    def fmt(c: str) -> str | None:
        return next((f for k, f in (formats or {}).items() if c.startswith(k)), None)

    head, rest = cols[0], cols[1:]
    widths = [column_width_px(df, c, fmt(c)) for c in rest]
    parts = fitting_parts(column_width_px(df, head, fmt(head)), widths, width_px)
    return [[head, *(rest[i] for i in part)] for part in parts]


def fitting_parts(head_px: float, widths_px: Sequence[float], width_px: float) -> list[list[int]]:
    """Indices into ``widths_px`` in consecutive parts, each part as wide as ``width_px`` at
    most with a head column of ``head_px`` before it (a part of one item may be wider: it
    cannot be split); a new part starts only where the next item would not fit. Widths in
    px: the stacked tables of a wide table (:func:`column_groups`, the Simulation page's
    results table)."""
    parts: list[list[int]] = []
    used = math.inf
    for i, w in enumerate(widths_px):
        if parts and used + w <= width_px:
            parts[-1].append(i)
            used += w
        else:
            parts.append([i])
            used = head_px + w
    return parts
