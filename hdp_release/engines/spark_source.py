"""The Spark engine: a Spark DataFrame or a path the cluster reads; the same aggregates as
DuckDB's (exact integer sums), computed by Spark SQL, only aggregates reach the driver."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from hdp_core.errors import ReleaseError
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN, PUBLIC_WORDS, cell_reason
from hdp_release.engines.base import (
    BINS_PER_E,
    MAX_TEXTS,
    NUMBER_TEXT,
    PUBLIC_BIN,
    Q_CAP,
    QE,
    TEXT_SPACES,
    ZERO_BIN,
    Histogram,
    Q,
    bad_cell,
    check_column_names,
    check_path,
    fetch_rows,
    from_decimal,
    histogram_from_rows,
    kind_of_path,
    q2_spark,
    q2_triple,
    text_levels,
)
from hdp_release.engines.duckdb_source import DuckSource
from hdp_release.engines.duckdb_sql import header_names, shared_cursor

# ------------------------------------------------------------------------------ Spark
_SPARK = None


def spark_session(master: str = "local[2]", java_options: str = ""):
    """A SparkSession for releases: ``local[2]`` by default, UI off, bound to 127.0.0.1.
    ``java_options``: extra options for the driver's JVM when this call starts it (ignored
    when a session is already running), e.g. ``-XX:TieredStopAtLevel=1`` for many short jobs.

    To use a cluster, create your own SparkSession (``SparkSession.builder.master(
    "spark://host:7077")...getOrCreate()``) before calling release_mean(engine="spark"):
    getOrCreate() then returns yours, and a Spark DataFrame can be passed as the source."""
    global _SPARK
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if _SPARK is None:
        builder = (
            SparkSession.builder.master(master)
            .appName("hdp-release")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.ansi.enabled", "false")
        )
        if java_options:
            builder = builder.config("spark.driver.extraJavaOptions", java_options)
        _SPARK = builder.getOrCreate()
        _SPARK.sparkContext.setLogLevel("ERROR")
    return _SPARK


def _spark_col(name: str):
    """A Spark column by its exact name (backticks quoted, so any name is literal)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


