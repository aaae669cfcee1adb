"""hdp_release.release: the private mean release, its noise, its privacy check and its engines.

Oracles are independent of the code under test: numpy group-bys and weighted means on the
raw table, hdp.adpm on the per-user profile, a brute-force scan of the saturation index, the
Laplace law (scipy), and exact counts.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from helpers import weighted_mean_oracle
from scipy import stats

import hdp_core as hdp
import hdp_release
import hdp_release.cli
import hdp_release.engines.base
import hdp_release.finish
import hdp_release.plan
from hdp_core.errors import ReleaseError
from hdp_release import release as R
from hdp_release import release_mean
from hdp_release.engines.base import Q
from hdp_release.engines.open import aggregate

LO, HI = 0.0, 100.0


def _tiers_frame(n=400, seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "v": rng.uniform(-20, 120, n),  # some values outside [0, 100]: clamped
            "e": rng.choice(
                [0.05, 0.2, 1.0, 3.0, np.inf, 0.0], n, p=[0.3, 0.3, 0.2, 0.1, 0.05, 0.05]
            ),
        }
    )


def _cont_frame(n=20_000, seed=2):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"v": rng.beta(2, 3, n) * 100, "e": np.exp(rng.uniform(-5, 1, n))})


def _oracle(df, lo=LO, hi=HI, c=8.0):
    """Non-private weighted clamped mean and tau*, from numpy and the paper's recursion."""
    return weighted_mean_oracle(df, lo, hi, c)


class _NoNoise:
    """Wraps OpenDP's measurement: the real privacy map, but returns its input (so a test can
    read the exact value the noise is added to)."""

    def __init__(self, scale):
        self.real = _REAL_MEASUREMENT(scale)

    def map(self, d):
        return self.real.map(d)

    def __call__(self, x):
        return x


_REAL_MEASUREMENT = hdp_release.finish.measurement


@pytest.fixture
def no_noise(monkeypatch):
    monkeypatch.setattr(hdp_release.finish, "measurement", _NoNoise)


# ------------------------------------------------------------------------------ exactness
@pytest.mark.parametrize("make", [_tiers_frame, _cont_frame])
def test_weighted_sum_and_tau_match_oracle(make, no_noise):
    df = make()
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    mean, tau, _ = _oracle(df)
    assert rel.saturation_level == pytest.approx(tau, rel=1e-9)
    assert rel.estimate == pytest.approx(mean, abs=1e-7 * (HI - LO))
    assert rel.n_users == int((df["e"] > 0).sum())
    assert rel.n_excluded == int((df["e"] == 0).sum())
    # the receipt: every loss within the requested level; granted = min(eps, tau)
    t = rel.tiers
    assert (t["privacy_loss"] <= t["eps"]).all()
    assert (t["privacy_loss_max"] <= t["eps_max"]).all()
    assert t["users"].sum() == rel.n_users
    # the noise law is ADPM's: scale R / ||r||_1 up to the tiny documented inflation
    r = _oracle(df)[2]
    assert rel.noise_scale == pytest.approx((HI - LO) / r.sum(), rel=1e-6)
    assert rel.noise_scale >= (HI - LO) / r.sum() * (1 - 1e-9)


@pytest.mark.parametrize("make", [_tiers_frame, _cont_frame])
def test_every_users_loss_is_within_their_own_level(make):
    """Per user, from the oracle's weights and the release's public noise law: the Laplace
    loss (w_i R + 2 delta) / b is at most the level the user asked for, and a receipt row
    whose check covers the user (its smallest level <= eps_i <= its largest) exists."""
    df = make()
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    _, _, r = _oracle(df)
    e = df["e"].to_numpy(float)
    e = e[e > 0]
    loss = (r * (HI - LO) / r.sum() + 2 * rel.rounding_bound) / rel.noise_scale
    assert (loss <= e * (1 + 1e-12)).all()
    t = rel.tiers
    assert t["users"].sum() == e.size
    lo_l, hi_l = t["eps"].to_numpy(), t["eps_max"].to_numpy()
    covered = (e[:, None] >= lo_l[None, :]) & (e[:, None] <= hi_l[None, :])
    assert covered.any(axis=1).all()
    assert (t["privacy_loss"] <= t["eps"]).all()
    if make is _cont_frame:  # a receipt a person can read: rows of 1/8 decade, not bins
        assert len(t) <= 8 * math.log10(e.max() / e.min()) + 3


