"""release_means (issue 28): a private mean per segment.

Oracles: release_mean run on each segment's own rows (the same weights, noise scale and
receipt, exactly); the privacy loss probed by changing one person's value with the noise
switched off (the pre-noise value's change over the noise scale, against the person's run
level); the exact Laplace coverage of each segment's interval averaged over simulated tables;
keys given against keys present; the segment limit; hostile segment cells."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers import NoNoise, same_release

import hdp_release.finish
import hdp_release.release
from hdp_core.errors import BadCellError, BudgetExceeded, ReleaseError
from hdp_release import release_mean, release_means
from hdp_release.engines.grouped import MAX_SEGMENTS

INF = math.inf
LO, HI = 0.0, 100.0


@pytest.fixture
def no_noise(monkeypatch):
    NoNoise.calls = 0
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)


@pytest.fixture
def general_plan(monkeypatch):
    """release_mean on its general plan (the per-bin sums release_means uses)."""
    monkeypatch.setattr(hdp_release.release, "fast_histogram", lambda *a, **k: (None, 0, ""))


def tiers_frame(n=3000, seed=1, segs=("north", "south", "east", "Zürich ✓", "x'; DROP")):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "v": rng.uniform(-20, 120, n),
            "e": rng.choice([0.05, 0.2, 1.0, 3.0, INF, 0.0], n, p=[0.3, 0.3, 0.2, 0.1, 0.05, 0.05]),
            "seg": rng.choice(list(segs), n),
            "plan": rng.choice(["free", "pro"], n),
        }
    )


@pytest.mark.parametrize("target", ["population", "table"])
def test_each_segment_equals_release_mean_on_its_rows_tiers(no_noise, target):
    df = tiers_frame()
    g = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI, target=target)
    assert len(g) == 5 and all(g.present)
    for (k,), r in zip(g.keys, g.releases, strict=True):
        one = release_mean(
            df[df.seg == k].reset_index(drop=True), value="v", eps="e", lo=LO, hi=HI, target=target
        )
        same_release(r, one)


def test_two_segment_columns_equal_release_mean(no_noise):
    df = tiers_frame(n=2000, seed=4)
    g = release_means(df, value="v", eps="e", by=["seg", "plan"], lo=LO, hi=HI, data_sd=20)
    assert len(g) == 10
    for (s, p), r in zip(g.keys, g.releases, strict=True):
        part = df[(df.seg == s) & (df.plan == p)].reset_index(drop=True)
        same_release(r, release_mean(part, value="v", eps="e", lo=LO, hi=HI, data_sd=20))


@pytest.mark.parametrize("target", ["population", "table"])
@pytest.mark.slow
def test_per_user_levels_equal_release_mean(no_noise, general_plan, target):
    """Per-user continuous levels (the level-bins plan, second passes for some segments):
    exactly release_mean's general plan on each segment's rows."""
    rng = np.random.default_rng(3)
    n = 20_000
    df = pd.DataFrame(
        {
            "v": rng.uniform(0, 100, n),
            "e": np.round(rng.exponential(1, n), 5),
            "seg": rng.choice(list("abcdef"), n),
        }
    )
    g = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI, target=target)
    if target == "population":
        # some segments needed a second pass: all of theirs made by one batched query
        assert "+ 1 pass for segments whose tau*" in g.plan, g.plan
    for (k,), r in zip(g.keys, g.releases, strict=True):
        part = df[df.seg == k].reset_index(drop=True)
        same_release(r, release_mean(part, value="v", eps="e", lo=LO, hi=HI, target=target))


@pytest.mark.slow
def test_no_person_loses_more_than_their_run_level(no_noise):
    """Change one person's value from lo to hi: only their segment's pre-noise value moves,
    and by at most (run level) x (noise scale); every other segment's is unchanged."""
    df = tiers_frame(n=240, seed=7, segs=("a", "b", "c", "tiny"))
    df.loc[df.index[:3], "seg"] = "single"  # a segment of 3 users
    spend = 0.5
    base = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI, spend=spend)
    rng = np.random.default_rng(0)
    people = [*rng.choice(len(df), 24, replace=False), 0, 1, 2]
    worst = 0.0
    for i in people:
        for x in (LO, HI):
            d2 = df.copy()
            d2.loc[i, "v"] = x
            g = release_means(d2, value="v", eps="e", by="seg", lo=LO, hi=HI, spend=spend)
            for k, a, b in zip(g.keys, base.releases, g.releases, strict=True):
                if k[0] != df.seg[i]:
                    assert a.estimate == b.estimate
                    continue
                if a.noise_scale == 0:  # all public or mid-range: nothing to protect
                    assert df.e[i] in (0.0, INF) or a.outputs_midrange
                    continue
                loss = abs(b.estimate - a.estimate) / a.noise_scale
                assert loss <= spend * df.e[i] * (1 + 1e-9), (i, loss)
                worst = max(worst, loss / (spend * df.e[i]) if df.e[i] < INF else 0)
    assert worst > 0.5  # the probe reaches losses close to the level (not vacuous)


