"""Text ids on both engines (hdp_release.ledger.person_charge, people_spark): an id is read as
text trimmed of Unicode's space separators (Zs) at both ends, as DuckDB's trim() does; Spark's
one-argument trim removed only ' ', so an id ending in a no-break space (common in exported
spreadsheets) was the trimmed id on DuckDB and another person on Spark: the same person was
charged under two keyed hashes, each within the budget, together past it (found by helper
attack11, session 11). Oracle: the documented keyed hash (hashlib) of the id stripped with
Python of the characters whose Unicode category is Zs (unicodedata)."""

from __future__ import annotations

import unicodedata

import duckdb
import pandas as pd
import pytest
from helpers import NoNoise
from test_ledger_people import key_hash

import hdp_release.finish
from hdp_core.errors import BadCellError
from hdp_release import release_mean
from hdp_release.ledger.people import person_spent_units
from hdp_release.ledger.person_charge import ID_SPACES
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
