"""The Release page (AppTest) with the non-finite and out-of-range cells of
tests/hostile_cells.py: each refused cell is named (column, row) in the preview's
error, never shown, nothing can be released and the server's ledger is not charged; a value
outside the range is clamped and an eps of 'inf' is a public user, as in the library."""

from __future__ import annotations

import math

import pytest
from helpers import open_page, shown
from hostile_cells import (
    BAD_ROW,
    EPS_REFUSED,
    HI,
    LO,
    VALUE_CLAMPED,
    VALUE_REFUSED,
    csv_text,
    float_frame,
    install_spy,
    text_frame,
)
from test_page_release import _answer, _release, _set_range, _texts, _upload

from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean


@pytest.fixture
def page(app):
    at = open_page(app, "release")
    assert not at.exception
    return at


CASES = [("value", c) for c in VALUE_REFUSED] + [("eps", c) for c in EPS_REFUSED]


@pytest.mark.parametrize("column, cell", CASES)
def test_a_bad_cell_is_named_never_shown_and_nothing_is_charged(page, ledger_path, column, cell):
    data = csv_text(text_frame(**{f"{column}_cell": cell})).encode()
    at = _set_range(_upload(page, "t.csv", data), LO, HI)
    assert not at.exception
    err = " ".join(shown(e.value) for e in at.error)
    assert f"column '{column}', row {BAD_ROW}" in err, err
    assert "Nothing can be released yet" in err
    if any(ch.isdigit() for ch in cell):
        assert cell not in _texts(at) and cell not in err
    assert not at.button  # no Release button while the table has a problem
    assert at.session_state["rel_last"] is None
    assert PrivacyLedger(ledger_path).history() == []


def test_an_infinite_level_is_public_and_a_value_outside_the_range_is_clamped(
    page, ledger_path, monkeypatch
):
    noised = install_spy(monkeypatch)  # OpenDP's privacy map, no noise: exact comparisons
    cell = next(iter(VALUE_CLAMPED))  # just above the range
    df = text_frame(value_cell=cell, eps_cell="inf")
    at = _set_range(_upload(page, "t.csv", csv_text(df).encode()), LO, HI)
    assert not at.error
    _release(_answer(at, "No"))
    rel = at.session_state["rel_last"]["rel"]
    assert rel.n_public == 1
    want = float_frame(value=VALUE_CLAMPED[cell], eps=math.inf)
    ref = release_mean(want, value="value", eps="eps", lo=LO, hi=HI)
    assert rel.estimate == ref.estimate and rel.noise_scale == ref.noise_scale
    assert len(PrivacyLedger(ledger_path).history()) == 1
    assert len(noised) == 2 and all(0 <= x <= HI - LO for x in noised)
