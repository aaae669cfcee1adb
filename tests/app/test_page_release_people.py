"""The Release page with a person id column (issue 30): the id column is preselected when named
like one, the release charges each person (receipt per level, the saturated-keep sentence in
numbers), the page says plainly what a release without an id tracks, and "Reproduce in Python"
writes the same call: every argument of the page's release_mean call equals the snippet's."""

from __future__ import annotations

import inspect
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from helpers import open_page
from test_page_release import _answer, _release, _set_range

import hdp_release
import hdp_release.release
from hdp_app.views import people as P
from hdp_core.spend import as_spend
from hdp_release.ledger.people import person_summary
from hdp_release.ledger.store import PrivacyLedger


def _table() -> bytes:
    n = 1700
    rng = np.random.default_rng(9)
    df = pd.DataFrame(
        {
            "user_id": [f"u{k:04d}" for k in range(n)],
            "salary": rng.uniform(0, 100, n),
            "eps": np.where(np.arange(n) < 1500, 0.05, 1.0),
        }
    )
    return df.to_csv(index=False).encode()


@pytest.fixture
def calls(monkeypatch):
    """Every release_mean call's arguments (page and snippet both call hdp_release's)."""
    seen: list[dict] = []
    real = hdp_release.release_mean

    def spy(source, **kw):
        seen.append({"source": source, **kw})
        return real(source, **kw)

    monkeypatch.setattr(hdp_release, "release_mean", spy)
    return seen


def test_release_with_an_id_and_the_snippet_makes_the_same_call(
    app, ledger_path, calls, tmp_path, monkeypatch
):
    at = open_page(app, "release")
    at.get("file_uploader")[0].upload("wages.csv", _table(), "text/csv").run()
    assert not at.exception
    assert at.selectbox(key="rel_id").value == "user_id"  # named like an id: preselected
    _set_range(at, 0.0, 100.0)
    at.slider(key="rel_spend").set_value(40).run()
    at.text_input(key="rel_dataset").set_value("Wages 2026").run()
    _release(_answer(at, "No"))
    assert not at.exception and not at.error
    rel = at.session_state["rel_last"]["rel"]
    assert rel.id_column == "user_id" and rel.people is not None
    # the saturated-keep sentence, in numbers computed here from the receipt's public facts
    # at 40%: 1,500 persons run at 0.02, 200 at 0.4; the saturation lemma's G(t) = 1500 x 0.02
    # x (t - 0.02) reaches 8 at tau* = (8 + 1500 x 0.02^2) / (1500 x 0.02), below 0.4
    tau = (8 + 1500 * 0.02**2) / (1500 * 0.02)
    assert rel.saturation_level == pytest.approx(tau, rel=1e-12)
    lost, kept = f"{tau:.3g}", f"{1.0 - tau:.3g}"
    want = f"200 people lost {lost} of their 1.0; they keep {kept} for later releases."
    assert want in [m.value for m in at.markdown]
    assert len(at.dataframe) >= 3  # the preview, the receipt and the per-level persons
    assert int(person_summary(PrivacyLedger(ledger_path)).persons.sum()) == 1700
    # "Reproduce in Python": run it where the file is; compare every argument
    code = next(c.value for c in at.code if "release_mean(" in c.value)
    (tmp_path / "wages.csv").write_bytes(_table())
    monkeypatch.chdir(tmp_path)
    page_call = calls[-1]
    exec(compile(code, "snippet", "exec"), {})
    snippet_call = calls[-1]
    assert snippet_call is not page_call
    assert snippet_call["source"] == "wages.csv"
    # every parameter of release_mean, an omitted one at its default
    params = inspect.signature(hdp_release.release.release_mean).parameters
    full = {k: p.default for k, p in params.items() if k != "source"}
    page_call, snippet_call = {**full, **page_call}, {**full, **snippet_call}
    assert set(page_call) == set(snippet_call) == {*full, "source"}
    for k in page_call:
        a, b = page_call[k], snippet_call[k]
        if k == "source":
            continue
        if k == "ledger":
            assert a.path == b == str(ledger_path)
        elif k == "spend":
            assert as_spend(a) == as_spend(b) == Fraction(2, 5)
        else:
            assert a == b, k
    # the snippet's release charged the same persons in the same ledger (40% more each)
    assert len(PrivacyLedger(ledger_path).history()) == 2


def test_without_an_id_the_page_says_what_the_dataset_ledger_tracks(app):
    at = open_page(app, "release")
    data = pd.read_csv(__import__("io").BytesIO(_table())).rename(columns={"user_id": "who"})
    at.get("file_uploader")[0].upload("t.csv", data.to_csv(index=False).encode(), "text/csv").run()
    assert at.selectbox(key="rel_id").value == P.NO_ID
    assert P.NO_ID_NOTE in [c.value for c in at.caption]
    at.selectbox(key="rel_id").set_value("salary").run()
    assert [e.value for e in at.error] == [P.id_problem("salary", "salary", "eps")]
