"""Limits on what a visitor can type or put in a link, checked before a page uses it.

Widgets bound to the URL (``bind="query-params"``) are seeded by Streamlit from the query
string before the page can look at the value; :func:`query_value_problem` says what is wrong
with such a value (so the page can drop it with a note instead of a traceback), and
:func:`check_data_range` bounds a data range in real units so that every number derived from
it (widths, bins, errors) stays finite and resolvable in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "REAL_MAX",
    "RELATIVE_WIDTH_MIN",
    "SPREAD",
    "SPREAD_MAX",
    "SPREAD_MIN",
    "SPREAD_START",
    "Limit",
    "check_data_range",
    "query_value_problem",
]

REAL_MAX = 1e15
"""Largest magnitude of a data-range end in real units (|lo|, |hi| <= 10^15)."""

RELATIVE_WIDTH_MIN = 1e-9
"""Smallest width of a data range relative to its largest end: float64 has about 16
significant digits, so a range of relative width 10^-9 still has 10^7 distinct points."""

_MAX_QUERY_VALUE_CHARS = 40
"""A number in a link longer than this is refused unread (a 10,000-digit value)."""


@dataclass(frozen=True)
class Limit:
    """What a URL-bound widget accepts: a number in [lo, hi] (a whole number if ``integer``),
    or, with ``choices``, one of those strings (case-sensitive, as the widget shows them)."""

    lo: float = -REAL_MAX
    hi: float = REAL_MAX
    integer: bool = False
    choices: tuple[str, ...] | None = None


SPREAD_MIN = 1e-3
"""Smallest data spread s (standard deviation on [-0.5, 0.5]) a control accepts or a chart
starts from."""

SPREAD_MAX = 0.5
"""Largest data spread s on [-0.5, 0.5] (all the mass at the two ends)."""

SPREAD = Limit(SPREAD_MIN, SPREAD_MAX)
"""The spread controls of the Saturation, Bounds and Simulation pages."""

SPREAD_START = 0.2
"""The spread those controls start from (a moderately spread data set on [-0.5, 0.5])."""


def query_value_problem(raw: str | list[str], limit: Limit) -> str | None:
    """None if the query-string value ``raw`` is acceptable for a widget with ``limit``, else a
    short reason (for a note such as "sim_trials=1e400 was ignored: ...")."""
    if limit.choices is not None:
        values = raw if isinstance(raw, list) else [raw]
        bad = [v for v in values if v not in limit.choices]
        return None if not bad else f"{bad[0][:_MAX_QUERY_VALUE_CHARS]!r} is not an option"
    if isinstance(raw, list):
        if len(raw) != 1:
            return "one value is expected"
        raw = raw[0]
    text = str(raw).strip()
    if len(text) > _MAX_QUERY_VALUE_CHARS:
        return f"a number of {len(text):,} characters is too long"
    if not text.isascii():
        return "not a number"
    try:
        v = float(text)
    except ValueError:
        return "not a number"
    if not math.isfinite(v):
        return "not a finite number"
    if limit.integer and v != math.floor(v):
        return "not a whole number"
    if not limit.lo <= v <= limit.hi:
        return f"outside {_g(limit.lo)} to {_g(limit.hi)}"
    return None


def check_data_range(lo: float, hi: float) -> tuple[float, float]:
    """(lo, hi) as floats when they make a usable data range in real units; ValueError naming
    the problem otherwise: both finite with |lo|, |hi| <= REAL_MAX, lo < hi, and a width of
    at least RELATIVE_WIDTH_MIN times the larger end (so that bins and errors on the range are
    distinct float64 numbers) and at least 1e-300 (no subnormal widths)."""
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"the data range [{_g(lo)}, {_g(hi)}] must be finite")
    big = max(abs(lo), abs(hi))
    if big > REAL_MAX:
        raise ValueError(
            f"the data range [{_g(lo)}, {_g(hi)}] is too large: each end must be "
            f"between -{_g(REAL_MAX)} and {_g(REAL_MAX)}"
        )
    if not hi > lo:
        raise ValueError(f"the data range needs low < high, got [{_g(lo)}, {_g(hi)}]")
    if hi - lo < max(RELATIVE_WIDTH_MIN * big, 1e-300):
        raise ValueError(
            f"the data range [{_g(lo)}, {_g(hi)}] is too narrow: its width must "
            f"be at least {_g(RELATIVE_WIDTH_MIN)} times its larger end"
        )
    return lo, hi


def _g(x: float) -> str:
    return f"{x:.6g}"
