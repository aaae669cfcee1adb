"""Edges of the bracket pass with the level's high part in the key (issue 29,
hdp_release.engines.duckdb_bracket), probed by attack12: levels on multiples of 2^-11 with
some at exactly 1 (the bracket's top), values exactly at lo and hi and -0.0 with lo != 0 (the
pass without the CASE), a glob of three files and a CSV (the pass with it), bad levels past the
level sample (NaN, +huge, below the smallest level, NULL: found by the pass itself). Oracle:
the same release made with main's general bracket pass (QH_LEVEL below every level), equal
bit for bit (estimate, tau*, scale, interval, receipt) or refused naming the same row,
column and reason; and the split pass did run."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import NoNoise

import hdp_release.engines.duckdb_fast as F
import hdp_release.engines.duckdb_source as E
import hdp_release.finish
from hdp_core.errors import ReleaseError
from hdp_release import release_mean

LO, HI = -3.0, 5.0
N = 2000


def _frame(case: str) -> pd.DataFrame:
    rng = np.random.default_rng(21)
    e = rng.integers(1, 2048, N) / 2048.0  # multiples of 2^-11 below 1
    e[:40] = 1.0
    e[40:60] = math.inf
    e[60:80] = 0.0
    v = rng.uniform(LO, HI, N)
    v[:30], v[30:60], v[60:90] = LO, HI, -0.0
    df = pd.DataFrame({"v": v, "e": e})
    bad = {"nan": math.nan, "huge": 1e300, "small": 2e-7, "null": None}.get(case)
    if case in ("nan", "huge", "small", "null"):
        df.loc[1777, "e"] = bad
    return df


def _write(df: pd.DataFrame, kind: str, tmp_path) -> str:
    if kind == "csv":
        path = tmp_path / "t.csv"
        df.to_csv(path, index=False, float_format="%.17g")
        return str(path)
    if kind == "glob":
        for i, part in enumerate(np.array_split(np.arange(len(df)), 3)):
            p = df.iloc[part]
            pq.write_table(
                pa.table({c: pa.array(p[c].to_numpy()) for c in p}), tmp_path / f"p{i}.parquet"
            )
        return str(tmp_path / "*.parquet")
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({c: pa.array(df[c].to_numpy(), from_pandas=True) for c in df}), path)
    return str(path)


def _outcome(src: str, spend: float):
    try:
        r = release_mean(src, value="v", eps="e", lo=LO, hi=HI, spend=spend)
    except ReleaseError as ex:
        return ("refused", ex.row, ex.column, ex.reason)
    return ("ok", r.plan, r.estimate, r.saturation_level, r.noise_scale, r.ci95, r.tiers)


@pytest.mark.parametrize(
    ("case", "kind", "spend", "passes"),
    [
        ("good", "parquet", 1.0, "inside"),
        ("good", "glob", 0.3, "inside"),
        ("good", "csv", 1.0, "case"),
        ("nan", "parquet", 1.0, "inside"),
        ("huge", "parquet", 1.0, "inside"),
        ("small", "glob", 1.0, "inside"),
        ("null", "parquet", 1.0, "inside"),
    ],
)
def test_the_split_pass_equals_main_s_pass_at_its_edges(
    tmp_path, monkeypatch, case, kind, spend, passes
):
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    monkeypatch.setattr(E, "SAMPLE_MAX", 500)  # the bad level is past the level sample
    src = _write(_frame(case), kind, tmp_path)
    ran: list[str] = []
    real = E.DuckSource._run

    def spy(self, sql, how="all"):
        if "sum(ql * ql)" in sql:
            ran.append("inside" if "TRY_CAST" in sql else "case")
        return real(self, sql, how)

    monkeypatch.setattr(E.DuckSource, "_run", spy)
    new = _outcome(src, spend)
    assert ran and ran[0] == passes, ran
    monkeypatch.setattr(F, "QH_LEVEL", -1.0)
    old = _outcome(src, spend)
    assert new[0] == ("refused" if case != "good" else "ok")
    if new[0] == "refused":
        assert new == old and new[1:3] == (1778, "e")
        return
    assert new[:6] == old[:6] and new[1].startswith("level bins")
    pd.testing.assert_frame_equal(new[6], old[6])
