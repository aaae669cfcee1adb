"""The per-person ledger (issue 30) against an oracle of its own: a dict of persons with exact
Fractions replays random sequences of releases (columns, subsets, per-region files, levels that
change, spends, both targets) and after each release checks that no person's total loss passes
their current level and that the ledger equals the oracle exactly. Plus the issue's attack
sequences, the saturated person's kept budget, refusals and a race of processes."""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from hdp_core.errors import BadCellError, BudgetExceeded, ReleaseError
from hdp_core.table_mean import table_mean
from hdp_release.ledger.people import person_spent_units, person_summary
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean

G = 1 << 42  # the documented grid: 2^-42 nats
LEVEL_MIN = Fraction(1, 10**6)


# ------------------------------------------------------------------------------ the oracle
def floor_float(x: Fraction) -> Fraction:
    """The largest float <= x, as a Fraction."""
    f = float(x)
    if Fraction(f) > x:
        f = math.nextafter(f, 0.0)
    return Fraction(f)


def exact_tau(levels: dict[Fraction, int]) -> Fraction | None:
    """ADPM's saturation level on [-1/2, 1/2] (constant 8), exactly: G(t) = sum_{l < t} l (t -
    l) is piecewise linear; tau solves G(tau) = 8 on the piece where it lands."""
    lv = sorted(x for x in levels if x > 0)
    s1 = s2 = Fraction(0)
    for k, x in enumerate(lv):
        s1 += levels[x] * x
        s2 += levels[x] * x * x
        t = (8 + s2) / s1
        nxt = lv[k + 1] if k + 1 < len(lv) else None
        if t > x and (nxt is None or t <= nxt):
            return t
    return None


class Oracle:
    """Persons' exact spends (grid units, as Fractions of a nat x 2^42) under the documented
    rule, replayed independently of the ledger's SQL."""

    def __init__(self) -> None:
        self.spent: dict[str, Fraction] = {}
        self.level: dict[str, Fraction] = {}
        self.top: dict[str, Fraction] = {}

    def release(self, ids, eps, spend: Fraction, target: str, segs=None) -> bool:
        """Apply one release; False if it must be refused (nobody has anything left). With
        ``segs`` (one segment per person: a release per segment) each segment's cap comes
        from its own persons' run levels and each person is charged their own segment's
        grant, once."""
        segs = [0] * len(ids) if segs is None else list(segs)
        run: dict[str, Fraction] = {}
        units: dict[str, int] = {}
        for i, e in zip(ids, eps, strict=True):
            budget = math.floor(Fraction(e) * G)
            ru = max(0, min(math.floor(budget * spend), budget - self.spent.get(i, 0)))
            r = floor_float(Fraction(ru, G))
            run[i] = Fraction(0) if r < LEVEL_MIN else r
            units[i] = ru
        if not any(r > 0 for r in run.values()):
            return False
        per: dict[object, dict[Fraction, int]] = {}
        for i, g in zip(ids, segs, strict=True):
            counts = per.setdefault(g, {})
            counts[run[i]] = counts.get(run[i], 0) + 1
        tau_u = {g: _cap_units(counts, target) for g, counts in per.items()}
        for i, e, g in zip(ids, eps, segs, strict=True):
            t = tau_u[g]
            c = 0 if run[i] == 0 else (units[i] if t is None else min(units[i], t))
            self.spent[i] = self.spent.get(i, 0) + c
            # a release never takes a person past the level in force (a person who tightened
            # their level below what they already lost is simply not charged again)
            assert c == 0 or self.spent[i] <= math.floor(Fraction(e) * G)
            self.level[i] = Fraction(e)
            self.top[i] = max(self.top.get(i, Fraction(0)), Fraction(e))
        return True


def _cap_units(counts: dict[Fraction, int], target: str) -> int | None:
    """One segment's cap on the grid (rounded up), None when nothing caps it."""
    if not any(r > 0 for r in counts):
        return None
    if target == "population":
        tau = exact_tau(counts)
    else:  # TableMean's cap 1/(n eta) (hdp_core.table_mean, tested against cvxpy)
        lv = np.array([float(x) for x in counts])
        ct = np.array(list(counts.values()))
        cap = table_mean(_profile(lv, ct)).cap_level
        tau = None if math.isinf(cap) else Fraction(cap)
    return None if tau is None else math.ceil(tau * G)


