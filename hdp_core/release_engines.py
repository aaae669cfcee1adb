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
* ``q = floor(min(eps, Q_CAP) * 2**42)``, an integer: the level on a fixed grid, used only for
  per-user continuous levels (see hdp_core.release).

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

from .errors import ReleaseError
from .validate import PUBLIC_WORDS

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
    if not isinstance(want, str) or not want:
        raise ReleaseError(f"the {role} column must be named by a non-empty string")
    if want in cols:
        return want
    near = [c for c in cols if c.strip().lower() == want.strip().lower()]
    if len(near) == 1:
        return near[0]
    shown = ", ".join(repr(c) for c in cols[:20])
    raise ReleaseError(f"the table has no {role} column {want!r}; its columns are: {shown}")


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


def not_a_number(role: str, col: str, where: str, cell: Any, names: dict[str, float]) -> str:
    """The message for a text cell that is not a number (nor, for eps, a tier name)."""
    text = f"{role} column {col!r}{where}: {str(cell)[:40]!r} is not a number"
    if role == "eps" and names:
        shown = ", ".join(repr(k) for k in list(names)[:10])
        more = ", ..." if len(names) > 10 else ""
        text += f" nor a tier of the menu ({shown}{more}; case is ignored)"
    return text


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


_DUCK = None


