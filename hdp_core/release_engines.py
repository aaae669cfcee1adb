"""The aggregation step of a private release, pushed into a query engine (DuckDB or Spark).

One row is one user with a value column and a privacy-level column. Nothing here is private:
these are the exact, non-private aggregates that :mod:`hdp_core.release` turns into weights,
a weighted sum and a noisy answer. Every sum that involves data values is an *integer* sum
(exact in any engine and in any order), so the engines agree exactly on the same file and the
weighted sum carries no data-dependent rounding error (see hdp_core.release).

Per row, with R = hi - lo:

* ``y = round((clamp(value, lo, hi) - lo) / R * Q)``, an integer in [0, Q], Q = 2**30 (the
  value on a fixed grid; clamping to the public range is by design);
* ``bin``: NULL for a bad level (NULL, NaN, negative), ZERO_BIN for eps = 0, PUBLIC_BIN for
  eps = +inf, else floor(ln(eps) * BINS_PER_E) (bins of relative width about 1.6%);
* ``q = floor(min(max(eps, 0), Q_CAP) * 2**42)``, an integer: the level on a fixed grid, used
  only for per-user continuous levels (see hdp_core.release; a bad level's q is never used).

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

DuckDB also runs the fast plan of hdp_core.release (``sample_levels``, ``fast_tiers``,
``fast_bracket``): the same y and q, grouped by a small integer key computed in the scan, with
the value checks fused into it (y is NULL for a missing, NaN or infinite value: count(y) <
count(*) flags bad input). Profiled at 1e7 rows, the general histogram's cost was per-row
work: ln() for the bin, least/greatest clamps, HUGEINT products for every row and a hash
table on a 64-bit key; the fast plan avoids ln, clamps with CASE, forms q y only below the
bracket and keys tiers by a perfect hash.
"""

from __future__ import annotations

import glob as _glob
import math
import os
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from .errors import BadCellError, ColumnNameError, ReleaseError
from .validate import LEVEL_MAX, LEVEL_MIN, PUBLIC_WORDS, cell_kind, cell_reason, tier_key

__all__ = [
    "BINS_PER_E",
    "ENGINES",
    "FETCH_USERS",
    "PUBLIC_BIN",
    "QE",
    "Q_CAP",
    "ZERO_BIN",
    "Histogram",
    "Q",
    "ReleaseError",
    "aggregate",
    "open_source",
    "spark_session",
]

