"""DuckDB's fast tiers pass only when every level is alone in its level bin (found by helper
attack11, session 11). The tiers pass gives one bin per level; the general plan (and Spark,
and release_means) bins levels by floor(ln(eps) 64), and two levels within a factor
e^(1/64) of each other can share a bin, which the general plan walks as level bins. Before,
such a table (tiers 0.3 and 0.3000000001, or 1.0 and 1.01) got the tiers plan from the fast
pass and other numbers (noise scale, tau*, interval, receipt rows) than the general plan,
Spark and each segment of release_means. Oracle: the general plan's release (no fast pass)
and the bins computed here with Python's log."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers import NoNoise, same_release

import hdp_release.finish
from hdp_release import release as R
from hdp_release import release_mean
from hdp_release.grouped import release_means
from hdp_release.ledger.store import PrivacyLedger


def _general(monkeypatch, *a, **kw):
    with monkeypatch.context() as m:
        m.setattr(R, "fast_histogram", lambda *x, **k: (None, 0, ""))
        return release_mean(*a, **kw)


@pytest.mark.parametrize(
    ("levels", "shared"),
    [
        ([0.3, 0.3000000001, 1.7, math.inf, 0.0], True),
        ([1.0, 1.01, 2.5], True),
        ([0.99, 1.0, 3.0], False),  # a factor 1.0101 apart, but in bins -1 and 0
    ],
)
def test_levels_in_one_bin_get_the_general_plans_release(tmp_path, monkeypatch, levels, shared):
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    pos = [x for x in levels if 0 < x < math.inf]
    assert (len({math.floor(math.log(x) * 64) for x in pos}) < len(pos)) is shared
    rng = np.random.default_rng(4)
    n = 600
    df = pd.DataFrame({"v": rng.uniform(0, 100, n), "e": rng.choice(levels, n), "g": 0})
    kw = {"value": "v", "eps": "e", "lo": 0.0, "hi": 100.0}
    gen = _general(monkeypatch, df, **kw)
    assert gen.plan.startswith("level bins" if shared else "tiers")
    fast = release_mean(df, **kw)
    assert fast.plan.startswith("level bins" if shared else "tiers")
    same_release(fast, gen)
    seg = release_means(df, by="g", **kw, ledger=False).releases[0]
    for f in ("estimate", "ci95", "noise_scale", "saturation_level"):
        assert getattr(seg, f) == getattr(gen, f), f
    # the ledger's check (its tiers pass, fused) and a spend below 1
    kw3 = {**kw, "spend": "1/3"}
    fused = release_mean(df, **kw3, ledger=PrivacyLedger(tmp_path / "a.duckdb"))
    plain = _general(monkeypatch, df, **kw3, ledger=PrivacyLedger(tmp_path / "b.duckdb"))
    for f in ("estimate", "ci95", "noise_scale", "saturation_level"):
        assert getattr(fused, f) == getattr(plain, f), f
    pd.testing.assert_frame_equal(fused.tiers, plain.tiers)
