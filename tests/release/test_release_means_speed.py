"""release_means' fast paths (issue 28 Performance) give exactly the general paths' answers.

Oracles: the general grouped pass (forced by allowing no tiers) and release_mean's general
plan on each segment's rows (same weights, noise scale and receipt, exactly, with the noise
switched off); Python's own integers and float(int) for the 42-bit parts of exact sums."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers import NoNoise, same_release

import hdp_release.engines.grouped as eg
import hdp_release.engines.segment_bins as sb
import hdp_release.finish
import hdp_release.grouped_bins
import hdp_release.plan
import hdp_release.release
from hdp_core.errors import BadCellError
from hdp_release import release_mean, release_means

LO, HI = 0.0, 100.0


@pytest.fixture
def no_noise(monkeypatch):
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    monkeypatch.setattr(hdp_release.release, "fast_histogram", lambda *a, **k: (None, 0, ""))


def _each_equals_release_mean(g, df, by, target="population"):
    for k, r in zip(g.keys, g.releases, strict=True):
        part = df[df[by] == k[0]].reset_index(drop=True)
        same_release(r, release_mean(part, value="v", eps="e", lo=LO, hi=HI, target=target))


def _tiers(n: int, seed: int, levels=(0.05, 0.2, 1.0, 3.0, math.inf, 0.0)) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "v": rng.uniform(-20, 120, n),
            "e": rng.choice(list(levels), n),
            "seg": rng.choice(["a", "b", "c", "Zürich"], n),
        }
    )


@pytest.mark.parametrize("target", ["population", "table"])
def test_tiers_pass_equals_the_general_pass(no_noise, monkeypatch, target):
    df = _tiers(2000, 1)
    fast = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI, target=target)
    monkeypatch.setattr(eg, "MAX_TIERS", 0)  # no tiers pass: the general grouped pass
    slow = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI, target=target)
    assert fast.keys == slow.keys
    for a, b in zip(fast.releases, slow.releases, strict=True):
        same_release(a, b)


def test_tiers_pass_falls_back_on_levels_outside_the_sample(no_noise, monkeypatch):
    """A level that the sample did not see (here after its first 50 rows), and two levels in
    one level bin (1.0 and 1.005: the level-bins plan's case): the general pass runs, and
    every segment is release_mean's general plan on its rows."""
    monkeypatch.setattr(eg, "SAMPLE_MAX", 50)
    df = _tiers(1500, 2)
    df.loc[df.index[1000:], "e"] = 0.7  # not among the first 50 rows' levels
    g = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI)
    _each_equals_release_mean(g, df, "seg")
    close = _tiers(1500, 3, levels=(0.1, 1.0, 1.005, math.inf))
    g = release_means(close, value="v", eps="e", by="seg", lo=LO, hi=HI)
    assert all("level bins" in r.plan for r in g.releases)
    _each_equals_release_mean(g, close, "seg")


def test_refined_bins_equal_release_mean(no_noise, monkeypatch):
    """A bin with more users than a fetch takes is refined on its segment's rows first (made
    rare here by a limit of 3 users per fetch, on both sides)."""
    monkeypatch.setattr(hdp_release.grouped_bins, "FETCH_USERS", 3)
    monkeypatch.setattr(hdp_release.plan, "FETCH_USERS", 3)
    rng = np.random.default_rng(5)
    n = 6000
    df = pd.DataFrame(
        {
            "v": rng.uniform(0, 100, n),
            "e": np.round(rng.exponential(1, n), 4),
            "seg": rng.choice(["x", "y", "z"], n),
        }
    )
    g = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI)
    assert any("fetch or refine" in r.plan for r in g.releases)
    _each_equals_release_mean(g, df, "seg")


@pytest.mark.parametrize("kind", ["tiers", "per-user"])
def test_a_bad_value_is_refused_with_its_row_on_either_pass(no_noise, kind):
    df = _tiers(300, 4)
    if kind == "per-user":
        df["e"] = np.round(np.random.default_rng(4).exponential(1, 300), 4) + 0.01
    df.loc[41, "v"] = math.nan
    with pytest.raises(BadCellError) as ei:
        release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI)
    assert ei.value.row == 42 and ei.value.column == "v"


def test_integer_parts_are_exact():
    rng = np.random.default_rng(0)
    xs = [0, 1, (1 << 42) - 1, 1 << 42, (1 << 84) + 7, (1 << 125) + 12345]
    xs += [int(a) * int(b) for a, b in zip(rng.integers(0, 2**62, 40), rng.integers(0, 2**31, 40))]
    p = sb.to_parts(xs)
    assert sb.parts_ints(p) == xs
    assert sb.parts_int(p) == sum(xs)
    assert sb.parts_float(p).tolist() == [float(x) for x in xs]


