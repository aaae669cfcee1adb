"""release_means per segment against release_mean on the segment's rows, with per-user levels
(the population target). release_means walks the general plan's level bins; release_mean on
DuckDB runs the fast plan's bracket pass, which groups the rows otherwise (1/8-decade classes
and 256 sub-bins instead of the ln bins). Its sums of q^2 were floats, so tau*, the noise
scale and the interval differed in their last bits; they are now exact integers and tau* is
rounded once, so both agree bit for bit (branch exactq2; README and release.py say so).

Oracle: release_mean itself, on the segment's rows (fast plan) and with the general plan
forced; no noise (OpenDP's map kept)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from helpers import NoNoise

import hdp_release.finish
from hdp_release import release as R
from hdp_release.grouped import release_means
from hdp_release.release import release_mean

KW = {"value": "v", "eps": "e", "lo": 0.0, "hi": 100.0, "ledger": False}
FIELDS = ("estimate", "ci95", "half_width95", "noise_scale", "saturation_level")


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 2000
    return pd.DataFrame(
        {"v": rng.uniform(-5, 105, n), "e": rng.uniform(0.05, 3, n), "g": rng.choice([0, 1], n)}
    )


def test_a_segment_equals_release_mean_with_the_general_plan(monkeypatch):
    """What holds today: the segment's release is the general plan's, bit for bit."""
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    df = _frame()
    seg = release_means(df, by="g", **KW).releases[0]
    monkeypatch.setattr(R, "fast_histogram", lambda *a, **k: (None, 0, ""))
    gen = release_mean(df[df["g"] == 0].reset_index(drop=True), **KW)
    for f in FIELDS:
        assert getattr(seg, f) == getattr(gen, f), f


def test_a_segment_equals_release_mean_bit_for_bit(monkeypatch):
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    df = _frame()
    seg = release_means(df, by="g", **KW).releases[0]
    one = release_mean(df[df["g"] == 0].reset_index(drop=True), **KW)
    assert "level bins (1 aggregate pass)" in one.plan  # the fast bracket pass answered
    for f in FIELDS:
        assert getattr(seg, f) == getattr(one, f), f
