"""The grouped aggregate of a release per segment (hdp_release.grouped), on DuckDB and Spark.

* ``segment_counts``: a pass over the segment columns only (no value is read): the segments
  present and their rows, at most MAX_SEGMENTS + 1 of them; a missing key (NULL, or NaN in a
  float column) is located (row, column) and refused.
* ``grouped_histogram``: ONE grouped pass (GROUP BY segment, level bin) with exactly the
  per-bin sums of the general plan (hdp_release.engines.base), every segment's bins in one
  :class:`hdp_release.engines.segment_bins.Grouped` (flat numpy arrays). On DuckDB, when the
  levels are a few tiers (each in a bin of its own), the pass groups by segment and level
  instead (the same bins, no logarithm or 128-bit product per row). Otherwise the general
  pass sums q y as two BIGINT products (exact: QY_SPLIT) and, for segment columns of numbers,
  text or booleans (NUMPY_KEY_TYPES), fetches keys and sums as numpy in one query (each
  (segment, bin)'s segment found in numpy); other key types go through a temporary table so
  that the keys come back as Python values.
* ``fetch_many``: the per-user-levels plan's second pass for every segment that needs one, in
  ONE query on either engine; ``segment_view``: a handle whose ``refine`` (and ``fetch``) read
  one segment's rows only (a bin of more than FETCH_USERS users).

Segment keys are public attributes (like eps): they choose the segment, never enter a sum.
They are passed to the engine as query parameters (DuckDB), literals or a small DataFrame
(Spark), never spliced into SQL text, and never put in a message.
"""

from __future__ import annotations

import contextlib
import math
import uuid
from typing import Any

import numpy as np

from hdp_core.errors import BadCellError, ReleaseError
from hdp_release.engines.base import (
    BINS_PER_E,
    DBL_MAX,
    MAX_TIERS,
    PUBLIC_BIN,
    Q_CAP,
    QE,
    SAMPLE_MAX,
    ZERO_BIN,
    Q,
    fetch_rows,
    from_decimal,
    lit,
    q2_level,
    q2_spark,
    q2_sql,
    q2_triple,
)
from hdp_release.engines.segment_bins import (
    PART_BITS,
    PART_MASK,
    Q2_NAMES,
    Grouped,
    grouped_from_columns,
    grouped_from_rows,
    to_parts,
)
from hdp_release.engines.spark_source import fetch_levels, refine_levels

