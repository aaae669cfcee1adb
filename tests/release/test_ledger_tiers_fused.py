"""The dataset ledger's light check as the tiers pass itself (issues 29 and 30): on DuckDB with
few levels, the check's one scan also sums the values' grid per level; those sums are used by
the release only after the charge succeeds.

Oracles: the unfused order (the same release with the check's light scan and the release's own
tiers pass, as before: checks.precheck without the range), the check's answer without the
range (every count, the smallest level, the keyed identity), the ledger's own totals, and
counts of scans and noise draws.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from helpers import NoNoise

import hdp_release.finish
from hdp_core.errors import BadCellError, BudgetExceeded
from hdp_core.spend import spend_factor
from hdp_release import release as R
from hdp_release.engines import duckdb_fast
from hdp_release.engines.open import open_source
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean

KEY = bytes(range(32))
INF, NAN = math.inf, math.nan
KW = {"value": "v", "eps": "e", "lo": 0.0, "hi": 100.0}


def _frame(n: int = 3000, seed: int = 5) -> pd.DataFrame:
    """Tiers with eps = 0 and public users, values beyond the range on both sides."""
    rng = np.random.default_rng(seed)
    e = rng.choice([0.1, 0.5, 1 / 3, 2.0, 0.0, INF], n)
    return pd.DataFrame({"v": rng.uniform(-5, 105, n), "e": e})


def _collision_frame(n: int = 3000, seed: int = 11) -> pd.DataFrame:
    """Two asked levels one float apart that run at ONE level at spend 3/4."""
    f = spend_factor("3/4")
    u = 1.5 + 2 * 2.0**-52
    w = math.nextafter(u, 9.0)
    assert u * f == w * f and u != w
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"v": rng.uniform(-5, 105, n), "e": rng.choice([0.1, u, w, 0.0], n)})


@pytest.fixture
def scans(monkeypatch):
    """NoNoise in place of OpenDP's noise; returns the list of the tiers scans made."""
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    got: list = []
    real = duckdb_fast.FastPlan._fast
    monkeypatch.setattr(
        duckdb_fast.FastPlan, "_fast", lambda self, *a, **k: got.append(a[0]) or real(self, *a, **k)
    )
    return got


def _unfused(monkeypatch) -> None:
    """The order before issue 30's fusion: the check without the release's range."""
    real = R.precheck
    monkeypatch.setattr(R, "precheck", lambda *a: real(*a[:6]))


CASES = [
    ("tiers", "1", "population"),
    ("tiers", "1/3", "population"),
    ("tiers", "1", "table"),
    ("tiers", "1/3", "table"),
    ("collision", "3/4", "population"),
]


@pytest.mark.parametrize(("frame", "spend", "target"), CASES)
def test_the_fused_release_equals_the_unfused_one_bit_for_bit(
    frame, spend, target, tmp_path, scans, monkeypatch
):
    df = _frame() if frame == "tiers" else _collision_frame()
    kw = KW | {"spend": spend, "target": target}
    fused = release_mean(df, **kw, ledger=PrivacyLedger(tmp_path / "a.duckdb"))
    assert len(scans) == 1  # the check's scan was the release's only grouped scan
    assert fused.plan.startswith("tiers (1 aggregate pass; shared with the ledger's check)")
    assert "no pass of its own for the ledger's check (that pass, before the charge" in fused.plan
    assert "+ 1 ledger check pass" not in fused.plan
    _unfused(monkeypatch)
    scans.clear()
    plain = release_mean(df, **kw, ledger=PrivacyLedger(tmp_path / "b.duckdb"))
    assert len(scans) == 1 and plain.plan.startswith("tiers (1 aggregate pass);")
    assert "+ 1 ledger check pass (rows per level" in plain.plan
    for f in ("estimate", "ci95", "half_width95", "noise_scale", "saturation_level"):
        assert getattr(fused, f) == getattr(plain, f), f
    assert (fused.n_users, fused.n_excluded, fused.n_public) == (
        plain.n_users,
        plain.n_excluded,
        plain.n_public,
    )
    pd.testing.assert_frame_equal(fused.tiers, plain.tiers)
    assert fused.budget_remaining == plain.budget_remaining == float(1 - Fraction(spend))
    if frame == "collision":  # two asked levels summed into one receipt row
        assert len(fused.tiers) == 2


def test_a_release_refused_by_the_charge_draws_no_noise_and_uses_no_sum(tmp_path, scans):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    df = _frame()
    release_mean(df, **KW, ledger=led)  # the whole budget
    [first] = led.history()
    calls, used = NoNoise.calls, []
    real = duckdb_fast.FastPlan._to_run_levels
    duckdb_fast.FastPlan._to_run_levels = lambda self, *a: used.append(1) or real(self, *a)
    try:
        with pytest.raises(BudgetExceeded):
            release_mean(df, **KW, ledger=led, spend="1/10")
    finally:
        duckdb_fast.FastPlan._to_run_levels = real
    assert len(scans) == 2  # the refused release made its check scan ...
    assert not used and NoNoise.calls == calls  # ... whose sums were never used
    assert led.history() == [first] and led.remaining(first.identities) == 0


