"""The aggregation step of a private release, pushed into a query engine (DuckDB or Spark).

One row is one user with a value column and a privacy-level column. Nothing here is private:
these are the exact, non-private aggregates that :mod:`hdp_release.release` turns into weights,
a weighted sum and a noisy answer. Every sum that involves data values is an *integer* sum
(exact in any engine and in any order), so the engines agree exactly on the same file and the
weighted sum carries no data-dependent rounding error (see hdp_release.release).

Per row, with R = hi - lo:

* ``y = round((clamp(value, lo, hi) - lo) / R * Q)``, an integer in [0, Q], Q = 2**30 (the
  value on a fixed grid; clamping to the public range is by design);
* ``bin``: NULL for a bad level (NULL, NaN, negative), ZERO_BIN for eps = 0, PUBLIC_BIN for
  eps = +inf, else floor(ln(eps) * BINS_PER_E) (bins of relative width about 1.6%);
* ``q = floor(min(max(eps, 0), Q_CAP) * 2**42)``, an integer: the level on a fixed grid, used
  only for per-user continuous levels (see hdp_release.release; a bad level's q is never used).

Infinities. A value that is missing, NaN or infinite is bad input (counted, refused). An eps
of +inf is a public user when it is a word for public ('inf', 'public', ...) or the float inf
of a numeric Parquet or DataFrame column; a cell that is a number too large for a float
('1e400', which engines parse as inf) is refused: in a text column when the column is read,
in a CSV column the engine typed as numbers by reading that column's text once more
(``check_public``), only when the table has public users.

The histogram query groups by ``bin`` (memory: the number of non-empty bins, which does not
grow with the rows: at most BINS_PER_E per factor e between the smallest and largest level);
per bin: users, sum of eps, sum of eps^2, min and max eps, sum of q^2 (floats, eps only),
sum of y, sum of q, sum of q*y (exact integers) and the number of bad values. The fetch query
returns, for one bin, its distinct q with users and sum of y.

DuckDB also runs the fast plan of hdp_release.release (``sample_levels``, ``fast_tiers``,
``fast_bracket``; hdp_release.engines.duckdb_fast): the same y and q, grouped by a small
integer key computed in the scan, with the value checks fused into it (y is NULL for a missing,
NaN or infinite value: count(y) < count(*) flags bad input). Profiled at 1e7 rows, the general
histogram's cost was per-row work: ln() for the bin, least/greatest clamps, HUGEINT products
for every row and a hash table on a 64-bit key; the fast plan avoids ln, clamps with CASE,
forms q y only below the bracket, keys tiers by list_position (evaluated per entry of a
dictionary-encoded column) and the bracket's classes by single comparisons (issue 29: with
statistics propagation off, issue 32, DuckDB builds no perfect hash table, so the key's own
cost counts; a UTINYINT key gets DuckDB's perfect hash group by from the type alone). When a
Parquet file's statistics put every value in the range, the tiers pass forms y without the
CASE and checks every row's y in the same scan (duckdb_fast.inside_pass_sql). Every plan
rounds y half away from zero (round(); DuckDB's CAST of a double rounds ties to even).
"""

from __future__ import annotations

import glob as _glob
import math
import os
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from hdp_core.errors import BadCellError, ColumnNameError, ReleaseError
from hdp_core.rounding import GRID
from hdp_core.validate import PUBLIC_WORDS, cell_kind, cell_reason, tier_key

Q = GRID


"""Grid of the clamped values: y in {0, ..., Q} stands for lo + y R / Q."""


QE = 1 << 42


"""Grid of the quantized levels q / QE (per-user continuous plan)."""


Q_CAP = float(1 << 20)


"""Levels above this (about 1e6 nats, effectively public) are quantized as if at this level."""