def _cover(d: float, h: float, b: float) -> float:
    """P(|d + L| <= h) for L ~ Laplace(b), exactly."""

    def cdf(t):
        if b == 0:
            return float(t >= 0)
        return 1 - 0.5 * math.exp(-t / b) if t >= 0 else 0.5 * math.exp(t / b)

    return cdf(h - d) - cdf(-h - d)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["population", "table"])
def test_every_segment_interval_covers(no_noise, target):
    """Coverage of every segment's interval, averaged over simulated tables (exact Laplace
    coverage per table): segments of 1 to 5 users, an all-public segment, a mixed one, and
    (table target) levels that depend on the value."""
    rng = np.random.default_rng(11)
    sizes = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "public": 6, "mixed": 60}
    trials = 120
    cover = {k: [] for k in sizes}
    for _ in range(trials):
        parts = []
        for k, n in sizes.items():
            v = np.where(rng.random(n) < 0.5, 0.0, 100.0)  # two-point: the worst spread
            if k == "public":
                e = np.full(n, INF)
            elif target == "table":  # strict users hold the high values
                e = np.where(v > 50, 0.05, 5.0)
            else:
                e = rng.choice([0.05, 0.5, 5.0, INF], n)
            parts.append(pd.DataFrame({"v": v, "e": e, "seg": k}))
        df = pd.concat(parts, ignore_index=True)
        g = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI, target=target)
        for (k,), r in zip(g.keys, g.releases, strict=True):
            truth = 50.0 if target == "population" else float(df.v[df.seg == k].mean())
            # the interval is estimate +- h clipped to the range, and the target lies in the
            # range: it covers exactly when |estimate - target| <= h
            cover[k].append(_cover(r.estimate - truth, r.half_width95, r.noise_scale))
    for k, cs in cover.items():
        assert float(np.mean(cs)) >= 0.95, (k, float(np.mean(cs)))


def test_keys_given_and_present(no_noise):
    df = tiers_frame(n=500, seed=2, segs=("a", "b", "c"))
    g = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI, keys=["c", "zz", "a"])
    assert [k[0] for k in g.keys] == ["c", "zz", "a"]
    assert g.present == (True, False, True)
    absent = g.releases[1]
    assert absent.ci95 == (LO, HI) and absent.n_users == 0 and absent.outputs_midrange
    assert absent.estimate == 50.0
    assert g.n_left_out == 1 and g.users_left_out == int((df.seg == "b").sum())
    full = release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI)
    assert [k[0] for k in full.keys] == ["a", "b", "c"] and full.n_left_out == 0
    same_release(g.releases[0], full.releases[2])
    f = g.to_frame()
    assert list(f["present"]) == [True, False, True] and list(f["seg"]) == ["c", "zz", "a"]
    with pytest.raises(ReleaseError, match="repeats"):
        release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI, keys=["a", "a"])
    with pytest.raises(ReleaseError, match="one per"):
        release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI, keys=[("a", "x")])


def test_keys_match_as_text_on_a_number_column(no_noise):
    df = pd.DataFrame({"v": [10.0, 20, 30, 40], "e": [1.0] * 4, "region": [1, 1, 2, 2]})
    g = release_means(df, value="v", eps="e", by="region", lo=LO, hi=HI, keys=["2", 3])
    assert g.present == (True, False)
    assert g.releases[0].n_users == 2


def _many(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "v": np.tile([10.0, 90.0], n),
            "e": np.tile([1.0, INF], n),
            "s": np.repeat(np.arange(n), 2),
        }
    )


