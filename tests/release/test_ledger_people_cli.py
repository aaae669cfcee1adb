"""The per-person ledger's command lines and defaults (issue 30): ``--id``, ``--no-ledger``,
$HDP_LEDGER used by the library and the CLI when set, ``python -m hdp_release.ledger PATH
--people`` (counts only, never ids or hashes)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from hdp_core.errors import BudgetExceeded
from hdp_release.cli import main
from hdp_release.ledger.cli import main as ledger_main
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean
from hdp_release.result import DATASET_LEDGER_NOTE, NOT_TRACKED_NOTE


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(5)
    n = 300
    df = pd.DataFrame(
        {
            "user_id": [f"id-{k:05d}" for k in range(n)],
            "wage": rng.uniform(0, 100, n),
            "eps": rng.choice([0.05, 1.0], n),
        }
    )
    path = tmp_path / "wages.csv"
    df.to_csv(path, index=False)
    return path


def _args(csv, *more):
    return [str(csv), "--value", "wage", "--eps", "eps", "--range", "0", "100", *more]


@pytest.mark.slow
def test_cli_id_charges_persons_and_people_lists_counts_only(csv, tmp_path, capsys):
    led = tmp_path / "l.duckdb"
    assert main([*_args(csv, "--ledger", str(led), "--id", "user_id", "--format", "json")]) == 0
    out, err = capsys.readouterr()
    d = json.loads(out)
    assert d["id_column"] == "user_id" and {r["eps"] for r in d["people"]} == {0.05, 1.0}
    assert "warning" not in err
    assert ledger_main([str(led), "--people"]) == 0
    text = capsys.readouterr().out
    assert "persons: 300" in text and "id-0" not in text
    assert ledger_main([str(led), "--people", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["persons"] == 300 and sum(r["persons"] for r in got["levels"]) == 300
    assert "id-" not in json.dumps(got)
    # nobody saturates here (tau* is above 1.0): every person spent their level: refused
    assert main([*_args(csv, "--ledger", str(led), "--id", "user_id")]) == 2
    assert "budget" in capsys.readouterr().err


@pytest.mark.slow
def test_hdp_ledger_is_used_when_set_and_no_ledger_says_not_tracked(
    csv, tmp_path, monkeypatch, capsys
):
    env = tmp_path / "env.duckdb"
    monkeypatch.setenv("HDP_LEDGER", str(env))
    assert main(_args(csv, "--spend", "0.5")) == 0  # tracked in $HDP_LEDGER, per dataset
    out = capsys.readouterr().out
    assert DATASET_LEDGER_NOTE in out
    assert main([*_args(csv), "--format", "json", "--spend", "0.1"]) == 0
    assert json.loads(capsys.readouterr().out)["tracking"] == DATASET_LEDGER_NOTE
    assert len(PrivacyLedger(env).history()) == 2
    assert main(_args(csv, "--no-ledger")) == 0
    assert "NOT TRACKED" in capsys.readouterr().err
    assert len(PrivacyLedger(env).history()) == 2
    assert main(_args(csv, "--no-ledger", "--ledger", str(env))) == 2
    # the library: $HDP_LEDGER when set, ledger=False to opt out; per person in a new file
    # (one ledger keeps one kind of budget: hdp_release.ledger.modes)
    people = tmp_path / "people.duckdb"
    monkeypatch.setenv("HDP_LEDGER", str(people))
    rel = release_mean(str(csv), value="wage", eps="eps", lo=0, hi=100, id="user_id")
    assert rel.ledger_path == str(people) and rel.people is not None
    free = release_mean(str(csv), value="wage", eps="eps", lo=0, hi=100, ledger=False)
    assert free.ledger_path is None and NOT_TRACKED_NOTE.startswith("NOT TRACKED")
    with pytest.raises(BudgetExceeded):  # nobody saturates: every person spent their level
        release_mean(str(csv), value="wage", eps="eps", lo=0, hi=100, id="user_id")
    from hdp_release.grouped import release_means

    monkeypatch.setenv("HDP_LEDGER", str(env))

    by = pd.read_csv(csv).assign(half=lambda d: d.index % 2)
    grouped = release_means(by, value="wage", eps="eps", lo=0, hi=100, by="half", spend="1/10")
    assert grouped.ledger_path == str(env)  # the grouped release reads $HDP_LEDGER too
    monkeypatch.delenv("HDP_LEDGER")
    assert release_mean(str(csv), value="wage", eps="eps", lo=0, hi=100).ledger_path is None


def test_cli_by_with_id_charges_each_person_once_in_their_segment(csv, tmp_path, capsys):
    df = pd.read_csv(csv).assign(half=lambda d: d.index % 2)
    path = tmp_path / "halves.csv"
    df.to_csv(path, index=False)
    led = tmp_path / "l.duckdb"
    args = _args(path, "--ledger", str(led), "--id", "user_id", "--by", "half")
    assert main([*args, "--spend", "1/2"]) == 0
    out = capsys.readouterr().out
    assert "per person (id column 'user_id')" in out and "kept for later releases" in out
    assert "id-0" not in out
    assert main([*args, "--spend", "1/2", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["id_column"] == "user_id" and {r["key"][0] for r in d["people"]} == {"0", "1"}
    assert sum(r["persons"] for r in d["people"]) == 300
    # two halves of every level spent (nobody saturates): the whole table is refused now
    assert main(_args(csv, "--ledger", str(led), "--id", "user_id")) == 2
    assert "budget" in capsys.readouterr().err
    assert len(PrivacyLedger(led).history()) == 2
