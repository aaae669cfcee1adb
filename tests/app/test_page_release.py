"""AppTest of the Release page: upload, preview, the question of which mean (issue 21), the
server's privacy ledger and the spend control (issue 22), release, receipt, bad files; the
raw values never appear on the page. Every test's ledger is a temporary file (conftest's
autouse ``ledger_path`` sets HDP_LEDGER)."""

from __future__ import annotations

import io
import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from helpers import metric, open_page, shown

from hdp_app.views import release as V
from hdp_app.views import release_budget as B
from hdp_app.views.explain import TARGET_POPULATION_TEXT, TARGET_QUESTION, TARGET_TABLE_TEXT
from hdp_app.views.release import in_units
from hdp_core.intervals import release_error_95
from hdp_release.ledger.store import PrivacyLedger

SECRET = 73.123456  # a raw value that must never be displayed


def _csv() -> bytes:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "value": np.r_[SECRET, rng.uniform(0, 100, 499)],
            "eps": rng.choice([0.1, 0.5, 2.0, "public", 0], 500),
        }
    )
    return df.to_csv(index=False).encode()


def _texts(at) -> str:
    parts = [
        str(e.value)
        for kind in ("markdown", "caption", "metric", "info", "warning", "success", "error")
        for e in at.get(kind)
        if hasattr(e, "value")
    ]
    assert at.get("arrow_data_frame") == []  # the type AppTest names "dataframe" instead
    for d in at.dataframe:
        parts.append(d.value.to_string())
    return "\n".join(parts)


@pytest.fixture
def page(app):
    at = open_page(app, "release")
    assert not at.exception
    return at


def _levels_of(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The table's distinct levels and counts, read independently of the page (pandas)."""
    col = pd.read_csv(io.BytesIO(data))["eps"].astype(str).str.strip().str.lower()
    x = col.replace({"public": "inf"}).astype(float).to_numpy()
    return np.unique(x, return_counts=True)


def _errors_shown(at) -> list[str]:
    """The two answers' "95% error: ±" metrics, in the order shown."""
    return [m.value for m in at.main.metric if m.label == "95% error: ±"]


def _answer(at, answer: str):
    at.radio(key="rel_target").set_value(answer).run()
    assert not at.exception
    return at


def _release(at):
    at.button(key="rel_go").click().run()
    assert not at.exception
    return at


def _budget(at) -> str:
    return metric(at, "Budget remaining")


def test_release_flow(page, ledger_path):
    at = page
    at.get("file_uploader")[0].upload("users.csv", _csv(), "text/csv").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="rel_value").value == "value"
    assert at.selectbox(key="rel_eps").value == "eps"
    # the public range has no default: nothing is previewed or released until it is set
    assert not at.button and any("lowest and highest" in i.value for i in at.info)
    assert "95% error: ±" not in [m.label for m in at.metric]
    _set_range(at, 0.0, 100.0)
    assert "tau* (saturation level)" in [m.label for m in at.metric]
    # the question, with no answer preselected, and both answers' 95% error side by side
    q = at.radio(key="rel_target")
    assert q.label == TARGET_QUESTION and q.value is None and q.index is None
    assert list(q.options) == ["Yes, or maybe", "No"]
    lv, ct = _levels_of(_csv())
    want = [
        in_units(release_error_95(lv, ct, 0.0, 100.0, target=t)) for t in ("table", "population")
    ]
    assert _errors_shown(at) == want
    captions = " ".join(c.value for c in at.main.caption)
    assert TARGET_TABLE_TEXT in captions and TARGET_POPULATION_TEXT in captions
    assert _budget(at) == "100%"
    # no release before the question is answered
    assert at.button(key="rel_go").disabled
    assert any("Answer the question above" in i.value for i in at.info)
    _release(_answer(at, "No"))
    # the only message: the whole budget is now spent (below)
    assert [e.value for e in at.error] == [B.spend_problem(0, 1)]
    last = at.session_state["rel_last"]["rel"]
    assert last.target == "population" and last.spend == 1.0
    assert "Private mean" in [m.label for m in at.metric]
    assert [e for e in at.success if "Released" in e.value]
    assert any("estimates the population mean (ADPM)" in m.value for m in at.markdown)
    assert "73.12" not in _texts(at)  # raw data never shown
    assert at.query_params.get("rel_value") is None
    # the ledger on disk holds it (the test's temporary file, never the home folder)
    hist = PrivacyLedger(ledger_path).history()
    assert len(hist) == 1 and hist[0].status == "released" and hist[0].spend == 1
    # the whole budget is spent: the page refuses, with a clear message, and no checkbox
    assert _budget(at) == "0%"
    assert at.button(key="rel_go").disabled
    assert any("privacy budget is spent" in e.value for e in at.error)
    assert not [c for c in at.checkbox if "release again" in c.label]
    assert "Releases in this session" not in [h.value for h in at.subheader]


