"""Issue 12, item 1: two sessions share the process's st.cache_data, so different profiles must
never share a cache key. Session A uploads a CSV whose eps column is the first 500 levels of
the default profile and whose value column the last 500 (the same bytes as the default's
levels); session B then opens / and must see the default profile's own numbers."""

from __future__ import annotations

import pytest
from helpers import whole_app

import hdp_core as hdp
from hdp_app.views import links


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.sidebar.get("metric")}


@pytest.mark.slow
def test_an_upload_in_one_session_never_changes_another_sessions_numbers():
    import streamlit as st

    default = links.profile_from_spec({"kind": "preset", "name": "paper_high", "seed": 0})
    lv = default.levels
    forged = "eps,value\n" + "".join(
        f"{float(a)!r},{float(b)!r}\n" for a, b in zip(lv[:500], lv[500:])
    )
    st.cache_data.clear()
    a = whole_app(default_timeout=60)
    a.run()
    a.radio(key="prof_mode").set_value("Upload").run()
    st.cache_data.clear()  # the forged profile is computed (and cached) first, as in the issue
    a.get("file_uploader")[0].upload("forged.csv", forged.encode(), "text/csv").run()
    assert not a.exception, a.exception
    assert _metrics(a)["Users n"] == "500"

    b = whole_app(default_timeout=60)  # a second session in the same process
    b.run()
    assert not b.exception, b.exception
    got = _metrics(b)
    sol = hdp.adpm(default)
    assert got["Users n"] == "1,000"
    assert got["tau*"] == f"{sol.saturation_level:.4g}"
    assert got["Users capped"] == f"{sol.n_saturated:,}"
    assert b.session_state["profile"].key == default.key
