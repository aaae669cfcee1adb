"""release_means' general grouped pass (per-user levels) on DuckDB: keys of every kind and
exact 128-bit sums (issue 28's speed: keys fetched with the sums in one query, sum(q y) as two
BIGINT products).

Oracles: release_mean on each segment's own rows on its general plan (its own per-bin sums,
one HUGEINT product per row; the same weights, noise scale and receipt, exactly, with the
noise switched off); Python's own integers for the key factorization."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from helpers import NoNoise, same_release

import hdp_release.engines.grouped as eg
import hdp_release.finish
import hdp_release.release
from hdp_release import release_mean, release_means

LO, HI = 0.0, 100.0


@pytest.fixture
def no_noise(monkeypatch):
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    monkeypatch.setattr(hdp_release.release, "fast_histogram", lambda *a, **k: (None, 0, ""))


def _frame(n: int, seed: int, keys: list, big: bool = False) -> pd.DataFrame:
    """Per-user levels (continuous, a few public and excluded users); ``big``: levels of
    1e5 to 1e6 (grid levels q near 2^62, so q y near 2^92) and values at the range's ends."""
    rng = np.random.default_rng(seed)
    if big:
        e = np.round(rng.uniform(1e5, 1e6, n), 3)
        v = rng.choice([LO, HI, 99.999, 50.0], n)
    else:
        e = np.round(rng.exponential(1.0, n), 4) + 0.01
        e[rng.random(n) < 0.05] = np.inf
        e[rng.random(n) < 0.03] = 0.0
        v = rng.uniform(-20, 120, n)
    idx = rng.integers(0, len(keys), n)
    return pd.DataFrame({"v": v, "e": e, "seg": pd.Series([keys[i] for i in idx])})


KEYS = {
    "integer": [3, -7, 2**40],
    "float": [0.5, -2.25, 1e300],
    "text": ["Zürich ✓", "x'; DROP", ""],
    "boolean": [True, False],
    "date": [dt.date(2024, 1, 2), dt.date(1999, 12, 31)],  # not a numpy key: the temp table
}


@pytest.mark.parametrize("kind", list(KEYS))
@pytest.mark.parametrize("big", [False, True])
def test_general_pass_keys_and_sums_equal_release_mean(no_noise, kind, big):
    df = _frame(400, 11, KEYS[kind], big)
    g = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI)
    assert len(g) == len(KEYS[kind])
    assert all("tiers" not in r.plan for r in g.releases)  # the general pass's plans
    for (k,), r in zip(g.keys, g.releases, strict=True):
        part = df[df.seg == k].reset_index(drop=True)
        same_release(r, release_mean(part, value="v", eps="e", lo=LO, hi=HI))


def test_two_key_columns_one_query_or_the_temp_table_alike(no_noise, monkeypatch):
    """Two segment columns (integer and text): the one-query pass and the temporary table's
    pass give the same segments, bins and answers."""
    rng = np.random.default_rng(12)
    df = _frame(600, 12, ["a", "b", "Zürich"])
    df["k"] = rng.integers(0, 3, len(df))
    by = ["seg", "k"]
    fast = release_means(df, value="v", eps="e", by=by, lo=LO, hi=HI)
    monkeypatch.setattr(eg, "NUMPY_KEY_TYPES", frozenset())
    slow = release_means(df, value="v", eps="e", by=by, lo=LO, hi=HI)
    assert fast.keys == slow.keys and len(fast) == 9
    for a, b in zip(fast.releases, slow.releases, strict=True):
        same_release(a, b)


def test_factorize_gives_python_keys_and_each_rows_segment():
    ints = np.array([5, 3, 5, 9, 3], dtype=np.int64)
    text = np.array(["b", "a", "b", "a", "a"], dtype=object)
    keys, sid = eg._factorize([ints, text])
    rows = list(zip(ints.tolist(), text.tolist(), strict=True))
    assert sorted(set(rows)) == sorted(keys) and len(keys) == len(set(rows))
    assert [keys[i] for i in sid.tolist()] == rows
    assert all(type(a) is int and type(b) is str for a, b in keys)