class _Counting:
    """OpenDP's real measurement (its map), counted: builds, map calls, noise draws; its
    noise switched off (returns its input), or its map made to exceed every level."""

    built = maps = draws = 0
    inflate = 1.0

    def __init__(self, scale):
        from hdp_release.noise import measurement

        type(self).built += 1
        self.real = measurement(scale)

    def map(self, d):
        type(self).maps += 1
        return self.real.map(d) * type(self).inflate

    def __call__(self, x):
        type(self).draws += 1
        return x


def _same_profile_segments(k: int, per_user: bool = False) -> pd.DataFrame:
    """k segments with the same users and levels (so the same noise scale and receipt), and
    one of its own; ``per_user``: two levels in one level bin (the level-bins plan)."""
    near = 1.0003 if per_user else 1.0  # ln(1.0003) x 64 < 1: the bin of 1.0
    rows = []
    for s in range(k):
        rows += [(10.0 + s, 1.0, f"s{s:02d}"), (90.0 - s, math.inf, f"s{s:02d}")]
        rows += [(50.0, 0.25, f"s{s:02d}"), (60.0, near, f"s{s:02d}")]
    rows += [(30.0, 0.5, "other"), (70.0, 2.0, "other"), (20.0, 2.0, "other")]
    return pd.DataFrame(rows, columns=["v", "e", "seg"])


def _counted(df: pd.DataFrame) -> tuple:
    _Counting.built = _Counting.maps = _Counting.draws = 0
    g = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI)
    return g, (_Counting.built, _Counting.maps, _Counting.draws)


@pytest.mark.parametrize("per_user", [False, True])
def test_segments_of_one_scale_share_opendp_but_each_draws_its_noise(monkeypatch, per_user):
    """Segments with the same profile share OpenDP's measurement and its map results: the
    builds and map calls of 12 alike segments and another are those of one alike segment
    and the other; every segment draws its own noise and is release_mean's answer on its
    rows (receipt included)."""
    monkeypatch.setattr(hdp_release.release, "fast_histogram", lambda *a, **k: (None, 0, ""))
    monkeypatch.setattr(hdp_release.finish, "measurement", _Counting)
    df = _same_profile_segments(12, per_user)
    g, (built, maps, draws) = _counted(df)
    assert len(g) == 13 and draws == 13 and g.keys[0] == ("other",)  # one noise per segment
    kind = "level bins" if per_user else "tiers"
    assert all(kind in r.plan for r in g.releases[1:]), [r.plan for r in g.releases]
    _, (b1, m1, _) = _counted(df[df.seg.isin(["s00"])])
    _, (b2, m2, _) = _counted(df[df.seg.isin(["other"])])
    assert (built, maps) == (b1 + b2, m1 + m2) and m1 >= 2
    for (k,), r in zip(g.keys, g.releases, strict=True):
        part = df[df.seg == k].reset_index(drop=True)
        same_release(r, release_mean(part, value="v", eps="e", lo=LO, hi=HI))


def test_a_shared_privacy_map_still_refuses(monkeypatch):
    """OpenDP's map made to give more than the level: the release of many alike segments is
    refused (fail closed) before any noise is drawn."""
    from hdp_core.errors import ReleaseError

    monkeypatch.setattr(hdp_release.finish, "measurement", _Counting)
    monkeypatch.setattr(_Counting, "inflate", 1.5)
    _Counting.draws = 0
    with pytest.raises(ReleaseError, match="privacy check failed"):
        release_means(_same_profile_segments(6), value="v", eps="e", by="seg", lo=LO, hi=HI)
    assert _Counting.draws == 0


@pytest.mark.parametrize("cell", [None, math.nan, -1.0])
def test_tiers_pass_falls_back_on_a_bad_level_after_the_sample(no_noise, monkeypatch, cell):
    """A missing, NaN or negative level that the sample did not see is none of the tiers
    pass's levels: the general pass runs and refuses it, naming its row and column."""
    monkeypatch.setattr(eg, "SAMPLE_MAX", 50)
    df = _tiers(600, 6, levels=(0.5, 2.0, math.inf, 0.0)).astype({"e": object})
    df.loc[400, "e"] = cell
    with pytest.raises(BadCellError) as ei:
        release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI)
    assert ei.value.row == 401 and ei.value.column == "e"


def test_tiers_pass_reads_minus_zero_as_zero(no_noise):
    """-0.0 is the level 0 (excluded) on the tiers pass, as on the general pass."""
    df = _tiers(400, 7, levels=(0.5, 2.0, -0.0, math.inf))
    g = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI)
    assert sum(r.n_excluded for r in g.releases) == int((df.e == 0).sum()) > 0
    _each_equals_release_mean(g, df, "seg")
