"""AppTest of the Release page: upload, preview, release, receipt, ledger, second-release
warning, bad files; the raw values never appear on the page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import open_page, shown

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


def test_release_flow(page):
    at = page
    at.get("file_uploader")[0].upload("users.csv", _csv(), "text/csv").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="rel_value").value == "value"
    assert at.selectbox(key="rel_eps").value == "eps"
    # the public range has no default: nothing is previewed or released until it is set
    assert not at.button and any("lowest and highest" in i.value for i in at.info)
    assert "95% error: ±" not in [m.label for m in at.metric]
    at.number_input(key="rel_lo").set_value(0.0).run()
    at.number_input(key="rel_hi").set_value(100.0).run()
    labels = [m.label for m in at.metric]
    assert "95% error: ±" in labels and "tau* (saturation level)" in labels
    at.button(key="rel_go").click().run()
    assert not at.exception and not at.error
    assert "Private mean" in [m.label for m in at.metric]
    assert len(at.session_state["rel_ledger"]) == 1
    assert [e for e in at.success if "Released" in e.value]
    assert "73.12" not in _texts(at)  # raw data never shown
    assert at.query_params.get("rel_value") is None
    # the second release of the same table warns and needs a confirmation, every time
    for k in (1, 2):
        warn = " ".join(w.value for w in at.warning)
        assert f"released {'once' if k == 1 else '2 times'}" in warn
        assert f"has lost up to {k + 1} × eps" in warn
        assert at.button(key="rel_go").disabled
        _confirm(at).check().run()
        at.button(key="rel_go").click().run()
        assert not at.exception
        assert len(at.session_state["rel_ledger"]) == k + 1
        assert not _confirm(at).value  # ticked once is not forever
        assert at.button(key="rel_go").disabled  # the box and the button agree
    assert "Releases in this session" in [h.value for h in at.subheader]
    assert list(at.dataframe[-1].value["release of this file"]) == [1, 2, 3]


def _confirm(at):
    """The one "I understand: release again" checkbox on the page."""
    boxes = [c for c in at.checkbox if c.label == "I understand: release again"]
    assert len(boxes) == 1
    return boxes[0]


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
    assert not at.button and at.session_state["rel_ledger"] == []


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
    at.button(key="rel_go").click().run()
    assert any("Released at" in c.value and "range 0 to 100" in shown(c.value) for c in at.caption)
    assert not any("changed since this release" in w.value for w in at.warning)
    at.number_input(key="rel_lo").set_value(10.0).run()
    assert any("changed since this release" in w.value for w in at.warning)


def test_declared_spread_starts_empty(page):
    at = _set_range(_upload(page, "users.csv", _csv()), 0.0, 100.0)
    before = next(m.value for m in at.metric if m.label == "95% error: ±")
    at.toggle(key="rel_use_sd").set_value(True).run()
    assert at.number_input(key="rel_sd").value is None
    assert next(m.value for m in at.metric if m.label == "95% error: ±") == before
    at.number_input(key="rel_sd").set_value(10.0).run()
    assert next(m.value for m in at.metric if m.label == "95% error: ±") != before


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
    from hdp_core.design import default_menu
    from hdp_core.views.links import encode_menu_link

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
    at.button(key="rel_go").click().run()
    assert not at.exception and not at.error
    receipt = _frame(at, 1)  # after the preview
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
    from hdp_core.design import make_menu

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
    # the widgets are bounded by the validators' limit (hdp_core.views.limits.REAL_MAX)
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
    at.button(key="rel_go").click().run()
    assert not at.exception
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["⬇️ Result and receipt (JSON)", "⬇️ Result (CSV)", "⬇️ Receipt (CSV)"]
    code = " ".join(c.value for c in at.code)
    assert "hdp.release_mean(" in code and "'users.csv'" in code and "lo=0.0" in code
