"""Release safety on Spark (issue 19): the same checks as tests/test_release_safety.py on the
Spark engine, and DuckDB and Spark deciding alike. Marked slow (a local Spark session)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from test_release_safety import (
    EDGE,
    TRICKY,
    NoNoise,
    check_tricky,
    dup_eps_csv,
    late_bad_csv,
    tricky_frame,
    write,
)

import hdp_release.finish
from hdp_core.errors import BadCellError, ColumnNameError, ReleaseError
from hdp_release.release import release_mean

pytestmark = pytest.mark.slow


@pytest.fixture
def no_noise(monkeypatch):
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)


def test_duplicate_eps_column_is_refused_on_spark(tmp_path, spark):
    df = pd.DataFrame({"value": [50] * 100, "eps": [10.0] * 100, "EPS": [0.01] * 100})
    pq = str(tmp_path / "dup.parquet")
    df.to_parquet(pq)
    sdf = spark.createDataFrame([(50, 10.0, 0.01)] * 10, ["value", "eps", "EPS"])
    for src in (dup_eps_csv(tmp_path), pq, df, sdf):
        with pytest.raises(ColumnNameError) as ei:
            release_mean(src, value="value", eps="EPS", lo=0, hi=100, engine="spark")
        assert set(ei.value.columns) == {"eps", "EPS"}


def test_duplicate_value_column_is_refused_on_spark(tmp_path, spark):
    p = write(tmp_path, "v.csv", "v,e,V\n" + "1,1,99\n" * 50)
    with pytest.raises(ColumnNameError):
        release_mean(p, value="V", eps="e", lo=0, hi=100, engine="spark")


def test_glob_with_different_headers_on_spark(tmp_path, spark):
    write(tmp_path, "a.csv", "v,e\n1,0.5\n")
    write(tmp_path, "b.csv", "e,v\n0.5,90\n")
    with pytest.raises(ColumnNameError, match="do not all have the same columns"):
        release_mean(str(tmp_path / "*.csv"), value="v", eps="e", lo=0, hi=100, engine="spark")


def test_backtick_column_name_is_read_exactly(tmp_path, spark, no_noise):
    """A column name with a backtick raised AnalysisException (a traceback) before."""
    df = pd.DataFrame({"va`l": [1.0, 3.0] * 10, "e`": [1.0] * 20})
    rel = release_mean(df, value="va`l", eps="e`", lo=0, hi=4, engine="spark")
    assert rel.estimate == pytest.approx(2.0, abs=1e-6)
    with pytest.raises(ReleaseError, match="no eps column"):
        release_mean(df, value="va`l", eps="`e`", lo=0, hi=4, engine="spark")


def test_no_cell_in_spark_messages(tmp_path, spark):
    p = late_bad_csv(tmp_path, secret="$120 000 (John Smith)", at=30)
    with pytest.raises(BadCellError) as ei:
        release_mean(p, value="v", eps="e", lo=0, hi=10, engine="spark")
    assert (ei.value.row, ei.value.reason) == (31, "text")
    assert "John" not in str(ei.value)
    sdf = spark.createDataFrame([("5", "1")] * 5 + [("123-45-6789", "1")], ["v", "e"])
    with pytest.raises(BadCellError) as ei:
        release_mean(sdf, value="v", eps="e", lo=0, hi=10, engine="spark")
    assert "123-45" not in str(ei.value) and ei.value.column == "v"


@pytest.mark.parametrize(
    "levels", [[1e-7] * 5 + [1.0] * 5, [*np.exp(np.linspace(-3, 1, 400)), 2e6]]
)
def test_levels_outside_the_range_refused_on_spark(spark, levels):
    df = pd.DataFrame({"v": np.linspace(0, 10, len(levels)), "e": levels})
    with pytest.raises(BadCellError, match="supported level"):
        release_mean(df, value="v", eps="e", lo=0, hi=10, engine="spark")


def test_edge_levels_decided_alike_by_duckdb_and_spark(spark, no_noise):
    """The issue's example: DuckDB released, Spark refused ('loss of 16.5 > 16.5')."""
    df = pd.DataFrame({"v": [0.1, -0.2, 0.3], "e": EDGE})
    duck = release_mean(df, value="v", eps="e", lo=-0.5, hi=0.5)
    spk = release_mean(df, value="v", eps="e", lo=-0.5, hi=0.5, engine="spark")
    for rel in (duck, spk):
        t = rel.tiers
        assert (t["granted_eps"] <= t["eps"]).all() and (t["privacy_loss"] <= t["eps"]).all()
    assert spk.saturation_level == pytest.approx(duck.saturation_level, rel=1e-12)
    assert spk.estimate == pytest.approx(duck.estimate, abs=1e-12)


def test_tier_names_compare_one_way_on_spark(tmp_path, spark, no_noise):
    df = tricky_frame()
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False, encoding="utf-8")
    for src in (df, str(p)):
        rel = release_mean(src, value="v", eps="tier", lo=0, hi=100, tiers=TRICKY, engine="spark")
        check_tricky(rel, df)
    only = pd.DataFrame({"v": [1.0] * 4, "tier": ["İx"] * 4})
    rel = release_mean(
        only, value="v", eps="tier", lo=0, hi=10, tiers={"İx": 0.01, "ix": 10}, engine="spark"
    )
    assert rel.tiers["eps"].tolist() == [0.01]
    assert math.isfinite(rel.estimate)
