"""Reading privacy profiles from tables (pandas DataFrames) and CSV files.

Columns (names matched case-insensitively, surrounding spaces ignored):

* ``eps`` or ``epsilon`` (required): the privacy level, a number ≥ 0, or inf/public;
* ``count`` (optional): users at that level; the file then describes tiers;
* ``value`` (optional, per-user files only): each user's data value in any units;
* ``name`` or ``tier`` (optional, with count): a tier's name.

Every problem raises :class:`ProfileError` naming the data row (1-based, header excluded), the
file line, the column and the kind of problem (``validate.cell_reason``: "text", "empty",
"a number with a thousands separator"...), never the cell's content; the error's fields ``row``,
``column`` and ``reason`` say the same for code.

Every uploaded CSV (profiles, menus, release tables) is read by :func:`read_upload_csv`: the
limits of the README (:data:`~hdp_core.profile.MAX_UPLOAD_BYTES`,
:data:`~hdp_core.profile.MAX_ROWS`, :data:`MAX_COLUMNS`) and the header are checked before the
body is parsed.
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import numpy as np

from hdp_core.errors import HdpError, ProfileError
from hdp_core.profile import (
    MAX_ROWS,
    MAX_TOTAL_USERS,
    MAX_UPLOAD_BYTES,
    EpsilonProfile,
    out_of_range,
)
from hdp_core.validate import (
    EMPTY_WORDS,
    LEVEL_MAX,
    LEVEL_MIN,
    PUBLIC_WORDS,
    cell_reason,
    csv_unescape,
)
from hdp_core.validate import reason_words as kind_words

__all__ = [
    "ENCODINGS",
    "MAX_COLUMNS",
    "MAX_TIERS_FILE",
    "CsvRead",
    "UploadTable",
    "check_header_line",
    "example_csv",
    "profile_from_csv",
    "profile_from_frame",
    "read_profile_csv",
    "read_upload_csv",
]

MAX_COLUMNS = 16
"""Most columns an uploaded CSV's header may have (a profile needs at most four, a release
table two); checked on the first line before the file is parsed, so a small file of many empty
columns costs nothing."""

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


def out_of_range_words(v: float) -> str:
    """Which side of the supported levels ``v`` falls on, in words (the level not quoted)."""
    side = "below the smallest" if v < LEVEL_MIN else "above the largest"
    return (
        f"{side} supported privacy level: levels must be 0 (data not used), between "
        f"{LEVEL_MIN:g} and {LEVEL_MAX:g}, or inf (public)"
    )


def parse_numbers(cells: Any, col: str, header_lines: LineOf, allow_inf: bool) -> np.ndarray:
    """Vectorised parse of a text/number column; the first bad cell raises ProfileError naming
    its row, column and kind (never its content)."""
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
                f"{_where(i + 1, col, header_lines)}: the cell is a number too large to be "
                "a floating-point number"
                + ("; write 'inf' or 'public' for a public user" if allow_inf else ""),
                row=i + 1,
                column=col,
                reason="too_large",
            )
        out[public] = math.inf if allow_inf else math.nan
    bad = np.isnan(out)
    if bad.any():
        i = int(np.argmax(bad))
        raw = "" if text is None else text.iloc[i]
        where = _where(i + 1, col, header_lines)
        if raw.lower() in EMPTY_WORDS:
            raise ProfileError(
                f"{where} is empty or NaN; every row needs a number",
                row=i + 1,
                column=col,
                reason="empty",
            )
        kind = "not_finite" if raw.lower() in PUBLIC_WORDS else cell_reason(raw)
        tail = " (use 'inf' for public)" if allow_inf else ""
        raise ProfileError(
            f"{where}: the cell is {kind_words(kind)}, not a number{tail}"
            if kind != "not_finite"
            else f"{where}: the cell is not a finite number",
            row=i + 1,
            column=col,
            reason=kind,
        )
    return cast(np.ndarray, out)


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

    eps = parse_numbers(df[eps_col], str(eps_col), header_lines, allow_inf=True)
    neg = eps < 0
    if neg.any():
        i = int(np.argmax(neg))
        raise ProfileError(
            f"{_where(i + 1, str(eps_col), header_lines)}: the level is negative; "
            "privacy levels must be ≥ 0 (0 = data not used, inf = public)",
            row=i + 1,
            column=str(eps_col),
            reason="negative",
        )
    bad = out_of_range(eps)
    if bad.any():
        i = int(np.argmax(bad))
        raise ProfileError(
            f"{_where(i + 1, str(eps_col), header_lines)}: the level is "
            + out_of_range_words(eps[i]),
            row=i + 1,
            column=str(eps_col),
            reason="out_of_range",
        )
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
        cnt = parse_numbers(cells, str(count_col), header_lines, allow_inf=False)
        for bad, msg, reason in (
            (cnt < 0, "is negative; counts must be ≥ 0", "negative"),
            (cnt != np.floor(cnt), "is not a whole number", "not_whole"),
            (cnt > MAX_TOTAL_USERS, f"is larger than {MAX_TOTAL_USERS:,}", "too_large"),
        ):
            if bad.any():
                i = int(np.argmax(bad))
                raise ProfileError(
                    f"{_where(i + 1, str(count_col), header_lines)}: the count {msg}",
                    row=i + 1,
                    column=str(count_col),
                    reason=reason,
                )
        names = None
        if name_col is not None:
            names = [
                str(csv_unescape(str(v).strip())) or f"Tier {j + 1}"
                for j, v in enumerate(df[name_col])
            ]
        return EpsilonProfile.from_tiers(eps, cnt.astype(np.int64), names)
    data = None
    if value_col is not None:
        data = parse_numbers(df[value_col], str(value_col), header_lines, allow_inf=False)
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


class UploadTable(NamedTuple):
    """An uploaded CSV as a pandas DataFrame (``frame``), the text encoding it was decoded
    with (one of :data:`ENCODINGS`) and where its data rows sit in the file (``line_of``: lines
    before row 1, or a function row -> file line, for messages)."""

    frame: Any
    encoding: str
    line_of: LineOf


def _looks_like_a_number(cell: str) -> bool:
    t = cell.strip()
    if not t:
        return False
    try:
        float(t)
    except ValueError:
        return False
    return True


def check_header_line(
    first: str,
    max_columns: int = MAX_COLUMNS,
    min_columns: int = 1,
    error: type[HdpError] = ProfileError,
) -> tuple[str, list[str]]:
    """The header rule of every CSV (uploads and the release's command line): the separator
    (',' else ';' else tab) and the names of the header line ``first``, after checking that
    it has between ``min_columns`` and ``max_columns`` columns and is not a row of numbers
    (a file without a header). Raises ``error`` with ``reason`` set; never quotes a cell."""
    sep = ","
    if "," not in first:
        if ";" in first:
            sep = ";"
        elif "\t" in first:
            sep = "\t"
    n_cols = _header_columns(first, sep)
    if n_cols > max_columns:
        raise error(
            f"the header has {n_cols:,} columns; at most {max_columns} are allowed",
            reason="too_many_columns",
        )
    try:
        names = next(csv.reader([first], delimiter=sep))
    except (csv.Error, StopIteration):
        names = first.split(sep)
    if n_cols < min_columns:
        raise error(
            f"the header has {n_cols} column{'' if n_cols == 1 else 's'}; the table needs at "
            f"least {min_columns}",
            reason="too_few_columns",
        )
    if all(_looks_like_a_number(c) for c in names):
        raise error(
            "the first row must name the columns (it holds only numbers); add a header line "
            "such as value,eps",
            reason="header_is_data",
        )
    return sep, names


def read_upload_csv(
    content: bytes | str,
    *,
    text: bool = True,
    max_bytes: int = MAX_UPLOAD_BYTES,
    max_rows: int = MAX_ROWS,
    max_columns: int = MAX_COLUMNS,
    min_columns: int = 1,
    error: type[HdpError] = ProfileError,
    rows_hint: str = "",
) -> UploadTable:
    """Every uploaded CSV (profiles, menus, release tables) as an :class:`UploadTable`.

    Checked before the body is parsed, in this order: at most ``max_bytes`` bytes, not empty,
    not binary; the header (the first non-blank line) has between ``min_columns`` and
    ``max_columns`` columns, names no column twice (ignoring case and surrounding spaces) and
    is not a row of numbers ("the first row must name the columns"). Then at most
    ``max_rows`` data rows are parsed (one more is read to tell a larger file). ``text``: every
    cell as trimmed-free text, empty cells as "" (profiles); else pandas' own types (numbers
    as numbers, empty cells as NaN; release tables), except that a column holding a number
    too large for a float (pandas reads '1e400' as inf, which an eps column would take for a
    public user) keeps its text, so the release's checks refuse that cell
    (:func:`keep_overflow_text`). Bytes are read as UTF-8 if valid, else
    Windows-1252, else Latin-1. Raises ``error`` (an HdpError) with ``reason`` set (and
    ``row``, ``column`` when one is to blame); no message quotes a cell."""
    import pandas as pd

    if isinstance(content, str):
        raw = content.encode("utf-8", errors="replace")
    elif isinstance(content, (bytes, bytearray, memoryview)):
        raw = bytes(content)
    else:
        raise error(f"expected CSV text or bytes, got {type(content).__name__}", reason="not_text")
    if len(raw) > max_bytes:
        raise error(
            f"the file is {len(raw) / 2**20:.1f} MB; the limit is {max_bytes / 2**20:.0f} MB",
            reason="too_many_bytes",
        )
    if not raw.strip():
        raise error("the file is empty", reason="empty_file")
    if b"\x00" in raw[:65536]:
        raise error("this is not a CSV text file (it contains binary data)", reason="binary")
    decoded, encoding = _decode(raw)
    first = _first_line(decoded)
    sep, names = check_header_line(first, max_columns, min_columns, error)
    seen: dict[str, str] = {}
    for c in names:
        key = c.strip().lower()
        if key and key in seen:
            raise error(
                f"the header names the column {c.strip()[:40]!r} twice (names are compared "
                "ignoring case and spaces); rename one",
                column=c.strip(),
                reason="duplicate_column",
            )
        seen[key] = c
    opts: dict[str, Any] = (
        {"dtype": str, "keep_default_na": False} if text else {"low_memory": False}
    )
    try:
        with warnings.catch_warnings():
            # a row with more fields than the header: an error, not silently dropped cells
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(
                io.StringIO(decoded),
                sep=sep,
                skip_blank_lines=True,
                index_col=False,  # never take the first column as an index
                nrows=max_rows + 1,
                **opts,
            )
    except pd.errors.EmptyDataError:
        raise error("the file is empty", reason="empty_file") from None
    except pd.errors.ParserWarning:
        raise error(
            "a row has more cells than the header has columns; check the separators",
            reason="extra_cells",
        ) from None
    except (pd.errors.ParserError, ValueError) as e:
        msg = str(e).strip().splitlines()[-1][:200]
        m = re.search(r"line (\d+)", msg)
        where = f" (line {m.group(1)} of the file)" if m else ""
        raise error(
            f"could not read the file as CSV{where}: a row does not match the header; "
            "check the separators and quotes",
            reason="malformed",
        ) from None
    df.columns = [str(c) for c in df.columns]
    if not text:
        df = keep_overflow_text(df, decoded, sep, max_rows)
    if len(df) == 0:
        raise error("the file has a header but no data rows", reason="no_rows")
    if len(df) > max_rows:
        raise error(
            f"the table has more than {max_rows:,} rows; the limit is {max_rows:,}{rows_hint}",
            reason="too_many_rows",
        )
    return UploadTable(df, encoding, _line_of(decoded))


def keep_overflow_text(df: Any, decoded: str, sep: str, max_rows: int) -> Any:
    """``df`` (pandas' typed read of ``decoded``) with each float column that holds an
    infinity written as a number too large for a float ('1e400', '-1e400';
    validate.cell_reason 'too_large') replaced by the column's text as the file writes it
    (every cell as text, empty cells as ""). Columns whose infinities are words ('inf') and
    every other column are unchanged. Reads the file again only when a float column holds an
    infinity."""
    import pandas as pd

    cols = [
        i
        for i, c in enumerate(df.columns)
        if df[c].dtype.kind == "f" and bool(np.isinf(df[c].to_numpy()).any())
    ]
    if not cols:
        return df
    text = pd.read_csv(
        io.StringIO(decoded),
        sep=sep,
        skip_blank_lines=True,
        index_col=False,
        nrows=max_rows + 1,
        dtype=str,
        keep_default_na=False,
        usecols=cols,
    )
    out = df.copy()
    for k, i in enumerate(cols):
        name = df.columns[i]
        cells = text.iloc[:, k]
        inf = np.isinf(df[name].to_numpy())
        if any(cell_reason(c) == "too_large" for c in cells[inf]):
            out[name] = cells.astype(object).to_numpy()
    return out


def read_profile_csv(
    content: bytes | str, max_rows: int = MAX_ROWS, max_bytes: int = MAX_UPLOAD_BYTES
) -> CsvRead:
    """A profile from CSV bytes or text, and the encoding used (:class:`CsvRead`), read by
    :func:`read_upload_csv` (its limits, header checks and encodings); a file with a count
    column has at most :data:`MAX_TIERS_FILE` rows. Raises ProfileError with row and line
    numbers."""
    up = read_upload_csv(
        content,
        max_rows=max_rows,
        max_bytes=max_bytes,
        rows_hint=" (use a count column to describe large populations as tiers)",
    )
    return CsvRead(
        profile_from_frame(up.frame, max_rows=max_rows, header_lines=up.line_of), up.encoding
    )


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
