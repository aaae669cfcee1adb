"""Non-finite and out-of-range cells on the Spark engine: the same cells, rules and checks as
tests/test_release_nonfinite.py (refused before any noise or charge, with row, column and
reason, never quoting the cell; or clamped / public by the documented rules, the same
release as DuckDB's). Marked slow (a local Spark session)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from test_release_nonfinite import (
    BAD_ROW,
    EPS_PUBLIC,
    EPS_REFUSED,
    FLOAT_EPS_REFUSED,
    FLOAT_VALUE_REFUSED,
    HI,
    LO,
    TIERS,
    VALUE_CLAMPED,
    VALUE_REFUSED,
    N,
    assert_cell_error,
    float_frame,
    install_spy,
    refuse,
    source,
    text_frame,
)

from hdp_release.release import release_mean

pytestmark = pytest.mark.slow


@pytest.fixture
def spy(monkeypatch):
    return install_spy(monkeypatch)


CELLS = [("value", c, VALUE_REFUSED[c]) for c in VALUE_REFUSED] + [
    ("eps", c, EPS_REFUSED[c]) for c in EPS_REFUSED
]


def spark_source(kind: str, df: pd.DataFrame, tmp_path, spark):
    """The text table ``df`` as Spark reads it on path ``kind`` (and the row an error can
    name: 0 for a Spark DataFrame, whose rows have no order)."""
    if kind == "spark_dataframe":
        return spark.createDataFrame(df.astype(str)), 0
    return source(kind, df, tmp_path), BAD_ROW


KINDS = ["csv", "csv_with_tier_names", "pandas_text", "parquet_text", "spark_dataframe"]
FULL_KIND = "spark_dataframe"
"""The path on which Spark's classifier sees every hostile cell; every other path gets one
representative cell (value and eps), as on DuckDB (tests/release/test_release_nonfinite.py)."""
REPRESENTATIVES = [c for c in CELLS if c[1] == "1e400"]


@pytest.mark.parametrize(
    "column, cell, reason, kind",
    [(*c, FULL_KIND) for c in CELLS] + [(*c, k) for c in REPRESENTATIVES for k in KINDS[:-1]],
)
def test_a_bad_cell_is_refused_on_spark(tmp_path, spark, spy, column, cell, reason, kind):
    df = text_frame(**{f"{column}_cell": cell})
    src, row = spark_source(kind, df, tmp_path, spark)
    tiers = TIERS if kind == "csv_with_tier_names" else None
    # with a ledger (the check before charging) on files, without one (the release's own)
    for ledger in (False, True) if kind == "csv" else (False,):
        err = refuse(src, tmp_path, ledger=ledger, spy=spy, engine="spark", tiers=tiers)
        assert_cell_error(err, column, reason, cell, row)


@pytest.mark.parametrize("kind", ["pandas_float", "spark_float"])
@pytest.mark.parametrize(
    "column, name",
    [("value", n) for n in FLOAT_VALUE_REFUSED] + [("eps", n) for n in FLOAT_EPS_REFUSED],
)
def test_a_non_finite_float_is_refused_on_spark(tmp_path, spark, spy, column, name, kind):
    x, reason = (FLOAT_VALUE_REFUSED if column == "value" else FLOAT_EPS_REFUSED)[name]
    df = float_frame(**{column: x})
    src: object = df if kind == "pandas_float" else spark.createDataFrame(df)
    row = BAD_ROW if kind == "pandas_float" else 0
    for ledger in (False, True):
        err = refuse(src, tmp_path, ledger=ledger, spy=spy, engine="spark")
        assert_cell_error(err, column, reason, name, row)


@pytest.mark.parametrize(
    "cell, kind",
    [(c, "spark_dataframe") for c in VALUE_CLAMPED] + [("1e308", "csv"), ("1e308", "pandas_text")],
)
def test_a_value_outside_the_range_is_clamped_as_on_duckdb(tmp_path, spark, spy, cell, kind):
    src, _ = spark_source(kind, text_frame(value_cell=cell), tmp_path, spark)
    out = release_mean(src, value="value", eps="eps", lo=LO, hi=HI, engine="spark")
    duck = release_mean(
        float_frame(value=VALUE_CLAMPED[cell]), value="value", eps="eps", lo=LO, hi=HI
    )
    assert out.estimate == duck.estimate
    assert out.noise_scale == duck.noise_scale and out.ci95 == duck.ci95


@pytest.mark.parametrize(
    "cell, kind",
    [(c, "spark_dataframe") for c in EPS_PUBLIC]
    # 'inf' in a local CSV: Spark reads the column as numbers, DuckDB checks its text
    + [("Infinity", "csv"), ("public", "pandas_text")]
    + [("inf", "pandas_float"), ("inf", "spark_float")],  # a float column holds the number inf
)
def test_an_infinite_level_is_a_public_user_as_on_duckdb(tmp_path, spark, spy, cell, kind):
    if kind in ("pandas_float", "spark_float"):
        df = float_frame(eps=math.inf)
        src: object = df if kind == "pandas_float" else spark.createDataFrame(df)
    else:
        src, _ = spark_source(kind, text_frame(eps_cell=cell), tmp_path, spark)
    out = release_mean(src, value="value", eps="eps", lo=LO, hi=HI, engine="spark")
    duck = release_mean(float_frame(eps=math.inf), value="value", eps="eps", lo=LO, hi=HI)
    assert out.n_public == 1 and out.n_users == N
    assert out.estimate == duck.estimate and out.noise_scale == duck.noise_scale
    assert spy and all(np.isfinite(spy))


@pytest.mark.parametrize("column", ["eps", "value"])
def test_a_too_large_number_in_a_clusters_csv_is_refused(tmp_path, spark, spy, column):
    """A path the cluster reads ('file://' here: no DuckDB, Spark alone; its rows have no
    order) is checked by Spark reading the CSV again as text: '1e400' is never a public
    user; in the value column it is refused as not finite (Spark's typed read)."""
    path = source("csv", text_frame(**{f"{column}_cell": "1e400"}), tmp_path)
    err = refuse("file://" + path, tmp_path, ledger=True, spy=spy, engine="spark")
    if column == "eps":
        assert_cell_error(err, "eps", "too_large", "1e400", 0)
    else:
        assert err.reason in ("too_large", "not_finite")
        assert_cell_error(err, "value", err.reason, "1e400", 0)
    public = source("csv", text_frame(eps_cell="inf"), tmp_path)
    ok = release_mean("file://" + public, value="value", eps="eps", lo=LO, hi=HI, engine="spark")
    assert ok.n_public == 1
