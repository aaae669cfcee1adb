"""The Release page when the ledger cannot record a release it charged (issue 22's
leftover; the library and CLI side: tests/release/test_release_unrecorded.py): the page shows
the release with a warning box, and the charge stays."""

from __future__ import annotations

from fractions import Fraction

import pytest
from helpers import open_page, shown
from test_page_release import _answer, _csv, _release, _set_range, _upload

from hdp_app.views import release_budget as B
from hdp_core.errors import LedgerBusy
from hdp_release.ledger.store import PrivacyLedger


def _busy(*args, **kwargs):
    raise LedgerBusy("the privacy ledger 'x' is busy", path="x", waited=10.0)


# ------------------------------------------------------------------------------ the page
@pytest.fixture
def page(app):
    at = open_page(app, "release")
    assert not at.exception
    return at


def test_the_page_shows_the_release_with_a_warning_box(page, ledger_path, monkeypatch):
    monkeypatch.setattr(PrivacyLedger, "record", _busy)
    at = _set_range(_upload(page, "users.csv", _csv()), 0.0, 100.0)
    at.text_input(key="rel_dataset").set_value("Sales").run()  # the history is a name's
    at.slider(key="rel_spend").set_value(40).run()
    _release(_answer(at, "No"))
    rel = at.session_state["rel_last"]["rel"]
    assert rel.recorded is False and rel.record_failure == "LedgerBusy"
    warnings = [shown(w.value) for w in at.warning]
    assert shown(B.not_recorded_warning(rel)) in warnings
    # the estimate is on the page, with its receipt and downloads
    assert "Private mean" in [m.label for m in at.metric]
    assert [s for s in at.success if "Released" in s.value]
    assert at.get("download_button")
    # the charge stays: 60% left, the history lists the release as charged with no result
    assert [m.value for m in at.metric if m.label == "Budget remaining"] == ["60%"]
    history = [d.value for d in at.table if "status" in d.value.columns]  # a static table
    assert [h["status"].tolist() for h in history] == [[B.CHARGED_STATUS]]
    (entry,) = PrivacyLedger(ledger_path).history()
    assert entry.status == "charged" and entry.spend == Fraction(2, 5)
    assert not at.exception and not at.error
