"""release_mean(..., ledger=, spend=, dataset=) and the CLI's ledger flags (issue 22).

Oracles: exact fractions for the budget (what remains after k spends), ADPM's noise law
R / ||r||_1 with r = eps when nothing saturates (so a quarter of the levels gives 4x the
noise), the ledger's own stored rows compared to the returned Release, and counts of
charges (history) before and after refusals.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hdp_core as hdp
from hdp_core.errors import BadCellError, BudgetExceeded, LedgerUnusable, ReleaseError
from hdp_release import release as R
from hdp_release.cli import main as cli
from hdp_release.fingerprint import fingerprint_frame, levels_identity_arrays
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean

ROOT = Path(__file__).resolve().parents[2]
LO, HI = 0.0, 100.0


def table(n=200, seed=3):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {"id": np.arange(n), "v": rng.uniform(0, 100, n), "e": rng.choice([0.5, 1.0, 2.0, 0.0], n)}
    )


def write_csv(df: pd.DataFrame, path: Path, blank_lines=False) -> str:
    text = df.to_csv(index=False)
    if blank_lines:
        lines = text.splitlines()
        text = "\n".join([lines[0], "", *lines[1:], "", ""]) + "\n"
    path.write_text(text)
    return str(path)


@pytest.fixture
def led(tmp_path):
    return PrivacyLedger(tmp_path / "ledger.duckdb")


# ------------------------------------------------------------------------------ the budget
@pytest.mark.slow
def test_two_half_spends_then_refused_whatever_the_files_look_like(tmp_path, led):
    df = table()
    a = write_csv(df, tmp_path / "a.csv")
    release_mean(a, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.5)
    # the same data: rows shuffled, columns reordered, blank lines, another name, a DataFrame
    shuffled = df.sample(frac=1, random_state=1)[["e", "id", "v"]]
    b = write_csv(shuffled, tmp_path / "renamed copy.csv", blank_lines=True)
    rel = release_mean(b, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend="1/2")
    assert rel.budget_remaining == 0 and rel.spend == 0.5
    for src in (a, b, shuffled, df[["v", "e"]]):
        with pytest.raises(BudgetExceeded) as info:
            release_mean(src, value="v", eps="e", lo=LO, hi=HI, ledger=str(led.path), spend=0.5)
        assert info.value.remaining == 0 and info.value.requested == Fraction(1, 2)
    assert len(led.history()) == 2  # refusals charge nothing
    # other values with the same levels: refused alike (nothing depends on a value, issue 32)
    other = df.assign(v=df["v"] + 1)
    with pytest.raises(BudgetExceeded) as info:
        release_mean(other, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.5)
    assert info.value.remaining == 0 and "lv1:" not in str(info.value)
    # another level profile (a level changed) is another dataset
    moved = df.assign(e=np.where(df.index == 0, 0.25, df["e"]))
    release_mean(moved, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=1)


def test_a_name_is_a_second_identity(led):
    df = table()
    release_mean(df, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.75, dataset="Survey")
    changed = df.assign(v=df["v"] * 0.5)  # new content, same name: the name is spent
    with pytest.raises(BudgetExceeded) as info:
        release_mean(
            changed, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.5, dataset="survey "
        )
    assert info.value.remaining == Fraction(1, 4) and info.value.identity == "name:survey"
    rel = release_mean(
        changed, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.25, dataset="survey"
    )
    assert rel.dataset == "survey" and rel.budget_remaining == 0
    assert "fp1:" not in json.dumps(rel.to_dict()) and "fp1:" not in rel.text()


def test_spend_scales_the_levels_and_the_noise(led, monkeypatch):
    """Nothing saturates (G < 8), so ADPM's noise is R / sum(eps): a quarter of every level
    is 4x the noise; the receipt shows the requested eps, the run level and the loss."""
    rng = np.random.default_rng(4)
    n = 2000
    df = pd.DataFrame({"v": rng.uniform(0, 100, n), "e": rng.choice([0.01, 0.02, 0.05], n)})
    full = release_mean(df, value="v", eps="e", lo=LO, hi=HI)
    quarter = release_mean(df, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.25)
    assert math.isinf(full.saturation_level) and not quarter.outputs_midrange
    assert quarter.noise_scale == pytest.approx(4 * full.noise_scale, rel=1e-9)
    assert quarter.noise_scale == pytest.approx((HI - LO) / (0.25 * df["e"].sum()), rel=1e-9)
    t = quarter.tiers
    np.testing.assert_allclose(t["eps"], [0.01, 0.02, 0.05])
    np.testing.assert_array_equal(t["run_eps"], t["eps"] * 0.25)
    assert (t["privacy_loss"] <= t["run_eps"]).all() and quarter.level_factor == 0.25
    # without a ledger the spend still applies, and nothing is tracked
    free = release_mean(df, value="v", eps="e", lo=LO, hi=HI, spend=0.25)
    assert free.ledger_path is None and free.noise_scale == quarter.noise_scale
    assert "not tracked" in free.text()


def test_table_target_with_a_ledger(led):
    df = table()
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI, ledger=led, target="table", spend=0.5)
    [h] = led.history()
    assert h.target == "table" and h.summary == rel.to_dict()
    lv, ct = np.unique(df["e"], return_counts=True)
    sol = hdp.table_mean(hdp.EpsilonProfile.from_tiers(lv * 0.5, ct))
    assert rel.noise_scale == pytest.approx(sol.noise_scale * (HI - LO), rel=1e-9)


def test_the_stored_receipt_equals_the_returned_one(led):
    df = table()
    rel = release_mean(df, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.3, dataset="s")
    [h] = led.history("name:s")
    assert h.status == "released" and h.estimate == rel.estimate and h.ci95 == rel.ci95
    assert h.receipt == rel.to_dict()["tiers"] and h.summary == rel.to_dict()
    assert h.spend == Fraction(3, 10)
    # the keyed level profile is the identity; no unkeyed content hash is stored
    assert levels_identity_arrays(df["e"], led.secret_key()) in h.identities
    assert fingerprint_frame(df, "v", "e") not in h.identities
    assert led.remaining("name:s") == Fraction(7, 10)


def test_a_failure_after_charging_keeps_the_charge(led, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("engine died")

    monkeypatch.setattr(R, "_release", boom)
    df = table()
    with pytest.raises(RuntimeError):
        release_mean(df, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.6)
    [h] = led.history()
    assert h.status == "failed" and h.failure == "RuntimeError"
    assert led.remaining(h.identities) == Fraction(2, 5)


def test_bad_input_is_refused_before_charging(tmp_path, led):
    df = table()
    bad = df.astype({"v": object})
    bad.loc[7, "v"] = "secret-123"
    with pytest.raises(BadCellError) as info:
        release_mean(bad, value="v", eps="e", lo=LO, hi=HI, ledger=led)
    assert info.value.row == 8 and "secret" not in str(info.value)
    for d, kw, match in (
        (df.assign(e=df["e"].where(df.index != 3, -1.0)), {}, "eps column 'e', row 4: negative"),
        (df.assign(v=df["v"].where(df.index != 5, np.nan)), {}, "value column 'v', row 6"),
        (df.assign(e=df["e"].where(df.index != 2, 1e-9)), {}, "row 3: a level below"),
        (df.assign(e=0.0), {}, "no usable user"),
        (df.iloc[:0], {}, "the table is empty"),
        (df, {"value": "nope"}, "no value column 'nope'"),
        (df, {"dataset": " "}, "dataset name must be non-empty"),
        (df, {"spend": 0}, "spend must be in"),
    ):
        args = {"value": "v", "eps": "e", "lo": LO, "hi": HI, "ledger": led} | kw
        with pytest.raises(ReleaseError, match=match):
            release_mean(d, **args)
    # a bad value in a row with eps = 0 is refused too (as without a ledger)
    zero_bad = df.assign(v=df["v"].where(~((df["e"] == 0) & (df.index > 10)), np.inf))
    with pytest.raises(BadCellError):
        release_mean(zero_bad, value="v", eps="e", lo=LO, hi=HI, ledger=led)
    assert led.history() == []


def test_a_corrupt_ledger_refuses_before_anything(tmp_path, monkeypatch):
    p = tmp_path / "ledger.duckdb"
    p.write_bytes(b"this is not a ledger" * 100)
    opened = []
    real = R.open_source
    monkeypatch.setattr(R, "open_source", lambda *a, **k: opened.append(1) or real(*a, **k))
    with pytest.raises(LedgerUnusable):
        release_mean(table(), value="v", eps="e", lo=LO, hi=HI, ledger=str(p))
    assert opened == []
    assert p.read_bytes() == b"this is not a ledger" * 100  # never replaced


def test_a_dataset_name_needs_a_ledger():
    with pytest.raises(ReleaseError, match="only used with a ledger"):
        release_mean(table(), value="v", eps="e", lo=LO, hi=HI, dataset="x")


def test_tier_names_are_their_levels_in_the_fingerprint(led):
    menu = {"Strict": 0.5, "Open": "public"}
    named = pd.DataFrame({"v": [1.0, 2.0, 3.0] * 10, "e": ["strict", "OPEN ", "2"] * 10})
    numeric = pd.DataFrame({"v": [1.0, 2.0, 3.0] * 10, "e": [0.5, math.inf, 2.0] * 10})
    release_mean(named, value="v", eps="e", lo=LO, hi=HI, tiers=menu, ledger=led)
    with pytest.raises(BudgetExceeded):
        release_mean(numeric, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.01)


# ------------------------------------------------------------------------------ CLI
def test_cli_flags(tmp_path, capsys):
    df = table()
    p = write_csv(df, tmp_path / "t.csv")
    led = str(tmp_path / "l.duckdb")
    base = [p, "--value", "v", "--eps", "e", "--range", "0", "100", "--format", "json"]
    assert cli([*base, "--target", "table", "--ledger", led, "--spend", "1/2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["target"] == "table" and out["spend"] == 0.5 and out["tracked"] is True
    assert cli([*base, "--ledger", led, "--spend", "0.5", "--dataset", "Survey"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dataset"] == "Survey" and out["budget_remaining"] == 0
    assert out["target"] == "population"
    assert cli([*base, "--ledger", led, "--spend", "0.1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the dataset's privacy budget") and err.count("\n") == 1
    assert "0% remains" in err
    for bad in (["--spend", "2"], ["--spend", "x"]):
        assert cli([*base, "--ledger", led, *bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: the spend must be") and err.count("\n") == 1
    with pytest.raises(SystemExit) as exit_info:  # argparse's own errors: one line, status 2
        cli([*base, "--ledger", led, "--target", "sample"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: argument --target: invalid choice") and err.count("\n") == 1
    # the listing, from the release CLI
    assert cli(["--list-ledger", led, "--dataset", "survey", "--format", "json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    # the name was charged once (the first release had no name): half of it remains
    assert listing["remaining"] == "1/2" and len(listing["releases"]) == 1
    assert cli(["--list-ledger", led]) == 0
    assert capsys.readouterr().out.count("spend 50%") == 2
    with pytest.raises(SystemExit) as exit_info:  # no path: one line, exit 2
        cli(["--value", "v"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the following arguments are required: PATH, --eps")
    assert err.count("\n") == 1


def test_cli_subprocess_refusal_has_no_traceback(tmp_path):
    df = table(50)
    p = write_csv(df, tmp_path / "t.csv")
    led = tmp_path / "l.duckdb"
    led.write_bytes(b"garbage" * 50)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [sys.executable, "-m", "hdp_release", p, "--value", "v", "--eps", "e",
         "--range", "0", "100", "--ledger", str(led)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: the privacy ledger") and r.stderr.count("\n") == 1


# ------------------------------------------------------------------------------ Spark


@pytest.mark.slow
def test_switching_to_spark_does_not_reset_the_budget(spark, tmp_path, led):
    df = table()
    p = write_csv(df, tmp_path / "a.csv")
    release_mean(p, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.5)
    q = tmp_path / "b.parquet"
    df.sample(frac=1, random_state=2)[["e", "v"]].to_parquet(q)
    rel = release_mean(str(q), value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.5,
                       engine="spark")  # fmt: skip
    assert rel.engine == "spark" and rel.budget_remaining == 0
    for src, eng in ((p, "spark"), (spark.createDataFrame(df), "spark"), (df, "duckdb")):
        with pytest.raises(BudgetExceeded):
            release_mean(src, value="v", eps="e", lo=LO, hi=HI, ledger=led, spend=0.5, engine=eng)
    bad = df.astype({"v": object})
    bad.loc[4, "v"] = "oops"
    with pytest.raises(BadCellError):
        release_mean(bad.astype({"v": str}), value="v", eps="e", lo=LO, hi=HI, ledger=led,
                     engine="spark")  # fmt: skip
    assert len(led.history()) == 2
