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
    assert "Expected 95% error: ±" not in [m.label for m in at.metric]
    at.number_input(key="rel_lo").set_value(0.0).run()
    at.number_input(key="rel_hi").set_value(100.0).run()
    labels = [m.label for m in at.metric]
    assert "Expected 95% error: ±" in labels and "tau* (saturation level)" in labels
    at.button(key="rel_go").click().run()
    assert not at.exception and not at.error
    assert "Private mean" in [m.label for m in at.metric]
    assert len(at.session_state["rel_ledger"]) == 1
    assert [e for e in at.success if "Released" in e.value]
    assert "73.12" not in _texts(at)  # raw data never shown
    assert at.query_params.get("rel_value") is None
    # the second release of the same table warns and needs a confirmation
    assert any("spends every user's eps again" in w.value for w in at.warning)
    assert at.button(key="rel_go").disabled
    at.checkbox(key="rel_confirm_again").check().run()
    at.button(key="rel_go").click().run()
    assert len(at.session_state["rel_ledger"]) == 2
    assert "Releases in this session" in [h.value for h in at.subheader]


def test_bad_inputs_show_errors_and_release_nothing(page):
    at = page
    at.get("file_uploader")[0].upload("t.csv", b"value,eps\n1,0.5\n2,-1\n", "text/csv").run()
    at.number_input(key="rel_lo").set_value(0.0).run()
    at.number_input(key="rel_hi").set_value(10.0).run()
    assert not at.exception
    assert any("row 2" in shown(e.value) for e in at.error)
    at.button(key="rel_go").click().run()
    assert not at.exception and at.session_state["rel_ledger"] == []
    at.get("file_uploader")[0].upload("t.csv", b"value,eps\n1,0.5\n2,0.5\n", "text/csv").run()
    at.number_input(key="rel_lo").set_value(0.0).run()
    at.number_input(key="rel_hi").set_value(-5.0).run()
    assert any("lo < hi" in shown(e.value) for e in at.error)
    at.button(key="rel_go").click().run()
    assert at.session_state["rel_ledger"] == []


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
    assert any("'Strict' is not a number" in shown(e.value) for e in at.error)


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