class SparkSource:
    def __init__(self, source: Any):
        from pyspark.sql import DataFrame as SparkDF

        self.tier_names: dict[str, float] = {}
        self.level_factor = 1.0
        self._held: list[tuple[Any, str]] = []
        self._parsed: dict[tuple[str, str, bool], tuple[Any, tuple, Any]] = {}
        self.levels_identity = True  # False: the ledger charges persons (no level profile)
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
                kind = kind_of_path(path)
            else:
                kind = check_path(path)
                self.local_path = path
                cur = shared_cursor()
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
        """Column ``col`` parsed as doubles (a text column's cells checked first, with a Spark
        job or two: the texts that are not numbers). Kept per column while the source's
        frame and tier names stay the same, so the ledger's check and the release parse a
        text column once."""
        tiers = tuple(sorted(self.tier_names.items()))
        hit = self._parsed.get((col, role, eps))
        if hit is not None and hit[0] is self.df and hit[1] == tiers:
            return hit[2]
        expr = self._parse(col, role, eps)
        self._parsed[(col, role, eps)] = (self.df, tiers, expr)
        return expr

    def _parse(self, col: str, role: str, eps: bool):
        from pyspark.sql import functions as F

        t = self.types[col]
        c = _spark_col(col)
        if t in ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE") or t.startswith(
            "DECIMAL"
        ):
            if self.kind == "csv":
                self._check_inferred(col, role, eps)
            return c.cast("double")
        if t == "STRING":
            tc = F.trim(c, F.lit(TEXT_SPACES))  # as DuckDB's trim (Zs), not only ' '
            num = F.when(tc.rlike(NUMBER_TEXT), tc.cast("double"))  # DuckDB's numbers only
            expr = num
            bad_texts: list[str] = []
            if eps:
                # texts that are not numbers, and numbers too large for a float ('1e400'
                # casts to inf): only the words for public (and tier names) mean public
                over = (num == F.lit(math.inf)) & ~F.lower(tc).isin(*sorted(PUBLIC_WORDS))
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
                    .where(num.isNull() & c.isNotNull() & (tc != ""))
                    .limit(1)
                )
            found = bad.collect() if bad is not None else []
            if found:
                self._duck_parse(col, role, eps, text_only=False)  # names the row
                raise bad_cell(role, col, 0, found[0][0], self.tier_names)  # rows unordered
            return expr
        raise ReleaseError(f"{role} column {col!r} has type {t}, not numbers")

    def _check_inferred(self, col: str, role: str, eps: bool) -> None:
        """A CSV column Spark's schema inference took for numbers: its inference (Java's
        parseDouble) also takes cells DuckDB's cast refuses ('0.5d', '0.5f', hex floats,
        ASCII control characters around a number). When DuckDB reads the same local file's
        column as text, its own parse of the column runs and refuses such a cell naming its
        row, as a release on DuckDB would. A cluster path is read by Spark alone."""
        self._duck_parse(col, role, eps, text_only=True)

    def _duck_parse(self, col: str, role: str, eps: bool, text_only: bool) -> None:
        """DuckDB's parse of column ``col`` of the same local file or DataFrame (only when
        DuckDB reads it as text, with ``text_only``): raises its refusal, naming the row,
        unless DuckDB reads every cell; nothing for a cluster path or a column DuckDB lacks."""
        duck = self._duck()
        if duck is None:
            return
        try:
            t = duck.types.get(col)
            if t is not None and (not text_only or t in ("VARCHAR", "STRING", "TEXT")):
                duck._as_double(col, role, eps)
        finally:
            duck.close()

    def value_col(self, col: str):
        """Column ``col`` read as the release's values (a double; bad text refused)."""
        return self._as_double(col, "value", False)

    def level_col(self, col: str):
        """Column ``col`` read as the levels the release runs at (eps x level_factor)."""
        from pyspark.sql import functions as F

        e = self._as_double(col, "eps", True)
        return e if self.level_factor == 1.0 else e * F.lit(self.level_factor)

    def raw_cols(self, value: str, eps: str) -> list:
        """The value and eps cells as text ("rv", "re"): see :meth:`first_bad`."""
        self._cols = (value, eps)
        return self._raw_cols(value, eps)

    def rows_frame(self) -> Any:
        """The per-row frame set by the last pass (see :meth:`use_rows`)."""
        return self._u

    def duck_view(self) -> Any:
        """The same local file or pandas DataFrame read by DuckDB, only to name a bad row in
        a message (None for a Spark DataFrame or a cluster's path)."""
        return self._duck()

    def use_rows(self, u: Any) -> None:
        """The per-row frame (b, e, y, q, badv, v, rv, re) that first_bad, fetch and refine
        read (set by a grouped pass)."""
        self._u = u

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
        agg = u.groupBy("b").agg(
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
        rows = [tuple(from_decimal(x) for x in r) for r in agg.collect()]
        rows = [(*r[:6], q2_triple(*r[6:9]), *r[9:]) for r in rows]
        rows.sort(key=lambda r: (r[0] is not None, r[0] if r[0] is not None else 0))
        return histogram_from_rows(rows)

    def precheck(
        self, value: str, eps: str, key: bytes
    ) -> tuple[str, int, int, int, int, int, int, float]:
        """As DuckSource.precheck, on Spark, in ONE aggregate (one action): the keyed
        level-profile identity (hdp_release.fingerprint.levels_identity_spark_lanes: the same
        for the same parsed levels) beside the counts of the cells' kinds. With an id column
        attached (``levels_identity`` False: the per-person ledger, which charges persons and
        never uses the level profile) the identity is not computed and is returned as ''."""
        from pyspark.sql import functions as F

        from hdp_release.fingerprint import levels_identity_from_sums, levels_identity_spark_lanes

        self._cols = (value, eps)
        v = self._as_double(value, "value", False)
        e = self._as_double(eps, "eps", True)
        self.e_expr = e  # the parsed level (hdp_release.ledger.people hashes ids beside it)
        t = self.df.select(v.alias("v"), e.alias("e"), *self._raw_cols(value, eps))
        ecol = F.col("e")
        b = F.when(ecol.isNull() | F.isnan(ecol) | (ecol < 0), F.lit(None)).otherwise(F.lit(0))
        badv = F.col("v").isNull() | F.isnan("v") | (F.abs(F.col("v")) == math.inf)
        self._u = t.select(
            b.alias("b"), ecol.alias("e"), badv.alias("badv"), F.col("v"), F.col("rv"), F.col("re")
        )
        rng = (ecol > 0) & (ecol != math.inf) & ((ecol < LEVEL_MIN) | (ecol > LEVEL_MAX))
        bad_e = ecol.isNull() | F.isnan(ecol) | (ecol < 0)
        aggs = [
            F.count(F.lit(1)),
            F.sum(bad_e.cast("long")),
            F.sum(badv.cast("long")),
            F.sum(F.coalesce(rng, F.lit(False)).cast("long")),
            F.sum(F.coalesce(ecol > 0, F.lit(False)).cast("long")),
            F.sum(F.coalesce(ecol == math.inf, F.lit(False)).cast("long")),
            F.min(F.when((ecol > 0) & (ecol != math.inf), ecol)),
        ]
        if self.levels_identity:
            lanes, fp_aggs = levels_identity_spark_lanes(t.select("v", "e"), "e", key)
            row = lanes.agg(*aggs, *fp_aggs).collect()[0]
            n_rows, s0, s1 = (int(x or 0) for x in row[7:10])
            fp = levels_identity_from_sums(n_rows, s0, s1, key)
        else:  # a per-person release charges persons, never the level profile: not computed
            row, fp = t.agg(*aggs).collect()[0], ""
        n = [int(x or 0) for x in row[:6]]
        low = math.inf if row[6] is None else float(row[6])
        return fp, n[0], n[1], n[2], n[3], n[4], n[5], low

    def _raw_cols(self, value: str, eps: str) -> list:
        """The value and eps cells as Spark holds them, as text ("rv", "re"): what a bad
        cell is (a number too large for a float, '1e400', is text in a string column)."""
        return [
            _spark_col(value).cast("string").alias("rv"),
            _spark_col(eps).cast("string").alias("re"),
        ]

    def _duck(self, all_varchar: bool = False) -> DuckSource | None:
        """The same local file (or pandas DataFrame) read by DuckDB, only to name a bad row
        in a message (Spark's rows have no order); None for a Spark DataFrame, a cluster path
        or a file DuckDB cannot read."""
        local = self.local_path if self.local_path is not None else self.local_frame
        if local is None:
            return None
        try:
            d = DuckSource(local, all_varchar=all_varchar)
        except ReleaseError:
            return None
        d.tier_names = self.tier_names
        return d

    def local_row(self, find: Callable[[DuckSource], int], col: str, text: bool = False) -> int:
        """The row (1-based) that ``find`` names on the same local file or pandas DataFrame
        read by DuckDB (Spark's rows have no order), or 0 where there is none (a Spark
        DataFrame, a cluster path, ``col`` not read there, or DuckDB failing to read it: only
        a message's row, never a reason to refuse otherwise). ``text``: a CSV read with every
        column as text, as Spark reads an id column (DuckDB's own types, sniffed from the
        first rows, fail on a later cell that does not fit them)."""
        duck = self._duck(all_varchar=text)
        if duck is None:
            return 0
        try:
            return int(find(duck)) if col in duck.types else 0
        except Exception:  # duckdb's own errors too (their text may quote a cell: not shown)
            return 0
        finally:
            duck.close()

    def raw_cell(self, col: str, row: int) -> str | None:
        """As DuckSource.raw_cell, for a local file or pandas DataFrame (read by DuckDB)."""
        duck = self._duck() if row else None
        if duck is None:
            return None
        try:
            return duck.raw_cell(col, row) if col in duck.types else None
        finally:
            duck.close()

    def check_public(self, col: str) -> None:
        """As DuckSource.check_public: a public level (+inf) written as a number too large
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
        c = F.trim(_spark_col(col), F.lit(TEXT_SPACES))
        num = F.when(c.rlike(NUMBER_TEXT), c.cast("double"))
        found = (
            text.select(c.alias("v"))
            .where((num == F.lit(math.inf)) & ~F.lower(c).isin(*sorted(PUBLIC_WORDS)))
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

    def fetch(self, emin: float, emax: float):
        """The distinct quantized levels in [emin, emax] with their users and sums."""
        return fetch_levels(self._u, emin, emax)

    def refine(self, emin: float, emax: float, m: int) -> list:
        """[emin, emax] split into m equal sub-bins: their users, sums, smallest and largest
        level."""
        return refine_levels(self._u, emin, emax, m)

    def hold(self, frame: Any, folder: str) -> None:
        """Keep ``frame`` (persisted) and the temporary ``folder`` it reads until
        :meth:`close`, which unpersists the one and removes the other."""
        self._held.append((frame, folder))

    def close(self) -> None:
        """Release what :meth:`hold` kept (the per-person ledger's granted levels)."""
        import shutil

        while self._held:
            frame, folder = self._held.pop()
            try:
                frame.unpersist()
            finally:
                shutil.rmtree(folder, ignore_errors=True)


# ------------------------------------------------------------------------------ bins
def _in_range(rows: Any, emin: float, emax: float) -> Any:
    from pyspark.sql import functions as F

    return rows.where((F.col("e") >= F.lit(emin)) & (F.col("e") <= F.lit(emax)))


def fetch_levels(rows: Any, emin: float, emax: float) -> Any:
    """The distinct quantized levels q of the rows (a Spark DataFrame with e, y, q) whose
    level is in [emin, emax]: per level the users, the sum of y and the smallest and largest
    level (base.fetch_rows' form). Shared by a whole source and one segment."""
    from pyspark.sql import functions as F

    out = (
        _in_range(rows, emin, emax)
        .groupBy("q")
        .agg(F.count(F.lit(1)), F.sum("y"), F.min("e"), F.max("e"))
        .orderBy("q")
        .collect()
    )
    return fetch_rows([tuple(r) for r in out])


def refine_levels(rows: Any, emin: float, emax: float, m: int) -> list:
    """[emin, emax] split into m equal sub-bins of the rows' levels: per sub-bin the users,
    the exact sums of y, q, q y and q^2 and the smallest and largest level."""
    from pyspark.sql import functions as F

    k = F.least(
        F.floor((F.col("e") - F.lit(emin)) * F.lit(m / (emax - emin))).cast("int"),
        F.lit(m - 1),
    )
    out = (
        _in_range(rows, emin, emax)
        .select(k.alias("k"), "e", "y", "q")
        .groupBy("k")
        .agg(
            F.count(F.lit(1)),
            F.sum("y"),
            F.sum(F.col("q").cast("decimal(20,0)")),
            F.sum(F.col("q").cast("decimal(20,0)") * F.col("y").cast("decimal(11,0)")),
            *q2_spark(F.col("q")),
            F.min("e"),
            F.max("e"),
        )
        .orderBy("k")
        .collect()
    )
    rows = [tuple(from_decimal(x) for x in r) for r in out]
    return [(*r[:5], q2_triple(*r[5:8]), *r[8:]) for r in rows]