@pytest.mark.slow
def test_ten_thousand_segments(no_noise):
    """The limit itself is released (about 3 ms a segment: OpenDP's sampler, its map and the
    receipt per segment; see benchmarks/bench_release_means.py)."""
    g = release_means(_many(MAX_SEGMENTS), value="v", eps="e", by="s", lo=LO, hi=HI)
    assert len(g) == MAX_SEGMENTS and all(r.n_users == 2 for r in g.releases)
    one = release_mean(_many(1), value="v", eps="e", lo=LO, hi=HI)  # tau* = 9: weights 0.1, 0.9
    assert all(r.estimate == one.estimate for r in g.releases)


def test_one_segment_more_than_the_limit_refused_before_the_values(no_noise):
    df = _many(MAX_SEGMENTS)
    bad = pd.concat(
        [df, pd.DataFrame({"v": [float("nan")], "e": [1.0], "s": [MAX_SEGMENTS]})],
        ignore_index=True,
    )
    with pytest.raises(ReleaseError, match="more than 10,000 segments"):
        release_means(bad, value="v", eps="e", by="s", lo=LO, hi=HI)  # before the bad value
    assert NoNoise.calls == 0


HOSTILE = ["=cmd|' /C calc'!A0", "naïve ☃ 𝔘", "a\nb", "", " ", "'; DROP TABLE t; --", "x" * 500]


def test_hostile_segment_values_are_segments_and_never_in_messages(no_noise):
    rng = np.random.default_rng(5)
    n = 700
    df = pd.DataFrame(
        {"v": rng.uniform(0, 100, n), "e": rng.choice([0.5, 2.0], n), "s": rng.choice(HOSTILE, n)}
    )
    g = release_means(df, value="v", eps="e", by="s", lo=LO, hi=HI)
    assert sorted(k[0] for k in g.keys) == sorted(HOSTILE)
    for (k,), r in zip(g.keys, g.releases, strict=True):
        same_release(
            r, release_mean(df[df.s == k].reset_index(drop=True), value="v", eps="e", lo=LO, hi=HI)
        )
    # a bad value cell in such a table: the message names row and column, never a cell
    d2 = df.astype({"v": object})
    d2.loc[9, "v"] = "123-45-6789"
    with pytest.raises(ReleaseError) as ei:
        release_means(d2, value="v", eps="e", by="s", lo=LO, hi=HI)
    msg = str(ei.value)
    assert "row 10" in msg and "123-45" not in msg
    assert not any(h in msg for h in HOSTILE if len(h.strip()) > 1)


@pytest.mark.parametrize("cell", [None, float("nan")])
def test_missing_segment_key_refused_with_row_and_column(no_noise, cell):
    df = pd.DataFrame(
        {"v": [1.0, 2, 3, 4], "e": [1.0] * 4, "s": pd.Series([1.5, 2.5, 3.5, 4.5], dtype=object)}
    )
    df.loc[2, "s"] = cell
    if cell is not None:
        df["s"] = df["s"].astype(float)
    with pytest.raises(BadCellError) as ei:
        release_means(df, value="v", eps="e", by="s", lo=LO, hi=HI)
    assert ei.value.row == 3 and ei.value.column == "s"
    assert "refused" in str(ei.value)
    assert NoNoise.calls == 0


def test_text_null_key_refused(tmp_path, no_noise):
    p = tmp_path / "t.csv"
    p.write_text("v,e,region\n1,1,a\n2,1,\n3,1,b\n")
    with pytest.raises(BadCellError) as ei:
        release_means(str(p), value="v", eps="e", by="region", lo=LO, hi=HI)
    assert ei.value.row == 2 and ei.value.reason == "empty"


def test_column_checks(no_noise):
    df = tiers_frame(n=50)
    with pytest.raises(ReleaseError, match="no segment column 'Seg'"):
        release_means(df, value="v", eps="e", by="Seg", lo=LO, hi=HI)
    with pytest.raises(ReleaseError, match="is the value column"):
        release_means(df, value="v", eps="e", by="v", lo=LO, hi=HI)
    with pytest.raises(ReleaseError, match="same column twice"):
        release_means(df, value="v", eps="e", by=["seg", "seg"], lo=LO, hi=HI)
    with pytest.raises(ReleaseError, match="at most 4"):
        release_means(df, value="v", eps="e", by=["seg", "plan", "a", "b", "c"], lo=LO, hi=HI)
    with pytest.raises(ReleaseError, match="each person in a privacy ledger"):
        release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI, id="user")
    assert NoNoise.calls == 0