Q2_SPLIT = 31
Q2_MASK = (1 << Q2_SPLIT) - 1
"""sum(q^2) exactly from three sums of BIGINT products: q < 2^62 + 1 is split q = qh 2^31 + ql
(qh <= 2^31, ql < 2^31), q^2 = qh^2 2^62 + qh ql 2^32 + ql^2, each product at most 2^62."""


TEXT_SPACES = (
    " \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u202f\u205f\u3000"
)
"""The characters trimmed from both ends of a text cell (a number, a level, an id): Unicode's
space separators (Zs), the set DuckDB's trim() removes (tests/release/test_ledger_people_ids.py
checks DuckDB's set). Spark's one-argument trim removes only ' ', so Spark trims these
explicitly."""

NUMBER_TEXT = r"^[+-]?(([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))$"
"""A trimmed text cell Spark reads as a number (Java's regular expressions): a plain decimal
number or the words inf, infinity, nan. Spark's cast alone (Java's parseDouble) also takes
'0.5d', '0.5f', hex floats and ASCII control characters around the number, which DuckDB's
cast refuses (tests/release/test_release_spark_text_cells.py)."""


def q2_sql(q: str = "q", names: tuple[str, ...] = ()) -> str:
    """SQL (DuckDB) of the three sums sum(qh qh), sum(qh ql), sum(ql ql) of column ``q``: each
    product a BIGINT <= 2^62, summed exactly (DuckDB's 128-bit state; fewer than 2^64 rows).
    :func:`q2_exact` makes sum(q^2) of them."""
    h, lo = f"({q} >> {Q2_SPLIT})", f"({q} & {Q2_MASK})"
    sums = [f"sum({a} * {b})" for a, b in ((h, h), (h, lo), (lo, lo))]
    if names:
        sums = [f"{x} AS {n}" for x, n in zip(sums, names, strict=True)]
    return ", ".join(sums)


def q2_spark(q: Any) -> list:
    """Spark's columns of the three sums of :func:`q2_sql` (each product a long <= 2^62,
    summed as decimal(38, 0): a sum of longs would overflow at 2^63)."""
    from pyspark.sql import functions as F

    h, lo = F.shiftright(q, Q2_SPLIT), q.bitwiseAND(F.lit(Q2_MASK))
    return [F.sum((a * b).cast("decimal(38,0)")) for a, b in ((h, h), (h, lo), (lo, lo))]


Q2 = tuple[int, int, int]
"""The three exact sums (sum qh^2, sum qh ql, sum ql^2) of a group's squared grid levels."""


def q2_triple(h: Any, m: Any, lo: Any) -> Q2:
    """The three sums of :func:`q2_sql` as Python ints (None, an empty group's, counts as 0)."""
    return (int(h or 0), int(m or 0), int(lo or 0))


def q2_level(q: int, n: int) -> Q2:
    """The three sums for ``n`` users at the one grid level ``q``."""
    qh, ql = q >> Q2_SPLIT, q & Q2_MASK
    return (qh * qh * n, qh * ql * n, ql * ql * n)


def q2_float(h: int, m: int, lo: int) -> float:
    """sum (q / QE)^2 as a float from the three sums: (h 2^62 + m 2^32 + l) 2^-84 with each
    sum correctly rounded and the two additions in this order (the level-bins walks'
    steering value; hdp_release.engines.segment_bins.q2_floats is the same on arrays).
    Exact sums (tau*, ||r||_2^2) use :func:`q2_exact`."""
    return (float(h) * 2.0**62 + float(m) * 2.0**32 + float(lo)) * 2.0**-84


def q2_exact(h: Any, m: Any, lo: Any) -> int:
    """sum(q^2), exactly, from the three sums of :func:`q2_sql` (None counts as 0)."""
    return (int(h or 0) << (2 * Q2_SPLIT)) + (int(m or 0) << (Q2_SPLIT + 1)) + int(lo or 0)


BINS_PER_E = 64


ZERO_BIN = -(1 << 62)


PUBLIC_BIN = 1 << 62


ENGINES = ("duckdb", "spark")