def _profile(lv, ct):
    from hdp_core.profile import EpsilonProfile

    return EpsilonProfile.from_tiers(lv, ct)


def key_hash(secret: bytes, pid: str) -> bytes:
    """The documented keyed hash, computed here with hashlib."""
    return hashlib.sha256((secret.hex() + "|" + pid).encode()).digest()[:16]


def check_against(led: PrivacyLedger, orc: Oracle) -> None:
    got = person_spent_units(led)
    secret = led.secret_key()
    want = {key_hash(secret, i): int(v) for i, v in orc.spent.items()}
    assert got == want
    for i, v in orc.spent.items():  # no loss past the largest level the person ever had
        assert Fraction(int(v), G) <= orc.top[i]


def table(n: int, seed: int, levels=(0.2, 1.0, 3.0)) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "uid": [f"p{k:04d}" for k in range(n)],
            "wage": rng.uniform(0, 100, n),
            "hours": rng.uniform(0, 60, n),
            "region": rng.integers(0, 4, n),
            "eps": rng.choice(levels, n),
        }
    )


def _release(df, led, spend, target, col="wage", **kw):
    hi = 100 if col == "wage" else 60
    return release_mean(
        df,
        value=col,
        eps="eps",
        lo=0,
        hi=hi,
        ledger=led,
        id="uid",
        spend=spend,
        target=target,
        **kw,
    )


