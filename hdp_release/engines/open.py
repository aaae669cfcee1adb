"""Opening a source on an engine: the columns matched exactly and checked, then the handle."""

from __future__ import annotations

from typing import Any

from hdp_core.errors import ReleaseError
from hdp_release.engines.base import ENGINES, check_column_names, match_column
from hdp_release.engines.duckdb_source import DuckSource
from hdp_release.engines.spark_source import SparkSource


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
    src = DuckSource(source) if engine == "duckdb" else SparkSource(source)
    try:
        src.tier_names = dict(tier_names or {})
        raw, read = list(src.raw_names), list(src.read_names)
        vraw = match_column(raw, value, "value")
        eraw = match_column(raw, eps, "eps")
        check_column_names(raw, read, [vraw, eraw])
        vcol, ecol = read[raw.index(vraw)], read[raw.index(eraw)]  # as the engine names them
    except BaseException:
        src.close()
        raise
    return src, vcol, ecol
