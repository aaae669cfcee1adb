"""The grouped aggregate of a release per segment (hdp_release.grouped), on DuckDB and Spark.

* ``segment_counts``: a pass over the segment columns only (no value is read): the segments
  present and their rows, at most MAX_SEGMENTS + 1 of them; a missing key (NULL, or NaN in a
  float column) is located (row, column) and refused.
* ``grouped_histogram``: ONE grouped pass (GROUP BY segment, level bin) with exactly the
  per-bin sums of the general plan (hdp_release.engines.base): per segment a Histogram.
* ``segment_view``: a handle whose ``fetch`` / ``refine`` (the per-user-levels plan's second
  passes) read one segment's rows only; used only for segments whose tau* falls inside a bin
  of several levels.

Segment keys are public attributes (like eps): they choose the segment, never enter a sum.
They are passed to the engine as query parameters (DuckDB) or literals (Spark), never
spliced into SQL text, and never put in a message.
"""

from __future__ import annotations

import math
from typing import Any

from hdp_core.errors import BadCellError, ReleaseError
from hdp_release.engines.base import (
    BINS_PER_E,
    PUBLIC_BIN,
    Q_CAP,
    QE,
    ZERO_BIN,
    Histogram,
    Q,
    fetch_rows,
    from_decimal,
    histogram_from_rows,
    lit,
)
from hdp_release.engines.spark_source import fetch_levels, refine_levels