SAMPLE_MAX = 50_000


"""The fast plan's level sample: the first rows (DuckDB reads only those; block sampling
reads the whole column). It only steers the plan: a misleading sample (e.g. a file sorted by
level) costs the general plan's passes, never correctness."""


MAX_TIERS = 32


"""At most this many distinct levels in the sample: try the tiers pass."""


SUB_BINS = 256


"""Equal sub-bins of the bracket in the per-user-levels pass."""


DBL_MAX = 1.7976931348623157e308


MAX_FETCH_LEVELS = 5_000_000


"""A fetched bin holding more distinct levels than this is refused (memory guard)."""


RECEIPT_ROWS_PER_DECADE = 8


"""Unsaturated per-user levels are reported in receipt rows of 1/8 decade (hdp_release.release)."""


DECADE_OFFSET = 2600


"""The fast plan's classes below the bracket are 1/8 decade each, keyed floor(8 log10 eps) +
DECADE_OFFSET: from 13 (the smallest positive double) to 2648 (Q_CAP), below SUB_KEY."""


SUB_KEY = 3000


"""The fast plan's key of the bracket's first sub-bin (then the class above, public, zero)."""


FETCH_USERS = 1 << 16


"""A bin in which tau* falls is fetched level by level only when it holds at most this many
users; a larger one is refined into SUB_BINS equal sub-bins first (one more pass each), so the
memory of the plan never grows with the number of rows."""


@dataclass
class Histogram:
    """Exact per-bin aggregates (arrays sorted by bin; special bins included)."""

    bin: np.ndarray
    n: np.ndarray  # users (int64)
    e1: np.ndarray  # sum of eps (float)
    e2: np.ndarray  # sum of eps^2 (float)
    emin: np.ndarray
    emax: np.ndarray
    q2: list[Q2]  # sum of q^2 as three exact sums (q2_exact; the squares are q2 / QE^2)
    sy: list[int]  # sum of y (exact)
    sq: list[int]  # sum of q (exact)
    sqy: list[int]  # sum of q * y (exact)
    n_rows: int
    n_bad_eps: int
    n_bad_value: int
    coarse: frozenset = frozenset()
    coarse_above: frozenset = frozenset()
    """Bins that hold many levels of the fast plan (the classes below and above the bracket):
    if the saturation level falls inside one of them the bracket was wrong (see
    hdp_release.release; the general plan is used instead)."""

    def as_frame(self):
        """A pandas DataFrame of the bins (for tests and inspection; q2 there is the float
        sum of the squared levels (q / QE)^2, the exact sum rounded once)."""
        import pandas as pd

        return pd.DataFrame(
            {
                "bin": self.bin,
                "n": self.n,
                "e1": self.e1,
                "e2": self.e2,
                "emin": self.emin,
                "emax": self.emax,
                "q2": [q2_exact(*t) / (QE * QE) for t in self.q2],  # sum (q / QE)^2, rounded
                "sy": [int(v) for v in self.sy],
                "sq": [int(v) for v in self.sq],
                "sqy": [int(v) for v in self.sqy],
            }
        )


def lit(x: float) -> str:
    """An exact SQL double literal."""
    return f"CAST('{float(x)!r}' AS DOUBLE)"


# ------------------------------------------------------------------------------ sources
def kind_of_path(path: str) -> str:
    low = path.lower()
    if low.endswith((".parquet", ".pq", ".parq")):
        return "parquet"
    if low.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
        return "csv"
    raise ReleaseError(
        f"{path!r} is not a CSV or Parquet file (expected a name ending in .csv, .csv.gz or "
        ".parquet)"
    )


def check_path(path: str) -> str:
    kind = kind_of_path(path)
    if any(ch in path for ch in "*?["):
        if not _glob.glob(path):
            raise ReleaseError(f"no file matches {path!r}")
    elif not os.path.isfile(path):
        raise ReleaseError(f"file not found: {path!r}")
    return kind