def test_yes_or_maybe_releases_the_tables_own_mean(page, ledger_path):
    at = _set_range(_upload(page, "users.csv", _csv()), 0.0, 100.0)
    _release(_answer(at, "Yes, or maybe"))
    rel = at.session_state["rel_last"]["rel"]
    assert rel.target == "table"
    assert any("estimates this table's own mean (TableMean)" in m.value for m in at.markdown)
    d = json.loads(V.result_json(rel, at.session_state["rel_last"]["settings"], "u", "t"))
    assert d["target"] == "table"  # the receipt says which target
    hist = PrivacyLedger(ledger_path).history()
    assert [h.target for h in hist] == ["table"]
    assert "this table's own mean" in " ".join(B.history_frame(hist)["estimated"])


def test_the_spend_control_changes_the_shown_error(page):
    at = _set_range(_upload(page, "users.csv", _csv()), 0.0, 100.0)
    lv, ct = _levels_of(_csv())
    full = _errors_shown(at)
    at.slider(key="rel_spend").set_value(25).run()
    assert not at.exception
    quarter = _errors_shown(at)
    want = [
        in_units(release_error_95(lv, ct, 0.0, 100.0, target=t, spend=Fraction(1, 4)))
        for t in ("table", "population")
    ]
    assert quarter == want and quarter != full
    # the preview follows the spend and the answer: ADPM until answered, then the answer's
    assert any("population mean (ADPM), at a spend of 25%" in c.value for c in at.caption)
    assert "tau* (saturation level)" in [m.label for m in at.metric]
    _answer(at, "Yes, or maybe")
    assert any("own mean (TableMean), at a spend of 25%" in c.value for c in at.caption)
    assert "Cap level" in [m.label for m in at.metric]
    _answer(at, "No")
    _release(at)
    assert at.session_state["rel_last"]["rel"].spend == 0.25
    assert _budget(at) == "75%"


def _fresh(app_factory, data: bytes, name: str = "users.csv", dataset: str | None = None):
    """A new session (a reload) with the table uploaded and the range set."""
    at = _set_range(_upload(open_page(app_factory(), "release"), name, data), 0.0, 100.0)
    if dataset is not None:
        at.text_input(key="rel_dataset").set_value(dataset).run()
    return at


def _shuffled(data: bytes) -> bytes:
    df = pd.read_csv(io.BytesIO(data))
    return df.sample(frac=1, random_state=1)[["eps", "value"]].to_csv(index=False).encode()


def _refused(at) -> None:
    assert not at.exception
    assert _budget(at) == "0%"
    assert at.button(key="rel_go").disabled
    assert any("privacy budget is spent" in e.value for e in at.error)


def test_a_reload_sees_the_spent_budget_and_refuses_when_it_is_exhausted(app):
    import streamlit as st
    from helpers import whole_app

    at = _fresh(whole_app, _csv(), dataset="Sales 2026")
    at.slider(key="rel_spend").set_value(60).run()
    _release(_answer(at, "No"))
    # a reload: a new session, same file, no name: the levels alone carry the charge; the
    # history is the name's only (another session's releases are not shown by levels)
    st.cache_resource.clear()  # even a restarted server reads the same ledger file
    at2 = _fresh(whole_app, _csv())
    assert _budget(at2) == "40%"
    assert not [d for d in at2.table if "spend" in d.value.columns]
    named = _fresh(whole_app, _csv(), dataset="sales 2026")
    history = [d.value for d in named.table if "spend" in d.value.columns]
    assert [h["spend"].tolist() for h in history] == [["60%"]]  # the name's history
    _answer(at2, "Yes, or maybe")
    assert at2.button(key="rel_go").disabled  # 60% asked: more than the 40% left
    assert any("Only 40% of every user's level remains" in e.value for e in at2.error)
    at2.slider(key="rel_spend").set_value(40).run()
    assert not at2.error and not at2.button(key="rel_go").disabled
    _release(at2)
    assert at2.session_state["rel_last"]["rel"].target == "table"
    # exhausted: every way of presenting the same data again is refused
    blank = _csv().replace(b"\n", b"\n\n", 3)
    for data, name, dataset in [
        (_csv(), "users.csv", None),  # a reload
        (_shuffled(_csv()), "users.csv", None),  # rows shuffled, columns swapped
        (blank, "users.csv", None),  # blank lines
        (_csv(), "another_name.csv", "Another dataset"),  # another file and dataset name
    ]:
        _refused(_fresh(whole_app, data, name, dataset))
    # the name carries its own charge (60%, the first release's): other content under that
    # name (trimmed, case ignored) has only what the name has left; under another name, all
    other = pd.DataFrame({"value": [1.0, 2.0, 3.0], "eps": [1.0, 1.0, 1.0]}).to_csv(index=False)
    assert _budget(_fresh(whole_app, other.encode(), "o.csv", "sales 2026 ")) == "40%"
    assert _budget(_fresh(whole_app, other.encode(), "o.csv", "Other")) == "100%"