Q = 1 << 30
"""Grid of the clamped values: y in {0, ..., Q} stands for lo + y R / Q."""
QE = 1 << 42
"""Grid of the quantized levels q / QE (per-user continuous plan)."""
Q_CAP = float(1 << 20)
"""Levels above this (about 1e6 nats, effectively public) are quantized as if at this level."""
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
_DBL_MAX = 1.7976931348623157e308
MAX_FETCH_LEVELS = 5_000_000
"""A fetched bin holding more distinct levels than this is refused (memory guard)."""
RECEIPT_ROWS_PER_DECADE = 8
"""Unsaturated per-user levels are reported in receipt rows of 1/8 decade (hdp_core.release)."""
DECADE_KEYS = 48
"""The fast plan's classes below the bracket: 1/8 decade each, from 1e-6 (LEVEL_MIN)."""
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
    q2: np.ndarray  # sum of (q / QE)^2 (float)
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
    hdp_core.release; the general plan is used instead)."""

    def as_frame(self):
        """A pandas DataFrame of the bins (for tests and inspection)."""
        import pandas as pd

        return pd.DataFrame(
            {
                "bin": self.bin,
                "n": self.n,
                "e1": self.e1,
                "e2": self.e2,
                "emin": self.emin,
                "emax": self.emax,
                "q2": self.q2,
                "sy": [int(v) for v in self.sy],
                "sq": [int(v) for v in self.sq],
                "sqy": [int(v) for v in self.sqy],
            }
        )


def _lit(x: float) -> str:
    """An exact SQL double literal."""
    return f"CAST('{float(x)!r}' AS DOUBLE)"


# ------------------------------------------------------------------------------ sources
def _kind_of_path(path: str) -> str:
    low = path.lower()
    if low.endswith((".parquet", ".pq", ".parq")):
        return "parquet"
    if low.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
        return "csv"
    raise ReleaseError(
        f"{path!r} is not a CSV or Parquet file (expected a name ending in .csv, .csv.gz or "
        ".parquet)"
    )


def _check_path(path: str) -> str:
    kind = _kind_of_path(path)
    if any(ch in path for ch in "*?["):
        if not _glob.glob(path):
            raise ReleaseError(f"no file matches {path!r}")
    elif not os.path.isfile(path):
        raise ReleaseError(f"file not found: {path!r}")
    return kind


def _match_column(cols: list[str], want: str, role: str) -> str:
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


# ------------------------------------------------------------------------------ DuckDB
_NUMERIC_DUCK = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
    "FLOAT",
    "DOUBLE",
    "REAL",
)


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


_PUBLIC_SQL = "(" + ", ".join(_sql_str(w) for w in sorted(PUBLIC_WORDS)) + ")"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


_DUCK = None


def _sql_path(path: str) -> str:
    return "'" + path.replace("'", "''") + "'"


def _files_of(path: str) -> list[str]:
    """The files a path or glob names (sorted)."""
    return sorted(_glob.glob(path)) if any(ch in path for ch in "*?[") else [path]


def _parquet_top_names(rows: list) -> list[str]:
    """Top-level column names from parquet_schema rows (name, num_children), root first."""
    names: list[str] = []

    def skip(i: int) -> int:
        n = int(rows[i][1] or 0)
        i += 1
        for _ in range(n):
            i = skip(i)
        return i

    i = 1
    for _ in range(int(rows[0][1] or 0) if rows else 0):
        names.append(str(rows[i][0]))
        i = skip(i)
    return names


def header_names(con: Any, path: str, kind: str) -> list[str]:
    """The column names exactly as every file of ``path`` (a file or a glob) writes them
    (CSV: the first row read as text, before any renaming; Parquet: the file's schema).
    Raises ReleaseError when the files do not all have the same names."""
    first: list[str] | None = None
    first_file = ""
    for f in _files_of(path):
        try:
            if kind == "parquet":
                rows = con.execute(
                    f"SELECT name, num_children FROM parquet_schema({_sql_path(f)})"
                ).fetchall()
                names = _parquet_top_names(rows)
            else:
                row = con.execute(
                    f"SELECT * FROM read_csv({_sql_path(f)}, header = false, all_varchar = true) "
                    "LIMIT 1"
                ).fetchone()
                names = ["" if c is None else str(c) for c in (row or ())]
        except Exception as exc:  # duckdb's own error family; its text may quote the file
            raise ReleaseError(
                f"could not read {os.path.basename(f)!r} as {kind} ({type(exc).__name__})"
            ) from None
        if first is None:
            first, first_file = names, f
        elif names != first:
            raise ColumnNameError(
                f"the files matched by {path!r} do not all have the same columns "
                f"({os.path.basename(first_file)!r} and {os.path.basename(f)!r} differ); "
                "release one kind of file at a time",
                columns=tuple(sorted(set(first) ^ set(names))) or tuple(names),
            )
    return first or []


_DUCK = None


def _range_sql(factor: float) -> str:
    """Rows whose level (run at eps x factor) is outside the supported range (scaled)."""
    return (
        f"e > 0 AND NOT isinf(e) AND (e < {_lit(LEVEL_MIN * factor)} OR e > "
        f"{_lit(LEVEL_MAX * factor)})"
    )


class _DuckSource:
    def __init__(self, source: Any, all_varchar: bool = False):
        import duckdb

        self.tier_names: dict[str, float] = {}
        self.level_factor = 1.0
        self.all_varchar = all_varchar
        self.cols: tuple[str, str] | None = None
        global _DUCK
        if _DUCK is None:  # one in-memory database per process (opening one costs ~30 ms)
            _DUCK = duckdb.connect(config={"threads": os.cpu_count() or 1})
        self.con = _DUCK.cursor()  # its own connection: registrations stay local to it
        self.path: str | None = None
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            kind = _check_path(path)
            fn = "read_parquet" if kind == "parquet" else "read_csv"
            opts = "" if kind == "parquet" else ", header = true"
            if all_varchar and kind == "csv":
                opts += ", all_varchar = true"
            self.rel = f"{fn}({_sql_path(path)}{opts})"
            self.kind = kind
            self.path = path
            self.raw_names = header_names(self.con, path, kind)
        else:
            import pandas as pd

            if not isinstance(source, pd.DataFrame):
                raise ReleaseError(
                    "source must be a path to a CSV or Parquet file (or a glob), a pandas "
                    f"DataFrame, or a Spark DataFrame with engine='spark'; got "
                    f"{type(source).__name__}"
                )
            self.raw_names = [str(c) for c in source.columns]
            check_column_names(self.raw_names, None, list(dict.fromkeys(self.raw_names)))
            try:
                self.con.register("hdp_src", source)
            except Exception as exc:
                raise ReleaseError(f"could not read the DataFrame ({type(exc).__name__})") from None
            self.rel = "hdp_src"
            self.kind = "dataframe"
        try:
            desc = self.con.execute(f"DESCRIBE SELECT * FROM {self.rel}").fetchall()
        except Exception as exc:  # duckdb raises its own error family (its text may quote data)
            raise ReleaseError(
                f"could not read the table as {self.kind} ({type(exc).__name__})"
            ) from None
        self.read_names = [str(r[0]) for r in desc]
        self.types = {str(r[0]): str(r[1]).upper() for r in desc}

    # ---------------------------------------------------------------- every query goes here
    def _run(self, sql: str, how: str = "all") -> Any:
        """Run ``sql``: DuckDB's errors (a late bad cell, a file it cannot read) become a
        ReleaseError naming the row and column, never quoting DuckDB's text (which may hold
        a line of the file)."""
        import duckdb

        try:
            cur = self.con.execute(sql)
            if how == "all":
                return cur.fetchall()
            if how == "one":
                return cur.fetchone()
            return cur.fetchnumpy()
        except duckdb.Error as exc:
            raise self._failure(exc) from None

    def _failure(self, exc: Exception) -> ReleaseError:
        """A ReleaseError for a failed query: for a CSV read with typed columns, the file is
        read again as text to find the first bad cell (row, column, kind)."""
        if self.kind == "csv" and not self.all_varchar and self.cols and self.path:
            txt = None
            try:
                txt = _DuckSource(self.path, all_varchar=True)
                txt.tier_names = self.tier_names
                for col, role in zip(self.cols, ("value", "eps"), strict=True):
                    txt._as_double(col, role, role == "eps")
            except ReleaseError as found:
                return found
            finally:
                if txt is not None:
                    txt.close()
        return ReleaseError(
            f"DuckDB could not read the table ({type(exc).__name__}); check that every "
            "file has the same columns and that each column holds one kind of value; "
            "nothing was released"
        )

    def _first_row(self, cond: str, col: str, rel: str | None = None) -> tuple[int, Any]:
        """(row, cell) of the first row of ``rel`` (default: the source) where ``cond`` holds
        of its cell ``v`` in column ``col``; (0, None) if none."""
        rows = self._run(
            f"SELECT rn, v FROM (SELECT row_number() OVER () AS rn, {_q(col)} AS v "
            f"FROM {rel or self.rel}) WHERE {cond} ORDER BY rn LIMIT 1"
        )
        return (int(rows[0][0]), rows[0][1]) if rows else (0, None)

    def _as_double(self, col: str, role: str, eps: bool) -> str:
        t = self.types[col]
        c = _q(col)
        if t.startswith("DECIMAL") or t in _NUMERIC_DUCK:
            return f"CAST({c} AS DOUBLE)"
        if t in ("VARCHAR", "STRING", "TEXT"):
            num = f"TRY_CAST(trim({c}) AS DOUBLE)"
            if not eps:  # text that is not a number ('1e400' is inf: a bad value, below)
                row, cell = self._first_row(
                    "TRY_CAST(trim(v) AS DOUBLE) IS NULL AND v IS NOT NULL AND trim(v) <> ''",
                    col,
                )
                if row:
                    raise bad_cell(role, col, row, cell, self.tier_names)
                return num
            # texts that are not numbers, and numbers too large for a float ('1e400' casts to
            # inf): only the words for public (and a tier's name) may mean a public user
            texts = [
                str(r[0])
                for r in self._run(
                    f"SELECT DISTINCT {c} FROM {self.rel} WHERE {c} IS NOT NULL AND ({num} IS "
                    f"NULL OR ({num} = CAST('inf' AS DOUBLE) AND lower(trim({c})) NOT IN "
                    f"{_PUBLIC_SQL})) LIMIT {MAX_TEXTS + 1}"
                )
            ]
            levels, bad = text_levels(texts[:MAX_TEXTS], self.tier_names)
            if bad:
                inlist = ", ".join(_sql_str(b) for b in bad)
                row, cell = self._first_row(f"v IN ({inlist})", col)
                raise bad_cell(role, col, row, cell, self.tier_names)
            if len(texts) > MAX_TEXTS:
                raise ReleaseError(
                    f"eps column {col!r} holds more than {MAX_TEXTS:,} different texts that "
                    "are not numbers; write the levels as numbers or tier names"
                )
            whens = "".join(f"WHEN {_sql_str(k)} THEN {_lit(x)} " for k, x in levels.items())
            return f"CASE {c} {whens}ELSE {num} END" if whens else num
        raise ReleaseError(f"{role} column {col!r} has type {t}, not numbers")

    def _scaled(self, e: str) -> str:
        """The level the release runs at: eps x level_factor (a spend below 1)."""
        return e if self.level_factor == 1.0 else f"(({e}) * {_lit(self.level_factor)})"

    def precheck(self, value: str, eps: str) -> tuple[str, int, int, int, int, int, int]:
        """Before a ledger charges (nothing computed from the values but their kind): the
        content fingerprint of the parsed (value, eps) pairs (hdp_core.fingerprint), and the
        counts of rows, bad levels, bad values, levels outside the supported range, rows
        with eps > 0 (usable) and public rows (eps = +inf), at the requested levels."""
        from .fingerprint import fingerprint_from_sums, fingerprint_sql

        self.cols = (value, eps)
        v = self._as_double(value, "value", False)
        e = self._as_double(eps, "eps", True)
        self.v_expr, self.e_expr = v, e
        row = self._run(fingerprint_sql(self.rel, v, e), "one")
        fp = fingerprint_from_sums(int(row[0]), int(row[1]), int(row[2]))
        c = self._run(
            f"""SELECT count(*), count_if(e IS NULL OR isnan(e) OR e < 0),
                count_if(v IS NULL OR isnan(v) OR isinf(v)), count_if({_range_sql(1.0)}),
                count_if(e > 0), count_if(e = CAST('inf' AS DOUBLE))
                FROM (SELECT {v} AS v, {e} AS e FROM {self.rel})""",
            "one",
        )
        n = [int(x or 0) for x in c]
        return fp, n[0], n[1], n[2], n[3], n[4], n[5]

    def histogram(self, value: str, eps: str, lo: float, hi: float) -> Histogram:
        self.cols = (value, eps)
        v = self._as_double(value, "value", False)
        e = self._scaled(self._as_double(eps, "eps", True))
        self.v_expr, self.e_expr = v, e
        R = hi - lo
        y = (
            f"least(greatest(CAST(round((least(greatest(v, {_lit(lo)}), {_lit(hi)}) - "
            f"{_lit(lo)}) / {_lit(R)} * {Q}) AS BIGINT), 0), {Q})"
        )
        # greatest(e, 0): a bad level (negative, -inf) gets q = 0 instead of failing the cast;
        # its row is counted as a bad level (bin NULL) and refused
        qq = f"CAST(floor(least(greatest(e, 0), {_lit(Q_CAP)}) * {float(QE)!r}) AS BIGINT)"
        b = (
            f"CASE WHEN e IS NULL OR isnan(e) OR e < 0 THEN NULL WHEN e = 0 THEN {ZERO_BIN} "
            f"WHEN isinf(e) THEN {PUBLIC_BIN} ELSE CAST(floor(ln(e) * {BINS_PER_E}) AS BIGINT) "
            "END"
        )
        self.bin_expr, self.y_expr, self.q_expr = b, y, qq
        self.key_expr = b
        sql = f"""
            WITH t AS (SELECT {v} AS v, {e} AS e FROM {self.rel}),
            u AS (SELECT {b} AS b, e, v, {y} AS y, {qq} AS q,
                  (v IS NULL OR isnan(v) OR isinf(v)) AS badv FROM t)
            SELECT b, count(*), sum(CASE WHEN isinf(e) THEN 0 ELSE e END),
                   sum(CASE WHEN isinf(e) THEN 0 ELSE e * e END), min(e), max(e),
                   sum((q / {float(QE)!r}) * (q / {float(QE)!r})),
                   sum(y), sum(q), sum(CAST(q AS HUGEINT) * y), count_if(badv)
            FROM u GROUP BY b ORDER BY b NULLS FIRST"""
        rows = self._run(sql)
        return _histogram_from_rows(rows)

    # --------------------------------------------------------------- the fast plan (DuckDB)
    def _prepare(self, value: str, eps: str, lo: float, hi: float) -> None:
        self.cols = (value, eps)
        self.v_expr = self._as_double(value, "value", False)
        self.e_expr = self._scaled(self._as_double(eps, "eps", True))
        R = hi - lo
        # the general plan's y: CAST rounds half away from zero, as round() does, and v in
        # [lo, hi] gives (v - lo) / R * Q in [0, Q] exactly; a value below lo counts 0, above
        # hi counts Q; a missing, NaN or infinite value gives NULL (counted: bad input; DuckDB
        # orders NaN above +inf). Cheaper in DuckDB than least/greatest.
        lo_s, hi_s, mx = _lit(lo), _lit(hi), _lit(_DBL_MAX)
        self.yc_expr = (
            f"CASE WHEN v >= {lo_s} AND v <= {hi_s} THEN CAST((v - {lo_s}) / "
            f"{_lit(R)} * {Q} AS BIGINT) WHEN v < {lo_s} AND v >= -{mx} THEN 0 "
            f"WHEN v > {hi_s} AND v <= {mx} THEN {Q} END"
        )
        self.y_expr = self.yc_expr
        self.q_expr = f"CAST(floor(least(greatest(e, 0), {_lit(Q_CAP)}) * {float(QE)!r}) AS BIGINT)"

    def _scan(self) -> str:
        return f"(SELECT {self.v_expr} AS v, {self.e_expr} AS e FROM {self.rel})"

    def sample_levels(self) -> tuple[np.ndarray, int]:
        """The levels of the first SAMPLE_MAX rows and the number of rows (Parquet: from its
        metadata). Only steers the plan."""
        n_rows = int((self._run(f"SELECT count(*) FROM {self.rel}", "one") or (0,))[0])
        x = self._run(f"SELECT {self.e_expr} AS e FROM {self.rel} LIMIT {SAMPLE_MAX}", "numpy")["e"]
        x = np.ma.filled(np.ma.asarray(x, dtype=float), np.nan)
        return np.asarray(x, dtype=float), n_rows

    def _fast(self, key: str, below: str | None) -> list:
        """One grouped scan by ``key`` (an integer, NULL for a bad level): users, good values
        and exact integer sums (q sums only where ``below`` holds)."""
        if below is None:
            qcols = "NULL, NULL, NULL, NULL"
        else:  # q is NULL (skipped by the sums) outside ``below``
            qq = f"CASE WHEN {below} THEN {self.q_expr} END"
            qcols = (
                f"sum(q), sum(CAST(q AS HUGEINT) * y), "
                f"sum((q / {float(QE)!r}) * (q / {float(QE)!r})), min(e), max(e)"
            )
        sql = f"""
            SELECT k, count(*), count(y), sum(y), {qcols}
            FROM (SELECT {key} AS k, e, v, {self.yc_expr} AS y
                  {", " + qq + " AS q" if below is not None else ""} FROM {self._scan()})
            GROUP BY k ORDER BY k NULLS FIRST"""
        self.key_expr = key
        return self._run(sql)

    def fast_tiers(self, levels: np.ndarray) -> Histogram | None:
        """The tiers pass: one scan grouped by which of ``levels`` (the sample's distinct
        levels) a row has; None when some row has another level or any value is bad."""
        lv = sorted(float(x) for x in levels)
        whens = " ".join(f"WHEN e = {_lit(x)} THEN {i}" for i, x in enumerate(lv))
        rows = self._fast(f"CAST(CASE {whens} ELSE {len(lv)} END AS INTEGER)", None)
        out = []
        for r in rows:
            if r[0] is None or r[0] >= len(lv) or _bad_values(r):
                return None
            x, n, sy = lv[r[0]], int(r[1]), int(r[3] or 0)
            if x == 0 or math.isinf(x):
                out.append(
                    (ZERO_BIN if x == 0 else PUBLIC_BIN, n, 0.0, 0.0, x, x, 0.0, sy, 0, 0, 0)
                )
            else:  # the general plan's per-bin sums, for one level (exact integers)
                q = math.floor(min(x, Q_CAP) * QE)
                out.append(
                    (int(r[0]), n, x * n, x * x * n, x, x, (q / QE) ** 2 * n, sy, q * n, q * sy, 0)
                )
        out.sort(key=lambda t: t[0])
        return _histogram_from_rows(out)

    def fast_bracket(
        self, a: float, b: float, m: int, above_first: bool = False
    ) -> Histogram | None:
        """The bracket pass for per-user levels: one scan grouped into the levels below ``a``
        (one class per 1/8 decade, the receipt's rows), m equal sub-bins of [a, b), the finite
        levels from ``b`` (one class), public and zero levels; None when any level or value
        is bad."""
        # small integer keys of known range: DuckDB groups them in a perfect hash table.
        # Keys: 0..2D below a (1/8 decade each, D = DECADE_KEYS), then the m sub-bins, the
        # class above, public, zero.
        d = DECADE_KEYS
        base = 2 * d + 1
        inner = (
            f"{base} + least(greatest(CAST(floor((e - {_lit(a)}) * {_lit(m / (b - a))}) AS "
            f"USMALLINT), 0), {m - 1})"
        )
        decade = (
            f"CAST(greatest(least(floor(log10(e) * {RECEIPT_ROWS_PER_DECADE}) + {d}, {2 * d}), "
            "0) AS USMALLINT)"
        )
        low = f"WHEN e > 0 AND e < {_lit(a)} THEN {decade} "
        high = f"WHEN e >= {_lit(b)} AND e <= {_lit(_DBL_MAX)} THEN {base + m} "
        key = (
            f"CASE {high + low if above_first else low + high}"  # the common class first
            f"WHEN e >= {_lit(a)} AND e < {_lit(b)} THEN {inner} "
            f"WHEN e = CAST('inf' AS DOUBLE) THEN {base + m + 1} WHEN e = 0 THEN "
            f"{base + m + 2} ELSE NULL END"
        )
        rows = self._fast(f"CAST({key} AS USMALLINT)", f"e < {_lit(b)}")
        out = []
        coarse = set()
        for r in rows:
            if r[0] is None or _bad_values(r):
                return None
            k, n, sy = int(r[0]), int(r[1]), int(r[3] or 0)
            k = {base + m + 1: PUBLIC_BIN, base + m + 2: ZERO_BIN}.get(k, k)
            if k in (ZERO_BIN, PUBLIC_BIN):
                x = 0.0 if k == ZERO_BIN else math.inf
                out.append((k, n, 0.0, 0.0, x, x, 0.0, sy, 0, 0, 0))
            elif k == base + m:  # saturated for sure when the bracket holds: no q sums
                out.append((k, n, 0.0, 0.0, float(r[7]), float(r[8]), 0.0, sy, 0, 0, 0))
            else:
                if k < base:
                    coarse.add(k)
                sq = int(r[4])
                out.append(
                    (
                        k,
                        n,
                        sq / QE,
                        float(r[6]),
                        float(r[7]),
                        float(r[8]),
                        float(r[6]),
                        sy,
                        sq,
                        int(r[5]),
                        0,
                    )
                )
        h = _histogram_from_rows(out)
        h.coarse = frozenset(coarse | {base + m})
        h.coarse_above = frozenset({base + m})
        return h

    def _text_relation(self, col: str) -> str | None:
        """A relation holding column ``col`` as the file writes it (text), or None: the
        source itself for a text column, the CSV read again as text for a typed one (DuckDB
        reads '1e400' as the float inf there), None for Parquet and DataFrame numbers."""
        t = self.types.get(col, "")
        if t in ("VARCHAR", "STRING", "TEXT"):
            return self.rel
        if self.kind == "csv" and self.path is not None:
            return f"read_csv({_sql_path(self.path)}, header = true, all_varchar = true)"
        return None

    def raw_cell(self, col: str, row: int) -> str | None:
        """The text of column ``col`` at ``row`` (1-based) as the file writes it, only to say
        what kind of thing a bad cell is (hdp_core.validate.cell_reason; never shown); None
        when the source holds numbers, not text, or the row is unknown."""
        rel = self._text_relation(col)
        if rel is None or not row:
            return None
        try:
            got = self.con.execute(
                f"SELECT v FROM (SELECT row_number() OVER () AS rn, {_q(col)} AS v FROM {rel}) "
                f"WHERE rn = {int(row)}"
            ).fetchall()
        except Exception:  # only a message's wording depends on it
            return None
        return None if not got or got[0][0] is None else str(got[0][0])

    def check_public(self, col: str) -> None:
        """Refuse (BadCellError, reason 'too_large') a public level (+inf) that the file
        writes as a number too large for a float ('1e400'), not as a word for public: run
        when the table has public rows. A numeric Parquet or DataFrame column has no text: its
        inf is public."""
        t = self.types.get(col, "")
        if t in ("VARCHAR", "STRING", "TEXT"):
            return  # _as_double refused such texts already
        rel = self._text_relation(col)
        if rel is None:
            return
        num = "TRY_CAST(trim(v) AS DOUBLE)"
        cond = f"{num} = CAST('inf' AS DOUBLE) AND lower(trim(v)) NOT IN {_PUBLIC_SQL}"
        # one streaming scan of the column's text; the row is numbered only if one is found
        if not self._run(f"SELECT 1 FROM (SELECT {_q(col)} AS v FROM {rel}) WHERE {cond} LIMIT 1"):
            return
        row, cell = self._first_row(cond, col, rel)
        raise bad_cell("eps", col, row, cell, self.tier_names)

    def first_bad(self, what: str) -> tuple[int, Any]:
        """(row, cell) of the first row whose level is bad (``what`` = "eps"), outside the
        supported levels ("range") or whose value is bad ("value"); (0, None) if none."""
        cond = {
            "eps": "e IS NULL OR isnan(e) OR e < 0",
            "range": _range_sql(self.level_factor),
            "value": "v IS NULL OR isnan(v) OR isinf(v)",
        }[what]
        row = self._run(
            f"SELECT rn, {'v' if what == 'value' else 'e'} FROM (SELECT row_number() OVER () "
            f"AS rn, {self.v_expr} AS v, {self.e_expr} AS e FROM {self.rel}) WHERE {cond} "
            "ORDER BY rn LIMIT 1"
        )
        return (int(row[0][0]), row[0][1]) if row else (0, None)

    def _in_range(self, emin: float, emax: float) -> str:
        return (
            f"(SELECT e, {self.y_expr} AS y, {self.q_expr} AS q FROM {self._scan()} "
            f"WHERE e >= {_lit(emin)} AND e <= {_lit(emax)})"
        )

    def fetch(self, emin: float, emax: float):
        """The distinct quantized levels of the users with levels in [emin, emax] (one bin's
        range): users, sum of y, min and max eps each."""
        sql = f"""SELECT q, count(*), sum(y), min(e), max(e) FROM {self._in_range(emin, emax)}
            GROUP BY q ORDER BY q"""
        return _fetch_rows(self._run(sql))

    def refine(self, emin: float, emax: float, m: int) -> list:
        """The users with levels in [emin, emax] in m equal sub-bins of that range: per
        sub-bin (key, users, sum of y, sum of q, sum of q y, sum of (q/QE)^2, min and max
        eps); empty sub-bins left out."""
        scale = _lit(m / (emax - emin))
        key = f"least(CAST(floor((e - {_lit(emin)}) * {scale}) AS INTEGER), {m - 1})"
        sql = f"""SELECT k, count(*), sum(y), sum(q), sum(CAST(q AS HUGEINT) * y),
                   sum((q / {float(QE)!r}) * (q / {float(QE)!r})), min(e), max(e)
            FROM (SELECT {key} AS k, e, y, q FROM {self._in_range(emin, emax)})
            GROUP BY k ORDER BY k"""
        return [tuple(r) for r in self._run(sql)]

    def close(self) -> None:
        self.con.close()


def _bad_values(r: tuple) -> bool:
    """A fast-plan group with a missing, NaN or infinite value (its y is NULL)."""
    return int(r[2]) < int(r[1])


def _histogram_from_rows(rows: list) -> Histogram:
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
        col(6, float),
        ints(7),
        ints(8),
        ints(9),
        n_rows,
        n_bad_eps,
        n_bad_value,
    )


def _fetch_rows(rows: list):
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


# ------------------------------------------------------------------------------ Spark
_SPARK = None


def spark_session(master: str = "local[2]"):
    """A SparkSession for releases: ``local[2]`` by default, UI off, bound to 127.0.0.1.

    To use a cluster, create your own SparkSession (``SparkSession.builder.master(
    "spark://host:7077")...getOrCreate()``) before calling release_mean(engine="spark"):
    getOrCreate() then returns yours, and a Spark DataFrame can be passed as the source."""
    global _SPARK
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if _SPARK is None:
        _SPARK = (
            SparkSession.builder.master(master)
            .appName("hdp-release")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.ansi.enabled", "false")
            .getOrCreate()
        )
        _SPARK.sparkContext.setLogLevel("ERROR")
    return _SPARK


def _spark_col(name: str):
    """A Spark column by its exact name (backticks quoted, so any name is literal)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


class _SparkSource:
    def __init__(self, source: Any):
        from pyspark.sql import DataFrame as SparkDF

        self.tier_names: dict[str, float] = {}
        self.level_factor = 1.0
        spark = spark_session()
        self.spark = spark
        self.local_path: str | None = None  # a local file: DuckDB names rows in messages
        self.local_frame: Any = None  # a pandas DataFrame: DuckDB names its rows too
        self.path: str | None = None
        raw: list[str] | None = None
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            self.path = path
            if "://" in path:  # a path the cluster reads (hdfs://, s3a://, ...)
                kind = _kind_of_path(path)
            else:
                kind = _check_path(path)
                self.local_path = path
                global _DUCK
                if _DUCK is None:
                    import duckdb

                    _DUCK = duckdb.connect(config={"threads": os.cpu_count() or 1})
                cur = _DUCK.cursor()
                try:
                    raw = header_names(cur, path, kind)
                finally:
                    cur.close()
            try:
                if kind == "parquet":
                    df = spark.read.parquet(path)
                else:
                    df = (
                        spark.read.option("header", True)
                        .option("inferSchema", True)
                        .option("enforceSchema", False)  # every file's header is checked
                        .csv(path)
                    )
                    if raw is None:
                        first = spark.read.option("header", False).csv(path).limit(1).collect()
                        raw = ["" if c is None else str(c) for c in (first[0] if first else ())]
            except Exception as exc:  # Spark's text may quote the file
                if raw is not None:  # Spark refuses names that clash: say which
                    check_column_names(raw, None, list(dict.fromkeys(raw)))
                raise ReleaseError(
                    f"could not read {os.path.basename(path)!r} as {kind} ({type(exc).__name__})"
                ) from None
        elif isinstance(source, SparkDF):
            df = source
        else:
            import pandas as pd

            if not isinstance(source, pd.DataFrame):
                raise ReleaseError(
                    f"engine='spark' needs a path or a DataFrame, got {type(source).__name__}"
                )
            raw = [str(c) for c in source.columns]
            check_column_names(raw, None, list(dict.fromkeys(raw)))
            df = spark.createDataFrame(source)
            self.local_frame = source
        self.df = df
        self.kind = kind if isinstance(source, (str, os.PathLike)) else "dataframe"
        self.read_names = [f.name for f in df.schema.fields]
        self.raw_names = raw if raw is not None else list(self.read_names)
        self.types = {f.name: f.dataType.simpleString().upper() for f in df.schema.fields}

    def _as_double(self, col: str, role: str, eps: bool):
        from pyspark.sql import functions as F

        t = self.types[col]
        c = _spark_col(col)
        if t in ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE") or t.startswith(
            "DECIMAL"
        ):
            return c.cast("double")
        if t == "STRING":
            num = F.trim(c).cast("double")
            expr = num
            bad_texts: list[str] = []
            if eps:
                # texts that are not numbers, and numbers too large for a float ('1e400'
                # casts to inf): only the words for public (and tier names) mean public
                over = (num == F.lit(math.inf)) & ~F.lower(F.trim(c)).isin(*sorted(PUBLIC_WORDS))
                texts = [
                    str(r[0])
                    for r in self.df.select(c.alias("v"))
                    .where(F.col("v").isNotNull() & (num.isNull() | over))
                    .distinct()
                    .limit(MAX_TEXTS + 1)
                    .collect()
                ]
                levels, bad_texts = text_levels(texts[:MAX_TEXTS], self.tier_names)
                if not bad_texts and len(texts) > MAX_TEXTS:
                    raise ReleaseError(
                        f"eps column {col!r} holds more than {MAX_TEXTS:,} different texts "
                        "that are not numbers; write the levels as numbers or tier names"
                    )
                for k, x in levels.items():
                    expr = F.when(c == F.lit(k), F.lit(x)).otherwise(expr)
                bad = (
                    self.df.select(c.alias("v")).where(F.col("v").isin(*bad_texts)).limit(1)
                    if bad_texts
                    else None
                )
            else:
                bad = (
                    self.df.select(c.alias("v"))
                    .where(num.isNull() & c.isNotNull() & (F.trim(c) != ""))
                    .limit(1)
                )
            found = bad.collect() if bad is not None else []
            if found:
                duck = self._duck()
                if duck is not None:  # raises, naming the row, unless DuckDB reads it
                    try:
                        if col in duck.types:
                            duck._as_double(col, role, eps)
                    finally:
                        duck.close()
                raise bad_cell(role, col, 0, found[0][0], self.tier_names)  # rows unordered
            return expr
        raise ReleaseError(f"{role} column {col!r} has type {t}, not numbers")

    def histogram(self, value: str, eps: str, lo: float, hi: float) -> Histogram:
        from pyspark.sql import functions as F

        self._cols = (value, eps)
        v = self._as_double(value, "value", False)
        e = self._as_double(eps, "eps", True)
        if self.level_factor != 1.0:  # the level the release runs at: eps x factor
            e = e * F.lit(self.level_factor)
        R = hi - lo
        t = self.df.select(v.alias("v"), e.alias("e"), *self._raw_cols(value, eps))
        vc = F.least(F.greatest(F.col("v"), F.lit(lo)), F.lit(hi))
        y = F.least(
            F.greatest(
                F.round((vc - F.lit(lo)) / F.lit(R) * F.lit(float(Q))).cast("long"), F.lit(0)
            ),
            F.lit(Q),
        ).cast("long")
        # F.round is HALF_UP, DuckDB's round is half away from zero: the same for y >= 0
        # greatest(e, 0): a bad level (negative, -inf) is counted as bad, its q is not used
        q = F.floor(
            F.least(F.greatest(F.col("e"), F.lit(0.0)), F.lit(Q_CAP)) * F.lit(float(QE))
        ).cast("long")
        ecol = F.col("e")
        b = (
            F.when(ecol.isNull() | F.isnan(ecol) | (ecol < 0), F.lit(None))
            .when(ecol == 0, F.lit(ZERO_BIN))
            .when(ecol == math.inf, F.lit(PUBLIC_BIN))
            .otherwise(F.floor(F.log(ecol) * F.lit(float(BINS_PER_E))).cast("long"))
        )
        badv = F.col("v").isNull() | F.isnan("v") | (F.abs(F.col("v")) == math.inf)
        u = t.select(
            b.alias("b"),
            ecol.alias("e"),
            y.alias("y"),
            q.alias("q"),
            badv.alias("badv"),
            F.col("v"),
            F.col("rv"),
            F.col("re"),
        )
        self._u = u
        fin = F.when(F.col("e") == math.inf, F.lit(0.0)).otherwise(F.col("e"))
        qf = F.col("q") / F.lit(float(QE))
        agg = u.groupBy("b").agg(
            F.count(F.lit(1)),
            F.sum(fin),
            F.sum(fin * fin),
            F.min("e"),
            F.max("e"),
            F.sum(qf * qf),
            F.sum("y"),
            F.sum(F.col("q").cast("decimal(20,0)")),
            F.sum(F.col("q").cast("decimal(20,0)") * F.col("y").cast("decimal(11,0)")),
            F.sum(F.col("badv").cast("long")),
        )
        rows = [tuple(_py(x) for x in r) for r in agg.collect()]
        rows.sort(key=lambda r: (r[0] is not None, r[0] if r[0] is not None else 0))
        return _histogram_from_rows(rows)

    def precheck(self, value: str, eps: str) -> tuple[str, int, int, int, int, int, int]:
        """As _DuckSource.precheck, on Spark (the fingerprint by
        hdp_core.fingerprint.fingerprint_spark: the same for the same parsed pairs)."""
        from pyspark.sql import functions as F

        from .fingerprint import fingerprint_spark

        self._cols = (value, eps)
        v = self._as_double(value, "value", False)
        e = self._as_double(eps, "eps", True)
        fp = fingerprint_spark(self.df, v, e)
        t = self.df.select(v.alias("v"), e.alias("e"), *self._raw_cols(value, eps))
        ecol = F.col("e")
        b = F.when(ecol.isNull() | F.isnan(ecol) | (ecol < 0), F.lit(None)).otherwise(F.lit(0))
        badv = F.col("v").isNull() | F.isnan("v") | (F.abs(F.col("v")) == math.inf)
        self._u = t.select(
            b.alias("b"), ecol.alias("e"), badv.alias("badv"), F.col("v"), F.col("rv"), F.col("re")
        )
        rng = (ecol > 0) & (ecol != math.inf) & ((ecol < LEVEL_MIN) | (ecol > LEVEL_MAX))
        bad_e = ecol.isNull() | F.isnan(ecol) | (ecol < 0)
        row = t.agg(
            F.count(F.lit(1)),
            F.sum(bad_e.cast("long")),
            F.sum(badv.cast("long")),
            F.sum(F.coalesce(rng, F.lit(False)).cast("long")),
            F.sum(F.coalesce(ecol > 0, F.lit(False)).cast("long")),
            F.sum(F.coalesce(ecol == math.inf, F.lit(False)).cast("long")),
        ).collect()[0]
        n = [int(x or 0) for x in row]
        return fp, n[0], n[1], n[2], n[3], n[4], n[5]

    def _raw_cols(self, value: str, eps: str) -> list:
        """The value and eps cells as Spark holds them, as text ("rv", "re"): what a bad
        cell is (a number too large for a float, '1e400', is text in a string column)."""
        return [
            _spark_col(value).cast("string").alias("rv"),
            _spark_col(eps).cast("string").alias("re"),
        ]

    def _duck(self, all_varchar: bool = False) -> _DuckSource | None:
        """The same local file (or pandas DataFrame) read by DuckDB, only to name a bad row
        in a message (Spark's rows have no order); None for a Spark DataFrame, a cluster path
        or a file DuckDB cannot read."""
        local = self.local_path if self.local_path is not None else self.local_frame
        if local is None:
            return None
        try:
            d = _DuckSource(local, all_varchar=all_varchar)
        except ReleaseError:
            return None
        d.tier_names = self.tier_names
        return d

    def raw_cell(self, col: str, row: int) -> str | None:
        """As _DuckSource.raw_cell, for a local file or pandas DataFrame (read by DuckDB)."""
        duck = self._duck() if row else None
        if duck is None:
            return None
        try:
            return duck.raw_cell(col, row) if col in duck.types else None
        finally:
            duck.close()

    def check_public(self, col: str) -> None:
        """As _DuckSource.check_public: a public level (+inf) written as a number too large
        for a float ('1e400') is refused. A string column was checked by _as_double; a
        local CSV file is read again as text by DuckDB (naming the row), a cluster's CSV by
        Spark without inferring types; numbers of Parquet files and DataFrames are public."""
        from pyspark.sql import functions as F

        if self.types.get(col) == "STRING" or self.kind != "csv":
            return
        if self.local_path is not None:
            duck = self._duck()
            if duck is not None:
                try:
                    duck.check_public(col)
                finally:
                    duck.close()
                return
        if self.path is None:
            return
        text = self.spark.read.option("header", True).csv(self.path)
        c = F.trim(_spark_col(col))
        found = (
            text.select(c.alias("v"))
            .where((c.cast("double") == F.lit(math.inf)) & ~F.lower(c).isin(*sorted(PUBLIC_WORDS)))
            .limit(1)
            .collect()
        )
        if found:
            raise bad_cell("eps", col, 0, found[0][0], self.tier_names)

    def first_bad(self, what: str) -> tuple[int, Any]:
        from pyspark.sql import functions as F

        duck = self._duck()
        if duck is not None and self._cols[0] in duck.types and self._cols[1] in duck.types:
            try:
                duck.v_expr = duck._as_double(self._cols[0], "value", False)
                duck.e_expr = duck._as_double(self._cols[1], "eps", True)
                row = duck.first_bad(what)
            except ReleaseError:
                row = (0, None)
            finally:
                duck.close()
            if row[0]:
                return row
        u = self._u
        e = F.col("e")
        cond = {
            "eps": F.col("b").isNull(),
            "range": (e > 0)
            & (e != math.inf)
            & ((e < LEVEL_MIN * self.level_factor) | (e > LEVEL_MAX * self.level_factor)),
            "value": F.col("badv"),
        }[what]
        row = u.where(cond).limit(1).collect()
        if not row:
            return (0, None)
        # Spark rows have no order: row 0, and the cell to say its kind (a string column's
        # text when it is a number too large for a float, '1e400'; else the parsed number)
        parsed = row[0]["v"] if what == "value" else row[0]["e"]
        raw = row[0]["rv"] if what == "value" else row[0]["re"]
        too_large = isinstance(raw, str) and cell_reason(raw) == "too_large"
        return (0, raw if too_large else parsed)

    def _in_range(self, emin: float, emax: float):
        from pyspark.sql import functions as F

        return self._u.where((F.col("e") >= F.lit(emin)) & (F.col("e") <= F.lit(emax)))

    def fetch(self, emin: float, emax: float):
        from pyspark.sql import functions as F

        rows = (
            self._in_range(emin, emax)
            .groupBy("q")
            .agg(F.count(F.lit(1)), F.sum("y"), F.min("e"), F.max("e"))
            .orderBy("q")
            .collect()
        )
        return _fetch_rows([tuple(r) for r in rows])

    def refine(self, emin: float, emax: float, m: int) -> list:
        from pyspark.sql import functions as F

        k = F.least(
            F.floor((F.col("e") - F.lit(emin)) * F.lit(m / (emax - emin))).cast("int"),
            F.lit(m - 1),
        )
        qf = F.col("q") / F.lit(float(QE))
        rows = (
            self._in_range(emin, emax)
            .select(k.alias("k"), "e", "y", "q")
            .groupBy("k")
            .agg(
                F.count(F.lit(1)),
                F.sum("y"),
                F.sum(F.col("q").cast("decimal(20,0)")),
                F.sum(F.col("q").cast("decimal(20,0)") * F.col("y").cast("decimal(11,0)")),
                F.sum(qf * qf),
                F.min("e"),
                F.max("e"),
            )
            .orderBy("k")
            .collect()
        )
        return [tuple(_py(x) for x in r) for r in rows]

    def close(self) -> None:
        pass


