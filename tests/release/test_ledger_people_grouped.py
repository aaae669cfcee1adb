"""The per-person ledger for a release per segment (issues 30 and 28): release_means with
``id=`` against the exact-Fraction oracle of test_ledger_people (each segment's cap from its
own persons' run levels, each person charged their own segment's grant, once), mixed with
releases of one mean, subsets, keys, both targets; the issue's split-by-region sequence now
with release_means; a saturated person's kept budget used later; refusals before any charge."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from test_ledger_people import G, Oracle, check_against, key_hash, table

from hdp_core.errors import BudgetExceeded, ReleaseError
from hdp_release.grouped import release_means
from hdp_release.ledger.people import person_spent_units
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean


def _means(df, led, spend, target, col="wage", **kw):
    hi = 100 if col == "wage" else 60
    return release_means(
        df, value=col, eps="eps", by="region", lo=0, hi=hi, ledger=led, id="uid",
        spend=spend, target=target, **kw,
    )  # fmt: skip


def _one(df, led, spend, target, col="wage"):
    hi = 100 if col == "wage" else 60
    return release_mean(
        df, value=col, eps="eps", lo=0, hi=hi, ledger=led, id="uid", spend=spend, target=target
    )


@pytest.mark.slow  # 12 releases against the oracle (~2-3 s on a quiet machine)
def test_grouped_and_single_releases_match_the_oracle_and_never_overspend(tmp_path):
    seed = 4  # 8 releases per segment, 1 of one mean, 3 refused (everyone spent)
    rng = np.random.default_rng(500 + seed)
    df = table(90, seed, levels=(0.05, 1.0, 3.0))
    led = PrivacyLedger(tmp_path / "l.duckdb")
    orc = Oracle()
    spends = [Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(1)]
    grouped = refused = 0
    for _step in range(12):
        kind = int(rng.integers(0, 5))
        part = df if kind < 3 else df[rng.random(len(df)) < 0.7]  # a subset
        if kind == 2:  # some persons change their level
            df = df.copy()
            ch = rng.random(len(df)) < 0.2
            df.loc[ch, "eps"] = rng.choice([0.1, 0.5, 2.0], int(ch.sum()))
            part = df
        part = part.sample(frac=1, random_state=int(rng.integers(1 << 30)))  # any row order
        spend = spends[int(rng.integers(0, len(spends)))]
        target = ["population", "table"][int(rng.integers(0, 2))]
        col = ["wage", "hours"][int(rng.integers(0, 2))]
        keys = None
        if kind == 4:  # keys given: one region left out (not charged), one absent
            keys = [k for k in range(5) if k != int(rng.integers(0, 4))]
        use = part if keys is None else part[part.region.isin(keys)]
        segs = None if kind == 1 else list(use.region)
        ok = orc.release(list(use.uid), list(use.eps), spend, target, segs)
        if kind == 1:
            run = lambda p=part, s=spend, t=target, c=col: _one(p, led, s, t, c)  # noqa: E731
        else:
            run = lambda p=part, s=spend, t=target, c=col, k=keys: _means(  # noqa: E731
                p, led, s, t, c, keys=k
            )
        if ok:
            out = run()
            grouped += kind != 1
            if kind != 1:  # the receipt's lost never passes what each asked, per segment
                assert (out.people.lost_max <= out.people.run_max + 2.0**-42).all()
                assert (out.people.lost_max <= out.people.asked + 2.0**-40).all()
                # OpenDP's loss in each segment never passes what its persons were charged
                rec, ppl = out.receipt(), out.people
                for seg in rec.region.unique():
                    loss = rec[rec.region == seg].privacy_loss_max.max()
                    assert loss <= ppl[ppl.region == seg].lost_max.max() + 2.0**-42
        else:
            with pytest.raises(BudgetExceeded):
                run()
            refused += 1
        check_against(led, orc)  # equal to the oracle exactly, no one past their level
    assert grouped >= 3 and refused >= 1


@pytest.mark.slow
def test_split_by_region_with_release_means_is_refused_where_spent(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    df = table(400, 7, levels=(0.01,))  # nobody saturates: spend 1 exhausts everyone
    _one(df, led, 1, "population")
    with pytest.raises(BudgetExceeded):  # the same people, a mean per region: refused
        _means(df, led, Fraction(1, 2), "population")
    with pytest.raises(BudgetExceeded):  # another column, the table target, a subset
        _means(df.iloc[1:], led, 1, "table", col="hours")
    spent = person_spent_units(led)
    secret = led.secret_key()
    for pid in df.uid:  # each lost exactly their level (on the grid), never more
        assert spent[key_hash(secret, pid)] == math.floor(Fraction(0.01) * G)

    # one region spent, the others fresh: refused there only, the rest released and charged
    led2 = PrivacyLedger(tmp_path / "l2.duckdb")
    _one(df[df.region == 0], led2, 1, "population")
    before = person_spent_units(led2)
    g = _means(df, led2, Fraction(1, 2), "population")
    assert g.n_spent_segments == 1
    r0 = g.releases[list(g.keys).index((0,))]
    assert r0.n_users == 0 and r0.outputs_midrange and "spent their level" in r0.notes[0]
    assert "refused in 1 segments" in g.text()
    after = person_spent_units(led2)
    for pid, reg in zip(df.uid, df.region, strict=True):
        h = key_hash(secret := led2.secret_key(), pid)
        if reg == 0:
            assert after[h] == before[h]  # nothing more
        else:
            assert after[h] == math.floor(Fraction(0.01) * G) // 2
    assert secret


def test_a_saturated_person_in_a_segment_keeps_and_a_later_release_uses_it(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    n = 2000
    df = pd.DataFrame(
        {
            "uid": np.arange(n),
            "wage": np.random.default_rng(3).uniform(0, 100, n),
            "region": np.where(np.arange(n) % 2 == 0, "north", "south"),
            "eps": np.where(np.arange(n) < 1000, 0.05, 1.0),
        }
    )
    # north: the lenient persons saturate; south gets more lenient persons so its tau* differs
    df.loc[(df.region == "south") & (df.eps == 0.05) & (df.index % 4 == 1), "eps"] = 1.0
    g = release_means(df, value="wage", eps="eps", by="region", lo=0, hi=100, ledger=led, id="uid")
    taus = {k[0]: r.saturation_level for k, r in zip(g.keys, g.releases, strict=True)}
    assert 0.05 < taus["north"] < 1.0 and 0.05 < taus["south"] < 1.0
    assert taus["north"] != taus["south"]  # each segment's own cap
    for reg in ("north", "south"):
        row = g.people[(g.people.region == reg) & (g.people.eps == 1.0)].iloc[0]
        assert row.saturated == row.persons and row.lost_max <= taus[reg] + 2.0**-42
        assert row.kept_min == pytest.approx(1.0 - taus[reg], abs=1e-12)  # kept, in numbers
    lenient = df[(df.eps == 1.0) & (df.region == "north")]
    second = release_mean(lenient, value="wage", eps="eps", lo=0, hi=100, ledger=led, id="uid")
    split = release_mean(lenient, value="wage", eps="eps", lo=0, hi=100, spend=Fraction(1, 2))
    assert second.noise_scale < split.noise_scale  # the kept budget is used
    assert second.people.run_min.iloc[0] == pytest.approx(1.0 - taus["north"], abs=1e-12)


def test_refusals_before_any_charge_and_left_out_segments_not_charged(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    df = table(60, 4)
    dup = pd.concat([df, df.iloc[[3, 5]]])
    with pytest.raises(ReleaseError, match="2 rows repeat an id") as ei:
        _means(dup, led, 1, "population")
    assert df.uid.iloc[3] not in str(ei.value)
    with pytest.raises(ReleaseError, match="also a segment column"):
        release_means(df, value="wage", eps="eps", by="uid", lo=0, hi=1, ledger=led, id="uid")
    assert person_spent_units(led) == {} and led.history() == []
    g = _means(df, led, Fraction(1, 2), "table", keys=[1, 2])
    assert g.n_left_out == 2 and g.recorded is True and len(led.history()) == 1
    secret = led.secret_key()
    charged = set(person_spent_units(led))
    want = {key_hash(secret, u) for u in df[df.region.isin([1, 2])].uid}
    assert charged == want  # the left-out regions' persons are not touched
    d = g.to_dict()
    assert d["id_column"] == "uid" and {r["key"][0] for r in d["people"]} == {"1", "2"}
    assert "uid" not in g.people.columns and "p0001" not in g.text()


def test_keys_none_present_touch_nobody(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    g = _means(table(30, 2), led, 1, "population", keys=[8, 9])
    assert all(not p for p in g.present) and "nobody was charged" in g.text()
    assert person_spent_units(led) == {} and led.history() == []