def test_an_unusable_ledger_is_a_message_not_a_traceback(page, ledger_path):
    ledger_path.write_bytes(b"not a ledger at all")
    at = _set_range(_upload(page, "users.csv", _csv()), 0.0, 100.0)
    assert not at.exception
    err = " ".join(e.value for e in at.error)
    assert "privacy ledger cannot be used" in err and "HDP_LEDGER" in err
    assert not at.button  # nothing can be released
    assert ledger_path.read_bytes() == b"not a ledger at all"  # never replaced


def _upload(at, name: str, data: bytes):
    at.get("file_uploader")[0].upload(name, data, "text/csv").run()
    assert not at.exception
    return at


def _set_range(at, lo: float, hi: float):
    at.number_input(key="rel_lo").set_value(lo).run()
    at.number_input(key="rel_hi").set_value(hi).run()
    assert not at.exception
    return at


def test_bad_inputs_show_errors_and_release_nothing(page):
    at = _upload(page, "t.csv", b"value,eps\n1,0.5\n2,-1\n")
    _set_range(at, 0.0, 10.0)
    assert any(
        "Check the table: eps column 'eps', row 2: the level is negative" in shown(e.value)
        for e in at.error
    )
    assert not at.button  # nothing to click while the table has a problem
    _upload(at, "t2.csv", b"value,eps\n1,0.5\n2,0.5\n")
    _set_range(at, 0.0, -5.0)
    assert any("lowest possible value must be below" in shown(e.value) for e in at.error)
    assert not at.button and at.session_state["rel_last"] is None


@pytest.mark.parametrize(
    "text, problem",
    [
        (b"value,eps\n1,0.5\n2,0.5\n3,0.5\n4,0.5\n12x7,0.5\n", "row 5: the cell is text"),
        (b"value,eps\n1,0.5\n,0.5\n", "row 2: missing, NaN or infinite"),
        (b"value,eps\nBerlin,0.5\nParis,1\n", "row 1: the cell is text, not a number"),
    ],
)
def test_value_problems_show_in_the_preview_not_after_release(page, text, problem):
    at = _set_range(_upload(page, "v.csv", text), 0.0, 10.0)
    assert any(problem in shown(e.value) for e in at.error)
    assert not at.button and not at.main.metric


@pytest.mark.parametrize(
    "text, problem",
    [
        (b"", "the file is empty"),
        (b"  \n", "the file is empty"),
        (b"value,eps\n", "a header but no data rows"),
        (b"value\n1\n2\n", "the table needs at least 2"),
    ],
)
def test_a_bad_file_unloads_the_previous_table(page, text, problem):
    at = _set_range(_upload(page, "good.csv", _csv()), 0.0, 100.0)
    assert at.button(key="rel_go")
    _upload(at, "bad.csv", text)
    assert any(problem in shown(e.value) and "Nothing is loaded" in e.value for e in at.error)
    assert not at.button  # the good table is gone: nothing can be released
    assert not any("Loaded good.csv" in shown(c.value) for c in at.caption)


def test_columns_are_guessed_by_name_or_chosen_never_the_same(page):
    rng = np.random.default_rng(5)
    df = pd.DataFrame(
        {
            "user_id": np.arange(300),
            "value": rng.uniform(0, 100, 300),
            "tier": rng.choice([0.1, 1.0], 300),
        }
    )
    at = _upload(page, "ids.csv", df.to_csv(index=False).encode())
    assert at.selectbox(key="rel_value").value == "value"
    assert at.selectbox(key="rel_eps").value == "tier"  # not the second column, user_id
    # no telling names: the user chooses; nothing is guessed, previewed or released
    at2 = _upload(page, "ab.csv", df.rename(columns={"value": "a", "tier": "b"}).to_csv().encode())
    assert at2.selectbox(key="rel_value").value is None
    assert at2.selectbox(key="rel_eps").value is None
    assert any("Choose the value column" in i.value for i in at2.info) and not at2.button
    at2.selectbox(key="rel_value").set_value("a").run()
    at2.selectbox(key="rel_eps").set_value("a").run()
    assert any("are the same column" in e.value for e in at2.error)
    assert not at2.button and not at2.main.metric