def _py(x: Any) -> Any:
    if isinstance(x, Decimal):
        return int(x)
    return x


def aggregate(source: Any, value: str, eps: str, lo: float, hi: float, engine: str = "duckdb"):
    """Open ``source`` on ``engine`` and return (source handle, Histogram).

    The handle's ``fetch(bin)`` gives one bin's distinct quantized levels; ``first_bad``
    locates a bad row. Raises ReleaseError for unreadable sources and missing or non-numeric
    columns."""
    src, vcol, ecol = open_source(source, value, eps, engine)
    return src, src.histogram(vcol, ecol, lo, hi)


def open_source(
    source: Any,
    value: str,
    eps: str,
    engine: str = "duckdb",
    tier_names: dict[str, float] | None = None,
):
    """Open ``source`` on ``engine``: (handle, value column, eps column), the columns named
    exactly (no case-insensitive fallback). Names that equal a chosen column's name exactly or
    ignoring case, and a chosen column the engine would read under another name (DuckDB and
    Spark rename duplicates) are refused with a ColumnNameError. ``tier_names`` maps tier
    names (:func:`hdp_core.validate.tier_key`) to levels: a text eps cell holding one takes
    that level. Raises ReleaseError."""
    if engine not in ENGINES:
        raise ReleaseError(f"engine must be one of {ENGINES}, got {engine!r}")
    src = _DuckSource(source) if engine == "duckdb" else _SparkSource(source)
    try:
        src.tier_names = dict(tier_names or {})
        raw, read = list(src.raw_names), list(src.read_names)
        vraw = _match_column(raw, value, "value")
        eraw = _match_column(raw, eps, "eps")
        check_column_names(raw, read, [vraw, eraw])
        vcol, ecol = read[raw.index(vraw)], read[raw.index(eraw)]  # as the engine names them
    except BaseException:
        src.close()
        raise
    return src, vcol, ecol