def test_segment_of_only_excluded_users(no_noise):
    df = pd.DataFrame({"v": [10.0, 20, 30, 40], "e": [0.0, 0.0, 1.0, 2.0], "s": list("aabb")})
    for target in ("population", "table"):
        g = release_means(df, value="v", eps="e", by="s", lo=LO, hi=HI, target=target)
        a = g.releases[0]
        assert a.ci95 == (LO, HI) and a.n_users == 0 and a.n_excluded == 2


@pytest.mark.slow
def test_dataset_ledger_charges_once(tmp_path, no_noise):
    from hdp_release import PrivacyLedger

    df = tiers_frame(n=300)
    led = PrivacyLedger(tmp_path / "l.duckdb")
    g = release_means(
        df, value="v", eps="e", by="seg", lo=LO, hi=HI, ledger=led, spend=0.5, dataset="d"
    )
    assert g.recorded is True and g.budget_remaining == 0.5
    hist = led.history()
    assert len(hist) == 1
    with pytest.raises(BudgetExceeded):
        release_means(df, value="v", eps="e", by="seg", lo=LO, hi=HI, ledger=led, spend=0.6)
    # the same data as one mean is the same dataset: half is left
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.5)
    assert rel.budget_remaining == 0.0


def test_outputs_text_frame_dict(no_noise):
    import json

    df = tiers_frame(n=400)
    g = release_means(df, value="v", eps="e", by=["seg", "plan"], lo=LO, hi=HI, target="table")
    t = g.text()
    assert "parallel composition" in t and "cap level" in t
    d = json.loads(json.dumps(g.to_dict(), allow_nan=False))
    assert len(d["segments"]) == len(g) and d["segments"][0]["receipt"]
    r = g.receipt()
    assert list(r.columns[:2]) == ["seg", "plan"] and r["users"].sum() == int((df.e > 0).sum())
    f = g.to_frame()
    assert (f["bias_bound"] > 0).all() and f["users"].sum() == int((df.e > 0).sum())


@pytest.mark.parametrize("engine", ["spark"])
def test_spark_gives_the_same_decisions(spark, no_noise, tmp_path, engine):
    rng = np.random.default_rng(8)
    n = 3000
    df = tiers_frame(n=n, seed=8)
    df["e2"] = np.round(rng.exponential(1, n), 4)
    p = tmp_path / "t.parquet"
    df.to_parquet(p)
    for eps, target in (("e", "population"), ("e", "table"), ("e2", "population")):
        a = release_means(
            str(p), value="v", eps=eps, by=["seg", "plan"], lo=LO, hi=HI, target=target
        )
        b = release_means(
            str(p),
            value="v",
            eps=eps,
            by=["seg", "plan"],
            lo=LO,
            hi=HI,
            target=target,
            engine=engine,
        )
        assert a.keys == b.keys
        for x, y in zip(a.releases, b.releases, strict=True):
            assert x.estimate == y.estimate and x.noise_scale == y.noise_scale
            pd.testing.assert_frame_equal(x.tiers, y.tiers)
    d2 = df.copy()
    d2.loc[4, "seg"] = None
    with pytest.raises(BadCellError) as ei:
        release_means(d2, value="v", eps="e", by="seg", lo=LO, hi=HI, engine=engine)
    assert ei.value.row == 5 and ei.value.column == "seg"


def test_batched_second_pass_with_hostile_and_number_keys(no_noise, general_plan):
    """Per-user levels on two segment columns (hostile text and integers): the batched
    fetch (keys as typed query parameters) gives each segment release_mean's answer."""
    rng = np.random.default_rng(9)
    n = 6000
    df = pd.DataFrame(
        {
            "v": rng.uniform(0, 100, n),
            "e": np.round(rng.exponential(1, n), 5),
            "s": rng.choice(HOSTILE[:4], n),
            "k": rng.integers(0, 3, n),
        }
    )
    g = release_means(df, value="v", eps="e", by=["s", "k"], lo=LO, hi=HI)
    assert "+ 1 pass for segments whose tau*" in g.plan
    for (s, k), r in zip(g.keys, g.releases, strict=True):
        part = df[(df.s == s) & (df.k == k)].reset_index(drop=True)
        same_release(r, release_mean(part, value="v", eps="e", lo=LO, hi=HI))
