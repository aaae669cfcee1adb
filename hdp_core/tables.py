"""Reading privacy profiles from tables (pandas DataFrames) and CSV files.

Columns (names matched case-insensitively, surrounding spaces ignored):

* ``eps`` or ``epsilon`` (required): the privacy level, a number ≥ 0, or inf/public;
* ``count`` (optional): users at that level; the file then describes tiers;
* ``value`` (optional, per-user files only): each user's data value in any units;
* ``name`` or ``tier`` (optional, with count): a tier's name.

Every problem raises :class:`ProfileError` naming the data row (1-based, header excluded), the
file line, the column and the offending text.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import ProfileError
from .profile import MAX_ROWS, MAX_TOTAL_USERS, MAX_UPLOAD_BYTES, EpsilonProfile
from .validate import EMPTY_WORDS, PUBLIC_WORDS

__all__ = ["example_csv", "profile_from_csv", "profile_from_frame"]

_EPS_NAMES = ("eps", "epsilon", "ε")
_COUNT_NAMES = ("count", "counts", "n_users", "users")
_VALUE_NAMES = ("value", "values", "x", "data")
_NAME_NAMES = ("name", "tier")


def example_csv(kind: str = "values") -> bytes:
    """A small valid example file: per-user levels with values, or tiers with counts."""
    if kind == "tiers":
        return (
            b"name,eps,count\n"
            b"Strict,0.1,600\n"
            b"Balanced,1,300\n"
            b"Open,inf,100\n"
        )
    rng = np.random.default_rng(7)
    eps = np.round(np.exp(rng.uniform(-3, 1, 20)), 4)
    eps[-2:] = math.inf
    vals = np.round(rng.uniform(0, 100, 20), 1)
    lines = ["eps,value"] + [f"{e},{v}" for e, v in zip(eps, vals)]
    return ("\n".join(lines) + "\n").encode()


def _find_column(columns: list[str], names: tuple[str, ...], what: str) -> str | None:
    norm = {c: str(c).strip().lower() for c in columns}
    hits = [c for c in columns if norm[c] in names]
    if len(hits) > 1:
        raise ProfileError(
            f"the table has more than one {what} column ({', '.join(map(str, hits))}); keep one"
        )
    return hits[0] if hits else None


LineOf = int | Callable[[int], int]
"""Where data rows sit in a file: lines before row 1, or a function row -> file line."""


def _where(row: int, col: str, header_lines: LineOf) -> str:
    if not header_lines:
        return f"row {row}, column {col!r}"
    line = header_lines(row) if callable(header_lines) else row + header_lines
    return f"row {row} (line {line} of the file), column {col!r}"


def _parse_numbers(
    cells: Any, col: str, header_lines: LineOf, allow_inf: bool
) -> np.ndarray:
    """Vectorised parse of a text/number column; first bad cell raises ProfileError."""
    import pandas as pd

    s = pd.Series(cells).reset_index(drop=True)
    if s.dtype.kind in "fiu":
        out = s.to_numpy(dtype=np.float64)
        text = None
    else:
        text = s.astype(str).str.strip()
        low = text.str.lower()
        # a writable copy: pandas may hand out a read-only view (copy-on-write)
        out = np.array(pd.to_numeric(text, errors="coerce"), dtype=np.float64)
        public = low.isin(list(PUBLIC_WORDS)).to_numpy()
        overflow = (out == math.inf) & ~public  # e.g. "1e400": not a deliberate "inf"
        if overflow.any():
            i = int(np.argmax(overflow))
            raise ProfileError(
                f"{_where(i + 1, col, header_lines)}: {text.iloc[i][:40]!r} is too large to be "
                "a number" + ("; write 'inf' or 'public' for a public user" if allow_inf else "")
            )
        out[public] = math.inf if allow_inf else math.nan
    bad = np.isnan(out)
    if bad.any():
        i = int(np.argmax(bad))
        raw = "" if text is None else text.iloc[i]
        where = _where(i + 1, col, header_lines)
        if raw.lower() in EMPTY_WORDS:
            raise ProfileError(f"{where} is empty or NaN; every row needs a number")
        if allow_inf:
            raise ProfileError(f"{where}: {raw[:40]!r} is not a number (use 'inf' for public)")
        raise ProfileError(f"{where}: {raw[:40]!r} is not a finite number")
    return out


def profile_from_frame(
    df: Any, max_rows: int = MAX_ROWS, header_lines: LineOf = 0
) -> EpsilonProfile:
    """EpsilonProfile from a DataFrame (see module docstring); ``header_lines`` (lines before
    data row 1, or a function row -> file line) adds file line numbers to messages."""
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise ProfileError(f"expected a table (pandas DataFrame), got {type(df).__name__}")
    cols = list(df.columns)
    eps_col = _find_column(cols, _EPS_NAMES, "eps/epsilon")
    if eps_col is None:
        shown = ", ".join(repr(str(c))[:30] for c in cols[:8]) or "none"
        raise ProfileError(
            f"no column named 'eps' or 'epsilon' (found: {shown}); the first line of the "
            "file must be a header naming the columns"
        )
    if len(df) == 0:
        raise ProfileError("the table has a header but no data rows")
    if len(df) > max_rows:
        raise ProfileError(
            f"the table has more than {max_rows:,} rows; the limit is {max_rows:,} "
            "(use a count column to describe large populations as tiers)"
        )
    count_col = _find_column(cols, _COUNT_NAMES, "count")
    value_col = _find_column(cols, _VALUE_NAMES, "value")
    name_col = _find_column(cols, _NAME_NAMES, "name")

    eps = _parse_numbers(df[eps_col], str(eps_col), header_lines, allow_inf=True)
    neg = eps < 0
    if neg.any():
        i = int(np.argmax(neg))
        raise ProfileError(
            f"{_where(i + 1, str(eps_col), header_lines)}: {eps[i]:g} is negative; privacy "
            "levels must be ≥ 0 (0 = data not used, inf = public)"
        )
    if count_col is not None:
        if value_col is not None:
            raise ProfileError(
                f"the table has both {count_col!r} and {value_col!r} columns: a count column "
                "describes tiers, which cannot carry per-user values; drop one of them"
            )
        cnt = _parse_numbers(df[count_col], str(count_col), header_lines, allow_inf=False)
        for bad, msg in (
            (cnt < 0, "is negative; counts must be ≥ 0"),
            (cnt != np.floor(cnt), "is not a whole number"),
            (cnt > MAX_TOTAL_USERS, f"is larger than {MAX_TOTAL_USERS:.0e}"),
        ):
            if bad.any():
                i = int(np.argmax(bad))
                raise ProfileError(
                    f"{_where(i + 1, str(count_col), header_lines)}: {cnt[i]:g} {msg}"
                )
        names = None
        if name_col is not None:
            from .views.formatting import csv_unescape  # (the inverse of to_csv's escaping)

            names = [csv_unescape(str(v).strip()) or f"Tier {j + 1}"
                     for j, v in enumerate(df[name_col])]
        return EpsilonProfile.from_tiers(eps, cnt.astype(np.int64), names)
    data = None
    if value_col is not None:
        data = _parse_numbers(df[value_col], str(value_col), header_lines, allow_inf=False)
        if np.isinf(data).any():
            i = int(np.argmax(np.isinf(data)))
            raise ProfileError(
                f"{_where(i + 1, str(value_col), header_lines)}: values must be finite"
            )
    return EpsilonProfile.from_values(eps, data=data)


def profile_from_csv(
    content: bytes | str, max_rows: int = MAX_ROWS, max_bytes: int = MAX_UPLOAD_BYTES
) -> EpsilonProfile:
    """EpsilonProfile from CSV bytes or text; raises ProfileError with row and line numbers."""
    import pandas as pd

    if isinstance(content, str):
        raw = content.encode("utf-8", errors="replace")
    elif isinstance(content, (bytes, bytearray, memoryview)):
        raw = bytes(content)
    else:
        raise ProfileError(f"expected CSV text or bytes, got {type(content).__name__}")
    if len(raw) > max_bytes:
        raise ProfileError(
            f"the file is {len(raw) / 2**20:.1f} MB; the limit is {max_bytes / 2**20:.0f} MB"
        )
    if not raw.strip():
        raise ProfileError("the file is empty")
    if b"\x00" in raw[:65536]:
        raise ProfileError("this is not a CSV text file (it contains binary data)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ProfileError(
            f"this is not a UTF-8 CSV text file (undecodable byte at position {e.start})"
        ) from None
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    sep = ","
    if "," not in first:
        if ";" in first:
            sep = ";"
        elif "\t" in first:
            sep = "\t"
    try:
        with warnings.catch_warnings():
            # a row with more fields than the header: an error, not silently dropped cells
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(
                io.StringIO(text),
                sep=sep,
                dtype=str,
                keep_default_na=False,
                skip_blank_lines=True,
                index_col=False,  # never take the first column as an index
                nrows=max_rows + 1,
            )
    except pd.errors.EmptyDataError:
        raise ProfileError("the file is empty") from None
    except pd.errors.ParserWarning:
        raise ProfileError(
            "a row has more cells than the header has columns; check the separators"
        ) from None
    except (pd.errors.ParserError, ValueError) as e:
        msg = str(e).strip().splitlines()[-1][:200]
        raise ProfileError(f"could not read the file as CSV: {msg}") from None
    df.columns = [str(c) for c in df.columns]
    return profile_from_frame(df, max_rows=max_rows, header_lines=_line_of(text))


def _line_of(text: str) -> LineOf:
    """File line (1-based) of data row r: pandas skips blank lines, so it is the line of the
    (r+1)-th non-blank line. With quotes (cells may span lines) fall back to r + the header's
    line."""
    if '"' in text:
        lines = re.split(r"\r\n|\r|\n", text)
        first = next((i for i, ln in enumerate(lines) if ln.strip()), 0)
        return first + 1

    def line(row: int) -> int:  # computed only when a message needs it
        nonblank = [i + 1 for i, ln in enumerate(re.split(r"\r\n|\r|\n", text)) if ln.strip()]
        return nonblank[row] if row < len(nonblank) else row + 1

    return line