def test_continuous_plan_uses_at_most_two_passes_and_matches_core():
    df = _cont_frame()
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    # the bracket pass, plus one narrow pass when tau* falls inside a sub-bin of many levels
    assert rel.plan.startswith(("level bins (1 ", "level bins (2 "))
    assert rel.saturation_level == pytest.approx(
        hdp.adpm(df["e"].to_numpy()).saturation_level, rel=1e-9
    )


def test_tiers_plan_is_one_pass_and_uses_core_adpm():
    df = _tiers_frame()
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert rel.plan.startswith("tiers (1")
    lv, ct = np.unique(df["e"][df["e"] > 0], return_counts=True)
    sol = hdp.adpm(hdp.EpsilonProfile.from_tiers(lv, ct))
    assert rel.saturation_level == sol.saturation_level
    np.testing.assert_array_equal(rel.tiers["granted_eps"].to_numpy(), sol.r)


def test_out_of_range_values_are_clamped(no_noise):
    df = pd.DataFrame({"v": [1e9, -1e9, 50.0, 50.0], "e": [1.0, 1.0, 1.0, 1.0]})
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI, data_sd=50)
    assert rel.estimate == pytest.approx((100 + 0 + 50 + 50) / 4, abs=1e-6)


def test_all_public_is_the_plain_mean():
    df = pd.DataFrame({"v": [1.0, 2.0, 3.0, 200.0], "e": [np.inf] * 4})
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert rel.estimate == pytest.approx((1 + 2 + 3 + 100) / 4, abs=1e-6)
    assert rel.noise_scale == 0


def test_midrange_when_worst_case_passes_a_quarter():
    df = pd.DataFrame({"v": [90.0, 95.0], "e": [0.01, 0.02]})
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert rel.outputs_midrange and rel.estimate == 50.0
    assert (rel.tiers["privacy_loss"] == 0).all()


def test_data_sd_tunes_the_constant(no_noise):
    df = _cont_frame(3000, seed=5)
    # s = R/2 is the paper's ADPM exactly
    a = release_mean(df, value="v", eps="e", lo=LO, hi=HI, data_sd=50.0)
    b = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert a.saturation_level == pytest.approx(b.saturation_level, rel=1e-12)
    s = 10.0  # c = 2 / (s/R)^2 = 200
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI, data_sd=s)
    mean, tau, _ = _oracle(df, c=2.0 / (s / (HI - LO)) ** 2)
    assert rel.saturation_level == pytest.approx(tau, rel=1e-9)
    assert rel.estimate == pytest.approx(mean, abs=1e-7 * (HI - LO))


