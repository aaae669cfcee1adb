"""The per-person ledger on Spark (issue 30): the same decisions and the same exact spends as
DuckDB on the same table (hashes computed by Spark SQL, handed over through Parquet), and one
ledger shared by both engines charges the same persons."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from test_ledger_people import Oracle, check_against, key_hash

from hdp_core.errors import BadCellError, BudgetExceeded, ReleaseError
from hdp_release.grouped import release_means
from hdp_release.ledger.people import person_spent_units
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("spark")]  # Spark: one JVM per run


def _table(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    return pd.DataFrame(
        {
            "uid": [f"u{k}" for k in range(n)],
            "x": rng.uniform(0, 1, n),
            "eps": rng.choice([0.1, 1.0, 5.0], n),
        }
    )


def test_spark_and_duckdb_charge_the_same_persons_the_same(tmp_path):
    df = _table(600)
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    steps = [
        (str(path), Fraction(1, 2), "population"),
        (df.iloc[:250], Fraction(1), "table"),
        (df.iloc[100:], Fraction(1, 3), "population"),
    ]
    ledgers = {e: PrivacyLedger(tmp_path / f"{e}.duckdb") for e in ("duckdb", "spark")}
    receipts = {}
    for engine, led in ledgers.items():
        orc = Oracle()
        receipts[engine] = []
        for src, spend, target in steps:
            part = pd.read_csv(src) if isinstance(src, str) else src
            assert orc.release(list(part.uid), list(part.eps), spend, target)
            rel = release_mean(
                src,
                value="x",
                eps="eps",
                lo=0,
                hi=1,
                ledger=led,
                id="uid",
                spend=spend,
                target=target,
                engine=engine,
            )
            receipts[engine].append(rel.people)
            check_against(led, orc)  # Spark's hashes are the documented keyed hash too
    for a, b in zip(receipts["duckdb"], receipts["spark"], strict=True):
        pd.testing.assert_frame_equal(a, b)


def test_one_ledger_across_engines_and_refusals_on_spark(tmp_path, monkeypatch):
    import tempfile

    from pyspark.sql import SparkSession

    df = _table(200).assign(eps=0.01)  # nobody saturates
    led = PrivacyLedger(tmp_path / "l.duckdb")
    # the hashes' temporary folders and the cached granted levels are dropped when a release
    # ends, refused or not (hdp_release.engines.spark_source.SparkSource.close)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    jsc = SparkSession.getActiveSession().sparkContext._jsc
    cached = jsc.getPersistentRDDs().size()
    release_mean(df, value="x", eps="eps", lo=0, hi=1, ledger=led, id="uid", spend="1/2")
    release_mean(
        df, value="x", eps="eps", lo=0, hi=1, ledger=led, id="uid", spend="1/2", engine="spark"
    )
    with pytest.raises(BudgetExceeded):
        release_mean(
            df.iloc[1:], value="x", eps="eps", lo=0, hi=1, ledger=led, id="uid", engine="spark"
        )
    dup = pd.concat([df, df.iloc[[0]]])
    with pytest.raises(ReleaseError, match="1 rows repeat"):
        release_mean(dup, value="x", eps="eps", lo=0, hi=1, ledger=led, id="uid", engine="spark")
    miss = df.astype({"uid": object})
    miss.loc[3, "uid"] = None
    with pytest.raises(BadCellError) as bad:
        release_mean(miss, value="x", eps="eps", lo=0, hi=1, ledger=led, id="uid", engine="spark")
    # named where, as on DuckDB: the local DataFrame's row (Spark's rows have no order)
    assert (bad.value.row, bad.value.column, bad.value.reason) == (4, "uid", "empty")
    assert "row 4" in str(bad.value)
    spent = person_spent_units(led)
    secret = led.secret_key()
    assert set(spent) == {key_hash(secret, u) for u in df.uid}
    assert len(led.history()) == 2
    assert not list(scratch.iterdir()) and jsc.getPersistentRDDs().size() == cached


def test_grouped_on_spark_matches_the_oracle_and_duckdb(tmp_path):
    """A short sequence of releases per segment on Spark (both targets, keys given with one
    left out and one absent): the same exact spends as the oracle, and the same receipts as
    DuckDB's."""
    df = _table(300).assign(region=lambda d: d.index % 3)
    steps = [
        (df, Fraction(1, 2), "population", None),
        (df.iloc[50:], Fraction(1), "table", [0, 2, 9]),
    ]
    people = {}
    for engine in ("duckdb", "spark"):
        led = PrivacyLedger(tmp_path / f"{engine}.duckdb")
        orc = Oracle()
        people[engine] = []
        for part, spend, target, keys in steps:
            use = part if keys in (None, "one") else part[part.region.isin(keys)]
            segs = None if keys == "one" else list(use.region)
            assert orc.release(list(use.uid), list(use.eps), spend, target, segs)
            kw = dict(value="x", eps="eps", lo=0, hi=1, ledger=led, id="uid", engine=engine)
            if keys == "one":
                out = release_mean(part, spend=spend, target=target, **kw)
            else:
                out = release_means(part, by="region", keys=keys, spend=spend, target=target, **kw)
            people[engine].append(out.people)
            check_against(led, orc)
    for a, b in zip(people["duckdb"], people["spark"], strict=True):
        pd.testing.assert_frame_equal(a, b)


def test_the_secret_is_in_no_spark_plan(tmp_path):
    """The keyed hash's frame (the one release_mean and release_means use on Spark): neither
    the ledger's secret in hex nor its raw bytes appear in any plan Spark prints, before or
    after running it."""
    from pyspark.sql import functions as F

    from hdp_release.engines.spark_source import SparkSource
    from hdp_release.ledger.people_spark import keyed_hash_frame

    led = PrivacyLedger(tmp_path / "l.duckdb")
    secret = led.secret_key()
    src = SparkSource(_table(20))
    t = keyed_hash_frame(src, "uid", secret.hex() + "|", [F.col("x")])
    plans = [t._jdf.queryExecution().toString()]
    got = {bytes(r[0]) for r in t.select("hdp_h__").collect()}
    plans.append(t._jdf.queryExecution().toString())
    plans.append(t._jdf.queryExecution().executedPlan().toString())
    for p in plans:
        assert "hdp_h__" in p or "sha2" in p  # the real plan, not an empty string
        assert secret.hex() not in p and secret.hex().upper() not in p
        assert secret.decode("latin-1") not in p
    assert got == {key_hash(secret, u) for u in _table(20).uid}  # the documented hash
    # the way it was before (a literal) would have shown it: the check can fail
    lit = src.df.select(F.sha2(F.concat(F.lit(secret.hex() + "|"), F.col("uid")), 256))
    assert secret.hex() in lit._jdf.queryExecution().toString()
