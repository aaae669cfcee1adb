"""DuckDB's fast plan keys (issue 29): the tiers pass keyed by list_position, the bracket pass
by single comparisons in which a NaN level shares the public users' key (told apart by
max(eps)). Oracles: numpy's weighted mean of the clamped values at the paper's tau* (a brute
force over the saturation index), exact counts of the table, and the general plan's release
(which does not use these keys); a bad level is refused naming its row, as the general plan
does."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import NoNoise, weighted_mean_oracle

import hdp_release.engines.duckdb_source as E
import hdp_release.finish
from hdp_core.errors import ReleaseError
from hdp_release import release as R
from hdp_release import release_mean

LO, HI = 0.0, 100.0


def _frame(n: int = 6000, seed: int = 5) -> pd.DataFrame:
    """Per-user levels over eight decades, with public users (+inf) and unused ones (0)."""
    rng = np.random.default_rng(seed)
    e = np.exp(rng.uniform(math.log(1e-5), math.log(1e3), n))
    kind = rng.choice(3, n, p=[0.9, 0.06, 0.04])
    e[kind == 1] = math.inf
    e[kind == 2] = 0.0
    return pd.DataFrame({"v": rng.uniform(-10, 110, n), "e": e})


def _oracle(df: pd.DataFrame, c: float = 8.0) -> tuple[float, float]:
    """The clamped mean weighted by min(eps, tau*) and tau* (tests/helpers.py's oracle)."""
    mean, tau, _ = weighted_mean_oracle(df, LO, HI, c)
    return mean, tau


@pytest.fixture
def bracket(monkeypatch):
    """Records what each bracket pass returned (None: the general plan answers)."""
    got: list = []
    real = E.DuckSource.fast_bracket

    def spy(self, *a, **k):
        h = real(self, *a, **k)
        got.append(h)
        return h

    monkeypatch.setattr(E.DuckSource, "fast_bracket", spy)
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    return got


def test_bracket_pass_with_public_and_unused_users_equals_oracle_and_general_plan(
    bracket, monkeypatch
):
    df = _frame()
    fast = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert len(bracket) == 1 and bracket[0] is not None and "missed" not in fast.plan
    mean, tau = _oracle(df)
    assert fast.saturation_level == pytest.approx(tau, rel=1e-9)
    assert fast.estimate == pytest.approx(mean, abs=1e-7 * (HI - LO))
    assert fast.n_public == int(np.isinf(df["e"]).sum())
    assert fast.n_excluded == int((df["e"] == 0).sum())
    assert fast.n_users == int((df["e"] > 0).sum())
    monkeypatch.setattr(R, "fast_histogram", lambda *a, **k: (None, 0, ""))
    gen = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert fast.estimate == gen.estimate
    assert fast.noise_scale == pytest.approx(gen.noise_scale, rel=1e-12)
    # the sums of squared grants (the fast pass's sum of q^2, scaled by a power of two)
    assert fast.saturation_level == pytest.approx(gen.saturation_level, rel=1e-12)
    assert fast.half_width95 == pytest.approx(gen.half_width95, rel=1e-12)


@pytest.mark.parametrize("cell", [math.nan, -math.inf, -1.0])
@pytest.mark.parametrize("public", [True, False])
def test_a_bad_level_after_the_sample_is_refused_with_its_row(
    bracket, monkeypatch, tmp_path, cell, public
):
    """NaN (keyed with the public users; pyarrow from numpy keeps it a NaN in the file,
    where pandas would write a null), -inf and a negative level (no key): the bracket pass
    gives up and the general plan refuses, naming the row (a NaN's reason is 'empty', as
    tests/hostile_cells.py has it)."""
    monkeypatch.setattr(E, "SAMPLE_MAX", 500)
    df = _frame()
    if not public:
        df.loc[np.isinf(df["e"]), "e"] = 0.5
    df.loc[2999, "e"] = cell
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({c: pa.array(df[c].to_numpy()) for c in df}), path)  # NaN stays
    calls = NoNoise.calls
    with pytest.raises(ReleaseError) as ei:
        release_mean(str(path), value="v", eps="e", lo=LO, hi=HI)
    assert bracket == [None]
    assert ei.value.row == 3000 and ei.value.column == "e"
    assert ei.value.reason == ("empty" if math.isnan(cell) else "negative"), ei.value.reason
    assert NoNoise.calls == calls  # refused before any noise


def test_tiers_pass_with_a_level_outside_the_sample_or_minus_zero(monkeypatch):
    """list_position finds -0.0 as the level 0 (eps = 0, unused, as eps = 0 finds it) and
    none of the sample's levels for a level the sample missed (the general plan answers)."""
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    rng = np.random.default_rng(3)
    n = 3000
    e = rng.choice([0.1, 0.5, 2.0, 0.0], n)
    e[rng.random(n) < 0.05] = -0.0
    df = pd.DataFrame({"v": rng.uniform(0, 100, n), "e": e})
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert rel.plan.startswith("tiers (1 aggregate pass)")
    assert rel.n_excluded == int((e == 0).sum())
    mean, _ = _oracle(df)
    assert rel.estimate == pytest.approx(mean, abs=1e-7 * (HI - LO))
    monkeypatch.setattr(E, "SAMPLE_MAX", 100)
    df.loc[2500, "e"] = 0.3  # a level the sample does not hold
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    assert "missed levels" in rel.plan
    assert rel.estimate == pytest.approx(_oracle(df)[0], abs=1e-7 * (HI - LO))
