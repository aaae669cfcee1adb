"""Text ids on both engines (hdp_release.ledger.person_charge, people_spark): an id is read as
text trimmed of Unicode's space separators (Zs) at both ends, as DuckDB's trim() does; Spark's
one-argument trim removed only ' ', so an id ending in a no-break space (common in exported
spreadsheets) was the trimmed id on DuckDB and another person on Spark: the same person was
charged under two keyed hashes, each within the budget, together past it (found by helper
attack11, session 11). Oracle: the documented keyed hash (hashlib) of the id stripped with
Python of the characters whose Unicode category is Zs (unicodedata)."""

from __future__ import annotations

import types
import unicodedata
import warnings

import duckdb
import pandas as pd
import pytest
from helpers import NoNoise
from test_ledger_people import key_hash

import hdp_release.finish
from hdp_core.errors import BadCellError, LedgerError
from hdp_release import release_mean
from hdp_release.engines.spark_source import SparkSource
from hdp_release.ledger.people import person_spent_units
from hdp_release.ledger.person_charge import ID_SPACES, null_id_row
from hdp_release.ledger.store import PrivacyLedger

ZS = "".join(
    chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Zs"
)  # the oracle's set


def test_the_trimmed_characters_are_duckdbs_and_unicodes_space_separators():
    assert sorted(ID_SPACES) == sorted(ZS)
    got = duckdb.sql(
        "SELECT i FROM range(1, 1114112) t(i) WHERE (i < 55296 OR i > 57343) "
        "AND trim(chr(CAST(i AS INTEGER))) = '' ORDER BY i"
    ).fetchall()
    assert "".join(chr(r[0]) for r in got) == "".join(sorted(ZS))


@pytest.mark.slow
def test_an_id_with_unicode_spaces_is_one_person_on_duckdb_and_spark(tmp_path, spark, monkeypatch):
    """The same table released on DuckDB then on Spark into one ledger at spend 1/4: each
    person is charged 1/2 under the keyed hash of their Zs-trimmed id (not 1/4 under two
    hashes); an id of only Zs characters is refused as empty, naming its row, on both."""
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    ids = ["p1\u00a0", "p2", "\u3000p3", "p4\u2003 ", "\u202fp5\u205f", "p6\t"]
    df = pd.DataFrame({"uid": ids, "x": [0.1 * i for i in range(6)], "eps": [1.0] * 6})
    led = PrivacyLedger(tmp_path / "l.duckdb")
    kw = {"value": "x", "eps": "eps", "lo": 0, "hi": 1, "ledger": led, "id": "uid"}
    for engine in ("duckdb", "spark"):
        release_mean(df, **kw, engine=engine, spend="1/4")
    secret = led.secret_key()
    half = person_spent_units(led)[key_hash(secret, "p2")]
    want = {key_hash(secret, i.strip(ZS)): half for i in ids}  # tab is not Zs: kept
    assert person_spent_units(led) == want
    empty = df.assign(uid=["a", "b", "\u00a0\u3000", "d", "e", "f"])
    for engine in ("duckdb", "spark"):
        with pytest.raises(BadCellError) as bad:
            release_mean(empty, **kw, engine=engine)
        assert (bad.value.row, bad.value.column, bad.value.reason) == (3, "uid", "empty")
    # a local CSV with a text id past DuckDB's type sniffing: the missing id's row, not a
    # ledger failure (the row finder's DuckDB read failed on the text id)
    late = _late_text_csv(tmp_path)
    with pytest.raises(BadCellError) as bad:
        release_mean(late, **kw, engine="spark")
    assert (bad.value.row, bad.value.column, bad.value.reason) == (30002, "uid", "empty")
    assert "SECRET" not in str(bad.value)
    assert not isinstance(bad.value, LedgerError)


def _late_text_csv(path) -> str:
    """A CSV whose id column DuckDB's sniffer (its first 20,480 rows) reads as integers,
    with a text id after them and then a missing one (row 30,002)."""
    p = str(path / "late.csv")
    with open(p, "w") as f:
        f.write("uid,x,eps\n" + "".join(f"{i},0.5,1\n" for i in range(30000)))
        f.write("SECRET-ID-42,0.5,1\n,0.5,1\n")
    return p


def test_the_missing_ids_row_on_a_local_csv_is_read_as_text(tmp_path):
    """SparkSource.local_row (Spark names a missing id's row through DuckDB, reading the
    same local file): the CSV read as text, as Spark reads an id column, so a text id past
    DuckDB's type sniffing neither fails the finder nor shows in any message; a finder that
    fails answers 0 ("a row"), never another refusal."""
    src = types.SimpleNamespace(local_path=_late_text_csv(tmp_path), local_frame=None)
    src.tier_names = {}
    src._duck = types.MethodType(SparkSource._duck, src)
    find = lambda d: null_id_row(d, "uid")  # noqa: E731
    assert SparkSource.local_row(src, find, "uid", text=True) == 30002
    assert SparkSource.local_row(src, find, "uid") == 0  # DuckDB's types fail on row 30,001


@pytest.mark.slow
def test_uint64_ids_past_int64_are_persons_on_duckdb_and_spark(tmp_path, spark, monkeypatch):
    """Spark's createDataFrame turned pandas uint64 ids >= 2^63 into nulls (refused as empty
    ids where DuckDB charged them as persons; found by attack11): the ids now go to Spark as
    their digits, the same keyed hash as DuckDB's. Oracle: the documented keyed hash."""
    import numpy as np

    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    ids = np.array([2**64 - 1, 2**63, 5, 7], dtype=np.uint64)
    df = pd.DataFrame({"uid": ids, "x": [0.1, 0.2, 0.3, 0.4], "eps": [1.0] * 4})
    led = PrivacyLedger(tmp_path / "l.duckdb")
    kw = {"value": "x", "eps": "eps", "lo": 0, "hi": 1, "ledger": led, "id": "uid"}
    for engine in ("duckdb", "spark"):
        with warnings.catch_warnings():  # as outside pytest: Spark's Arrow fallback warns
            warnings.simplefilter("ignore", UserWarning)
            release_mean(df, **kw, engine=engine, spend="1/4")
    secret = led.secret_key()
    half = person_spent_units(led)[key_hash(secret, "5")]
    assert person_spent_units(led) == {key_hash(secret, str(int(i))): half for i in ids}
    # a nullable UInt64 id column: a missing id stays missing (refused naming its row, as on
    # DuckDB), never the text '<NA>' taken for a person
    miss = df.assign(uid=pd.array([2**64 - 1, None, 5, 7], dtype="UInt64"))
    for engine in ("duckdb", "spark"):
        with pytest.raises(BadCellError) as bad, warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            release_mean(miss, **kw, engine=engine, spend="1/4")
        assert (bad.value.row, bad.value.column, bad.value.reason) == (2, "uid", "empty")
    assert person_spent_units(led) == {key_hash(secret, str(int(i))): half for i in ids}