MAX_SEGMENTS = 10_000
"""More segments than this are refused before anything is computed from the values."""


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def is_missing(x: Any) -> bool:
    """A segment key that is missing: None (NULL) or a float NaN."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def _missing_error(col: str, row: int, nan: bool) -> BadCellError:
    where = f"row {row}" if row else "a row"
    what = "NaN" if nan else "empty"
    return BadCellError(
        f"segment column {col!r}, {where}: {what}; every row needs a segment (a missing "
        "segment is refused, never made a segment of its own)",
        row=row,
        column=col,
        reason="nan" if nan else "empty",
    )


# ------------------------------------------------------------------------------ DuckDB
def _duck_float(src: Any, col: str) -> bool:
    return src.types.get(col, "") in ("FLOAT", "DOUBLE", "REAL")


def duck_segment_counts(src: Any, by: list[str]) -> list[tuple[tuple, int]]:
    """(key, rows) of at most MAX_SEGMENTS + 1 segments present (reads the segment columns
    only); a missing key is refused naming its first row and column."""
    cols = ", ".join(_q(c) for c in by)
    rows = src.run_sql(
        f"SELECT {cols}, count(*) FROM {src.rel} GROUP BY ALL LIMIT {MAX_SEGMENTS + 1}"
    )
    out = [(tuple(r[:-1]), int(r[-1])) for r in rows]
    if any(any(is_missing(x) for x in k) for k, _ in out) or (
        len(out) > MAX_SEGMENTS and _duck_has_missing(src, by)
    ):
        for c in by:
            cond = "v IS NULL" + (" OR isnan(v)" if _duck_float(src, c) else "")
            found = src.run_sql(
                f"SELECT rn, v IS NULL FROM (SELECT row_number() OVER () AS rn, {_q(c)} AS v "
                f"FROM {src.rel}) WHERE {cond} ORDER BY rn LIMIT 1"
            )
            if found:
                raise _missing_error(c, int(found[0][0]), not bool(found[0][1]))
    return out


def _duck_has_missing(src: Any, by: list[str]) -> bool:
    conds = " OR ".join(
        f"{_q(c)} IS NULL" + (f" OR isnan({_q(c)})" if _duck_float(src, c) else "") for c in by
    )
    return bool(src.run_sql(f"SELECT 1 FROM {src.rel} WHERE {conds} LIMIT 1"))


def duck_grouped_histogram(
    src: Any, value: str, eps: str, by: list[str], lo: float, hi: float
) -> dict[tuple, Histogram]:
    """ONE grouped pass: per segment key, the general plan's Histogram (its level bins and
    exact integer sums; hdp_release.engines.base). Sets the source's expressions so that its
    ``first_bad`` and the segment views read the same columns."""
    src.cols = (value, eps)
    v = src.value_sql(value)
    e = src.level_sql(eps)
    src.v_expr, src.e_expr = v, e
    R = hi - lo
    y = (
        f"least(greatest(CAST(round((least(greatest(v, {lit(lo)}), {lit(hi)}) - "
        f"{lit(lo)}) / {lit(R)} * {Q}) AS BIGINT), 0), {Q})"
    )
    qq = f"CAST(floor(least(greatest(e, 0), {lit(Q_CAP)}) * {float(QE)!r}) AS BIGINT)"
    b = (
        f"CASE WHEN e IS NULL OR isnan(e) OR e < 0 THEN NULL WHEN e = 0 THEN {ZERO_BIN} "
        f"WHEN isinf(e) THEN {PUBLIC_BIN} ELSE CAST(floor(ln(e) * {BINS_PER_E}) AS BIGINT) "
        "END"
    )
    src.bin_expr, src.y_expr, src.q_expr, src.key_expr = b, y, qq, b
    keys = [f"k{i}" for i in range(len(by))]
    kcols = ", ".join(f"{_q(c)} AS {k}" for c, k in zip(by, keys, strict=True))
    klist = ", ".join(keys)
    sql = f"""
        WITH t AS (SELECT {v} AS v, {e} AS e, {kcols} FROM {src.rel}),
        u AS (SELECT {klist}, {b} AS b, e, v, {y} AS y, {qq} AS q,
              (v IS NULL OR isnan(v) OR isinf(v)) AS badv FROM t)
        SELECT {klist}, b, count(*), sum(CASE WHEN isinf(e) THEN 0 ELSE e END),
               sum(CASE WHEN isinf(e) THEN 0 ELSE e * e END), min(e), max(e),
               sum((q / {float(QE)!r}) * (q / {float(QE)!r})),
               sum(y), sum(q), sum(CAST(q AS HUGEINT) * y), count_if(badv)
        FROM u GROUP BY {klist}, b"""
    return _split_rows(src.run_sql(sql), len(by))


def _split_rows(rows: list, m: int) -> dict[tuple, Histogram]:
    """Rows (key..., bin, sums...) -> per key, the Histogram of its bins (sorted by bin, a
    bad level's NULL bin first, as the single-table pass sorts them)."""
    per: dict[tuple, list] = {}
    for r in rows:  # one row per (segment, bin): aggregates, never the table's rows
        per.setdefault(tuple(r[:m]), []).append(tuple(from_decimal(x) for x in r[m:]))
    out = {}
    for k, rs in per.items():
        rs.sort(key=lambda t: (t[0] is not None, t[0] if t[0] is not None else 0))
        out[k] = histogram_from_rows(rs)
    return out


class DuckSegment:
    """One segment of a DuckDB source: ``fetch`` and ``refine`` as the source's, restricted
    to the segment's rows (the key passed as query parameters)."""

    def __init__(self, src: Any, by: list[str], key: tuple):
        self.src, self.key = src, list(key)
        self.where = " AND ".join(f"{_q(c)} = ?" for c in by)

    def _in_range(self, emin: float, emax: float) -> str:
        s = self.src
        return (
            f"(SELECT e, {s.y_expr} AS y, {s.q_expr} AS q FROM (SELECT {s.v_expr} AS v, "
            f"{s.e_expr} AS e FROM {s.rel} WHERE {self.where}) "
            f"WHERE e >= {lit(emin)} AND e <= {lit(emax)})"
        )

    def fetch(self, emin: float, emax: float):
        sql = f"""SELECT q, count(*), sum(y), min(e), max(e) FROM {self._in_range(emin, emax)}
            GROUP BY q ORDER BY q"""
        return fetch_rows(self.src.run_sql(sql, self.key))

    def refine(self, emin: float, emax: float, m: int) -> list:
        scale = lit(m / (emax - emin))
        key = f"least(CAST(floor((e - {lit(emin)}) * {scale}) AS INTEGER), {m - 1})"
        sql = f"""SELECT k, count(*), sum(y), sum(q), sum(CAST(q AS HUGEINT) * y),
                   sum((q / {float(QE)!r}) * (q / {float(QE)!r})), min(e), max(e)
            FROM (SELECT {key} AS k, e, y, q FROM {self._in_range(emin, emax)})
            GROUP BY k ORDER BY k"""
        return [tuple(from_decimal(x) for x in r) for r in self.src.run_sql(sql, self.key)]


# ------------------------------------------------------------------------------ Spark
def _spark_col(name: str):
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def spark_segment_counts(src: Any, by: list[str]) -> list[tuple[tuple, int]]:
    """As :func:`duck_segment_counts` on Spark (a missing key's row is 0: Spark's rows have no
    order, except for a local file or DataFrame, which DuckDB numbers)."""
    from pyspark.sql import functions as F

    rows = (
        src.df.groupBy(*[_spark_col(c) for c in by])
        .agg(F.count(F.lit(1)))
        .limit(MAX_SEGMENTS + 1)
        .collect()
    )
    out = [(tuple(r[:-1]), int(r[-1])) for r in rows]
    for i, c in enumerate(by):
        bad = [k[i] for k, _ in out if is_missing(k[i])]
        if not bad and len(out) <= MAX_SEGMENTS:
            continue
        col = _spark_col(c)
        cond = col.isNull()
        if src.types.get(c) in ("DOUBLE", "FLOAT"):
            cond = cond | F.isnan(col)
        found = src.df.select(col.alias("v")).where(cond).limit(1).collect()
        if found:
            nan = found[0][0] is not None
            duck = src.duck_view()
            if duck is not None:
                try:
                    duck_segment_counts(duck, by)  # raises, naming the row
                finally:
                    duck.close()
            raise _missing_error(c, 0, nan)
    return out


def spark_grouped_histogram(
    src: Any, value: str, eps: str, by: list[str], lo: float, hi: float
) -> dict[tuple, Histogram]:
    """As :func:`duck_grouped_histogram`, computed by Spark SQL (one groupBy)."""
    from pyspark.sql import functions as F

    v = src.value_col(value)
    e = src.level_col(eps)
    R = hi - lo
    keys = [f"k{i}" for i in range(len(by))]
    t = src.df.select(
        v.alias("v"),
        e.alias("e"),
        *src.raw_cols(value, eps),
        *[_spark_col(c).alias(k) for c, k in zip(by, keys, strict=True)],
    )
    vc = F.least(F.greatest(F.col("v"), F.lit(lo)), F.lit(hi))
    y = F.least(
        F.greatest(F.round((vc - F.lit(lo)) / F.lit(R) * F.lit(float(Q))).cast("long"), F.lit(0)),
        F.lit(Q),
    ).cast("long")
    q = F.floor(F.least(F.greatest(F.col("e"), F.lit(0.0)), F.lit(Q_CAP)) * F.lit(float(QE))).cast(
        "long"
    )
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
        *[F.col(k) for k in keys],
    )
    src.use_rows(u)
    fin = F.when(F.col("e") == math.inf, F.lit(0.0)).otherwise(F.col("e"))
    qf = F.col("q") / F.lit(float(QE))
    agg = u.groupBy(*keys, "b").agg(
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
    return _split_rows([tuple(r) for r in agg.collect()], len(by))


class SparkSegment:
    """One segment of a Spark source (see :class:`DuckSegment`)."""

    def __init__(self, src: Any, by: list[str], key: tuple):
        from pyspark.sql import functions as F

        cond = None
        for i, x in enumerate(key):
            c = F.col(f"k{i}") == F.lit(x)
            cond = c if cond is None else cond & c
        self.u = src.rows_frame().where(cond)

    def fetch(self, emin: float, emax: float):
        """As SparkSource.fetch, on this segment's rows."""
        return fetch_levels(self.u, emin, emax)

    def refine(self, emin: float, emax: float, m: int) -> list:
        """As SparkSource.refine, on this segment's rows."""
        return refine_levels(self.u, emin, emax, m)


# ------------------------------------------------------------------------------ dispatch
def segment_counts(src: Any, by: list[str], engine: str) -> list[tuple[tuple, int]]:
    """The segments present and their rows (see the module docstring)."""
    if engine == "spark":
        return spark_segment_counts(src, by)
    return duck_segment_counts(src, by)


def grouped_histogram(
    src: Any, value: str, eps: str, by: list[str], lo: float, hi: float, engine: str
) -> dict[tuple, Histogram]:
    """Per segment key, its Histogram, from one grouped pass."""
    if engine == "spark":
        return spark_grouped_histogram(src, value, eps, by, lo, hi)
    return duck_grouped_histogram(src, value, eps, by, lo, hi)


def segment_view(src: Any, by: list[str], key: tuple, engine: str) -> Any:
    """A handle for the second passes of one segment (fetch, refine)."""
    if engine == "spark":
        return SparkSegment(src, by, key)
    return DuckSegment(src, by, key)


def fetch_many(src: Any, by: list[str], reqs: list[tuple[tuple, float, float]], engine: str):
    """The per-user-levels plan's fetch for many segments at once: for each request (segment
    key, emin, emax), what ``segment_view(...).fetch(emin, emax)`` returns (the distinct
    quantized levels of that segment's users with levels in [emin, emax]). DuckDB: ONE pass
    (the requests joined to the rows, keys as typed query parameters); Spark: one query per
    request."""
    if engine == "spark":
        return [SparkSegment(src, by, k).fetch(a, b) for k, a, b in reqs]
    keys = [f"k{i}" for i in range(len(by))]
    vals, params = [], []
    for i, (k, a, b) in enumerate(reqs):
        casts = [f"CAST(? AS {src.types[c]})" for c in by]
        vals.append(f"({i}, {', '.join(casts)}, CAST(? AS DOUBLE), CAST(? AS DOUBLE))")
        params += [*k, float(a), float(b)]
    klist = ", ".join(keys)
    kcols = ", ".join(f"{_q(c)} AS {k}" for c, k in zip(by, keys, strict=True))
    on = " AND ".join(f"u.{k} = r.{k}" for k in keys)
    sql = f"""
        WITH r(rid, {klist}, emin, emax) AS (VALUES {", ".join(vals)}),
        t AS (SELECT {src.v_expr} AS v, {src.e_expr} AS e, {kcols} FROM {src.rel}),
        u AS (SELECT {klist}, e, {src.y_expr} AS y, {src.q_expr} AS q FROM t)
        SELECT r.rid, u.q, count(*), sum(u.y), min(u.e), max(u.e)
        FROM u JOIN r ON {on} AND u.e >= r.emin AND u.e <= r.emax
        GROUP BY r.rid, u.q ORDER BY r.rid, u.q"""
    per: list[list] = [[] for _ in reqs]
    for row in src.run_sql(sql, params):
        per[int(row[0])].append(tuple(from_decimal(x) for x in row[1:]))
    return [fetch_rows(rows) for rows in per]


def check_segment_limit(n: int) -> None:
    """Refuse more than MAX_SEGMENTS segments (before anything is computed from values)."""
    if n > MAX_SEGMENTS:
        raise ReleaseError(
            f"the segment columns give more than {MAX_SEGMENTS:,} segments; group more "
            "coarsely (fewer segments) or release a mean per segment in several parts"
        )
