"""The per-person ledger's Spark side (hdp_release.ledger.people): the id column read as
text, the keyed hashes computed by Spark SQL and handed to the ledger through a Parquet
folder (never row by row to the driver), the granted levels joined back in Spark.

The ledger's secret never appears in a query plan: it is the one row of a DataFrame built
from an RDD (the plan shows ``LogicalRDD [hdp_k__]``, never its data), cross-joined as a
Cartesian product with its single partition (no broadcast, so no Spark job of its own), and
the hash is sha2(concat(that column, id)): the same keyed hash as DuckDB's.

Spark jobs of the charge (each costs a fixed ~0.1-0.3 s locally, whatever the rows): one
write of every row's (hash, level, segment) to the Parquet folder; the ledger's DuckDB then
counts missing and repeated ids and charges in one transaction, and writes the granted
levels, which the release's own first aggregate joins back (persisted for its later passes;
the folder and the cache are dropped when the source closes)."""

from __future__ import annotations

import shutil
import tempfile
from fractions import Fraction
from typing import Any

from hdp_core.errors import ReleaseError
from hdp_release.ledger.person_charge import (
    ID_SPACES,
    SEG,
    E,
    H,
    null_id_row,
    refuse_ids,
    run_charge,
)

KEY_COL = "hdp_k__"
"""The column holding the ledger's secret in the one-row DataFrame cross-joined in."""


def is_spark(src: Any) -> bool:
    """Whether ``src`` is an open Spark source (hdp_release.engines.spark_source)."""
    return hasattr(src, "spark") and hasattr(src, "df")


def _col(name: str) -> Any:
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def attach_spark(src: Any, icol: str) -> str:
    """attach_id on Spark: a CSV is read again with the id column as text (the other
    columns keep the types Spark inferred). The ledger's check then skips the keyed level
    profile (``src.levels_identity``): a per-person release charges persons only."""
    from pyspark.sql.types import StringType, StructField, StructType

    src.levels_identity = False

    if src.kind == "csv" and src.path is not None:
        fields = [
            StructField(f.name, StringType(), True) if f.name == icol else f
            for f in src.df.schema.fields
        ]
        src.df = (
            src.spark.read.option("header", True)
            .option("enforceSchema", False)
            .schema(StructType(fields))
            .csv(src.path)
        )
        src.types = {f.name: f.dataType.simpleString().upper() for f in src.df.schema.fields}
    frame = getattr(src, "local_frame", None)
    if frame is not None and str(frame[icol].dtype).lower() == "uint64":
        # Spark has no unsigned 64-bit integer: createDataFrame turns ids >= 2^63 into nulls.
        # The ids as their digits instead (DuckDB's text of them: the same keyed hash)
        src.df = src.spark.createDataFrame(frame.assign(**{icol: frame[icol].astype("string")}))
        src.types = {f.name: f.dataType.simpleString().upper() for f in src.df.schema.fields}
    t = src.types.get(icol, "")
    if not (t in ("TINYINT", "SMALLINT", "INT", "BIGINT", "STRING") or t.endswith(",0)")):
        raise ReleaseError(
            f"id column {icol!r} has type {t}; ids must be integers or text (a float id can "
            "print differently in another engine)"
        )
    return icol


def _id_text(src: Any, icol: str) -> Any:
    from pyspark.sql import functions as F

    c = _col(icol)
    if src.types.get(icol) == "STRING":
        t = F.trim(c, F.lit(ID_SPACES))  # as DuckDB's trim (Zs), not only ' '
        return F.when(t == F.lit(""), F.lit(None)).otherwise(t)
    return c.cast("string")


def key_frame(spark: Any, key: str) -> Any:
    """A one-row DataFrame holding ``key`` in column KEY_COL, built from an RDD so that no
    plan prints it (a local relation or a literal would)."""
    from pyspark.sql.types import StringType, StructField, StructType

    rdd = spark.sparkContext.parallelize([(key,)], 1)
    return spark.createDataFrame(rdd, StructType([StructField(KEY_COL, StringType(), False)]))