# ------------------------------------------------------------------------------ noise
@pytest.mark.slow
def test_noise_statistics_300_releases():
    """Errors against the non-private weighted clamped mean: mean 0 and variance 2 b^2, and
    Laplace(b) by a KS test. OpenDP's sampler cannot be seeded, so thresholds are set for a
    false-failure probability below 1e-6: |mean| < 5.5 SE, variance within 5.5 SE of its
    law's sd (sqrt(20/300) b^2 for Laplace), KS p-value > 1e-6."""
    df = _tiers_frame(60, seed=3)
    mean, _, _ = _oracle(df)
    rels = [release_mean(df, value="v", eps="e", lo=LO, hi=HI) for _ in range(300)]
    b = rels[0].noise_scale
    assert all(r.noise_scale == b for r in rels)
    err = np.array([r.estimate for r in rels]) - mean
    n = err.size
    assert abs(err.mean()) < 5.5 * math.sqrt(2 * b * b / n)
    var = float(np.mean(err**2))  # mean known to be 0 under the null
    assert abs(var - 2 * b * b) < 5.5 * math.sqrt(20.0 / n) * b * b
    assert stats.kstest(err, stats.laplace(scale=b).cdf).pvalue > 1e-6
    # and the errors tell Laplace(b) from a law 2.5 times as wide: their log-likelihood ratio
    # n ln 2.5 - 0.6 sum|e|/b is positive unless sum|e|/b, Gamma(n, 1) under Laplace(b), passes
    # n ln 2.5 / 0.6 (about 1.53 n); that happens with probability gamma.sf(...) < 1e-12
    # (a KS p-value below 1e-6 against the wider law, asserted here before, missed once in CI
    # at 2.2e-6), while errors of the wider law give a negative ratio almost always
    limit = n * math.log(2.5) / 0.6
    assert stats.gamma.sf(limit, n) < 1e-12
    assert float(np.abs(err).sum() / b) < limit


# ------------------------------------------------------------------------------ fail closed
def test_privacy_check_fails_closed(monkeypatch):
    df = _tiers_frame()
    calls = []
    real = hdp_release.finish.measurement

    class Spy:
        def __init__(self, s):
            self.m = real(s)

        def map(self, d):
            return self.m.map(d)

        def __call__(self, x):
            calls.append(x)
            return self.m(x)

    monkeypatch.setattr(hdp_release.finish, "measurement", Spy)
    real_scale = hdp_release.finish.noise_scale
    monkeypatch.setattr(
        hdp_release.finish, "noise_scale", lambda w, s1, k: real_scale(w, s1, k) * 0.999
    )
    with pytest.raises(ReleaseError, match=r"privacy check failed for the level eps = 0\.05"):
        release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert calls == []  # no noise drawn, nothing released
    # without the inflation for rounding the check refuses too (the rounding bound counts)
    monkeypatch.setattr(hdp_release.finish, "noise_scale", lambda w, s1, k: real_scale(w, s1, 0.0))
    df2 = pd.DataFrame({"v": [1.0] * 50, "e": [0.1] * 50})
    with pytest.raises(ReleaseError, match="privacy check failed"):
        release_mean(df2, value="v", eps="e", lo=1e6, hi=1e6 + 1)
    assert calls == []


# ------------------------------------------------------------------------------ engines


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("rel")
    out = {}
    for name, df in (("tiers", _tiers_frame(3000, 7)), ("cont", _cont_frame(5000, 8))):
        df.to_parquet(d / f"{name}.parquet")
        df.to_csv(d / f"{name}.csv", index=False)
        out[name] = (df, d)
    return out


def _np_hist(df):
    """Independent oracle: per-level users and integer sums of the clamped grid values."""
    e = df["e"].to_numpy(float)
    y = np.rint((np.clip(df["v"].to_numpy(float), LO, HI) - LO) / (HI - LO) * Q)
    g = pd.DataFrame({"e": e, "y": y}).groupby("e").agg(n=("y", "size"), sy=("y", "sum"))
    return g


