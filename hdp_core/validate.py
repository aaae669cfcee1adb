"""The one parser for what people type or files hold: privacy levels, whole numbers, numbers.

Profiles (CSV cells, the tiers editor), links and tier menus all read their input here, so a
level means the same everywhere:

* a number ``eps > 0`` (smaller = more privacy), within :data:`LEVEL_MIN`..:data:`LEVEL_MAX`;
* ``0``: the user allows no use of their data (where the caller allows it);
* public (no privacy): ``inf``, ``+inf``, ``infinity``, ``public``, ``public (∞)`` or ``∞``.

Numbers are plain ASCII decimals (``0.5``, ``1e-3``); other digits (Arabic-Indic, full-width),
hex, ``nan`` and words are refused. Each function raises the error class its caller passes (a
member of :mod:`hdp_core.errors`) with a message naming ``where`` and what is wrong.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

import numpy as np

from hdp_core.errors import HdpError

__all__ = [
    "EMPTY_WORDS",
    "LEVEL_MAX",
    "LEVEL_MIN",
    "PUBLIC_WORDS",
    "REASON_WORDS",
    "as_float",
    "cell_kind",
    "cell_reason",
    "csv_safe",
    "csv_unescape",
    "describe",
    "fmt_number",
    "format_eps",
    "is_empty_text",
    "is_public_word",
    "is_real_number",
    "parse_int",
    "parse_level",
    "parse_number",
    "reason_words",
    "tier_key",
]

LEVEL_MIN = 1e-6
"""Smallest positive privacy level accepted (below it the noise dwarfs any data)."""
LEVEL_MAX = 1e6
"""Largest finite privacy level accepted; looser users are public (``inf``)."""

PUBLIC_WORDS = frozenset({"inf", "+inf", "infinity", "+infinity", "public", "public (∞)", "∞"})
"""Words (lower case) that mean a public user, eps = +inf."""
EMPTY_WORDS = frozenset({"", "nan", "na", "n/a", "none", "null"})
"""Words (lower case) that mean an empty cell."""

NUM_RE = re.compile(r"[+]?(?:\d{1,20}(?:\.\d{0,20})?|\.\d{1,20})(?:[eE][-+]?\d{1,3})?", re.ASCII)
"""A plain non-negative decimal number in ASCII (at most 20 digits each side, 3 in the power)."""
INT_RE = re.compile(r"\d{1,16}", re.ASCII)
"""A plain whole number in ASCII digits (at most 16 of them)."""


def tier_key(text: str) -> str:
    """The form in which tier names are compared, everywhere (menu validation, the release's
    cell matching on every engine, the preview): NFKC, then casefold, then Python's
    ``str.strip`` (all Unicode whitespace at both ends)."""
    return unicodedata.normalize("NFKC", text).casefold().strip()


REASON_WORDS = {
    "empty": "empty",
    "nan": "NaN",
    "negative": "negative",
    "number": "a number",
    "thousands_separator": "a number with a thousands separator",
    "decimal_comma": "a number with a decimal comma",
    "currency_or_unit": "a number with a currency sign or unit",
    "date": "a date or time",
    "too_large": "a number too large for a floating-point number",
    "not_finite": "not a finite number",
    "text": "text",
}
"""Reason codes of a cell that cannot be used (the ``reason`` field of every error about a
cell), and the words messages use for them; a message never quotes the cell itself."""

_THOUSANDS = re.compile(r"^[+-]?\d{1,3}([,\u00a0\u202f '’_]\d{3})+([.,]\d+)?$")
_DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+$")
_NUM = r"[+-]?[\d.,\u00a0\u202f '’_]*\d[\d.,\u00a0\u202f '’_]*"
_UNIT = re.compile(
    rf"^(?:[$€£¥₹]|[A-Za-z]{{2,3}}\s?)\s*{_NUM}$|^{_NUM}\s*(?:[$€£¥₹%]|[A-Za-z]{{1,4}})$"
)
_DATE = re.compile(
    r"^(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})([ T]\d{1,2}:\d{2}.*)?$"
    r"|^\d{1,2}:\d{2}(:\d{2})?$"
)


def cell_reason(cell: Any) -> str:
    """The reason code (a key of :data:`REASON_WORDS`) of a cell that cannot be used as a
    number: the one classifier of every reader (uploads, the preview, both release engines).
    A number gives 'nan', 'not_finite' (inf), 'negative' or 'number'; text gives
    'empty', 'too_large' (e.g. 1e400), 'not_finite', 'thousands_separator', 'decimal_comma',
    'date', 'currency_or_unit' or 'text'."""
    if cell is None:
        return "empty"
    if is_real_number(cell):
        x = as_float(cell)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "not_finite"
        return "negative" if x < 0 else "number"
    t = str(cell).strip()
    if t.lower() in EMPTY_WORDS:
        return "empty"
    try:
        x = float(t)
    except ValueError:
        pass
    else:
        return (
            "too_large"
            if math.isinf(x)
            and t.lower().lstrip("+-")
            not in (
                "inf",
                "infinity",
            )
            else "not_finite"
        )
    if len(t) > 60:
        return "text"
    if _THOUSANDS.match(t):
        return "thousands_separator"
    if _DECIMAL_COMMA.match(t):
        return "decimal_comma"
    if _DATE.match(t):
        return "date"
    if _UNIT.match(t):
        return "currency_or_unit"
    return "text"


def reason_words(reason: str) -> str:
    """The words for a reason code of :func:`cell_reason` ('text' for an unknown code)."""
    return REASON_WORDS.get(reason, "text")


def cell_kind(cell: Any) -> str:
    """What kind of thing a cell that cannot be used is, in words for a message (never the
    cell's content): ``reason_words(cell_reason(cell))``."""
    return reason_words(cell_reason(cell))


def is_public_word(text: str) -> bool:
    """True when ``text`` (any case, spaces around ignored) is a word for public."""
    return text.strip().lower() in PUBLIC_WORDS


def is_empty_text(text: str) -> bool:
    """True when ``text`` is blank or a word for a missing value (nan, none, …)."""
    return text.strip().lower() in EMPTY_WORDS


def fmt_number(x: float) -> str:
    """Shortest text that reads back to exactly ``x`` ('inf' for +inf, no trailing '.0')."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def format_eps(x: float) -> str:
    """Short human form of a privacy level: 'public (∞)' for +inf, '0 (excluded)' for 0,
    3 significant digits otherwise."""
    if math.isinf(x):
        return "public (∞)"
    if x == 0:
        return "0 (excluded)"
    return f"{x:.3g}"


def _clip(text: str, n: int = 30) -> str:
    return text if len(text) <= n else text[:n] + "…"


def is_real_number(x: Any) -> bool:
    """True for a Python or numpy real number (not a bool, not text)."""
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def as_float(x: Any) -> float:
    """float(x) with integers beyond float range mapped to ±inf (never OverflowError)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def describe(x: Any) -> str:
    """A short, safe description of a value for an error message (text cut to 30 characters,
    JSON words for booleans and null, 'a list'/'an object' for containers)."""
    if isinstance(x, str):
        return repr(_clip(x))
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    if x is None:
        return "null"
    if isinstance(x, (list, tuple)):
        return "a list"
    if isinstance(x, Mapping):
        return "an object"
    return _clip(repr(x))


def parse_level(
    x: Any,
    where: str = "eps",
    *,
    error: type[HdpError] = HdpError,
    allow_zero: bool = True,
    allow_public: bool = True,
    lo: float = LEVEL_MIN,
    hi: float = LEVEL_MAX,
) -> float:
    """A privacy level from a number or text: 0 (if ``allow_zero``), a number in [lo, hi], or
    +inf (if ``allow_public``). Returns it as a float; raises ``error`` naming ``where``."""
    public_hint = ", or 'public'" if allow_public else ""
    if isinstance(x, (bool, np.bool_)):
        raise error(f"{where} = {describe(x)} is not a number; give a number like 0.5{public_hint}")
    if is_real_number(x):
        v = as_float(x)
        if math.isnan(v):
            raise error(f"{where} is empty or NaN: give a number like 0.5{public_hint}")
        if math.isinf(v) and isinstance(x, numbers.Integral):  # never read as public
            raise error(f"{where} is a whole number too large to be a level{public_hint}")
    elif isinstance(x, str):
        s = x.strip()
        if s.lower() in PUBLIC_WORDS:
            v = math.inf
        elif s.lower() == "nan":
            raise error(f"{where} is NaN: give a number like 0.5{public_hint}")
        elif s.lower() in EMPTY_WORDS:
            raise error(f"{where} is empty: give a number like 0.5{public_hint}")
        elif s.startswith("-") and (NUM_RE.fullmatch(s[1:]) or s[1:].lower() in PUBLIC_WORDS):
            raise error(
                f"{where} = {_clip(s)} is negative; privacy levels are ≥ 0 (smaller = more privacy)"
            )
        elif not NUM_RE.fullmatch(s):
            raise error(f"{where} = {_clip(s)!r} is not a number{public_hint}")
        else:
            v = float(s)
            if math.isinf(v):
                raise error(f"{where} = {_clip(s)} is too large to be a number{public_hint}")
    else:
        raise error(f"{where} = {describe(x)} is not a number; give a number like 0.5{public_hint}")
    if v < 0:
        raise error(f"{where} = {v:g} is negative; privacy levels are ≥ 0 (smaller = more privacy)")
    if v == 0:
        if not allow_zero:
            raise error(
                f"{where} = 0 would mean the data is never used; give a level of at least {lo:g}"
            )
        return 0.0
    if math.isinf(v):
        if not allow_public:
            raise error(f"{where} must be a finite level, not public")
        return v
    if v < lo:
        raise error(f"{where} = {v:g} is below the smallest supported level, {lo:g}")
    if v > hi:
        raise error(
            f"{where} = {v:g} is above the largest supported level, {hi:g}"
            + ("; use 'public' for no privacy" if allow_public else "")
        )
    return v


def parse_int(x: Any, where: str, lo: int, hi: int, *, error: type[HdpError] = HdpError) -> int:
    """A whole number in [lo, hi] from an int, an integral float or ASCII digits."""
    if isinstance(x, (bool, np.bool_)):
        raise error(f"{where} must be a whole number, got {x!r}")
    if isinstance(x, (int, np.integer)):
        v = int(x)
    elif isinstance(x, (float, np.floating)):
        if not (math.isfinite(x) and float(x).is_integer()):
            raise error(f"{where} must be a whole number, got {_clip(repr(x))}")
        v = int(x)
    elif isinstance(x, str):
        s = x.strip()
        if not INT_RE.fullmatch(s):
            raise error(f"{where} = {_clip(s)!r} is not a whole number")
        v = int(s)
    else:
        raise error(f"{where} must be a whole number, got {_clip(repr(x))}")
    if not lo <= v <= hi:
        if abs(v) < 10**30:
            shown = f"{v:,}"
        else:  # str() of an int over 4300 digits raises ValueError: estimate from the bits
            shown = f"a number of about {int(abs(v).bit_length() * 0.30103) + 1:,} digits"
        raise error(f"{where} = {shown} is outside {lo:,} to {hi:,}")
    return v


def parse_number(
    x: Any, where: str, lo: float, hi: float, *, error: type[HdpError] = HdpError
) -> float:
    """A finite number in [lo, hi] from a Python number or ASCII decimal text (a leading '-'
    allowed)."""
    if isinstance(x, (bool, np.bool_)):
        raise error(f"{where} must be a number, got {x!r}")
    if is_real_number(x):
        v = as_float(x)
    elif isinstance(x, str):
        s = x.strip()
        body = s[1:] if s.startswith("-") else s
        if not NUM_RE.fullmatch(body):
            raise error(f"{where} = {_clip(s)!r} is not a plain decimal number")
        v = float(s)
    else:
        raise error(f"{where} must be a number, got {_clip(repr(x))}")
    if not (math.isfinite(v) and lo <= v <= hi):
        raise error(f"{where} = {v:g} is outside [{fmt_number(lo)}, {fmt_number(hi)}]")
    return v


# spreadsheet cells ---------------------------------------------------------------------------
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a text cell as a formula (OWASP's CSV-injection list)."""


def _formula_like(s: str) -> bool:
    """True if ``s`` after any leading apostrophes starts a spreadsheet formula."""
    return s.lstrip("'").startswith(_FORMULA_START)


def csv_safe(cell: object) -> object:
    """A text cell that could start a spreadsheet formula (=, +, -, @, tab, carriage return;
    also after leading apostrophes) gets one more leading apostrophe; other values are
    returned unchanged. :func:`csv_unescape` undoes it exactly."""
    if isinstance(cell, str) and _formula_like(cell):
        return "'" + cell
    return cell


def csv_unescape(cell: object) -> object:
    """The inverse of :func:`csv_safe` for text read back from a CSV: exactly one leading
    apostrophe is removed when what follows (after any further apostrophes) starts a
    formula; anything else is returned unchanged."""
    if isinstance(cell, str) and cell.startswith("'") and _formula_like(cell[1:]):
        return cell[1:]
    return cell