def keyed_hash_frame(src: Any, icol: str, key: str, cols: list[Any]) -> Any:
    """``src.df`` with the keyed hash of its id column (column H: the first 16 bytes of
    SHA-256(key || id as text)) beside ``cols``; the key joins in as a column (a Cartesian
    product with the key's single partition: no broadcast job)."""
    from pyspark.sql import functions as F

    k = key_frame(src.spark, key).hint("shuffle_replicate_nl")
    h = F.unhex(F.substring(F.sha2(F.concat(F.col(KEY_COL), _id_text(src, icol)), 256), 1, 32))
    return src.df.crossJoin(k).select(h.alias(H), *cols)


def charge_spark(
    led: Any,
    src: Any,
    vcol: str,
    ecol: str,
    icol: str,
    s: Fraction,
    key: str,
    target: str,
    sd_norm: float | None,
    by: list[str],
    keys: list[tuple[int, tuple]] | None,
) -> tuple:
    """charge_people on Spark (see the module docstring); ``by`` and ``keys`` as there.
    Returns person_charge.run_charge's result; ``src.df`` then holds the value column, the
    granted level (under ``ecol``) and the ``by`` columns."""
    from pyspark.sql import functions as F

    cols = [_col(vcol).alias(vcol), src.e_expr.alias(E), *[_col(c).alias(c) for c in by]]
    t = keyed_hash_frame(src, icol, key, cols)
    if by:
        t = t.join(F.broadcast(_keys_frame(src, by, keys or [])), on=by, how="left")
    else:
        t = t.withColumn(SEG, F.lit(0).cast("long"))
    tmp = tempfile.mkdtemp(prefix="hdp-people-")
    try:
        # one Spark job: every row's hash, level and segment (no value) to the ledger, which
        # checks for missing and repeated ids and charges in one transaction
        t.select(F.col(H).alias("h"), F.col(E).alias("e"), F.col(SEG).alias("g")).write.parquet(
            tmp + "/in"
        )
        rows = f"read_parquet('{tmp}/in/*.parquet')"
        out_path = f"{tmp}/runs.parquet"

        def before(con: Any) -> None:
            n_null, n_dup = con.execute(
                f"SELECT count_if(h IS NULL), count(h) - count(DISTINCT h) FROM {rows}"
            ).fetchall()[0]
            refuse_ids(
                icol,
                int(n_null or 0),
                int(n_dup or 0),
                lambda: src.local_row(lambda d: null_id_row(d, icol), icol, text=True),
            )

        def after(con: Any) -> None:
            con.execute(f"COPY (SELECT h AS {H}, c FROM hdp_chg) TO '{out_path}' (FORMAT parquet)")

        inp = f"(SELECT h, e, g FROM {rows} WHERE g IS NOT NULL)"
        out = run_charge(led, inp, s, target, sd_norm, before=before, after=after)
        # the schema given: Spark would otherwise run a job to read the file's footer
        runs = src.spark.read.schema(f"{H} BINARY, c DOUBLE").parquet(out_path)
        # the granted level joined back lazily, kept once computed; the release's first
        # aggregate computes it (no job of its own), the folder is removed by src.close()
        granted = (
            t.join(runs, on=H, how="inner")
            .select(_col(vcol), F.col("c").alias(ecol), *[_col(c) for c in by])
            .persist()
        )
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    src.hold(granted, tmp)
    src.df = granted
    src.types = {**src.types, ecol: "DOUBLE"}
    src.read_names = [vcol, ecol, *by]
    return out


def _keys_frame(src: Any, by: list[str], keys: list[tuple[int, tuple]]) -> Any:
    """A small DataFrame (the by columns, SEG): each released segment's key and index."""
    from pyspark.sql.types import LongType, StructField, StructType

    fields = {f.name: f for f in src.df.schema.fields}
    schema = StructType(
        [StructField(c, fields[c].dataType, True) for c in by] + [StructField(SEG, LongType())]
    )
    return src.spark.createDataFrame([(*k, int(g)) for g, k in keys], schema)
