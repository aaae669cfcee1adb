"""The Profile page's texts and editor columns moved out of the page (issue 27), and the
page's state module hdp_app.profile_state driven through a one-function app (AppTest).

Oracles: the paper's two-group remark (group 2 saturates iff eps2 >= eps1 + 8/(n f eps1)),
the upload limit in bytes, and counts written out.
"""

from __future__ import annotations

import math

from streamlit.testing.v1 import AppTest

from hdp_app.views import profile_controls as pc
from hdp_app.views.formatting import plain
from hdp_core.profile import MAX_UPLOAD_BYTES


def test_texts_and_the_upload_limit():
    assert pc.UPLOAD_MB * 2**20 <= MAX_UPLOAD_BYTES < (pc.UPLOAD_MB + 1) * 2**20
    assert f"{pc.UPLOAD_MB} MB" in pc.UPLOAD_LABEL and f"{pc.UPLOAD_MB} MB" in pc.UPLOAD_CAPTION
    assert pc.excluded_caption(0) == "" and pc.excluded_caption(1234).startswith("1,234 users")
    assert pc.download_caption(1, True) == "1 user, tiers."
    assert pc.download_caption(2000, False) == "2,000 users, one row per user."


def test_two_group_note_only_where_the_remark_applies():
    spec = {"n": 1000, "frac": 0.9, "eps1": 0.1, "eps2": 1.0}  # threshold 0.1 + 8/90 = 0.189
    assert "0.189" in pc.two_group_note(spec)
    assert pc.two_group_note({**spec, "frac": 1.0}) == ""  # one group empty
    assert pc.two_group_note({**spec, "eps2": 0.05}) == ""  # group 2 stricter
    assert pc.two_group_note({**spec, "eps2": math.inf}) != ""


def test_tier_columns_start_new_rows_as_usable_tiers():
    cols = pc.TIER_COLUMNS
    assert list(cols) == ["name", "eps", "count", "share"]
    assert {k for k, _ in cols.values()} == {"text", "number"}
    assert cols["eps"][1]["required"] and float(cols["eps"][1]["default"]) > 0
    c, s = cols["count"][1], cols["share"][1]
    assert c["min_value"] <= c["default"] <= c["max_value"]
    assert s["min_value"] <= s["default"] <= s["max_value"] == 100.0


def _state_app() -> None:
    import streamlit as st

    from hdp_app import profile_state as S
    from hdp_app.state import get_profile, init_state

    init_state()
    S.init_page_state()
    before = get_profile().key
    st.session_state["refused"] = S.apply({"kind": "log_uniform", "n": 0, "lo": 1, "hi": 2})
    st.session_state["kept"] = get_profile().key == before
    S.read_upload("f1", "bad.csv", b"eps\n-1\n")
    st.session_state["bad"] = S.upload_status(True)
    S.read_upload("f2", "good.csv", b"eps\n0.5\n2\n")
    st.session_state["good"] = S.upload_status(True)
    st.session_state["n"] = get_profile().n
    st.session_state["new"] = (S.new_upload("f2"), S.new_upload("f3"))


def test_profile_state_refuses_bad_specs_and_reads_uploads():
    at = AppTest.from_function(_state_app).run(timeout=60)
    assert not at.exception
    ss = at.session_state
    assert ss["refused"].endswith("The profile was not changed.") and ss["kept"]
    kind, text = ss["bad"]
    # the file's name and the reader's reason as plain text (markdown escaped), where it is
    assert kind == "error" and plain("bad.csv") in text and "previous profile is kept" in text
    assert plain("row 1") in text and plain("'eps'") in text
    assert ss["good"] == ("success", f"Using **{plain('good.csv')}**.") and ss["n"] == 2
    assert ss["new"] == (False, True)