def test_an_old_result_is_labelled_when_the_settings_change(page):
    at = _set_range(_upload(page, "users.csv", _csv()), 0.0, 100.0)
    _release(_answer(at, "No"))
    assert any("Released at" in c.value and "range 0 to 100" in shown(c.value) for c in at.caption)
    assert not any("changed since this release" in w.value for w in at.warning)
    at.number_input(key="rel_lo").set_value(10.0).run()
    assert any("changed since this release" in w.value for w in at.warning)


def test_declared_spread_starts_empty(page):
    at = _set_range(_upload(page, "users.csv", _csv()), 0.0, 100.0)
    before = _errors_shown(at)
    at.toggle(key="rel_use_sd").set_value(True).run()
    assert at.number_input(key="rel_sd").value is None
    assert _errors_shown(at) == before
    at.number_input(key="rel_sd").set_value(10.0).run()
    after = _errors_shown(at)
    assert after[0] == before[0] and after[1] != before[1]  # the table's mean needs no spread


def _named_csv() -> bytes:
    """Tier names of the default menu (Strict 0.1, Balanced 1, Open public) in the eps
    column, in mixed case, plus one level that is not on the menu (0.3)."""
    rng = np.random.default_rng(3)
    cells = rng.choice(["Strict", "balanced ", "OPEN", "0.3"], 400, p=[0.3, 0.3, 0.3, 0.1])
    df = pd.DataFrame({"value": rng.uniform(0, 500, 400), "eps": cells})
    return df.to_csv(index=False).encode()


def _frame(at, i):
    """The page's i-th table (AppTest does not expose a dataframe's key)."""
    return at.dataframe[i].value


def test_release_with_the_tier_designers_menu_from_its_link(app):
    from hdp_app.views.links import encode_menu_link
    from hdp_core.menu import default_menu

    menu = default_menu()
    app.query_params["menu"] = encode_menu_link(menu)
    at = open_page(app, "release")
    at.query_params["menu"] = encode_menu_link(menu)
    at.run()
    assert not at.exception
    assert at.toggle(key="rel_use_menu").value is True
    at.get("file_uploader")[0].upload("named.csv", _named_csv(), "text/csv").run()
    assert not at.exception and not at.error
    # the menu's range fills the settings: the preview is there at once
    assert (at.number_input(key="rel_lo").value, at.number_input(key="rel_hi").value) == (0, 500)
    assert at.text_input(key="rel_unit").value == menu.unit
    prev = _frame(at, 0)
    assert list(prev["tier"]) == ["Strict", "not on the menu", "Balanced", "Open"]
    assert list(prev["requested eps"])[1] == "0.3"
    assert any("not on your menu: 0.3 (" in w.value for w in at.warning)
    _release(_answer(at, "No"))
    assert at.session_state["rel_last"] is not None
    assert [e.value for e in at.error] == [B.spend_problem(0, 1)]  # all spent: nothing else
    receipt = next(d.value for d in at.dataframe if "privacy loss" in d.value.columns)
    assert list(receipt["tier"]) == ["Strict", "not on the menu", "Balanced", "Open"]
    assert receipt["users"].sum() == 400
    # without the menu, tier names are not levels: a clear error, nothing released
    at.toggle(key="rel_use_menu").set_value(False).run()
    assert not at.exception
    err = " ".join(shown(e.value) for e in at.error)
    assert "row 1: the cell is text, not a number" in err and "Strict" not in err
    assert "turn on 'Read the eps column with this menu'" in err  # says how to fix it
    assert not at.button
    # an edited menu (a new link) brings its own range and unit to the settings
    at.toggle(key="rel_use_menu").set_value(True).run()
    from hdp_core.menu import make_menu

    edited = make_menu(
        ["Strict", "Balanced", "Open"], [0.1, 1.0, "public"], [30, 50, 20], 5000, 0, 1000, "EUR"
    )
    at.query_params["menu"] = encode_menu_link(edited)
    at.run()
    assert not at.exception
    assert (at.number_input(key="rel_lo").value, at.number_input(key="rel_hi").value) == (0, 1000)
    assert at.text_input(key="rel_unit").value == "EUR"


