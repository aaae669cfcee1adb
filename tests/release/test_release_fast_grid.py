"""DuckDB's tiers pass without a CASE (issue 29) and the grid's rounding on every plan.

The pass tried first when a Parquet file's statistics say every value is in [lo, hi]
(``values_inside``, a hint only) must give exactly the CASE pass's rows, and the CASE pass
whenever a row is out of range or bad; a hostile cell in any row is still refused with its
row and column, as the general plan refuses it. Oracles: the grid value of every row in
exact rational arithmetic (round half away from zero of the float64 (v - lo) / R * Q, as
numpy computes it), the general plan's release (which takes neither pass), and the CASE pass.

The rounding: a value exactly halfway between two grid points rounds half away from zero on
every plan and engine (the general plan's round(), Spark's F.round); the fast plan's bare
CAST rounded it to even before session 11, so the fast plan and the general plan released
different numbers for the same table."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import NoNoise, same_release

import hdp_release.finish
from hdp_core.errors import BadCellError
from hdp_release import release as R
from hdp_release import release_mean
from hdp_release.engines import duckdb_fast
from hdp_release.engines.base import Q
from hdp_release.engines.duckdb_source import DuckSource
from hdp_release.engines.open import open_source
from hdp_release.ledger.store import PrivacyLedger

LEVELS = [0.1, 0.5, 2.0, math.inf, 0.0]


@pytest.fixture(autouse=True)
def _no_noise(monkeypatch):
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)


def _general(monkeypatch, *a, **kw):
    """The release by the general plan (no fast pass), then the fast plan restored."""
    with monkeypatch.context() as m:
        m.setattr(R, "fast_histogram", lambda *x, **k: (None, 0, ""))
        return release_mean(*a, **kw)


def _grid(v: np.ndarray, lo: float, hi: float) -> list[int]:
    """The grid value of each value (clamped to [lo, hi]) in exact arithmetic: round half
    away from zero of the float64 (v - lo) / R * Q."""
    t = (np.clip(v, lo, hi) - lo) / (hi - lo) * float(Q)
    return [math.floor(Fraction(float(x)) + Fraction(1, 2)) for x in t]


def _frame(n: int = 3000, seed: int = 7, lo: float = 0.0, hi: float = 100.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    v = rng.uniform(lo, hi, n)
    return pd.DataFrame({"v": v, "e": rng.choice(LEVELS, n)})


def _parquet(tmp_path, df: pd.DataFrame, name: str = "t.parquet", **kw) -> str:
    p = str(tmp_path / name)
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), p, **kw)
    return p


def _ties(n: int = 2000, seed: int = 3) -> pd.DataFrame:
    """Values exactly halfway between grid points of [0, 2^30] (there t = v), and others."""
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 1 << 30, n).astype(float) + rng.choice([0.5, 0.25, 0.0], n)
    return pd.DataFrame({"v": v, "e": rng.choice(LEVELS, n)})


def test_the_grid_rounds_half_away_from_zero_on_every_plan(tmp_path, monkeypatch):
    df = _ties()
    lo, hi = 0.0, float(Q)
    want = {}
    for x, y in zip(df["e"], _grid(df["v"].to_numpy(), lo, hi), strict=True):
        want[x] = want.get(x, 0) + y
    for src_in in (df, _parquet(tmp_path, df)):
        src, v, e = open_source(src_in, "v", "e", "duckdb", {})
        try:
            src._prepare(v, e, lo, hi)
            lv = sorted(set(LEVELS))
            rows = src._fast(duckdb_fast.tier_key(lv), None)
        finally:
            src.close()
        assert {lv[int(r[0]) - 1]: int(r[3]) for r in rows} == want
        kw = {"value": "v", "eps": "e", "lo": lo, "hi": hi}
        fast = release_mean(src_in, **kw)
        assert fast.plan.startswith("tiers (1 aggregate pass)")
        same_release(fast, _general(monkeypatch, src_in, **kw))


def test_the_bracket_pass_rounds_as_the_general_plan(monkeypatch):
    """Per-user levels (the bracket pass and its fetches) on values at ties."""
    rng = np.random.default_rng(5)
    df = _ties(4000)
    df["e"] = np.exp(rng.uniform(math.log(1e-3), math.log(10.0), len(df)))
    kw = {"value": "v", "eps": "e", "lo": 0.0, "hi": float(Q)}
    fast = release_mean(df, **kw)
    assert fast.plan.startswith("level bins") and "bracket missed" not in fast.plan
    gen = _general(monkeypatch, df, **kw)
    assert fast.estimate == gen.estimate  # the receipts' rows differ (1/8 decades vs bins)
    assert fast.saturation_level == pytest.approx(gen.saturation_level, rel=1e-12)


def _case_rows(src, lo: float, hi: float) -> list:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(DuckSource, "values_inside", lambda self, a, b: False)
        return src._fast(duckdb_fast.tier_key(sorted(set(LEVELS))), None, bounds=(lo, hi))


EDGE = [  # (what, cells as functions of lo and R = hi - lo, the pass without a CASE holds)
    (
        "inside, ends",
        [lambda lo, r: lo, lambda lo, r: lo + r, lambda lo, r: lo + r * 1.5 / Q],
        True,
    ),
    (
        "just below lo: rounds to 0",
        [lambda lo, r: lo - r * 1e-11, lambda lo, r: lo - r * 0.49 / Q],
        True,
    ),
    (
        "just above hi: rounds to Q",
        [lambda lo, r: lo + r + r * 1e-11, lambda lo, r: lo + r * (1 + 0.49 / Q)],
        True,
    ),
    ("below lo", [lambda lo, r: lo - 1.0], False),
    ("far below lo", [lambda lo, r: -1e308], False),
    ("above hi", [lambda lo, r: lo + r + 1.0], False),
    ("far above hi", [lambda lo, r: 1e308], False),
    ("NaN", [lambda lo, r: math.nan], False),
    ("inf", [lambda lo, r: math.inf], False),
    ("-inf", [lambda lo, r: -math.inf], False),
    ("missing", [lambda lo, r: None], False),
]


@pytest.mark.parametrize(("lo", "hi"), [(0.0, 100.0), (-50.0, 100.0)])
@pytest.mark.parametrize(("what", "cells", "taken"), EDGE)
def test_the_pass_without_a_case_equals_the_case_pass(lo, hi, what, cells, taken, monkeypatch):
    """Every row of the pass without a CASE (integer or double sums) whose counts agree is
    the CASE pass's row; a table with a value outside the range (beyond half a grid step)
    or a bad value fails the check and the CASE pass answers (``_fast`` gives its rows in
    every case, also when the statistics hint is forced true, as a file with lying
    statistics would, and when a group is too large for exact double sums)."""
    df = _frame(400, lo=lo, hi=hi)
    df["v"] = df["v"].astype(object)
    for i, c in enumerate(cells):
        df.loc[1 + i * 97, "v"] = c(lo, hi - lo)
    src, v, e = open_source(df, "v", "e", "duckdb", {})
    try:
        src._prepare(v, e, lo, hi)
        key = duckdb_fast.tier_key(sorted(set(LEVELS)))
        case = [tuple(r[:4]) for r in _case_rows(src, lo, hi)]
        for double in (False, True):
            fast = src._run(duckdb_fast.inside_pass_sql(key, src._scan(), lo, hi, double))
            agree = all(int(r[2]) == int(r[1]) for r in fast)
            assert agree is taken, (what, double)
            if agree:
                assert [(r[0], r[1], r[2], int(r[3])) for r in fast] == case
        monkeypatch.setattr(DuckSource, "values_inside", lambda self, a, b: True)
        for rows, limit in ((None, 1 << 23), (400, 1 << 23), (10, 60)):
            monkeypatch.setattr(DuckSource, "stats_rows", lambda self, r=rows: r)
            monkeypatch.setattr(duckdb_fast, "DOUBLE_ROWS", limit)  # 60: groups too large
            assert [tuple(r[:4]) for r in src._fast(key, None)] == case, (rows, limit)
    finally:
        src.close()


@pytest.mark.parametrize("bad", [math.nan, None, math.inf, -math.inf])
def test_a_hostile_value_in_each_position_is_refused_with_its_row(tmp_path, bad, monkeypatch):
    """A Parquet file whose other values are in the range (its statistics leave out NaN and
    missing cells, so the pass without a CASE runs first): the bad value at the first, a
    middle and the last row is refused naming that row and the column, with the general
    plan's reason and message."""
    n = 1200
    kw = {"value": "v", "eps": "e", "lo": 0.0, "hi": 100.0}
    for pos in (0, n // 2, n - 1):
        df = _frame(n)
        df["v"] = df["v"].astype(object)
        df.loc[pos, "v"] = bad
        p = _parquet(tmp_path, df, f"b{pos}.parquet")
        with pytest.raises(BadCellError) as fast:
            release_mean(p, **kw)
        with pytest.raises(BadCellError) as gen:
            _general(monkeypatch, p, **kw)
        assert (fast.value.row, fast.value.column) == (pos + 1, "v")
        assert (fast.value.reason, str(fast.value)) == (gen.value.reason, str(gen.value))


def test_out_of_range_values_give_the_general_plans_release_with_any_hint(tmp_path, monkeypatch):
    """Values outside [lo, hi] in the first, a middle and the last row (clamped, by design):
    the same release bit for bit as the general plan, whether the statistics hint is read
    from the file, forced true (lying statistics) or false."""
    kw = {"value": "v", "eps": "e", "lo": 10.0, "hi": 90.0}
    df = _frame(1500)
    p = _parquet(tmp_path, df)
    gen = _general(monkeypatch, p, **kw)
    for hint in (None, True, False):
        with monkeypatch.context() as m:
            if hint is not None:
                m.setattr(DuckSource, "values_inside", lambda self, a, b, h=hint: h)
            rel = release_mean(p, **kw)
        assert rel.plan.startswith("tiers (1 aggregate pass)")
        same_release(rel, gen)


def test_the_hint_reads_the_value_columns_statistics(tmp_path):
    df = _frame(500)
    df["txt"] = df["v"].astype(str)
    cases = [
        (_parquet(tmp_path, df), "v", (0.0, 100.0), True),
        (_parquet(tmp_path, df), "v", (0.0, 50.0), False),
        (_parquet(tmp_path, df), "v", (1.0, 100.0), float(df["v"].min()) >= 1.0),
        (_parquet(tmp_path, df), "txt", (0.0, 100.0), False),  # text: no numeric statistics
        (_parquet(tmp_path, df, "n.parquet", write_statistics=False), "v", (0.0, 100.0), False),
        (df, "v", (0.0, 100.0), False),  # a DataFrame: no statistics
    ]
    for source, col, (lo, hi), want in cases:
        src, v, e = open_source(source, col, "e", "duckdb", {})
        try:
            src.cols = (v, e)
            assert src.values_inside(lo, hi) is want, (col, lo, hi)
        finally:
            src.close()


def test_the_ledger_check_takes_the_pass_without_a_case_and_equals_the_unfused_release(
    tmp_path, monkeypatch
):
    p = _parquet(tmp_path, _frame(2000))
    kw = {"value": "v", "eps": "e", "lo": 0.0, "hi": 100.0, "spend": "1/3"}
    sqls: list[str] = []
    real = DuckSource._run
    monkeypatch.setattr(
        DuckSource, "_run", lambda s, sql, how="all": sqls.append(sql) or real(s, sql, how)
    )
    fused = release_mean(p, **kw, ledger=PrivacyLedger(tmp_path / "a.duckdb"))
    assert "shared with the ledger's check" in fused.plan
    passes = [s for s in sqls if "GROUP BY k" in s]
    assert len(passes) == 1 and "count_if(y" in passes[0] and "CASE WHEN v >=" not in passes[0]
    real_pre = R.precheck
    monkeypatch.setattr(R, "precheck", lambda *a: real_pre(*a[:6]))
    plain = release_mean(p, **kw, ledger=PrivacyLedger(tmp_path / "b.duckdb"))
    assert "+ 1 ledger check pass" in plain.plan
    same_release(fused, plain)


@pytest.mark.slow
def test_duckdb_and_spark_agree_on_values_at_ties(tmp_path, spark):
    """Values exactly between two grid points: DuckDB's fast plan (a DataFrame: the CASE
    pass; a Parquet file: the pass without a CASE) releases what Spark releases (marked slow:
    a local Spark session)."""
    df = _ties(600)
    kw = {"value": "v", "eps": "e", "lo": 0.0, "hi": float(Q)}
    sp = release_mean(spark.createDataFrame(df), **kw, engine="spark")
    for src in (df, _parquet(tmp_path, df)):
        duck = release_mean(src, **kw)
        assert duck.plan.startswith("tiers (1 aggregate pass)")
        same_release(duck, sp)


@pytest.mark.parametrize("factor", [1.0, 0.75])
def test_the_first_rows_levels_are_the_level_samples(tmp_path, factor):
    """level_counts (one grouped query, the tiers plan's sample) gives the distinct levels
    and rows of level_sample (the first rows fetched), at the run levels; at a spend below 1
    the asked levels kept for the tiers pass are the same, and two asked levels that run at
    one level are one entry. A missing or NaN level is NaN (the plan then takes the general
    plan), more than MAX_TIERS levels are cut at MAX_TIERS + 1."""
    u = 1.5 + 2 * 2.0**-52
    w = math.nextafter(u, 9.0)
    assert u * 0.75 == w * 0.75
    rng = np.random.default_rng(2)
    tables = [
        rng.choice([0.1, 0.5, 0.0, math.inf, u, w], 900),
        np.append(rng.choice([0.1, 0.5], 900), [math.nan, -1.0]),
        np.linspace(0.1, 3, 60),
    ]
    for e in tables:
        df = pd.DataFrame({"v": rng.uniform(0, 1, e.size), "e": e})
        src, v, col = open_source(_parquet(tmp_path, df), "v", "e", "duckdb", {})
        try:
            src.level_factor = factor
            src._prepare(v, col, 0.0, 1.0)
            got = src.level_counts()
            kept = src.sample0
            x = src.level_sample()
            if len(got) > 32:
                assert len(got) == 33
                continue
            d, c = np.unique(x[~np.isnan(x)], return_counts=True)
            want = dict(zip(d.tolist(), c.tolist(), strict=True))
            assert {k: n for k, n in got if not math.isnan(k)} == want
            assert sum(n for k, n in got if math.isnan(k)) == int(np.isnan(x).sum())
            if factor != 1.0:
                np.testing.assert_array_equal(kept, src.sample0)
        finally:
            src.close()


def test_release_means_rounds_ties_as_release_mean():
    """release_means on DuckDB (its grouped pass: hdp_release/engines/grouped.py) gives each
    segment release_mean's answer on its rows, also on values exactly between two grid
    points (the same rounding, half away from zero)."""
    from hdp_release import release_means

    df = _ties(1500)
    df["s"] = np.random.default_rng(4).choice([1, 2], len(df))
    kw = {"value": "v", "eps": "e", "lo": 0.0, "hi": float(Q)}
    got = release_means(df, by="s", **kw).to_frame().set_index("s")["estimate"]
    for seg in (1, 2):
        one = release_mean(df[df["s"] == seg].reset_index(drop=True), **kw)
        assert got[seg] == one.estimate, seg


def test_integer_and_decimal_value_columns_take_the_pass_without_a_case(tmp_path, monkeypatch):
    """Statistics of integer and decimal columns steer the pass too; the release equals the
    general plan's bit for bit."""
    import decimal

    rng = np.random.default_rng(8)
    n = 1200
    e = rng.choice(LEVELS, n)
    ints = rng.integers(0, 101, n)
    decs = [decimal.Decimal(int(x)) / 4 for x in ints]
    kw = {"value": "v", "eps": "e", "lo": 0.0, "hi": 100.0}
    for col in (pa.array(ints, pa.int32()), pa.array(decs, pa.decimal128(9, 2))):
        p = str(tmp_path / f"{col.type}.parquet".replace("(", "").replace(")", ""))
        pq.write_table(pa.table({"v": col, "e": pa.array(e)}), p)
        src, v, c = open_source(p, "v", "e", "duckdb", {})
        try:
            src.cols = (v, c)
            assert src.values_inside(0.0, 100.0) and not src.values_inside(0.0, 20.0)
        finally:
            src.close()
        same_release(release_mean(p, **kw), _general(monkeypatch, p, **kw))
