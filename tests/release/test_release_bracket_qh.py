"""The bracket pass with the level's high part in the key (issue 29,
hdp_release.engines.duckdb_bracket): per class the same counts and exact integer sums as the
general bracket pass. Oracles: the sums of q, q y, qh^2, qh ql and ql^2 over the rows of each
class computed in Python integers from the table itself (q = floor(eps 2^42), y the value on
the 2^30 grid, the class from the bracket's own a and b), and the brute-force weighted mean of
tests/helpers.py; the release equals, bit for bit, the one made with the general bracket pass
(main's query), which the split pass replaces for brackets below 1."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import NoNoise, weighted_mean_oracle

import hdp_release.engines.duckdb_fast as F
import hdp_release.engines.duckdb_source as E
import hdp_release.finish
from hdp_core.errors import ReleaseError
from hdp_release import release_mean
from hdp_release.engines.base import (
    DECADE_OFFSET,
    Q2_MASK,
    Q2_SPLIT,
    QE,
    SUB_BINS,
    SUB_KEY,
    Q,
)
from hdp_release.engines.duckdb_bracket import QH_KEY, merge_split_rows
from hdp_release.engines.duckdb_source import DuckSource
from hdp_release.plan import _bracket

LO, HI = 0.0, 100.0


def _frame(n: int = 6000, seed: int = 7, top: float = 0.9) -> pd.DataFrame:
    """Per-user levels log-uniform in [1e-4, top], a few public (+inf) and unused (0) users;
    values in [LO, HI] (every value inside the range: the pass without the CASE applies)."""
    rng = np.random.default_rng(seed)
    e = np.exp(rng.uniform(math.log(1e-4), math.log(top), n))
    kind = rng.choice(3, n, p=[0.94, 0.03, 0.03])
    e[kind == 1] = math.inf
    e[kind == 2] = 0.0
    return pd.DataFrame({"v": rng.uniform(LO, HI, n), "e": e})


def _parquet(df: pd.DataFrame, path) -> str:
    pq.write_table(pa.table({c: pa.array(df[c].to_numpy()) for c in df}), path)
    return str(path)


def _y(v: float) -> int:
    """The value on the 2^30 grid of [LO, HI], rounded half away from zero (v >= LO here)."""
    return math.floor(min(max(v, LO), HI) / (HI - LO) * Q + 0.5)


def _oracle_classes(df: pd.DataFrame, a: float, b: float, m: int) -> dict:
    """Per class below b (1/8 decades below a, sub-bins of [a, b)): users, sum y, sum q, sum q y,
    (sum qh^2, sum qh ql, sum ql^2), min and max eps, in Python integers from the rows."""
    out: dict = {}
    s = m / (b - a)
    for v, e in zip(df["v"], df["e"], strict=True):
        if not 0 < e < b:
            continue
        k = (
            SUB_KEY + math.floor((e - a) * s)
            if e >= a
            else (math.floor(math.log10(e) * 8) + DECADE_OFFSET)
        )
        q, y = math.floor(e * QE), _y(v)
        qh, ql = q >> Q2_SPLIT, q & Q2_MASK
        t = out.setdefault(k, [0, 0, 0, 0, 0, 0, 0, math.inf, -math.inf])
        for i, x in enumerate((1, y, q, q * y, qh * qh, qh * ql, ql * ql)):
            t[i] += x
        t[7], t[8] = min(t[7], e), max(t[8], e)
    return out


def _bracket_hist(src: DuckSource, split: bool, monkeypatch):
    """The bracket pass's histogram and its (a, b): the split pass, or main's general pass."""
    monkeypatch.setattr(F, "QH_LEVEL", 1.0 if split else -1.0)
    src._prepare("v", "e", LO, HI)
    sample = src.level_sample()
    n = src.row_count()
    a, b = _bracket(sample, n, 8.0)
    return src.fast_bracket(a, b, SUB_BINS, True, n), a, b


def test_merge_split_rows_against_integer_sums_over_rows():
    """Random rows with levels q < 2^42 split into groups by (class, qh): the merged rows give
    each class the sums of q, q y and of the three products over its rows, exactly."""
    rnd = random.Random(3)
    rows, want = [], {}
    for _ in range(400):
        k, c = rnd.randrange(2700, 3100), rnd.randrange(0, 2048)
        qs = [c << Q2_SPLIT | rnd.randrange(0, 1 << Q2_SPLIT) for _ in range(rnd.randrange(1, 6))]
        ys = [rnd.randrange(0, Q + 1) for _ in qs]
        es = [rnd.random() for _ in qs]
        ql = [q & Q2_MASK for q in qs]
        rows.append(
            (
                k + QH_KEY * c,
                len(qs),
                len(qs),
                sum(ys),
                sum(ql),
                sum(a * y for a, y in zip(ql, ys, strict=True)),
                sum(a * a for a in ql),
                min(es),
                max(es),
            )
        )
        t = want.setdefault(k, [0, 0, 0, 0, 0, 0, 0, math.inf, -math.inf])
        for q, y, e in zip(qs, ys, es, strict=True):
            qh, lo = q >> Q2_SPLIT, q & Q2_MASK
            for i, x in enumerate((1, y, q, q * y, qh * qh, qh * lo, lo * lo)):
                t[i] += x
            t[7], t[8] = min(t[7], e), max(t[8], e)
    rows.append((None, 4, 4, None, None, None, None, None, None))  # a bad level's group
    got = merge_split_rows(rows)
    assert got[0][:2] == (None, 4)
    assert [r[0] for r in got[1:]] == sorted(want)
    for r in got[1:]:
        w = want[r[0]]
        assert (r[1], r[3], r[4], r[5], r[6], r[7], r[8]) == (
            w[0],
            w[1],
            w[2],
            w[3],
            (w[4], w[5], w[6]),
            w[7],
            w[8],
        )


@pytest.mark.parametrize("kind", ["parquet", "dataframe"])
def test_split_pass_equals_the_integer_oracle_and_main_s_pass(tmp_path, monkeypatch, kind):
    """Both the pass without the CASE (Parquet, every value inside the range) and with it (a
    DataFrame): every class below b has the oracle's sums; the whole histogram equals main's
    general bracket pass, class for class."""
    df = _frame(seed=11, top=0.9)
    src_of = {"parquet": lambda: _parquet(df, tmp_path / "t.parquet"), "dataframe": lambda: df}
    source = src_of[kind]()
    sqls: list[str] = []
    real = DuckSource._run

    def spy(self, sql, how="all"):
        sqls.append(sql)
        return real(self, sql, how)

    monkeypatch.setattr(DuckSource, "_run", spy)
    src = DuckSource(source)
    try:
        h, a, b = _bracket_hist(src, True, monkeypatch)
        assert h is not None and 2.0**-11 < b <= 1.0  # the key holds levels' high parts > 0
        assert any("TRY_CAST" in s and "UINTEGER" in s for s in sqls) == (kind == "parquet")
        assert any("sum(ql * ql)" in s for s in sqls)  # the split pass ran
        assert not any("count(*)" in s and "sum(ql" in s for s in sqls)  # without count(*)
        old, a0, b0 = _bracket_hist(src, False, monkeypatch)
    finally:
        src.close()
    assert (a0, b0) == (a, b) and old is not None
    want = _oracle_classes(df, a, b, SUB_BINS)
    got = {int(k): i for i, k in enumerate(h.bin)}
    assert set(want) <= set(got)
    assert any(w[4] > 0 for w in want.values())  # some class with qh > 0
    for k, w in want.items():
        i = got[k]
        assert (int(h.n[i]), h.sy[i], h.sq[i], h.sqy[i], h.q2[i]) == (
            w[0],
            w[1],
            w[2],
            w[3],
            (w[4], w[5], w[6]),
        )
        assert (h.emin[i], h.emax[i]) == (w[7], w[8])
    for f in ("bin", "n", "e1", "e2", "emin", "emax"):
        assert np.array_equal(getattr(h, f), getattr(old, f)), f
    for f in ("q2", "sy", "sq", "sqy"):
        assert getattr(h, f) == getattr(old, f), f
    assert (h.coarse, h.coarse_above, h.n_rows) == (old.coarse, old.coarse_above, old.n_rows)


@pytest.mark.parametrize("spend", [1, 0.5])
def test_release_with_the_split_pass_equals_main_s_pass_and_the_oracle(monkeypatch, spend):
    """The whole release (no noise): estimate, tau*, noise scale, interval and receipt equal
    those made with the general bracket pass, and the brute-force weighted mean (at the run
    levels eps x spend)."""
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    df = _frame(seed=5, top=0.6)
    rels = []
    for level in (1.0, -1.0):
        monkeypatch.setattr(F, "QH_LEVEL", level)
        rels.append(release_mean(df, value="v", eps="e", lo=LO, hi=HI, spend=spend))
    new, old = rels
    assert new.plan == old.plan and new.plan.startswith("level bins")
    assert (new.estimate, new.saturation_level, new.noise_scale, new.ci95) == (
        old.estimate,
        old.saturation_level,
        old.noise_scale,
        old.ci95,
    )
    pd.testing.assert_frame_equal(new.tiers, old.tiers)
    mean, tau, _ = weighted_mean_oracle(df.assign(e=df["e"] * spend), LO, HI)
    assert new.saturation_level == pytest.approx(tau, rel=1e-9)
    assert new.estimate == pytest.approx(mean, abs=1e-7 * (HI - LO))


def test_a_nan_value_the_statistics_leave_out_is_refused_with_its_row(tmp_path, monkeypatch):
    """Parquet statistics omit NaN (issue 32), so the pass without the CASE runs; its NaN
    value's y is NULL, the CASE pass runs, finds the bad value, and the general plan refuses
    naming the row, before any noise."""
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    monkeypatch.setattr(E, "SAMPLE_MAX", 500)
    df = _frame(seed=9, top=0.9)
    df.loc[4321, "v"] = math.nan
    path = _parquet(df, tmp_path / "nan.parquet")
    got: list = []
    real = E.DuckSource.fast_bracket

    def spy(self, *a, **k):
        got.append(real(self, *a, **k))
        return got[-1]

    monkeypatch.setattr(E.DuckSource, "fast_bracket", spy)
    calls = NoNoise.calls
    with pytest.raises(ReleaseError) as ei:
        release_mean(path, value="v", eps="e", lo=LO, hi=HI)
    assert got == [None]
    assert (ei.value.row, ei.value.column) == (4322, "v")
    assert NoNoise.calls == calls


def test_values_outside_the_range_take_the_case_pass_with_the_same_release(tmp_path, monkeypatch):
    """A Parquet file with values outside [lo, hi]: no pass without the CASE (its statistics
    say so), the split pass with the CASE, and the release equals main's pass's."""
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    df = _frame(seed=13, top=0.8)
    df["v"] = df["v"] * 1.4 - 20.0  # [-20, 120]: clamped
    path = _parquet(df, tmp_path / "out.parquet")
    rels = []
    for level in (1.0, -1.0):
        monkeypatch.setattr(F, "QH_LEVEL", level)
        rels.append(release_mean(path, value="v", eps="e", lo=LO, hi=HI))
    assert (rels[0].estimate, rels[0].saturation_level) == (
        rels[1].estimate,
        rels[1].saturation_level,
    )
    pd.testing.assert_frame_equal(rels[0].tiers, rels[1].tiers)
    assert rels[0].estimate == pytest.approx(
        weighted_mean_oracle(df, LO, HI)[0], abs=1e-7 * (HI - LO)
    )


def test_receipt_rows_merged_in_integers_equal_one_row_per_entry_merged():
    """plan._bins_rows (runs of entries merged as integers, one Fraction per row) against the
    rows built one per entry with their own Fractions (w_num = sum q y / QE, s1 = sum q / QE,
    s2 = sum q^2 / QE^2; saturated: tau* sum y, tau* users, tau*^2 users) and merged by
    plan._merge_rows: the same rows, field for field, for random walks of entries."""
    from fractions import Fraction

    from hdp_release.engines.base import q2_exact
    from hdp_release.plan import Row, _bins_rows, _merge_rows

    QE2 = QE * QE
    rnd = random.Random(17)
    for _ in range(60):
        levels = sorted(10 ** rnd.uniform(-6, 1) for _ in range(rnd.randrange(1, 40)))
        ent = []
        for x in levels:
            x2 = x * (1 + rnd.random() * 0.01)
            n = rnd.randrange(1, 50)
            q = math.floor(x * QE)
            q2 = (rnd.randrange(0, 1 << 40), rnd.randrange(0, 1 << 60), rnd.randrange(0, 1 << 62))
            sq, sqy, sy = q * n, q * rnd.randrange(0, n * Q), rnd.randrange(0, n * Q)
            ent.append([x, x2, n, q / QE, math.floor(x2 * QE) / QE, sq, sqy, q2, sy, None])
        j = rnd.randrange(0, len(ent) + 1)
        tau = ent[j][3] if j < len(ent) else math.inf
        ftau = Fraction(tau) if math.isfinite(tau) else None
        one = []
        for k, e in enumerate(ent):
            if k < j:
                w, s1, s2 = Fraction(e[6], QE), Fraction(e[5], QE), Fraction(q2_exact(*e[7]), QE2)
                one.append(Row(e[0], e[1], e[2], e[3], e[4], w, s1, s2, False))
            else:
                assert ftau is not None
                one.append(
                    Row(e[0], e[1], e[2], tau, tau, ftau * e[8], ftau * e[2], ftau**2 * e[2], True)
                )
        assert _merge_rows(_bins_rows(ent, j, tau, ftau)) == _merge_rows(one)
