"""The Release page is no oracle on other people's values (issue 32): the candidate-file
attack of the issue's probe, with two AppTest sessions on one server ledger, and names scoped
per signed-in user.

Oracle: the attack itself. Session A releases 200 salaries (user 0 earns 73412); session B
uploads candidate files that differ only in user 0's value (73411, 73412, 73413). Everything
the page shows B (every text element, metric and table, and the button's state) must be the
same for every candidate, before a release and after pressing Release.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import metric, open_page, whole_app

import hdp_app.release_state as RS
from hdp_app.views import ledger_texts as LT

LO, HI = 0.0, 200_000.0


def _salaries(user0: float, levels=(0.5, 1.0, 2.0), n: int = 200) -> bytes:
    rng = np.random.default_rng(11)
    v = rng.uniform(20_000, 150_000, n).round()
    v[0] = user0
    return pd.DataFrame({"salary": v, "eps": rng.choice(levels, n)}).to_csv(index=False).encode()


def _session(data: bytes, dataset: str | None = None):
    at = open_page(whole_app(default_timeout=60), "release")
    at.get("file_uploader")[0].upload("salaries.csv", data, "text/csv").run()
    at.number_input(key="rel_lo").set_value(LO).run()
    at.number_input(key="rel_hi").set_value(HI).run()
    if dataset is not None:
        at.text_input(key="rel_dataset").set_value(dataset).run()
    assert not at.exception
    return at


def _answer_and_release(at):
    at.radio(key="rel_target").set_value("No").run()
    if not at.button(key="rel_go").disabled:
        at.button(key="rel_go").click().run()
    assert not at.exception
    return at


def _everything_shown(at) -> list:
    out: list = []
    for kind in ("markdown", "caption", "metric", "info", "warning", "success", "error"):
        for e in at.get(kind):
            out.append((kind, getattr(e, "label", None), str(getattr(e, "value", ""))))
    out += [("table", d.value.to_csv()) for d in at.dataframe]
    out += [("button", b.key, b.disabled) for b in at.button]
    return out


@pytest.mark.parametrize("dataset", [None, "payroll"])
@pytest.mark.slow
def test_the_candidate_file_attack_through_the_page_finds_nothing(dataset):
    a = _answer_and_release(_session(_salaries(73412.0), dataset="payroll"))
    assert a.session_state["rel_last"]["rel"].spend == 1.0  # A's release is made
    before, after = [], []
    for guess in (73411.0, 73412.0, 73413.0):
        b = _session(_salaries(guess), dataset=dataset)
        before.append(_everything_shown(b))
        after.append(_everything_shown(_answer_and_release(b)))
        assert b.session_state["rel_last"] is None  # refused alike: nothing released
    assert before[0] == before[1] == before[2]
    assert after[0] == after[1] == after[2]
    # B sees the budget of A's levels (public), never a value, nor A's history by levels
    assert metric(b, "Budget remaining") == "0%"
    shown = " ".join(str(x) for row in before[0] for x in row)
    assert "73,412" not in shown and "73412" not in shown
    if dataset is None:
        # no history without a name (the tables shown are the preview's)
        assert not [d for d in b.table if "spend" in d.value.columns]
    assert LT.names_notice(False) in shown  # names are shared: the page says so


@pytest.mark.slow
def test_names_are_scoped_per_signed_in_user(monkeypatch):
    user = {"who": "alice@example.org"}
    monkeypatch.setattr(RS, "signed_in_user", lambda: user["who"])
    alice = _session(_salaries(50_000.0), dataset="payroll")
    alice.slider(key="rel_spend").set_value(50).run()
    _answer_and_release(alice)
    assert LT.names_notice(True) in [c.value for c in alice.caption]
    other_levels = _salaries(60_000.0, levels=(0.25, 4.0))  # another level profile
    user["who"] = "bob@example.org"
    bob = _session(other_levels, dataset="payroll")
    assert metric(bob, "Budget remaining") == "100%"  # Bob's "payroll" is not Alice's
    assert not [d for d in bob.table if "spend" in d.value.columns]
    user["who"] = "alice@example.org"
    again = _session(other_levels, dataset="payroll")
    assert metric(again, "Budget remaining") == "50%"  # Alice's own name, its history
    [hist] = [d.value for d in again.table if "spend" in d.value.columns]
    assert hist["spend"].tolist() == ["50%"]
    # signed out (no authentication): names are the server's, and the page says so
    user["who"] = None
    anon = _session(other_levels, dataset="payroll")
    assert metric(anon, "Budget remaining") == "100%"
    assert LT.names_notice(False) in [c.value for c in anon.caption]