def match_column(cols: list[str], want: str, role: str) -> str:
    """The column named exactly ``want`` (no case-insensitive fallback: a near name is never
    released in its place)."""
    if not isinstance(want, str) or not want:
        raise ReleaseError(f"the {role} column must be named by a non-empty string")
    if want in cols:
        return want
    shown = ", ".join(repr(c) for c in cols[:20])
    raise ReleaseError(f"the table has no {role} column {want!r}; its columns are: {shown}")


def _name_key(name: str) -> tuple[str, str]:
    """How engines may confuse names: case (DuckDB and Spark match names without it) and
    spaces around (DuckDB trims a CSV header's names)."""
    return (name.strip().lower(), name.strip().casefold())


def check_column_names(raw: list[str], read_as: list[str] | None, chosen: list[str]) -> None:
    """Refuse (ColumnNameError) when a chosen column's name equals another column's name
    exactly or ignoring case and spaces around (engines match names without case, and DuckDB
    and Spark rename duplicates), or when the engine reads a chosen column under another name
    than the file's header gives (``read_as``: the engine's names, position by position;
    DuckDB's trimming of spaces around a name is the one difference allowed)."""
    for want in chosen:
        if want not in raw:
            continue
        keys = _name_key(want)
        same = [c for c in raw if c == want or any(k in keys for k in _name_key(c))]
        if len(same) > 1:
            shown = ", ".join(repr(c) for c in same)
            raise ColumnNameError(
                f"the table has several columns named {shown} (names must differ in more "
                "than case or spaces around); rename them so that the column to release is "
                "unambiguous",
                columns=tuple(same),
            )
    if read_as is not None:
        if len(read_as) != len(raw):
            raise ColumnNameError(
                "the engine reads a different number of columns than the header names; "
                "check the file's header",
                columns=tuple(raw),
            )
        for i, name in enumerate(raw):
            if name in chosen and read_as[i] not in (name, name.strip()):
                raise ColumnNameError(
                    f"the engine would read column {name!r} under another name "
                    f"({read_as[i]!r}); rename the column",
                    columns=(name, read_as[i]),
                )


NUMBER_REASONS = frozenset({"too_large", "not_finite"})


"""Reasons (hdp_core.validate.cell_reason) of a cell that is written as a number but is not a
finite float: '1e400' overflows to inf, 'inf' in the value column."""


def not_finite_words(role: str) -> str:
    """What a cell of ``role`` must be, said after a number that is not a finite float."""
    if role == "eps":
        return "privacy levels must be numbers >= 0 (inf or 'public' for a public user)"
    return "every value must be a finite number"


def not_a_number(role: str, col: str, where: str, cell: Any, names: dict[str, float]) -> str:
    """The message for a cell that is not a number (nor, for eps, a tier name): the column,
    the row (``where``) and the kind of thing the cell holds, never its content."""
    kind = cell_kind(cell)
    if cell_reason(cell) in NUMBER_REASONS:  # e.g. '1e400': a number too large for a float
        return f"{role} column {col!r}{where}: {kind}; {not_finite_words(role)}"
    text = f"{role} column {col!r}{where}: {kind}, which is not a number"
    if role == "eps" and names:
        shown = ", ".join(repr(k) for k in list(names)[:10])
        more = ", ..." if len(names) > 10 else ""
        text += f" nor a tier of the menu ({shown}{more}; case is ignored)"
    return text


def bad_cell(role: str, col: str, row: int, cell: Any, names: dict[str, float]) -> BadCellError:
    """A BadCellError for a cell that is not a number (fields: row, column, reason)."""
    where = f", row {row}" if row else ", a row"
    return BadCellError(
        not_a_number(role, col, where, cell, names), row=row, column=col, reason=cell_reason(cell)
    )


MAX_TEXTS = 1000


"""At most this many distinct texts that are not numbers in an eps column (tier names and
public words in their spellings); more is refused."""