def test_release_reads_the_sessions_tier_designer_menu(app):
    at = open_page(app, "tier_designer")
    assert not at.exception
    at.query_params.pop("menu", None)  # the session's menu, not the address bar's link
    at.switch_page("pages/release.py").run()
    assert not at.exception
    assert at.toggle(key="rel_use_menu").value is True
    assert any("From the Tier designer: Strict: eps 0.1" in shown(c.value) for c in at.caption)


def test_the_sidebar_says_this_page_uses_the_table_not_the_profile(app):
    at = open_page(app, "release")
    note = "This page releases your uploaded table"
    assert any(note in c.value for c in at.sidebar.caption)
    at.switch_page("pages/bounds.py").run()  # the note is the Release page's only
    assert not any(note in c.value for c in at.sidebar.caption)


# ------------------------------------------------------------------------------ issue 19
@pytest.mark.parametrize(
    "text, problem",
    [
        (
            (",".join(f"c{i}" for i in range(17)) + "\n" + ",".join("1" * 17) + "\n").encode(),
            "the header has 17 columns; at most 16",
        ),
        (b"50,0.5\n60,1\n", "the first row must name the columns"),
        (b"value,eps,EPS\n50,10,0.01\n", "names the column 'EPS' twice"),
    ],
)
def test_the_one_reader_refuses_what_the_readme_refuses(page, text, problem):
    at = _upload(page, "bad.csv", text)
    assert any(problem in shown(e.value) and "Nothing is loaded" in e.value for e in at.error)
    assert not at.button and at.session_state["rel_table"] is None


@pytest.mark.parametrize(
    "text, col, where, kind, secret",
    [
        (b"value,ssn\n1,0.5\n2,123-45-6789\n", "ssn", "row 2", "text", "123-45-6789"),
        (
            b'value,eps\n1,0.5\n"$120 000 (John Smith)",0.5\n',
            "value",
            "row 2",
            "text",
            "John Smith",
        ),
        (
            b'value,eps\n"1,234",0.5\n',
            "value",
            "row 1",
            "a number with a thousands separator",
            "234",
        ),
    ],
)
def test_a_bad_cell_is_named_by_row_column_and_kind_never_shown(
    page, text, col, where, kind, secret
):
    at = _upload(page, "s.csv", text)
    if col == "ssn":
        at.selectbox(key="rel_eps").set_value("ssn").run()
    _set_range(at, 0.0, 10.0)
    err = " ".join(shown(e.value) for e in at.error)
    assert f"column '{col}', {where}: the cell is {kind}" in err
    assert secret not in _texts(at) and secret not in err
    assert not at.button


def test_a_huge_range_with_a_declared_spread_shows_no_traceback(page):
    at = _upload(page, "users.csv", _csv())
    at.number_input(key="rel_lo").set_value(-1e308).run()
    at.number_input(key="rel_hi").set_value(1e308).run()
    assert not at.exception
    assert at.sidebar.metric  # the sidebar summary is still drawn
    # the widgets are bounded by the validators' limit (hdp_app.views.limits.REAL_MAX)
    assert at.number_input(key="rel_lo").value is None and not at.button
    _set_range(at, -1e15, 1e15)
    at.toggle(key="rel_use_sd").set_value(True).run()
    assert not at.exception and at.sidebar.metric
    at.number_input(key="rel_sd").set_value(1e14).run()
    assert not at.exception and at.button(key="rel_go")
    _set_range(at, 0.0, 10.0)  # a spread larger than the new range allows is emptied
    assert not at.exception and at.number_input(key="rel_sd").value is None


def test_two_columns_with_a_recognised_eps_column_preselect_the_value_column(page):
    at = _upload(page, "two.csv", b"spend_usd,eps\n1,0.5\n2,1\n")
    assert at.selectbox(key="rel_eps").value == "eps"
    assert at.selectbox(key="rel_value").value == "spend_usd"


def test_the_upload_hint_shows_no_backticks(page):
    hints = [i.value for i in page.info if "Upload a CSV to start" in i.value]
    assert hints and all("`" not in h for h in hints)
    assert "value,eps" in hints[0]


def test_downloads_and_the_python_snippet_after_a_release(page):
    at = _set_range(_upload(page, "users.csv", _csv()), 0.0, 100.0)
    _release(_answer(at, "Yes, or maybe"))
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["⬇️ Result and receipt (JSON)", "⬇️ Result (CSV)", "⬇️ Receipt (CSV)"]
    code = " ".join(c.value for c in at.code)
    assert "hdp_release.release_mean(" in code and "'users.csv'" in code and "lo=0.0" in code
