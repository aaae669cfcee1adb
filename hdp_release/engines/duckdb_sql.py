"""DuckDB's side of reading a source: SQL text helpers (quoted names and strings, numbers
parsed as the app parses them, the public words, the level range), the header of a file as
DuckDB reads it, and the process's one shared in-memory database."""

from __future__ import annotations

import glob as _glob
import os
from typing import Any

from hdp_core.errors import ColumnNameError, ReleaseError
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN, PUBLIC_WORDS
from hdp_release.engines.base import (
    Q,
    csv_header_check,
    lit,
)

# ------------------------------------------------------------------------------ DuckDB
NUMERIC_DUCK = (
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


def sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


PUBLIC_SQL = "(" + ", ".join(sql_str(w) for w in sorted(PUBLIC_WORDS)) + ")"


def number_sql(x: str) -> str:
    """A text cell as DuckDB reads a number, except that '1_0' is not one (DuckDB's cast
    takes underscores as digit separators; the app's reader, pandas, refuses them)."""
    return f"CASE WHEN strpos({x}, '_') > 0 THEN NULL ELSE TRY_CAST(trim({x}) AS DOUBLE) END"


def type_text(t: str) -> str:
    """A DuckDB column type as a message may show it: an ENUM's type lists its values (a
    pandas categorical's categories: the column's cells, ids included), so it shows as
    'ENUM (categorical)' only; other types as DuckDB names them."""
    return "ENUM (categorical)" if t.upper().startswith("ENUM") else t


def quote_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sql_path(path: str) -> str:
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
        if kind != "parquet":
            csv_header_check(f)
        try:
            if kind == "parquet":
                rows = con.execute(
                    f"SELECT name, num_children FROM parquet_schema({sql_path(f)})"
                ).fetchall()
                names = _parquet_top_names(rows)
            else:
                row = con.execute(
                    f"SELECT * FROM read_csv({sql_path(f)}, header = false, all_varchar = true) "
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


_DUCK: Any = None


def shared_cursor() -> Any:
    """A new cursor of the process's one in-memory DuckDB database (made on first use: opening
    a database costs ~30 ms); each cursor keeps its registrations to itself.

    Statistics propagation is off (issue 32): Parquet column statistics omit NaN, so with it
    DuckDB answers ``isnan(v)`` as false from the statistics and a NaN cell passes every
    check, then fails the release after the ledger charged. Measured: no slower at 10^7
    rows."""
    global _DUCK
    if _DUCK is None:
        import duckdb

        _DUCK = duckdb.connect(
            config={
                "threads": os.cpu_count() or 1,
                "disabled_optimizers": "statistics_propagation",
            }
        )
    return _DUCK.cursor()


def range_sql(factor: float) -> str:
    """Rows whose level (run at eps x factor) is outside the supported range (scaled)."""
    return (
        f"e > 0 AND NOT isinf(e) AND (e < {lit(LEVEL_MIN * factor)} OR e > "
        f"{lit(LEVEL_MAX * factor)})"
    )


def grid_t(lo: float, hi: float) -> str:
    """SQL of the value ``v`` on the 2^30 grid of [lo, hi] before rounding, (v - lo) / R * Q
    (a double); v / R * Q when lo is 0 (v - 0 is v exactly, and the sign of a zero does not
    change the rounded y)."""
    d = "v" if lo == 0 else f"(v - {lit(lo)})"
    return f"{d} / {lit(hi - lo)} * {Q}"
