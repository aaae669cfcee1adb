"""The dataset ledger's check as the tiers pass (issue 30) on every DuckDB source kind and at
the edges of the level sample: the fused release equals the unfused one (the check without
the release's range, then the release's own tiers pass) bit for bit, estimate, interval,
receipt and counts; -0.0 and 0.0 levels; a level or a bad value only after the sample (the
check's scan then keeps nothing and the general plan answers).

Oracle: the unfused order, as in tests/release/test_ledger_tiers_fused.py."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import NoNoise

import hdp_release.engines.duckdb_source as duck
import hdp_release.finish
from hdp_core.errors import BadCellError
from hdp_release import release as R
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean

FIELDS = ("estimate", "ci95", "half_width95", "noise_scale", "saturation_level", "n_users")


def _sources(df: pd.DataFrame, tmp_path) -> dict:
    csv = tmp_path / "t.csv"
    df.to_csv(csv, index=False)
    one = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), one, row_group_size=64)
    (tmp_path / "g").mkdir()
    h = len(df) // 2
    for name, part in (("a", df.iloc[:h]), ("b", df.iloc[h:])):
        table = pa.Table.from_pandas(part, preserve_index=False)
        pq.write_table(table, tmp_path / "g" / f"{name}.parquet")
    glob = str(tmp_path / "g" / "*.parquet")
    return {"df": df, "csv": str(csv), "parquet": str(one), "glob": glob}


def _both(src, kw: dict, tmp_path, monkeypatch, tag: str):
    led = PrivacyLedger(tmp_path / f"{tag}.duckdb")  # spend 1/3 each: both are granted
    fused = release_mean(src, **kw, ledger=led)
    real = R.precheck
    with monkeypatch.context() as m:
        m.setattr(R, "precheck", lambda *a: real(*a[:6]))
        plain = release_mean(src, **kw, ledger=led)
    return fused, plain


@pytest.fixture(autouse=True)
def _no_noise(monkeypatch):
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    monkeypatch.setattr(duck, "SAMPLE_MAX", 200)  # the level sample: the first 200 rows


CASES = [(k, late) for k in ("csv", "parquet", "glob") for late in (None, "level")] + [
    ("parquet", "zero"),
    ("df", "zero"),
]


@pytest.mark.parametrize(("kind", "late"), CASES)
def test_every_source_kind_gives_the_unfused_release(tmp_path, monkeypatch, kind, late):
    rng = np.random.default_rng(4)
    n = 600
    e = rng.choice([0.25, 0.5, -0.0, 0.0, math.inf, 2.0], n)
    if late == "level":
        e[450] = 0.75  # a level the sample never saw: no light check, the general plan
    elif late == "zero":
        e[:200] = rng.choice([0.25, 0.5, 2.0], 200)  # 0.0 and -0.0 only after the sample
    df = pd.DataFrame({"v": rng.uniform(-5, 105, n), "e": e})
    kw = {"value": "v", "eps": "e", "lo": 0.0, "hi": 100.0, "spend": "1/3"}
    fused, plain = _both(_sources(df, tmp_path)[kind], kw, tmp_path, monkeypatch, kind)
    shared = "shared with the ledger's check" in fused.plan
    assert shared is (late is None), fused.plan
    for f in FIELDS:
        assert getattr(fused, f) == getattr(plain, f), f
    pd.testing.assert_frame_equal(fused.tiers, plain.tiers)


def test_a_bad_value_after_the_sample_is_refused_before_charging(tmp_path, monkeypatch):
    rng = np.random.default_rng(6)
    v = rng.uniform(0, 1, 500)
    v[333] = math.inf
    df = pd.DataFrame({"v": v, "e": rng.choice([0.5, 1.0], 500)})
    for kind, src in _sources(df, tmp_path).items():  # every kind: a refusal is cheap
        led = PrivacyLedger(tmp_path / f"{kind}.duckdb")
        with pytest.raises(BadCellError) as info:
            release_mean(src, value="v", eps="e", lo=0.0, hi=1.0, ledger=led)
        assert (info.value.row, info.value.column) == (334, "v"), kind
        assert led.history() == []