class _DuckSource:
    def __init__(self, source: Any):
        import duckdb

        self.tier_names: dict[str, float] = {}
        global _DUCK
        if _DUCK is None:  # one in-memory database per process (opening one costs ~30 ms)
            _DUCK = duckdb.connect(config={"threads": os.cpu_count() or 1})
        self.con = _DUCK.cursor()  # its own connection: registrations stay local to it
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            kind = _check_path(path)
            fn = "read_parquet" if kind == "parquet" else "read_csv"
            opts = "" if kind == "parquet" else ", header = true"
            self.rel = f"{fn}('{path.replace(chr(39), chr(39) * 2)}'{opts})"
            self.kind = kind
        else:
            import pandas as pd

            if not isinstance(source, pd.DataFrame):
                raise ReleaseError(
                    "source must be a path to a CSV or Parquet file (or a glob), a pandas "
                    f"DataFrame, or a Spark DataFrame with engine='spark'; got "
                    f"{type(source).__name__}"
                )
            self.con.register("hdp_src", source)
            self.rel = "hdp_src"
            self.kind = "dataframe"
        try:
            desc = self.con.execute(f"DESCRIBE SELECT * FROM {self.rel}").fetchall()
        except Exception as exc:  # duckdb raises its own error family
            raise ReleaseError(
                f"could not read the table as {self.kind}: {str(exc).splitlines()[0]}"
            ) from None
        self.types = {r[0]: str(r[1]).upper() for r in desc}

    def _as_double(self, col: str, role: str, eps: bool) -> str:
        t = self.types[col]
        c = _q(col)
        if t.startswith("DECIMAL") or t in _NUMERIC_DUCK:
            return f"CAST({c} AS DOUBLE)"
        if t in ("VARCHAR", "STRING", "TEXT"):
            txt = f"lower(trim({c}))"
            if eps:
                names = "".join(
                    f"WHEN {txt} = {_sql_str(k)} THEN {_lit(x)} "
                    for k, x in self.tier_names.items()
                )
                expr = (
                    f"CASE {names}WHEN {txt} IN {_PUBLIC_SQL} THEN CAST('inf' AS DOUBLE) "
                    f"ELSE TRY_CAST(trim({c}) AS DOUBLE) END"
                )
            else:
                expr = f"TRY_CAST(trim({c}) AS DOUBLE)"
            bad = self.con.execute(
                f"SELECT rn, v FROM (SELECT row_number() OVER () AS rn, {c} AS v, {expr} AS d "
                f"FROM {self.rel}) WHERE d IS NULL AND v IS NOT NULL AND trim(v) <> '' "
                f"ORDER BY rn LIMIT 1"
            ).fetchall()
            if bad:
                raise ReleaseError(
                    not_a_number(role, col, f", row {bad[0][0]}", bad[0][1], self.tier_names)
                )
            return expr
        raise ReleaseError(f"{role} column {col!r} has type {t}, not numbers")

    def histogram(self, value: str, eps: str, lo: float, hi: float) -> Histogram:
        v = self._as_double(value, "value", False)
        e = self._as_double(eps, "eps", True)
        self.v_expr, self.e_expr = v, e
        R = hi - lo
        y = (
            f"least(greatest(CAST(round((least(greatest(v, {_lit(lo)}), {_lit(hi)}) - "
            f"{_lit(lo)}) / {_lit(R)} * {Q}) AS BIGINT), 0), {Q})"
        )
        qq = f"CAST(floor(least(e, {_lit(Q_CAP)}) * {float(QE)!r}) AS BIGINT)"
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
        rows = self.con.execute(sql).fetchall()
        return _histogram_from_rows(rows)

    # --------------------------------------------------------------- the fast plan (DuckDB)
    def _prepare(self, value: str, eps: str, lo: float, hi: float) -> None:
        self.v_expr = self._as_double(value, "value", False)
        self.e_expr = self._as_double(eps, "eps", True)
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
        self.q_expr = f"CAST(floor(least(e, {_lit(Q_CAP)}) * {float(QE)!r}) AS BIGINT)"

    def _scan(self) -> str:
        return f"(SELECT {self.v_expr} AS v, {self.e_expr} AS e FROM {self.rel})"

    def sample_levels(self) -> tuple[np.ndarray, int]:
        """The levels of the first SAMPLE_MAX rows and the number of rows (Parquet: from its
        metadata). Only steers the plan."""
        n_rows = int((self.con.execute(f"SELECT count(*) FROM {self.rel}").fetchone() or (0,))[0])
        x = self.con.execute(
            f"SELECT {self.e_expr} AS e FROM {self.rel} LIMIT {SAMPLE_MAX}"
        ).fetchnumpy()["e"]
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
        return self.con.execute(sql).fetchall()

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
        (one class), m equal sub-bins of [a, b), the finite levels from ``b`` (one class),
        public and zero levels; None when any level or value is bad."""
        # small integer keys of known range: DuckDB groups them in a perfect hash table
        inner = (
            f"1 + least(greatest(CAST(floor((e - {_lit(a)}) * {_lit(m / (b - a))}) AS "
            f"USMALLINT), 0), {m - 1})"
        )
        low = f"WHEN e > 0 AND e < {_lit(a)} THEN 0 "
        high = f"WHEN e >= {_lit(b)} AND e <= {_lit(_DBL_MAX)} THEN {m + 1} "
        key = (
            f"CASE {high + low if above_first else low + high}"  # the common class first
            f"WHEN e >= {_lit(a)} AND e < {_lit(b)} THEN {inner} "
            f"WHEN e = CAST('inf' AS DOUBLE) THEN {m + 2} WHEN e = 0 THEN {m + 3} "
            "ELSE NULL END"
        )
        rows = self._fast(f"CAST({key} AS USMALLINT)", f"e < {_lit(b)}")
        out = []
        for r in rows:
            if r[0] is None or _bad_values(r):
                return None
            k, n, sy = int(r[0]), int(r[1]), int(r[3] or 0)
            k = {m + 2: PUBLIC_BIN, m + 3: ZERO_BIN}.get(k, k)
            if k in (ZERO_BIN, PUBLIC_BIN):
                x = 0.0 if k == ZERO_BIN else math.inf
                out.append((k, n, 0.0, 0.0, x, x, 0.0, sy, 0, 0, 0))
            elif k == m + 1:  # saturated for sure when the bracket holds: no q sums
                out.append((k, n, 0.0, 0.0, float(r[7]), float(r[8]), 0.0, sy, 0, 0, 0))
            else:
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
        h.coarse = frozenset((0, m + 1))
        return h

    def first_bad(self, what: str) -> tuple[int, Any]:
        if what == "eps":
            cond = "e IS NULL OR isnan(e) OR e < 0"
        else:
            cond = "v IS NULL OR isnan(v) OR isinf(v)"
        row = self.con.execute(
            f"SELECT rn, {'e' if what == 'eps' else 'v'} FROM (SELECT row_number() OVER () AS "
            f"rn, {self.v_expr} AS v, {self.e_expr} AS e FROM {self.rel}) WHERE {cond} "
            "ORDER BY rn LIMIT 1"
        ).fetchall()
        return row[0] if row else (0, None)

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
        return _fetch_rows(self.con.execute(sql).fetchall())

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
        return [tuple(r) for r in self.con.execute(sql).fetchall()]

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


class _SparkSource:
    def __init__(self, source: Any):
        from pyspark.sql import DataFrame as SparkDF

        self.tier_names: dict[str, float] = {}
        spark = spark_session()
        self.spark = spark
        self.local_path: str | None = None  # a local file: DuckDB names rows in messages
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            if "://" in path:  # a path the cluster reads (hdfs://, s3a://, ...)
                kind = _kind_of_path(path)
            else:
                kind = _check_path(path)
                self.local_path = path
            try:
                if kind == "parquet":
                    df = spark.read.parquet(path)
                else:
                    df = spark.read.option("header", True).option("inferSchema", True).csv(path)
            except Exception as exc:
                raise ReleaseError(
                    f"could not read {path!r} as {kind}: {str(exc).splitlines()[0][:200]}"
                ) from None
        elif isinstance(source, SparkDF):
            df = source
        else:
            import pandas as pd

            if not isinstance(source, pd.DataFrame):
                raise ReleaseError(
                    f"engine='spark' needs a path or a DataFrame, got {type(source).__name__}"
                )
            df = spark.createDataFrame(source)
        self.df = df
        self.types = {f.name: f.dataType.simpleString().upper() for f in df.schema.fields}

    def _as_double(self, col: str, role: str, eps: bool):
        from pyspark.sql import functions as F

        t = self.types[col]
        c = F.col(f"`{col}`")
        if t in ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE") or t.startswith(
            "DECIMAL"
        ):
            return c.cast("double")
        if t == "STRING":
            txt = F.lower(F.trim(c))
            num = F.trim(c).cast("double")
            expr = num
            if eps:
                expr = F.when(txt.isin(*sorted(PUBLIC_WORDS)), F.lit(math.inf)).otherwise(num)
                for k, x in reversed(list(self.tier_names.items())):  # names first
                    expr = F.when(txt == F.lit(k), F.lit(x)).otherwise(expr)
            bad = (
                self.df.select(c.alias("v"), expr.alias("d"))
                .where(F.col("d").isNull() & F.col("v").isNotNull() & (F.trim("v") != ""))
                .limit(1)
                .collect()
            )
            if bad:
                duck = self._duck()
                if duck is not None:  # raises, naming the row, unless DuckDB reads it
                    try:
                        if col in duck.types:
                            duck._as_double(col, role, eps)
                    finally:
                        duck.close()
                raise ReleaseError(  # Spark rows have no order: no row number
                    not_a_number(role, col, "", bad[0][0], self.tier_names)
                )
            return expr
        raise ReleaseError(f"{role} column {col!r} has type {t}, not numbers")

    def histogram(self, value: str, eps: str, lo: float, hi: float) -> Histogram:
        from pyspark.sql import functions as F

        self._cols = (value, eps)
        v = self._as_double(value, "value", False)
        e = self._as_double(eps, "eps", True)
        R = hi - lo
        t = self.df.select(v.alias("v"), e.alias("e"))
        vc = F.least(F.greatest(F.col("v"), F.lit(lo)), F.lit(hi))
        y = F.least(
            F.greatest(
                F.round((vc - F.lit(lo)) / F.lit(R) * F.lit(float(Q))).cast("long"), F.lit(0)
            ),
            F.lit(Q),
        ).cast("long")
        # F.round is HALF_UP, DuckDB's round is half away from zero: the same for y >= 0
        q = F.floor(F.least(F.col("e"), F.lit(Q_CAP)) * F.lit(float(QE))).cast("long")
        ecol = F.col("e")
        b = (
            F.when(ecol.isNull() | F.isnan(ecol) | (ecol < 0), F.lit(None))
            .when(ecol == 0, F.lit(ZERO_BIN))
            .when(ecol == math.inf, F.lit(PUBLIC_BIN))
            .otherwise(F.floor(F.log(ecol) * F.lit(float(BINS_PER_E))).cast("long"))
        )
        badv = F.col("v").isNull() | F.isnan("v") | (F.abs(F.col("v")) == math.inf)
        u = t.select(b.alias("b"), ecol.alias("e"), y.alias("y"), q.alias("q"), badv.alias("badv"))
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

    def _duck(self) -> _DuckSource | None:
        """The same local file read by DuckDB, only to name a bad row in a message (Spark's
        rows have no order); None for a DataFrame, a cluster path or a file DuckDB cannot
        read."""
        if self.local_path is None:
            return None
        try:
            d = _DuckSource(self.local_path)
        except ReleaseError:
            return None
        d.tier_names = self.tier_names
        return d

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
        cond = (F.col("b").isNull()) if what == "eps" else F.col("badv")
        row = u.where(cond).limit(1).collect()
        if not row:
            return (0, None)
        return (0, row[0]["e"] if what == "eps" else None)  # Spark rows have no order

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
    """Open ``source`` on ``engine``: (handle, value column, eps column), the columns matched
    by name (exactly, else uniquely ignoring case and spaces). ``tier_names`` maps tier names
    (lower case, trimmed) to levels: a text eps cell holding one takes that level. Raises
    ReleaseError."""
    if engine not in ENGINES:
        raise ReleaseError(f"engine must be one of {ENGINES}, got {engine!r}")
    src = _DuckSource(source) if engine == "duckdb" else _SparkSource(source)
    src.tier_names = dict(tier_names or {})
    cols = list(src.types)
    vcol = _match_column(cols, value, "value")
    ecol = _match_column(cols, eps, "eps")
    return src, vcol, ecol
