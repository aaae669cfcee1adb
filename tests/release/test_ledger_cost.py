"""The ledgers' cost (issue 30): the dataset ledger's light check scan must answer exactly what
the general check answers (every count, the smallest level, the keyed level identity), on
tables that take the light path and on tables that must fall back to the general one.

Oracles: the general path itself (forced), and levels_identity_arrays (the per-row numpy
identity, which tests/release/test_ledger.py checks against a pure-Python encoding).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import hdp_release.engines.duckdb_source as duck
import hdp_release.fingerprint as fp
from hdp_core.errors import ReleaseError
from hdp_release.engines.open import open_source
from hdp_release.fingerprint import levels_identity_arrays, levels_identity_counts
from hdp_release.preview import tier_levels

KEY = bytes(range(32))
INF, NAN = math.inf, math.nan


def _check(source, tiers=None):
    src, v, e = open_source(source, "v", "e", "duckdb", tier_levels(tiers))
    try:
        return src.precheck(v, e, KEY)
    finally:
        src.close()


TABLES = {
    # name: (values, levels, light path expected)
    "tiers, zeros, public": ([1.0, 2, 3, 4, 5, 6], [0.5, 0.0, -0.0, INF, 0.5, 2.0], True),
    "negative level": ([1.0, 2, 3], [0.5, -1.0, 0.5], True),
    "levels out of range": ([1.0, 2, 3, 4], [1e-9, 1e7, 0.5, 1e-6], True),
    "-inf level": ([1.0, 2, 3], [0.5, -INF, 0.5], True),
    "all zero": ([1.0, 2], [0.0, 0.0], True),
    "NaN value": ([1.0, NAN, 3], [0.5, 0.5, 1.0], False),
    "inf value": ([1.0, INF, 3], [0.5, 0.5, 1.0], False),
    "-inf value": ([-INF, 2.0, 3], [0.5, 0.5, 1.0], False),
    "NaN level": ([1.0, 2, 3], [0.5, NAN, 1.0], False),
    "many levels": (list(range(60)), list(np.linspace(0.1, 3, 60)), False),
}


@pytest.mark.parametrize("name", list(TABLES))
def test_light_check_equals_the_general_check(name, monkeypatch):
    values, levels, light = TABLES[name]
    df = pd.DataFrame({"v": np.asarray(values, float), "e": np.asarray(levels, float)})
    calls = []
    real = fp.levels_identity_sql
    monkeypatch.setattr(fp, "levels_identity_sql", lambda *a: calls.append(1) or real(*a))
    got = _check(df)
    assert (not calls) is light  # the light path hashes no row
    monkeypatch.setattr(duck, "MAX_TIERS", 0)  # the general path: counts and identity pass
    want = _check(df)
    assert calls
    assert got == want
    assert got[0] == levels_identity_arrays(df["e"], KEY)


def test_a_level_after_the_first_rows_falls_back(monkeypatch):
    monkeypatch.setattr(duck, "SAMPLE_MAX", 10)
    e = np.full(40, 0.5)
    e[35] = 0.7  # not among the first rows' levels
    df = pd.DataFrame({"v": np.arange(40.0), "e": e})
    got = _check(df)
    assert got[0] == levels_identity_arrays(e, KEY) and got[1:] == (40, 0, 0, 0, 40, 0, 0.5)


def test_text_levels_and_tier_names_take_the_light_path(tmp_path, monkeypatch):
    p = tmp_path / "t.csv"
    p.write_text("v,e\n1,Strict\n2, public \n3,0.5\n4,strict\n5,0\n6,inf\n")
    calls = []
    real = fp.levels_identity_sql
    monkeypatch.setattr(fp, "levels_identity_sql", lambda *a: calls.append(1) or real(*a))
    got = _check(str(p), {"Strict": 0.2})
    assert not calls
    parsed = [0.2, INF, 0.5, 0.2, 0.0, INF]
    assert got == (levels_identity_arrays(parsed, KEY), 6, 0, 0, 0, 5, 2, 0.2)
    with pytest.raises(ReleaseError):  # a bad text level is refused as before, with its row
        _check(str(p))


def test_identity_from_level_counts_equals_the_per_row_identity():
    rng = np.random.default_rng(7)
    for _ in range(25):
        lv = rng.choice([0.0, -0.0, 0.1, 1 / 3, 2.0, INF, NAN, 5e-7, 1e300, -2.0], 5)
        ct = rng.integers(1, 5000, lv.size)
        rows = np.repeat(lv, ct)
        assert levels_identity_counts(lv, ct, KEY) == levels_identity_arrays(rows, KEY)


def test_a_release_on_few_levels_says_its_one_check_pass(tmp_path):
    from hdp_release.ledger.store import PrivacyLedger
    from hdp_release.release import release_mean

    led = PrivacyLedger(tmp_path / "l.duckdb")
    df = pd.DataFrame({"v": np.linspace(0, 10, 200), "e": np.tile([0.5, 1.0, 2.0, INF], 50)})
    rel = release_mean(df, value="v", eps="e", lo=0, hi=10, ledger=led, spend="1/4")
    # on DuckDB that one check pass is the release's own tiers pass (test_ledger_tiers_fused)
    assert rel.plan.startswith("tiers (1 aggregate pass; shared with the ledger's check)")
    assert "no pass of its own for the ledger's check (" in rel.plan
    many = pd.DataFrame({"v": np.linspace(0, 10, 200), "e": np.linspace(0.1, 2, 200)})
    rel = release_mean(many, value="v", eps="e", lo=0, hi=10, ledger=led, spend="1/4")
    assert "+ 2 ledger check passes (" in rel.plan


def test_a_nan_value_in_parquet_is_seen_by_the_light_check(tmp_path):
    # Parquet statistics omit NaN: the values' max must come from the cells, not the footer
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "t.parquet"
    v = np.arange(3000, dtype=float)
    v[2500] = NAN
    pq.write_table(pa.table({"v": v, "e": np.tile([0.5, 1.0, 2.0], 1000)}), p, row_group_size=500)
    got = _check(str(p))
    assert got[3] == 1 and got[1] == 3000  # one bad value, found as the general check finds it


def _spend_frame(n: int = 4000, seed: int = 11) -> tuple[pd.DataFrame, float, float]:
    """Four tiers, eps = 0 and public users, and two asked levels one float apart (1.5 and
    the next double) that run at ONE level at spend 3/4 (their products round together)."""
    from hdp_core.spend import spend_factor

    f = spend_factor("3/4")
    u = 1.5 + 2 * 2.0**-52
    w = math.nextafter(u, 9.0)
    assert u * f == w * f and u != w  # the collision the tiers pass must sum together
    rng = np.random.default_rng(seed)
    e = rng.choice([0.1, 0.5, u, w, 0.0, INF], n)
    return pd.DataFrame({"v": rng.uniform(-5, 105, n), "e": e}), u, w


@pytest.mark.parametrize("target", ["population", "table"])
def test_a_release_at_a_spend_keys_the_tiers_pass_by_the_asked_level(target, monkeypatch):
    """A spend below 1 keys the tiers pass by the level as asked (issue 30: no product per
    row) and must give exactly the release that the general plan (the levels eps x factor,
    binned per row; no fast key) gives: the same estimate bit for bit without noise, the same
    receipt; asked levels that run at one level are one receipt row."""
    from helpers import NoNoise

    import hdp_release.finish
    from hdp_release import release as R
    from hdp_release.release import release_mean

    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    scans: list = []
    real = duck.DuckSource._fast
    monkeypatch.setattr(
        duck.DuckSource, "_fast", lambda self, *a, **k: scans.append(k) or real(self, *a, **k)
    )
    df, u, w = _spend_frame()
    kw = {"value": "v", "eps": "e", "lo": 0.0, "hi": 100.0, "spend": "3/4", "target": target}
    fast = release_mean(df, **kw)
    assert fast.plan.startswith("tiers (1 aggregate pass)"), fast.plan
    assert len(scans) == 1 and "* " not in scans[0]["scan"]  # keyed by eps, no product
    monkeypatch.setattr(R, "fast_histogram", lambda *a, **k: (None, 0, ""))
    gen = release_mean(df, **kw)  # the general plan: per-row scaled levels, binned
    assert fast.estimate == gen.estimate
    assert (fast.noise_scale, fast.saturation_level) == (gen.noise_scale, gen.saturation_level)
    pd.testing.assert_frame_equal(fast.tiers, gen.tiers)
    users = fast.tiers.set_index("eps")["users"]
    assert users[u] == int(((df["e"] == u) | (df["e"] == w)).sum())  # summed into one row
    assert fast.n_excluded == int((df["e"] == 0).sum())


def test_a_spend_with_a_level_outside_the_sample_takes_the_general_plan(monkeypatch):
    from helpers import NoNoise

    import hdp_release.finish
    from hdp_release import release as R
    from hdp_release.release import release_mean

    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    monkeypatch.setattr(duck, "SAMPLE_MAX", 100)
    df, _, _ = _spend_frame()
    df.loc[3000, "e"] = 0.3  # not among the first rows' levels
    kw = {"value": "v", "eps": "e", "lo": 0.0, "hi": 100.0, "spend": "3/4"}
    fast = release_mean(df, **kw)
    assert "missed levels" in fast.plan
    monkeypatch.setattr(R, "fast_histogram", lambda *a, **k: (None, 0, ""))
    assert fast.estimate == release_mean(df, **kw).estimate


def test_a_ledger_operation_leaves_the_file_closed_even_when_it_fails(tmp_path):
    """Each operation attaches the file to the process's in-memory DuckDB database and
    detaches it after (issue 30: ~2 ms instead of opening a database); a failed operation, an
    open transaction left behind, or a refused charge must not leave it attached (DuckDB's
    lock would keep every other process out)."""
    import duckdb

    from hdp_core.errors import BudgetExceeded, LedgerError
    from hdp_release.ledger.store import PrivacyLedger

    path = tmp_path / "l.duckdb"
    led = PrivacyLedger(path)
    ident = "lv1:" + "ab" * 16

    def closed() -> bool:
        con = duckdb.connect(str(path))  # refused while this process has it attached
        con.close()
        return True

    with pytest.raises(LedgerError), led.transaction() as con:
        con.execute("BEGIN TRANSACTION")
        con.execute("SELECT * FROM no_such_table")
    assert closed()
    with led.transaction() as con:
        con.execute("BEGIN TRANSACTION")  # left open: rolled back on leaving
        con.execute("DELETE FROM meta")
    assert closed() and led.release_count() == 0  # the delete was rolled back
    led.charge(ident, 1)
    with pytest.raises(BudgetExceeded):
        led.charge(ident, "1/2")
    assert closed() and led.spent(ident) == 1
