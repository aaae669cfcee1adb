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


def test_one_ledger_across_engines_and_refusals_on_spark(tmp_path):
    df = _table(200).assign(eps=0.01)  # nobody saturates
    led = PrivacyLedger(tmp_path / "l.duckdb")
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
    with pytest.raises(BadCellError):
        release_mean(miss, value="x", eps="eps", lo=0, hi=1, ledger=led, id="uid", engine="spark")
    spent = person_spent_units(led)
    secret = led.secret_key()
    assert set(spent) == {key_hash(secret, u) for u in df.uid}
    assert len(led.history()) == 2