@pytest.mark.parametrize("name", ["tiers", "cont"])
def test_duckdb_and_spark_agree(name, files, spark):
    df, d = files[name]
    hists = {}
    for label, src, eng in (
        ("duckdb-parquet", str(d / f"{name}.parquet"), "duckdb"),
        ("duckdb-csv", str(d / f"{name}.csv"), "duckdb"),
        ("pandas", df, "duckdb"),
        ("spark-parquet", str(d / f"{name}.parquet"), "spark"),
        ("spark-csv", str(d / f"{name}.csv"), "spark"),
    ):
        h = aggregate(src, "v", "e", LO, HI, eng)[1].as_frame()
        hists[label] = h
    base = hists["duckdb-parquet"]
    for label, h in hists.items():
        assert list(h["bin"]) == list(base["bin"]), label
        for col in ("n", "sy", "sq", "sqy"):
            assert list(h[col]) == list(base[col]), (label, col)
        for col in ("e1", "e2", "emin", "emax", "q2"):
            np.testing.assert_allclose(h[col], base[col], rtol=1e-9, err_msg=f"{label} {col}")
    if name == "tiers":  # one level per bin: compare with the numpy oracle level by level
        o = _np_hist(df)
        assert list(base["n"]) == list(o["n"]) and list(base["sy"]) == [int(v) for v in o["sy"]]
    assert int(base["n"].sum()) == len(df)


def test_spark_release_equals_duckdb(files, spark, no_noise):
    df, d = files["cont"]
    a = release_mean(str(d / "cont.parquet"), value="v", eps="e", lo=LO, hi=HI)
    b = release_mean(str(d / "cont.parquet"), value="v", eps="e", lo=LO, hi=HI, engine="spark")
    c = release_mean(spark.createDataFrame(df), value="v", eps="e", lo=LO, hi=HI, engine="spark")
    # a path the cluster reads (a URL, not checked on this machine) works the same
    u = f"file://{d / 'cont.parquet'}"
    e = release_mean(u, value="v", eps="e", lo=LO, hi=HI, engine="spark")
    assert a.estimate == b.estimate == c.estimate == e.estimate
    assert a.saturation_level == pytest.approx(b.saturation_level, rel=1e-12)
    assert b.engine == "spark"


def test_glob_of_files(tmp_path, no_noise):
    df = _tiers_frame(600, 9)
    df.iloc[:300].to_parquet(tmp_path / "a.parquet")
    df.iloc[300:].to_parquet(tmp_path / "b.parquet")
    rel = release_mean(str(tmp_path / "*.parquet"), value="v", eps="e", lo=LO, hi=HI)
    assert rel.estimate == pytest.approx(_oracle(df)[0], abs=1e-7 * (HI - LO))


