"""A release whose result the ledger cannot record afterwards (issue 22's leftover): the
charge stays (fail-closed charging is never weakened), and the caller still gets the release
it paid for, flagged ``recorded=False`` with ``record_failure``; the CLI prints it, warns on
stderr and exits 3; the Release page shows it with a warning box
(tests/app/test_page_release_unrecorded.py). ``ledger.record`` is made to raise by
monkeypatching the ledger object (or its class, for the CLI, which opens its own)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from test_release_nonfinite import HI, LO, float_frame, install_spy, source, text_frame

from hdp_app.views import release_budget as B
from hdp_core.errors import BudgetExceeded, LedgerBusy, LedgerUnusable
from hdp_release.cli import NOT_RECORDED
from hdp_release.cli import main as cli_main
from hdp_release.fingerprint import levels_identity_arrays
from hdp_release.ledger.store import PrivacyLedger, dataset_identities
from hdp_release.release import release_mean
from hdp_release.result import not_recorded_note


def _busy(*args, **kwargs):
    raise LedgerBusy("the privacy ledger 'x' is busy", path="x", waited=10.0)


def _broken(*args, **kwargs):
    raise RuntimeError("disk full")


def _release_with(led, **kw):
    return release_mean(float_frame(), value="value", eps="eps", lo=LO, hi=HI, ledger=led, **kw)


@pytest.mark.parametrize("failure, code", [(_busy, "LedgerBusy"), (_broken, "RuntimeError")])
@pytest.mark.slow
def test_a_release_the_ledger_cannot_record_is_returned_flagged_and_stays_charged(
    tmp_path, monkeypatch, failure, code
):
    noised = install_spy(monkeypatch)  # no noise: the estimate is checked exactly
    led = PrivacyLedger(tmp_path / "l.duckdb")
    monkeypatch.setattr(led, "record", failure)
    rel = _release_with(led, spend=0.5, dataset="Sales")
    # the caller gets the release it paid for, flagged
    assert rel.recorded is False and rel.record_failure == code
    assert (
        rel.estimate
        == release_mean(float_frame(), value="value", eps="eps", lo=LO, hi=HI, spend=0.5).estimate
    )
    assert len(noised) == 2  # one noise draw each: the release was made once, not twice
    assert rel.ledger_path == led.path and rel.budget_remaining == 0.5
    d = rel.to_dict()
    assert d["recorded"] is False and d["record_failure"] == code and d["tracked"] is True
    assert "WARNING: the privacy ledger could not record" in rel.text()
    # the charge stays: the ledger counts it, its history lists it with no result
    key = led.secret_key()
    ids = dataset_identities(levels_identity_arrays(float_frame()["eps"], key), "Sales")
    assert led.spent(ids) == Fraction(1, 2)
    (entry,) = led.history(ids)
    assert entry.status == "charged" and entry.estimate is None and entry.spend == Fraction(1, 2)
    assert B.history_frame([entry])["status"].tolist() == [B.CHARGED_STATUS]
    # and the budget is enforced with it: 0.5 left, so 0.75 is refused before anything runs
    monkeypatch.undo()
    with pytest.raises(BudgetExceeded) as ei:
        _release_with(PrivacyLedger(tmp_path / "l.duckdb"), spend=0.75, dataset="Sales")
    assert ei.value.remaining == Fraction(1, 2)


def test_recorded_is_true_with_a_ledger_and_none_without(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    rel = _release_with(led, spend=0.25)
    assert rel.recorded is True and rel.record_failure is None
    (entry,) = led.history()
    assert entry.status == "released" and entry.summary["recorded"] is True
    assert entry.estimate == rel.estimate
    free = release_mean(float_frame(), value="value", eps="eps", lo=LO, hi=HI)
    assert free.recorded is None and free.to_dict()["recorded"] is None
    assert "WARNING" not in rel.text() + free.text()
    assert B.not_recorded_warning(rel) is None and B.not_recorded_warning(free) is None


def test_a_refused_release_is_still_an_error_not_a_flag(tmp_path, monkeypatch):
    """Only recording the result after a release is forgiven: a ledger that cannot charge
    still refuses (nothing released), and the charge is never undone."""
    led = PrivacyLedger(tmp_path / "l.duckdb")
    monkeypatch.setattr(led, "charge", _busy)
    with pytest.raises(LedgerBusy):
        _release_with(led)
    monkeypatch.setattr(
        led,
        "charge",
        lambda *a, **k: (_ for _ in ()).throw(LedgerUnusable("x", path="x", reason="corrupt")),
    )
    with pytest.raises(LedgerUnusable):
        _release_with(led)


def test_the_words_name_the_failure_and_the_charge():
    rel = _release_with(None)
    from dataclasses import replace

    busy = replace(rel, recorded=False, record_failure="LedgerBusy")
    note = not_recorded_note(busy)
    assert "(the ledger was busy)" in note and "The release was charged" in note
    assert "an error while writing it" in not_recorded_note(replace(busy, record_failure="OSError"))
    page = B.not_recorded_warning(busy)
    assert page.startswith("The privacy ledger could not record") and B.CHARGED_STATUS in page


# ------------------------------------------------------------------------------ the CLI
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_the_cli_prints_the_release_warns_and_exits_3(tmp_path, monkeypatch, capsys, fmt):
    install_spy(monkeypatch)
    monkeypatch.setattr(PrivacyLedger, "record", _busy)
    path = source("csv", text_frame(), tmp_path)
    ledger = tmp_path / "cli.duckdb"
    args = [path, "--value", "value", "--eps", "eps", "--range", str(LO), str(HI)]
    code = cli_main([*args, "--ledger", str(ledger), "--spend", "0.5", "--format", fmt])
    out, err = capsys.readouterr()
    assert code == NOT_RECORDED == 3
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: the privacy ledger could not record")
    assert "(the ledger was busy)" in lines[0] and "The release was charged" in lines[0]
    want = release_mean(float_frame(), value="value", eps="eps", lo=LO, hi=HI, spend=0.5)
    if fmt == "json":
        d = json.loads(out)
        assert d["estimate"] == want.estimate and d["recorded"] is False
        assert d["record_failure"] == "LedgerBusy"
    else:
        assert f"private mean: {want.estimate:.6g}" in out and "WARNING:" in out
    monkeypatch.undo()
    (entry,) = PrivacyLedger(ledger).history()
    assert entry.status == "charged" and entry.spend == Fraction(1, 2)
    # a release the ledger records exits 0 (and a refusal 2)
    assert cli_main([*args, "--ledger", str(ledger), "--spend", "0.5"]) == 0
    assert cli_main([*args, "--ledger", str(ledger), "--spend", "0.5"]) == 2
    assert "warning" not in capsys.readouterr().err