# ------------------------------------------------------------------------------ the replay
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.slow
def test_random_sequences_match_the_oracle_and_never_overspend(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    df = table(80, seed)
    led = PrivacyLedger(tmp_path / "l.duckdb")
    orc = Oracle()
    spends = [Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(1), Fraction(3, 10)]
    refused = released = 0
    for _step in range(12):
        kind = rng.integers(0, 4)
        if kind == 0:  # a random subset
            part = df[rng.random(len(df)) < 0.6]
        elif kind == 1:  # one region's file
            part = df[df.region == rng.integers(0, 4)]
        elif kind == 2:  # some persons change their level (tighten or loosen)
            df = df.copy()
            ch = rng.random(len(df)) < 0.2
            df.loc[ch, "eps"] = rng.choice([0.1, 0.5, 2.0], int(ch.sum()))
            part = df
        else:
            part = df
        spend = spends[rng.integers(0, len(spends))]
        target = ["population", "table"][rng.integers(0, 2)]
        col = ["wage", "hours"][rng.integers(0, 2)]
        part = part.sample(frac=1, random_state=int(rng.integers(1 << 30)))  # any row order
        expect = orc.release(list(part.uid), list(part.eps), spend, target) if len(part) else None
        if expect is None:
            continue
        if expect:
            _release(part, led, spend, target, col)
            released += 1
        else:
            with pytest.raises(BudgetExceeded):
                _release(part, led, spend, target, col)
            refused += 1
        check_against(led, orc)
    assert released >= 3


# ------------------------------------------------------------------------- the sequences
@pytest.mark.slow
def test_split_by_region_and_drop_one_row_are_refused_once_spent(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    df = table(400, 7, levels=(0.01,))  # nobody saturates: spend 1 exhausts everyone
    rel = _release(df, led, 1, "population")
    assert int(rel.people.exhausted.sum()) == 0 and float(rel.people.kept_max.max()) == 0
    for r in range(4):  # the same people per region, one file each: refused
        with pytest.raises(BudgetExceeded):
            _release(df[df.region == r], led, Fraction(1, 2), "population")
    with pytest.raises(BudgetExceeded):  # drop one row: the same persons
        _release(df.iloc[1:], led, 1, "population")
    with pytest.raises(BudgetExceeded):  # another column of the same people
        _release(df, led, 1, "table", col="hours")
    secret = led.secret_key()
    spent = person_spent_units(led)
    for pid in df.uid:  # each lost exactly their level (on the grid), never more
        assert spent[key_hash(secret, pid)] == math.floor(Fraction(0.01) * G)


@pytest.mark.slow
def test_a_subset_after_half_spends_only_the_other_half(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    df = table(300, 8, levels=(0.01,))
    _release(df, led, Fraction(1, 2), "population")
    rel = _release(df[df.region == 0], led, 1, "population")  # asks 1, has 1/2 left
    assert rel.people.run_max.max() <= 0.005 + 2.0**-42  # the half left, on the grid
    assert rel.people.kept_max.max() == 0
    with pytest.raises(BudgetExceeded):
        _release(df[df.region == 0], led, Fraction(1, 10), "population")
    _release(df[df.region == 1], led, Fraction(1, 10), "table")  # others still have budget


def test_a_saturated_person_keeps_the_budget_and_a_later_release_uses_it(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    n = 2000
    df = pd.DataFrame(
        {
            "uid": np.arange(n),
            "wage": np.random.default_rng(3).uniform(0, 100, n),
            "eps": np.where(np.arange(n) < 1000, 0.05, 1.0),
        }
    )
    first = release_mean(df, value="wage", eps="eps", lo=0, hi=100, ledger=led, id="uid")
    tau = first.saturation_level
    assert 0.05 < tau < 1.0
    row = first.people[first.people.eps == 1.0].iloc[0]
    assert row.saturated == 1000 and row.lost_max <= tau + 2.0**-42
    assert row.kept_min == pytest.approx(1.0 - tau, abs=1e-12)
    lenient = df[df.eps == 1.0]
    second = release_mean(lenient, value="wage", eps="eps", lo=0, hi=100, ledger=led, id="uid")
    # the equal-split plan: two releases at half the level each
    split = release_mean(lenient, value="wage", eps="eps", lo=0, hi=100, spend=Fraction(1, 2))
    assert second.noise_scale < split.noise_scale
    assert second.people.run_min.iloc[0] == pytest.approx(1.0 - tau, abs=1e-12)


# ------------------------------------------------------------------------------ refusals
def test_duplicated_and_missing_ids_are_refused_before_any_charge(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    df = table(50, 4)
    dup = pd.concat([df, df.iloc[[3, 3, 9]]])
    with pytest.raises(ReleaseError) as err:
        _release(dup, led, 1, "population")
    assert "3 rows repeat" in str(err.value) and "p0003" not in str(err.value)
    miss = df.copy()
    miss.loc[5, "uid"] = None
    with pytest.raises(BadCellError) as bad:
        _release(miss, led, 1, "population")
    assert bad.value.row == 6 and bad.value.column == "uid"
    assert person_spent_units(led) == {} and led.history() == []
    with pytest.raises(ReleaseError, match="ledger"):
        release_mean(df, value="wage", eps="eps", lo=0, hi=100, id="uid")
    with pytest.raises(ReleaseError, match="own"):
        release_mean(df, value="wage", eps="eps", lo=0, hi=100, ledger=led, id="eps")
    fl = df.assign(uid=np.arange(50) + 0.5)
    with pytest.raises(ReleaseError, match="integers or text"):
        _release(fl, led, 1, "population")


def test_csv_ids_are_text_and_the_ledger_stores_no_id(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    path = tmp_path / "t.csv"
    df = pd.DataFrame({"uid": ["007", "7", "zq008"], "wage": [1.0, 2.0, 3.0], "eps": [0.5] * 3})
    df.to_csv(path, index=False)
    rel = release_mean(str(path), value="wage", eps="eps", lo=0, hi=10, ledger=led, id="uid")
    assert int(rel.people.persons.sum()) == 3  # '007' and '7' are two persons (text)
    secret = led.secret_key()
    assert set(person_spent_units(led)) == {key_hash(secret, i) for i in ("007", "7", "zq008")}
    raw = (tmp_path / "l.duckdb").read_bytes()
    assert b"zq008" not in raw  # ids are never stored (an id unlike any number)
    summary = person_summary(led)
    assert list(summary.persons) == [3] and "h" not in summary.columns
    entry = led.history()[-1]
    assert entry.status == "released" and entry.summary["id_column"] == "uid"


# ------------------------------------------------------------------------------ a race
@pytest.mark.slow
def test_a_race_of_processes_never_overspends_a_person(tmp_path):
    path = tmp_path / "l.duckdb"
    PrivacyLedger(path)
    data = tmp_path / "t.parquet"
    table(200, 5, levels=(0.01,)).to_parquet(data)
    code = textwrap.dedent(
        f"""
        from hdp_core.errors import BudgetExceeded, LedgerBusy
        from hdp_release.ledger.store import PrivacyLedger
        from hdp_release.release import release_mean
        try:  # a long wait: on a loaded machine a waiter is never turned away as busy
            led = PrivacyLedger({str(path)!r}, busy_timeout=300)
            release_mean({str(data)!r}, value="wage", eps="eps", lo=0, hi=100,
                         ledger=led, id="uid", spend="1/2")
            print("ok")
        except BudgetExceeded:
            print("refused")
        except LedgerBusy:
            print("busy")
        """
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert outs.count("ok") == 2 and outs.count("refused") == 2, outs
    led = PrivacyLedger(path)
    budget = math.floor(Fraction(0.01) * G)
    half = math.floor(budget * Fraction(1, 2))  # each of the two releases, on the grid
    assert set(person_spent_units(led).values()) == {2 * half} and 2 * half <= budget


def test_public_and_zero_persons_and_a_public_person_who_turns_private(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    n = 600
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "uid": np.arange(n),
            "wage": rng.uniform(0, 100, n),
            "eps": np.array(["0.5", "public", "0", "2"])[np.arange(n) % 4],
        }
    )
    first = release_mean(df, value="wage", eps="eps", lo=0, hi=100, ledger=led, id="uid")
    assert first.recorded is True  # its receipt (inf for public persons) is stored as JSON
    tau = first.saturation_level
    pub = first.people[np.isinf(first.people.eps)].iloc[0]
    assert pub.lost_max == pytest.approx(tau, abs=2.0**-42)  # a public person loses tau*
    summary = person_summary(led)
    assert list(summary.persons) == [150] * 4
    assert list(summary.exhausted) == [0, 150, 0, 0]  # the 0.5 persons (not saturated)
    # everyone now asks for 1.0: a formerly public person has 1 - tau* left, a 0 person 1
    second = release_mean(
        df.assign(eps=1.0), value="wage", eps="eps", lo=0, hi=100, ledger=led, id="uid"
    )
    secret = led.secret_key()
    spent = person_spent_units(led)
    budget = math.floor(Fraction(1.0) * G)
    assert max(spent.values()) <= budget
    assert spent[key_hash(secret, "1")] <= budget  # the public person: held to the new level
    assert second.people.run_min.iloc[0] <= 1.0 - tau + 2.0**-42


@pytest.mark.slow
def test_one_ledger_keeps_one_kind_of_budget(tmp_path):
    """A ledger that charged persons refuses a release without an id, and one that charged a
    dataset refuses a release with an id, both before anything is charged: otherwise a
    person's losses of one kind would go unseen by the other (hdp_release.ledger.modes)."""
    from hdp_core.errors import BudgetExceeded
    from hdp_release.ledger.modes import MODE_IDENTITY

    df = pd.DataFrame(
        {"uid": range(40), "v": np.linspace(0, 100, 40), "e": [0.5, 1.0, 2.0, 4.0] * 10}
    )
    people = PrivacyLedger(tmp_path / "people.duckdb")
    release_mean(df, value="v", eps="e", lo=0, hi=100, ledger=people, id="uid", spend=0.5)
    n = len(people.history())
    with pytest.raises(BudgetExceeded) as ei:
        release_mean(df, value="v", eps="e", lo=0, hi=100, ledger=people, spend=0.5)
    assert ei.value.identity == MODE_IDENTITY and "per person" in str(ei.value)
    assert len(people.history()) == n  # nothing charged
    datasets = PrivacyLedger(tmp_path / "datasets.duckdb")
    release_mean(df, value="v", eps="e", lo=0, hi=100, ledger=datasets, spend=0.5)
    with pytest.raises(BudgetExceeded) as ei:
        release_mean(df, value="v", eps="e", lo=0, hi=100, ledger=datasets, id="uid", spend=0.5)
    assert ei.value.identity == MODE_IDENTITY and "per dataset" in str(ei.value)
    assert len(datasets.history()) == 1
