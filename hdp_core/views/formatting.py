"""Numbers and user-supplied text as the pages show them.

Text a user supplied (tier names, units, file cells) is shown as plain text: :func:`plain`
escapes it for places that render markdown, and :func:`csv_safe` keeps a spreadsheet from
reading an exported cell as a formula (OWASP's CSV-injection guidance).
"""

from __future__ import annotations

import math

from ..validate import format_eps

__all__ = ["count_noun", "csv_safe", "format_eps", "plain", "sci"]

_MD_SPECIAL = "\\`*_{}[]()<>#+-.!|~$&:"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def plain(text: object) -> str:
    """``text`` with every markdown/HTML special character backslash-escaped, so that
    st.markdown, st.caption and friends show it literally (no links, images or tags)."""
    s = str(text)
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in s).replace("\n", " ")


def csv_safe(cell: object) -> object:
    """A text cell that could start a spreadsheet formula (=, +, -, @, tab, carriage return)
    gets a leading apostrophe; other values are returned unchanged."""
    if isinstance(cell, str) and cell.startswith(_FORMULA_START):
        return "'" + cell
    return cell


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