def text_levels(texts: list[str], names: dict[str, float]) -> tuple[dict[str, float], list[str]]:
    """Levels of eps cells that are not numbers, decided in Python for every engine (the same
    normalisation as the menu's, :func:`hdp_core.validate.tier_key`): a tier's name takes its
    level, a public word inf; a blank cell is left out (read as empty). Returns (text ->
    level, the texts that are none of these)."""
    out: dict[str, float] = {}
    bad: list[str] = []
    for t in texts:
        key = tier_key(t)
        if key in names:
            out[t] = names[key]
        elif key in PUBLIC_WORDS:
            out[t] = math.inf
        elif key:
            bad.append(t)
    return out, bad


def bad_values(r: tuple) -> bool:
    """A fast-plan group with a missing, NaN or infinite value (its y is NULL)."""
    return int(r[2]) < int(r[1])


def histogram_from_rows(rows: list) -> Histogram:
    n_bad_eps = 0
    keep = []
    for r in rows:
        if r[0] is None:
            n_bad_eps += int(r[1])
        else:
            keep.append(r)
    n_rows = sum(int(r[1]) for r in rows)
    n_bad_value = sum(int(r[10] or 0) for r in rows)

    def col(i, dtype):
        return np.array([r[i] if r[i] is not None else 0 for r in keep], dtype=dtype)

    def ints(i):
        return [int(r[i]) if r[i] is not None else 0 for r in keep]

    return Histogram(
        col(0, np.int64),
        col(1, np.int64),
        col(2, float),
        col(3, float),
        col(4, float),
        col(5, float),
        [q2_triple(*r[6]) if r[6] is not None else (0, 0, 0) for r in keep],
        ints(7),
        ints(8),
        ints(9),
        n_rows,
        n_bad_eps,
        n_bad_value,
    )


def fetch_rows(rows: list):
    if len(rows) > MAX_FETCH_LEVELS:
        raise ReleaseError(
            f"one level bin holds {len(rows):,} distinct levels (more than "
            f"{MAX_FETCH_LEVELS:,}); round the eps column"
        )
    q = np.array([int(r[0]) for r in rows], dtype=np.int64)
    n = np.array([int(r[1]) for r in rows], dtype=np.int64)
    emn = np.array([float(r[3]) for r in rows])
    emx = np.array([float(r[4]) for r in rows])
    return q, n, [int(r[2] or 0) for r in rows], emn, emx


def from_decimal(x: Any) -> Any:
    if isinstance(x, Decimal):
        return int(x)
    return x


HEADER_BYTES = 1 << 20
"""The most bytes a CSV file's header line may take (the app's limit of MAX_COLUMNS names
fits many times over)."""


def csv_header_check(path: str) -> None:
    """The app's header rule (hdp_core.tables.check_header_line: at most MAX_COLUMNS columns,
    not a row of numbers) on a CSV file's first non-blank line, read by Python (at most
    HEADER_BYTES) before DuckDB or Spark reads the file, so a file of 200,000 columns is
    refused at once. Raises ReleaseError; never quotes a cell."""
    from hdp_core.tables import MAX_COLUMNS, check_header_line

    try:
        with open(path, "rb") as fh:
            head = fh.read(HEADER_BYTES + 1)
    except OSError:
        return  # not a local file (a cluster's path): the engine's own reading decides
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = [ln for ln in text.replace("\r", "\n").split("\n") if ln.strip()]
    if not lines:
        raise ReleaseError(f"{os.path.basename(path)!r} is empty", reason="empty_file")
    if len(lines) == 1 and len(head) > HEADER_BYTES:
        raise ReleaseError(
            f"the header of {os.path.basename(path)!r} is longer than "
            f"{HEADER_BYTES // 2**20} MB; at most {MAX_COLUMNS} columns are allowed",
            reason="too_many_columns",
        )
    check_header_line(lines[0], MAX_COLUMNS, 2, ReleaseError)
