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

import csv
import io
import math
import re
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .errors import ProfileError
from .profile import (
    MAX_ROWS,
    MAX_TOTAL_USERS,
    MAX_UPLOAD_BYTES,
    EpsilonProfile,
    out_of_range,
    range_message,
)
from .validate import EMPTY_WORDS, PUBLIC_WORDS, csv_unescape, fmt_number

__all__ = [
    "ENCODINGS",
    "MAX_COLUMNS",
    "MAX_TIERS_FILE",
    "CsvRead",
    "example_csv",
    "profile_from_csv",
    "profile_from_frame",
    "read_profile_csv",
]

MAX_COLUMNS = 16
"""Most columns a profile file's header may have (a profile needs at most four); checked on
the first line before the file is parsed, so a small file of many empty columns costs nothing."""

MAX_TIERS_FILE = 10_000
"""Most tiers (rows of a file with a count column) a profile read from a table may have."""

ENCODINGS = ("utf-8", "cp1252", "latin-1")
"""Text encodings tried in order for a CSV file: UTF-8 (with or without a byte-order mark),
then Windows-1252 (a spreadsheet's usual export on Windows), then Latin-1 (ISO-8859-1)."""


class CsvRead(NamedTuple):
    """A profile read from a CSV file and the text encoding it was decoded with (one of
    :data:`ENCODINGS`; anything but 'utf-8' is worth telling the user)."""

    profile: EpsilonProfile
    encoding: str


_EPS_NAMES = ("eps", "epsilon", "ε")
_COUNT_NAMES = ("count", "counts", "n_users", "users")
_VALUE_NAMES = ("value", "values", "x", "data")
_NAME_NAMES = ("name", "tier")


def example_csv(kind: str = "values") -> bytes:
    """A small valid example file: per-user levels with values, or tiers with counts."""
    if kind == "tiers":
        return b"name,eps,count\nStrict,0.1,600\nBalanced,1,300\nOpen,inf,100\n"
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


def _parse_numbers(cells: Any, col: str, header_lines: LineOf, allow_inf: bool) -> np.ndarray:
    """Vectorised parse of a text/number column; first bad cell raises ProfileError."""
    import pandas as pd

    s = pd.Series(cells).reset_index(drop=True)
    if s.dtype.kind in "fiu":
        out = s.to_numpy(dtype=np.float64)
        text = None
    else:
        # every cell as text (None/NaN in an object column become "" and "nan": empty)
        text = pd.Series(
            ["" if v is None else str(v) for v in s.tolist()], dtype=object
        ).str.strip()
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
            f"{_where(i + 1, str(eps_col), header_lines)}: {fmt_number(eps[i])} is negative; "
            "privacy levels must be ≥ 0 (0 = data not used, inf = public)"
        )
    bad = out_of_range(eps)
    if bad.any():
        i = int(np.argmax(bad))
        raise ProfileError(f"{_where(i + 1, str(eps_col), header_lines)}: {range_message(eps[i])}")
    if count_col is not None:
        if value_col is not None:
            raise ProfileError(
                f"the table has both {count_col!r} and {value_col!r} columns: a count column "
                "describes tiers, which cannot carry per-user values; drop one of them"
            )
        if len(df) > MAX_TIERS_FILE:
            raise ProfileError(
                f"the table has {len(df):,} tiers (rows with a count); at most "
                f"{MAX_TIERS_FILE:,} tiers (merge tiers that share a level)"
            )
        cells = df[count_col]
        cnt = _parse_numbers(cells, str(count_col), header_lines, allow_inf=False)
        for bad, msg in (
            (cnt < 0, "is negative; counts must be ≥ 0"),
            (cnt != np.floor(cnt), "is not a whole number"),
            (cnt > MAX_TOTAL_USERS, f"is larger than {MAX_TOTAL_USERS:,}"),
        ):
            if bad.any():
                i = int(np.argmax(bad))
                raw = cells.iloc[i]
                shown = raw.strip()[:40] if isinstance(raw, str) else fmt_number(cnt[i])
                raise ProfileError(f"{_where(i + 1, str(count_col), header_lines)}: {shown} {msg}")
        names = None
        if name_col is not None:
            names = [
                str(csv_unescape(str(v).strip())) or f"Tier {j + 1}"
                for j, v in enumerate(df[name_col])
            ]
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
    """EpsilonProfile from CSV bytes or text; raises ProfileError with row and line numbers.
    (:func:`read_profile_csv` also says which text encoding the bytes were read in.)"""
    return read_profile_csv(content, max_rows, max_bytes).profile


def _decode(raw: bytes) -> tuple[str, str]:
    """(text, encoding): the first of :data:`ENCODINGS` that decodes ``raw``."""
    try:
        return raw.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:  # cp1252 leaves 5 bytes undefined; Latin-1 defines all 256
        return raw.decode("latin-1"), "latin-1"


def _first_line(text: str) -> str:
    """The first non-blank line of ``text``, found without splitting the whole text."""
    start = 0
    while True:
        end = len(text)
        for brk in ("\n", "\r"):
            j = text.find(brk, start, end)
            if j >= 0:
                end = j
        line = text[start:end]
        if line.strip() or end >= len(text):
            return line.lstrip("\ufeff")
        start = end + 1


def _header_columns(first: str, sep: str) -> int:
    """Number of columns in the header line ``first`` (quoted separators not counted)."""
    if '"' not in first:
        return first.count(sep) + 1
    try:
        return len(next(csv.reader([first], delimiter=sep)))
    except csv.Error:  # e.g. a cell beyond the csv module's field size limit
        return first.count(sep) + 1


def read_profile_csv(
    content: bytes | str, max_rows: int = MAX_ROWS, max_bytes: int = MAX_UPLOAD_BYTES
) -> CsvRead:
    """A profile from CSV bytes or text, and the encoding used (:class:`CsvRead`).

    Bytes are read as UTF-8 if they are valid UTF-8, else as Windows-1252, else Latin-1 (see
    :data:`ENCODINGS`; text is taken as is and reported as 'utf-8'). The header may have at
    most :data:`MAX_COLUMNS` columns (checked before parsing); a file with a count column at
    most :data:`MAX_TIERS_FILE` rows. Raises ProfileError with row and line numbers."""
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
    text, encoding = _decode(raw)
    first = _first_line(text)
    sep = ","
    if "," not in first:
        if ";" in first:
            sep = ";"
        elif "\t" in first:
            sep = "\t"
    n_cols = _header_columns(first, sep)
    if n_cols > MAX_COLUMNS:
        raise ProfileError(
            f"the header has {n_cols:,} columns; a profile file has at most {MAX_COLUMNS} "
            "(eps, and optionally count, value and name)"
        )
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
    return CsvRead(profile_from_frame(df, max_rows=max_rows, header_lines=_line_of(text)), encoding)


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
