"""The one sentence for a refused release (hdp_app.views.people.refusal_text), used by the
Release page for one mean and for a mean per segment."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import pytest

from hdp_app.views import people as P
from hdp_core.errors import BudgetExceeded, LedgerBusy, ReleaseError
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean


def test_a_ledger_of_the_other_kind_is_named_not_given_made_up_percentages(tmp_path):
    df = pd.DataFrame({"uid": range(8), "v": [1.0] * 8, "e": [1.0] * 8})
    led = PrivacyLedger(tmp_path / "l.duckdb")
    release_mean(df, value="v", eps="e", lo=0, hi=2, ledger=led, id="uid", spend="1/2")
    with pytest.raises(BudgetExceeded) as ei:
        release_mean(df, value="v", eps="e", lo=0, hi=2, ledger=led, spend="1/2")
    text = P.refusal_text(ei.value)
    assert text.startswith("Nothing was released") and "per person" in text
    assert "%" not in text  # no budget figures: the refusal is about the kind of ledger


def test_each_kind_of_refusal_has_its_sentence():
    spent = BudgetExceeded(
        "x",
        identity="name:sales",
        spent=Fraction(1),
        remaining=Fraction(0),
        requested=Fraction(1, 2),
    )
    assert "spent 100" in P.refusal_text(spent) and "sales" in P.refusal_text(spent)
    busy = LedgerBusy("the privacy ledger 'x' is busy", path="x", waited=10.0)
    assert P.refusal_text(busy) != P.refusal_text(ReleaseError("bad range"))
    assert P.refusal_text(ReleaseError("bad range")) == "Nothing was released: bad range."