def test_a_bad_value_is_refused_before_charging_with_no_noise(tmp_path, scans):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    df = _frame()
    df.loc[2000, "v"] = NAN
    calls = NoNoise.calls
    with pytest.raises(BadCellError) as info:
        release_mean(df, **KW, ledger=led)
    assert info.value.row == 2001 and info.value.column == "v"
    assert NoNoise.calls == calls and led.history() == []


def test_the_check_with_the_range_answers_what_the_check_without_it_answers():
    """Every count, the smallest level and the keyed identity, on tables that take the
    light path and on tables that fall back (a bad value, a NaN level, many levels)."""
    tables = [
        ([1.0, 2, 3, 4, 5, 6], [0.5, 0.0, -0.0, INF, 0.5, 2.0]),
        ([1.0, 2, 3], [0.5, -1.0, 0.5]),
        ([1.0, 2, 3, 4], [1e-9, 1e7, 0.5, 1e-6]),
        ([1.0, NAN, 3], [0.5, 0.5, 1.0]),
        ([-INF, 2.0, 3], [0.5, 0.5, 1.0]),
        ([1.0, 2, 3], [0.5, NAN, 1.0]),
        (list(range(60)), list(np.linspace(0.1, 3, 60))),
    ]
    for values, levels in tables:
        df = pd.DataFrame({"v": np.asarray(values, float), "e": np.asarray(levels, float)})
        got = []
        for bounds in (None, (0.0, 10.0)):
            src, v, e = open_source(df, "v", "e", "duckdb", {})
            try:
                args = (v, e, KEY) if bounds is None else (v, e, KEY, bounds)
                got.append((src.precheck(*args), src.checked is not None))
            finally:
                src.close()
                assert src.checked is None  # closing drops any kept sums
        assert got[0][0] == got[1][0], (values, levels)
        light = got[1][0][3] == 0 and len(set(levels)) <= 32 and not np.isnan(levels).any()
        assert got[1][1] is light and got[0][1] is False


def test_text_levels_and_tier_names_take_the_fused_path(tmp_path, scans, monkeypatch):
    p = tmp_path / "t.csv"
    rows = [
        f"{i % 97},{['Strict', ' public ', '0.5', 'strict', '0', '2'][i % 6]}" for i in range(600)
    ]
    p.write_text("v,e\n" + "\n".join(rows) + "\n")
    kw = KW | {"tiers": {"Strict": 0.2}, "spend": "1/2"}
    fused = release_mean(str(p), **kw, ledger=PrivacyLedger(tmp_path / "a.duckdb"))
    assert len(scans) == 1 and "shared with the ledger's check" in fused.plan
    _unfused(monkeypatch)
    plain = release_mean(str(p), **kw, ledger=PrivacyLedger(tmp_path / "b.duckdb"))
    assert fused.estimate == plain.estimate and fused.ci95 == plain.ci95
    pd.testing.assert_frame_equal(fused.tiers, plain.tiers)


def test_the_level_sample_of_a_parquet_file_is_its_first_rows(tmp_path, monkeypatch):
    """One Parquet file is sampled by its row numbers (only the row groups holding them are
    read): the same rows, in the same order, as a LIMIT over the file gives."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import hdp_release.engines.duckdb_source as duck

    monkeypatch.setattr(duck, "SAMPLE_MAX", 700)
    rng = np.random.default_rng(3)
    e = rng.choice([0.1, 0.5, NAN, 2.0, INF], 3000)
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"v": rng.uniform(0, 1, 3000), "e": e}), p, row_group_size=256)
    src, v, ecol = open_source(str(p), "v", "e", "duckdb", {})
    try:
        src._prepare(v, ecol, 0.0, 1.0)
        assert "file_row_number < 700" in src._head("e")
        x, n = src.sample_levels()
        src.kind = "csv"  # the LIMIT, for comparison
        y, _ = src.sample_levels()
    finally:
        src.close()
    assert n == 3000 and x.size == 700
    np.testing.assert_array_equal(x, e[:700])
    np.testing.assert_array_equal(y, e[:700])


def test_a_column_named_file_row_number_keeps_the_limit(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"v": [1.0, 2.0], "e": [0.5, 1.0], "File_Row_Number": [9, 8]}), p)
    src, _, _ = open_source(str(p), "v", "e", "duckdb", {})
    try:
        assert "LIMIT" in src._head("e") and "file_row_number <" not in src._head("e")
    finally:
        src.close()
    rel = release_mean(str(p), **KW, ledger=False)
    assert rel.n_users == 2