# ------------------------------------------------------------------------------ bad input
def _csv(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize(
    "text, kw, match",
    [
        ("v,e\n1,0.5\n", {"value": "value"}, r"no value column 'value'.*'v', 'e'"),
        ("v,e\n1,0.5\n", {"eps": "epsilon"}, r"no eps column 'epsilon'"),
        ("v,e\n1,0.5\nabc,0.5\n", {}, r"value column 'v', row 2: text, which is not a number"),
        ("v,e\n1,0.5\n2,lots\n", {}, r"eps column 'e', row 2: text, which is not a number"),
        ("v,e\n1,0.5\nnan,0.5\n", {}, r"value column 'v', row 2: missing, NaN or infinite"),
        ("v,e\n1,0.5\n2,0.5\ninf,0.5\n", {}, r"value column 'v', row 3: missing, NaN or inf"),
        ("v,e\n1,0.5\n2,0.5\n,0.5\n", {}, r"value column 'v', row 3: missing"),
        ("v,e\n1,0.5\n2,nan\n", {}, r"eps column 'e', row 2: NaN"),
        ("v,e\n1,0.5\n2,-1\n", {}, r"eps column 'e', row 2: negative"),
        ("v,e\n", {}, r"the table is empty"),
        ("v,e\n1,0\n2,0\n", {}, r"no usable user: all 2 rows have eps = 0"),
    ],
)
def test_bad_input(tmp_path, text, kw, match):
    args = {"value": "v", "eps": "e", "lo": LO, "hi": HI} | kw
    with pytest.raises(ReleaseError, match=match):
        release_mean(_csv(tmp_path, text), **args)


@pytest.mark.parametrize(
    "text, match",
    [
        ("v,e\n1,0.5\nabc,0.5\n", r"value column 'v', row 2: text, which is not a number"),
        ("v,e\n1,0.5\n2,lots\n", r"eps column 'e', row 2: text, which is not a number"),
        ("v,e\n1,0.5\n2,0.5\ninf,0.5\n", r"value column 'v', row 3: missing, NaN or inf"),
        ("v,e\n1,0.5\n2,0.5\n,0.5\n", r"value column 'v', row 3: missing"),
        ("v,e\n1,0.5\n2,0.5\n3,nan\n", r"eps column 'e', row 3: NaN"),
        ("v,e\n1,0.5\n2,-1\n", r"eps column 'e', row 2: negative"),
    ],
)
def test_bad_input_on_spark_names_the_row(tmp_path, text, match, spark):
    """Spark's rows have no order; for a local file the message still names the row (DuckDB
    reads the same file to find it)."""
    with pytest.raises(ReleaseError, match=match):
        release_mean(_csv(tmp_path, text), value="v", eps="e", lo=LO, hi=HI, engine="spark")


def test_bad_range_and_files(tmp_path):
    p = _csv(tmp_path, "v,e\n1,0.5\n")
    for lo, hi in ((1, 1), (2, 1), (0, math.inf), (math.nan, 1)):
        with pytest.raises(ReleaseError, match="range"):
            release_mean(p, value="v", eps="e", lo=lo, hi=hi)
    with pytest.raises(ReleaseError, match="not a CSV or Parquet"):
        release_mean(_csv(tmp_path, "{}", "t.json"), value="v", eps="e", lo=0, hi=1)
    bad = tmp_path / "x.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(ReleaseError, match="could not read"):
        release_mean(str(bad), value="v", eps="e", lo=0, hi=1)
    with pytest.raises(ReleaseError, match="file not found"):
        release_mean(str(tmp_path / "none.csv"), value="v", eps="e", lo=0, hi=1)
    with pytest.raises(ReleaseError, match="data_sd"):
        release_mean(p, value="v", eps="e", lo=0, hi=10, data_sd=6)
    with pytest.raises(ReleaseError, match="engine"):
        release_mean(p, value="v", eps="e", lo=0, hi=10, engine="sqlite")


def test_public_words_and_exact_columns(tmp_path, no_noise):
    p = _csv(tmp_path, "Value,EPS\n10,public\n20,inf\n30,1\n")
    rel = release_mean(p, value="Value", eps="EPS", lo=LO, hi=HI)
    assert rel.n_public == 2 and rel.n_users == 3
    with pytest.raises(ReleaseError, match="no value column 'value'"):  # the exact name only
        release_mean(p, value="value", eps="EPS", lo=LO, hi=HI)


# ------------------------------------------------------------------------------ CLI
def test_cli_json_and_text(tmp_path, capsys):
    df = _tiers_frame(200, 11)
    p = tmp_path / "t.parquet"
    df.to_parquet(p)
    assert (
        hdp_release.cli.main(
            [str(p), "--value", "v", "--eps", "e", "--range", "0", "100", "--format", "json"]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["engine"] == "duckdb" and out["n_users"] == int((df["e"] > 0).sum())
    assert {"eps", "users", "granted_eps", "privacy_loss"} <= set(out["tiers"][0])
    assert hdp_release.cli.main([str(p), "--value", "v", "--eps", "e", "--range", "0", "100"]) == 0
    assert "privacy receipt" in capsys.readouterr().out
    assert (
        hdp_release.cli.main([str(p), "--value", "nope", "--eps", "e", "--range", "0", "100"]) == 2
    )
    assert "no value column 'nope'" in capsys.readouterr().err


def test_preview_matches_release():
    df = _tiers_frame()
    lv, ct = np.unique(df["e"], return_counts=True)
    pv = hdp_release.preview_tiers(lv, ct, LO, HI)
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert pv.saturation_level == rel.saturation_level
    assert pv.noise_scale == pytest.approx(rel.noise_scale, rel=1e-6)
    assert pv.half_width95 == pytest.approx(rel.half_width95, rel=1e-5)


# ------------------------------------------------------------------------------ fast plan
def _general_only(monkeypatch):
    monkeypatch.setattr(R, "fast_histogram", lambda *a, **k: (None, 0, ""))


@pytest.mark.parametrize("make", [_tiers_frame, _cont_frame])
def test_fast_plan_equals_general_plan(make, no_noise, monkeypatch):
    """DuckDB's fast plan and the general plan give the same release (same exact sums)."""
    df = make()
    fast = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert "bracket missed" not in fast.plan and "missed" not in fast.plan
    _general_only(monkeypatch)
    gen = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert fast.estimate == gen.estimate
    assert fast.saturation_level == pytest.approx(gen.saturation_level, rel=1e-12)
    assert fast.noise_scale == pytest.approx(gen.noise_scale, rel=1e-12)
    assert fast.estimate == pytest.approx(_oracle(df)[0], abs=1e-7 * (HI - LO))


def test_fast_plan_wrong_bracket_falls_back(no_noise, monkeypatch):
    """A bracket that misses tau* (on either side) is detected by the exact walk; the general
    plan then gives the oracle's answer."""
    df = _cont_frame(5000, seed=4)
    mean, tau, _ = _oracle(df)
    for br in ((tau * 1.5, tau * 2.0), (tau * 0.2, tau * 0.5)):
        monkeypatch.setattr(hdp_release.plan, "_bracket", lambda *a, br=br: br)
        rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
        assert "bracket missed" in rel.plan
        assert rel.saturation_level == pytest.approx(tau, rel=1e-9)
        assert rel.estimate == pytest.approx(mean, abs=1e-7 * (HI - LO))


def test_fast_plan_sample_missing_levels(no_noise, monkeypatch):
    """Tiers whose sample (the first rows) misses levels, and a bad value after the sample:
    the general plan answers (correct estimate, the same error as before)."""
    import hdp_release.engines.duckdb_source as E

    monkeypatch.setattr(E, "SAMPLE_MAX", 50)
    df = _tiers_frame(400, seed=6).sort_values("e", kind="stable").reset_index(drop=True)
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert "missed levels" in rel.plan
    assert rel.estimate == pytest.approx(_oracle(df)[0], abs=1e-7 * (HI - LO))
    df.loc[300, "v"] = np.nan
    with pytest.raises(ReleaseError, match="value column 'v', row 301: missing, NaN"):
        release_mean(df, value="v", eps="e", lo=LO, hi=HI)


# ------------------------------------------------------------------------------ a menu's names
def _named_frame(n=2000, seed=12):
    """A table whose eps column holds the default menu's tier names (in mixed case, with
    spaces), plus '0' (not used) and 'public' cells, and the oracle's numeric levels."""
    from hdp_core.menu import default_menu

    menu = default_menu()
    rng = np.random.default_rng(seed)
    cells = [" strict", "STRICT ", "Balanced", "open", "0", "public"]
    level = {" strict": 0.1, "STRICT ": 0.1, "Balanced": 1.0, "open": math.inf, "0": 0.0}
    level["public"] = math.inf
    assert dict(zip(menu.names, menu.levels, strict=True)) == {
        "Strict": 0.1,
        "Balanced": 1.0,
        "Open": math.inf,
    }
    c = rng.choice(cells, n)
    df = pd.DataFrame({"v": rng.uniform(-10, 110, n), "tier": c})
    numeric = pd.DataFrame({"v": df["v"], "e": [level[x] for x in c]})
    return menu, df, numeric


def test_tier_names_take_their_menus_levels(tmp_path, no_noise):
    menu, df, numeric = _named_frame()
    want = release_mean(numeric, value="v", eps="e", lo=LO, hi=HI)
    mean, tau, _ = _oracle(numeric)
    p = tmp_path / "named.parquet"
    df.to_parquet(p)
    for src in (df, str(p)):
        got = release_mean(src, value="v", eps="tier", lo=LO, hi=HI, tiers=menu)
        assert got.estimate == pytest.approx(mean, abs=1e-7 * (HI - LO))
        assert got.saturation_level == pytest.approx(tau, rel=1e-12)
        assert got.n_excluded == want.n_excluded and got.n_public == want.n_public
        pd.testing.assert_frame_equal(got.tiers, want.tiers)
    # the preview's counts read the names the same way
    lv, ct = hdp_release.level_counts(df, "tier", menu)
    olv, oct_ = np.unique(numeric["e"], return_counts=True)
    np.testing.assert_array_equal(lv, olv)
    np.testing.assert_array_equal(ct, oct_)
    # a plain mapping works as well as a Menu
    got = release_mean(
        df, value="v", eps="tier", lo=LO, hi=HI, tiers={"Strict": 0.1, "balanced": 1, "OPEN": "inf"}
    )
    assert got.estimate == pytest.approx(mean, abs=1e-7 * (HI - LO))


def test_tier_names_on_spark(tmp_path, spark, no_noise):
    menu, df, numeric = _named_frame(600, 13)
    p = tmp_path / "named.parquet"
    df.to_parquet(p)
    want = release_mean(numeric, value="v", eps="e", lo=LO, hi=HI)
    got = release_mean(str(p), value="v", eps="tier", lo=LO, hi=HI, tiers=menu, engine="spark")
    assert got.estimate == want.estimate
    pd.testing.assert_frame_equal(got.tiers, want.tiers)
    bad = df.assign(tier=df["tier"].where(df.index != 5, "Gold"))
    with pytest.raises(ReleaseError, match=r"text, which is not a number nor a tier of the menu"):
        release_mean(bad, value="v", eps="tier", lo=LO, hi=HI, tiers=menu, engine="spark")


def test_unknown_tier_names_and_bad_menus_are_refused():
    menu, df, _ = _named_frame(50, 14)
    bad = df.assign(tier=df["tier"].where(df.index != 6, "Gold"))
    msg = r"eps column 'tier', row 7: text, which is not a number nor a tier of the menu \('strict'"
    with pytest.raises(ReleaseError, match=msg):
        release_mean(bad, value="v", eps="tier", lo=LO, hi=HI, tiers=menu)
    # the preview names the row, the column and the kind of cell, never the cell (issue 19)
    with pytest.raises(
        ReleaseError, match=r"eps column 'tier', row 7: the cell is text, not a number nor a tier"
    ) as info:
        hdp_release.level_counts(bad, "tier", menu)
    assert "Gold" not in str(info.value)
    assert (info.value.row, info.value.column, info.value.reason) == (7, "tier", "text")
    no_names = r"row 1: text, which is not a number$"  # no menu: no names
    with pytest.raises(ReleaseError, match=no_names):
        release_mean(df.assign(tier="Strict"), value="v", eps="tier", lo=LO, hi=HI)
    with pytest.raises(ReleaseError, match="'Gold' and 'gold', are the same name"):
        hdp_release.tier_levels({"Gold": 1.0, " gold": 2.0})
    with pytest.raises(ReleaseError, match="level of tier 'Gold'"):
        hdp_release.tier_levels({"Gold": -1.0})
    with pytest.raises(ReleaseError, match="tier name must be non-empty"):
        hdp_release.tier_levels({" ": 1.0})
    with pytest.raises(ReleaseError, match="Tier designer menu or a mapping"):
        hdp_release.tier_levels([("Gold", 1.0)])


def test_cli_with_a_tier_designer_menu(tmp_path, capsys):
    from hdp_core.design_io import menu_to_json

    menu, df, numeric = _named_frame(300, 15)
    p = tmp_path / "named.csv"
    df.to_csv(p, index=False)
    m = tmp_path / "menu.json"
    m.write_text(menu_to_json(menu))
    assert (
        hdp_release.cli.main(
            [str(p), "--value", "v", "--eps", "tier", "--menu", str(m), "--format", "json"]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["range"] == [menu.low, menu.high]  # the menu's public range
    assert out["n_users"] == int((numeric["e"] > 0).sum())
    assert hdp_release.cli.main([str(p), "--value", "v", "--eps", "tier"]) == 2
    assert "the public range is missing" in capsys.readouterr().err
    m.write_text("{not json")
    assert hdp_release.cli.main([str(p), "--value", "v", "--eps", "tier", "--menu", str(m)]) == 2
    assert "the menu file" in capsys.readouterr().err


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_a_crowded_bin_is_refined_not_fetched(engine, monkeypatch, no_noise, request):
    """With a tiny FETCH_USERS the bin holding tau* is split (again and again) instead of
    fetched whole: the same release as the oracle, one pass per split or fetch, and no fetch
    of more than FETCH_USERS levels."""
    if engine == "spark":
        request.getfixturevalue("spark")
    import hdp_release.engines.duckdb_source as D
    import hdp_release.engines.spark_source as S

    df = _cont_frame(20_000, 21)
    df.loc[:999, "e"] = 0.2  # a tie of 1000 users, wherever tau* falls
    mean, tau, _ = _oracle(df)
    fetched = []
    E = D if engine == "duckdb" else S
    real = E.fetch_rows
    monkeypatch.setattr(E, "fetch_rows", lambda rows: fetched.append(len(rows)) or real(rows))
    refined = []
    cls = D.DuckSource if engine == "duckdb" else S.SparkSource
    real_refine = cls.refine
    monkeypatch.setattr(cls, "refine", lambda self, *a: refined.append(a) or real_refine(self, *a))
    monkeypatch.setattr(hdp_release.plan, "FETCH_USERS", 40)
    monkeypatch.setattr(R, "fast_histogram", lambda *a: (None, 0, ""))  # the general plan
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI, engine=engine)
    assert rel.saturation_level == pytest.approx(tau, rel=1e-9)
    assert rel.estimate == pytest.approx(mean, abs=1e-7 * (HI - LO))
    assert refined and max(fetched, default=0) <= 40
    assert int(rel.plan.split("(")[1].split()[0]) == 1 + len(refined) + len(fetched)


def test_value_and_eps_must_be_different_columns():
    df = _tiers_frame(50, 16)
    with pytest.raises(ReleaseError, match=r"the same column \('v'\)"):
        release_mean(df, value="v", eps="v", lo=LO, hi=HI)
    with pytest.raises(ReleaseError, match=r"no eps column 'V'"):  # never matched ignoring case
        release_mean(df, value="v", eps="V", lo=LO, hi=HI)


@pytest.mark.parametrize(
    "cells",
    [
        ["1", "2", "12x7", "4"],
        ["1", "2", "", "4"],
        ["1", "nan", "3", "inf"],
        [1.0, 2.0, np.nan, 4.0],
        [1.0, np.inf, 3.0, -np.inf],
        ["Berlin", "Paris", "1", "2"],
    ],
)
def test_preview_value_check_says_what_the_release_says(cells):
    """check_values (the page's preview) and release_mean name the same row and problem."""
    df = pd.DataFrame({"v": cells, "e": [1.0] * len(cells)})
    with pytest.raises(ReleaseError) as by_release:
        release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    with pytest.raises(ReleaseError) as by_check:
        hdp_release.check_values(df, "v")
    # the same column and row (the release path's wording is the engines'; the preview's
    # names the kind of cell, never its content)
    where = re.match(r"value column 'v', row \d+", str(by_check.value))
    assert where and str(by_release.value).startswith(where.group(0))
    assert by_check.value.row == int(where.group(0).rsplit(" ", 1)[1])
    hdp_release.check_values(pd.DataFrame({"v": ["1", " 2 ", "3e2"]}), "v")  # good cells pass