MAX_SEGMENTS = 10_000
"""More segments than this are refused before anything is computed from the values."""
QY_SPLIT = 31
"""sum(q y) is summed as sum((q >> 31) y) and sum((q & (2^31 - 1)) y): BIGINT products."""
NUMPY_KEY_TYPES = frozenset(
    {
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "FLOAT",
        "DOUBLE",
        "VARCHAR",
        "BOOLEAN",
    }
)
"""Segment column types whose numpy values (``.tolist()``) are the Python values of DuckDB's
rows: the general pass fetches its keys with its sums in one query."""


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
) -> Grouped:
    """ONE grouped pass: per segment, the general plan's level bins and exact integer sums
    (hdp_release.engines.base), as a :class:`Grouped` (the module docstring: the tiers pass,
    or the general pass in one query, or through a temporary table, dropped, for key types
    whose numpy values are not DuckDB's Python values). Sets the source's expressions so that
    its ``first_bad`` and the segment views read the same columns."""
    src.cols = (value, eps)
    v = src.value_sql(value)
    e = src.level_sql(eps)
    src.v_expr, src.e_expr = v, e
    R = hi - lo
    mx = lit(DBL_MAX)
    # y as DuckSource's fast plan forms it: the general plan's y (round half away from zero
    # of the clamped value on the grid: round(), since a bare CAST of a double rounds ties to
    # even) on every good value, NULL on a missing, NaN or infinite one (counted as bad
    # input: count(*) - count(y)); cheaper than least/greatest
    y = (
        f"CASE WHEN v >= {lit(lo)} AND v <= {lit(hi)} THEN CAST(round((v - {lit(lo)}) / {lit(R)} "
        f"* {Q}) AS BIGINT) WHEN v < {lit(lo)} AND v >= -{mx} THEN 0 WHEN v > {lit(hi)} AND "
        f"v <= {mx} THEN {Q} END"
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
    fast = _duck_tiers(src, kcols, klist, len(by), v, e, y)
    if fast is not None:
        return fast
    # sum(q y) exactly as two sums of BIGINT products (q = qh 2^31 + ql): q <= Q_CAP QE =
    # 2^62, so qh <= 2^31 and ql < 2^31, and y <= Q = 2^30: each product is at most 2^61, and
    # DuckDB sums BIGINT exactly (a 128-bit state); cheaper than one HUGEINT product per row
    agg = f"""
        WITH t AS (SELECT {v} AS v, {e} AS e, {kcols} FROM {src.rel}),
        u AS (SELECT {klist}, {b} AS b, e, {y} AS y, {qq} AS q FROM t),
        a AS (SELECT {klist}, b, count(*) AS n, min(e) AS emin, max(e) AS emax,
               {q2_sql(names=Q2_NAMES)}, sum(y) AS sy,
               sum(q) AS sq, sum((q >> {QY_SPLIT}) * y) AS sqyh,
               sum((q & {(1 << QY_SPLIT) - 1}) * y) AS sqyl, count(*) - count(y) AS nbad
            FROM u GROUP BY {klist}, b)"""
    sqy = f"(CAST(sqyh AS HUGEINT) << {QY_SPLIT}) + sqyl"
    parts = ", ".join(
        f"CAST((coalesce({x}, 0) >> {PART_BITS * i}) & {PART_MASK} AS BIGINT) AS {n}{i}"
        for n, x in (("sy", "sy"), ("sq", "sq"), ("sqy", sqy), *((w, w) for w in Q2_NAMES))
        for i in range(3)
    )
    cols_sql = f"""coalesce(b, 0) AS b, b IS NULL AS badb, n, coalesce(emin, 0) AS emin,
        coalesce(emax, 0) AS emax, {parts}, nbad"""
    if all(src.types.get(c, "") in NUMPY_KEY_TYPES for c in by):
        # keys whose numpy values are the Python values DuckDB's rows give (numbers, text,
        # booleans): one query, the segment of each (segment, bin) found in numpy
        cols = src.run_numpy(f"{agg} SELECT {klist}, {cols_sql} FROM a")
        found, sid = _factorize([cols.pop(k) for k in keys])
        cols["sid"] = sid
        return grouped_from_columns(found, cols)
    table = f"hdp_grouped_{uuid.uuid4().hex}"  # this release's own aggregate (temporary)
    try:
        src.run_sql(
            f"CREATE TEMP TABLE {table} AS {agg} "
            f"SELECT dense_rank() OVER (ORDER BY {klist}) - 1 AS sid, * FROM a"
        )
        key_rows = src.run_sql(f"SELECT DISTINCT sid, {klist} FROM {table} ORDER BY sid")
        cols = src.run_numpy(f"SELECT sid, {cols_sql} FROM {table}")
    finally:
        with contextlib.suppress(Exception):
            src.run_sql(f"DROP TABLE IF EXISTS {table}")
    return grouped_from_columns([tuple(r[1:]) for r in key_rows], cols)


def _factorize(cols: list) -> tuple[list[tuple], np.ndarray]:
    """The distinct key tuples of the key columns ``cols`` (numpy arrays, no missing value)
    as Python values, and each row's index among them."""
    codes, firsts = [], []
    for c in cols:
        arr = np.asarray(np.ma.getdata(c))
        uniq, inv = np.unique(arr, return_inverse=True)
        codes.append(inv.astype(np.int64).ravel())
        firsts.append(uniq.tolist())
    if len(codes) == 1:
        return [(x,) for x in firsts[0]], codes[0]
    mat = np.stack(codes, axis=1)
    rows, sid = np.unique(mat, axis=0, return_inverse=True)
    keys = [tuple(firsts[i][j] for i, j in enumerate(r)) for r in rows.tolist()]
    return keys, sid.astype(np.int64).ravel()


def _duck_tiers(src: Any, kcols: str, klist: str, m: int, v: str, e: str, y: str):
    """The grouped pass for a few levels (tiers): when the first SAMPLE_MAX rows hold at
    most MAX_TIERS distinct levels, each positive one in a level bin of its own (the bins of
    the general pass, DuckDB's own ln), ONE scan grouped by segment and which of those levels
    a row has (a small integer key: no ln, no q products per row; y as the fast plan's, the
    general y on good values and NULL on a missing, NaN or infinite value, counted). Returns
    the general pass's Grouped (one bin per level, emin = emax = the level; users, sum of y
    and bad values counted exactly as there; the q sums follow from the one level, the float
    sums e1, e2 are n times the level's, which the tiers plans never read), or None when
    a row has a level outside the sample or the levels are not tiers (the general pass then
    runs)."""
    got = src.run_numpy(f"SELECT {e} AS e FROM {src.rel} LIMIT {SAMPLE_MAX}")["e"]
    if np.ma.isMaskedArray(got) and bool(np.ma.getmaskarray(got).any()):
        return None
    sample = np.asarray(got, dtype=float)
    if sample.size == 0 or bool((np.isnan(sample) | (sample < 0)).any()):
        return None
    lv = sorted(set(sample.tolist()))
    if len(lv) > MAX_TIERS:
        return None
    pos = [x for x in lv if 0 < x < math.inf]
    bin_of: dict[float, int] = {}
    if pos:
        vals = ", ".join(f"({i}, {lit(x)})" for i, x in enumerate(pos))
        got_bins = src.run_sql(
            f"SELECT i, CAST(floor(ln(x) * {BINS_PER_E}) AS BIGINT) FROM (VALUES {vals}) AS l(i, x)"
        )
        bin_of = {pos[int(i)]: int(b) for i, b in got_bins}
        if len(set(bin_of.values())) != len(pos):  # two levels in one bin: level bins
            return None
    # list_position: the 1-based index of the row's level among the sample's, NULL when it is
    # none of them (a NULL, NaN or other level: the general pass then runs); DuckDB evaluates
    # it once per entry of a dictionary-encoded column (as release_mean's tiers pass: about a
    # tenth less CPU than a CASE chain here); -0.0 finds 0.0, as e = 0 does. The key is cast
    # to UTINYINT (at most MAX_TIERS = 32 levels): without statistics (issue 32) DuckDB
    # hashes the key as typed, and a one-byte key is cheaper to hash than a BIGINT
    arr = ", ".join(lit(x) for x in lv)
    rows = src.run_sql(
        f"""WITH t AS (SELECT {v} AS v, {e} AS e, {kcols} FROM {src.rel})
        SELECT {klist}, k, count(*), sum(y), count(*) - count(y) FROM (SELECT {klist},
            CAST(list_position([{arr}], e) AS UTINYINT) AS k, {y} AS y FROM t)
        GROUP BY {klist}, k"""
    )
    if any(r[m] is None or not 1 <= int(r[m]) <= len(lv) for r in rows):
        return None
    return _tiers_grouped(rows, m, lv, bin_of)


def _tiers_grouped(rows: list, m: int, lv: list[float], bin_of: dict[float, int]) -> Grouped:
    """The tiers pass's rows (key..., the level's position from 1, users, sum of y, bad
    values; one per segment and level: aggregates, never the table's rows) as the general
    pass's Grouped: each level's bin, q and sums from the level (as the general pass forms
    them: e1 = x n, e2 = x x n, q2 = q^2 n, sq = q n, sqy = q sy; 0 for eps = 0 and
    public rows), built column by column."""
    index: dict[tuple, int] = {}
    sid = np.array([index.setdefault(tuple(r[:m]), len(index)) for r in rows], dtype=np.int64)
    k = [int(r[m]) - 1 for r in rows]  # list_position is 1-based
    n_i = [int(r[m + 1]) for r in rows]
    sy = [int(from_decimal(r[m + 2]) or 0) for r in rows]
    level = [
        (ZERO_BIN if x == 0 else PUBLIC_BIN, 0, 0.0)
        if x == 0 or math.isinf(x)
        else (bin_of[x], math.floor(min(x, Q_CAP) * QE), 0.0)
        for x in lv
    ]  # per level: (bin, q), the general pass's own formula
    x = np.array(lv, dtype=float)[k]
    fin = np.array([0 < v < math.inf for v in lv], dtype=bool)[k]
    n = np.array(n_i, dtype=np.int64)
    nf = n.astype(float)  # float(n): exact below 2^53, as Python's float * int
    q_of = [level[j][1] for j in k]
    cols: dict[str, Any] = {
        "sid": sid,
        "b": np.array([level[j][0] for j in k], dtype=np.int64),
        "badb": np.zeros(len(rows), dtype=bool),
        "n": n,
        "e1": np.where(fin, x * nf, 0.0),
        "e2": np.where(fin, x * x * nf, 0.0),
        "emin": x,
        "emax": x,
        "nbad": np.array([int(r[m + 3]) for r in rows], dtype=np.int64),
    }
    q2 = [q2_level(q, c) for q, c in zip(q_of, n_i, strict=True)]
    for name, ints in (
        *((w, [t[i] for t in q2]) for i, w in enumerate(Q2_NAMES)),
        ("sy", sy),
        ("sq", [q * c for q, c in zip(q_of, n_i, strict=True)]),
        ("sqy", [q * y for q, y in zip(q_of, sy, strict=True)]),
    ):
        p = to_parts(ints)
        for i in range(3):
            cols[f"{name}{i}"] = p[:, i]
    return grouped_from_columns(list(index), cols)


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
                   {q2_sql()}, min(e), max(e)
            FROM (SELECT {key} AS k, e, y, q FROM {self._in_range(emin, emax)})
            GROUP BY k ORDER BY k"""
        rows = [tuple(from_decimal(x) for x in r) for r in self.src.run_sql(sql, self.key)]
        return [(*r[:5], q2_triple(*r[5:8]), *r[8:]) for r in rows]


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
) -> Grouped:
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
    agg = u.groupBy(*keys, "b").agg(
        F.count(F.lit(1)),
        F.sum(fin),
        F.sum(fin * fin),
        F.min("e"),
        F.max("e"),
        *q2_spark(F.col("q")),
        F.sum("y"),
        F.sum(F.col("q").cast("decimal(20,0)")),
        F.sum(F.col("q").cast("decimal(20,0)") * F.col("y").cast("decimal(11,0)")),
        F.sum(F.col("badv").cast("long")),
    )
    m = len(by)
    rows = [tuple(from_decimal(x) for x in r) for r in agg.collect()]
    return grouped_from_rows(
        [(*r[: m + 6], q2_triple(*r[m + 6 : m + 9]), *r[m + 9 :]) for r in rows], m
    )


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
) -> Grouped:
    """Per segment, its level bins (a :class:`Grouped`), from one grouped pass."""
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
    quantized levels of that segment's users with levels in [emin, emax]). ONE pass on either
    engine: the requests joined to the rows (DuckDB: keys as typed query parameters; Spark: a
    small broadcast frame of the requests, keys in the columns' own types)."""
    if engine == "spark":
        return _spark_fetch_many(src, len(by), reqs)
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


def _spark_fetch_many(src: Any, m: int, reqs: list[tuple[tuple, float, float]]) -> list:
    """fetch_many on Spark: ONE query (the requests, a small broadcast frame, joined to the
    rows on the segment keys and the level range)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

    u = src.rows_frame()
    keys = [f"k{i}" for i in range(m)]
    schema = StructType(
        [
            StructField("rid", LongType(), False),
            *[StructField(f"r{k}", u.schema[k].dataType, False) for k in keys],
            StructField("emin", DoubleType(), False),
            StructField("emax", DoubleType(), False),
        ]
    )
    data = [(i, *k, float(a), float(b)) for i, (k, a, b) in enumerate(reqs)]
    r = u.sparkSession.createDataFrame(data, schema)
    cond = (F.col("e") >= F.col("emin")) & (F.col("e") <= F.col("emax"))
    for k in keys:
        cond = cond & (F.col(k) == F.col(f"r{k}"))
    out = (
        u.join(F.broadcast(r), cond)
        .groupBy("rid", "q")
        .agg(F.count(F.lit(1)), F.sum("y"), F.min("e"), F.max("e"))
        .orderBy("rid", "q")
        .collect()
    )
    per: list[list] = [[] for _ in reqs]
    for row in out:
        per[int(row[0])].append(tuple(from_decimal(x) for x in row[1:]))
    return [fetch_rows(rows) for rows in per]


def check_segment_limit(n: int) -> None:
    """Refuse more than MAX_SEGMENTS segments (before anything is computed from values)."""
    if n > MAX_SEGMENTS:
        raise ReleaseError(
            f"the segment columns give more than {MAX_SEGMENTS:,} segments; group more "
            "coarsely (fewer segments) or release a mean per segment in several parts"
        )
