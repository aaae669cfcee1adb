"""The person table's key (issue 30, cost): h is the keyed hash's 16 bytes read as one 128-bit
integer. A ledger written before (h a 16-byte BLOB) is converted, in the transaction of its
next per-person charge, and charges exactly what a ledger that never had BLOBs charges; one
whose stored hash is not 16 bytes is refused with a LedgerError, nothing charged.

Oracles: the documented keyed hash computed with hashlib (tests/release/test_ledger_people's
key_hash), and the same releases on a ledger made with 128-bit keys from the start."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from test_ledger_people import key_hash

from hdp_core.errors import LedgerUnusable
from hdp_release.ledger.people import person_spent_units
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean

KW = {"value": "v", "eps": "e", "lo": 0.0, "hi": 10.0, "id": "uid"}


def _table(n: int = 60, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "uid": [f"p{k:03d}" for k in range(n)],
            "v": rng.uniform(0, 10, n),
            "e": rng.choice([0.2, 1.0, 3.0], n),
        }
    )


def _to_blob_table(path, hashes: dict[bytes, int] | None = None) -> None:
    """Rewrite the ledger's person table as before issue 30's cost work: h BLOB (16 bytes,
    from hashlib), or the given hash -> spent rows."""
    con = duckdb.connect(str(path))
    try:
        rows = con.execute("SELECT h, level, spent, releases, last_release FROM hdp_people")
        old = [(int(r[0]).to_bytes(16), *r[1:]) for r in rows.fetchall()]
        if hashes is not None:
            lv, rel, last = old[0][1], old[0][3], old[0][4]
            old = [(h, lv, s, rel, last) for h, s in hashes.items()]
        con.execute("DROP TABLE hdp_people")
        con.execute(
            "CREATE TABLE hdp_people (h BLOB NOT NULL, level DOUBLE NOT NULL, spent HUGEINT "
            "NOT NULL, releases INTEGER NOT NULL, last_release BIGINT NOT NULL)"
        )
        con.executemany("INSERT INTO hdp_people VALUES (?, ?, ?, ?, ?)", [list(r) for r in old])
    finally:
        con.close()


def _h_type(path) -> str:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(
            "SELECT data_type FROM duckdb_columns() WHERE table_name = 'hdp_people' "
            "AND column_name = 'h'"
        ).fetchall()[0][0]
    finally:
        con.close()


def test_a_ledger_with_blob_hashes_is_converted_and_charges_as_a_new_one(tmp_path):
    df = _table()
    old, new = tmp_path / "old.duckdb", tmp_path / "new.duckdb"
    led_old, led_new = PrivacyLedger(old), PrivacyLedger(new)
    for led in (led_old, led_new):
        release_mean(df, **KW, ledger=led, spend="1/3")
    assert _h_type(new) == "UHUGEINT"
    _to_blob_table(old)
    assert _h_type(old) == "BLOB"
    secret = led_old.secret_key()
    got_old = person_spent_units(led_old)  # readable before conversion, as bytes
    assert set(got_old) == {key_hash(secret, u) for u in df["uid"]}
    sub = df.iloc[::2]  # a subset: converted persons seen again and left alone alike
    for led in (led_old, led_new):
        release_mean(sub, **KW, ledger=led, spend="1/2")
    assert _h_type(old) == "UHUGEINT"
    new_secret = led_new.secret_key()
    spent_old, spent_new = person_spent_units(led_old), person_spent_units(led_new)
    by_id_old = {u: spent_old[key_hash(secret, u)] for u in df["uid"]}
    by_id_new = {u: spent_new[key_hash(new_secret, u)] for u in df["uid"]}
    assert by_id_old == by_id_new
    assert by_id_old["p000"] > by_id_old["p001"] > 0  # p000 charged twice, p001 once


def test_a_blob_hash_that_is_not_16_bytes_is_refused(tmp_path):
    df = _table(20)
    path = tmp_path / "l.duckdb"
    led = PrivacyLedger(path)
    release_mean(df, **KW, ledger=led, spend="1/3")
    spent = person_spent_units(led)
    bad = dict(spent)
    bad[b"\x01" * 15] = bad.pop(next(iter(bad)))  # one stored hash cut to 15 bytes
    _to_blob_table(path, bad)
    n = led.release_count()
    with pytest.raises(LedgerUnusable) as ei:
        release_mean(df, **KW, ledger=led, spend="1/3")
    assert ei.value.reason == "corrupt" and "16" in str(ei.value)
    assert led.release_count() == n  # nothing charged
    assert _h_type(path) == "BLOB"  # rolled back with the refused charge
