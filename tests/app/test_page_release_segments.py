"""AppTest of the Release page's "a mean per segment" (issue 28): choose the mode and the
segment columns, release (charged once), see the table, chart, receipt, downloads and code;
raw values never shown."""

from __future__ import annotations

import numpy as np
import pandas as pd
from helpers import open_page

from hdp_release.ledger.store import PrivacyLedger

SECRET = 73.123456
SHOWN = "73.12345"
"""What the secret would print as in a table (6 decimals: 73.123456). Only that long a
prefix: the page's private means are noisy numbers in the same range, and one printed as
"73.12..." (about 1 run in 100, over the hundred or so numbers shown) is no leak; one
starting "73.12345" by chance is about 1 run in 10^5."""


def _csv() -> bytes:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "value": np.r_[SECRET, rng.uniform(0, 100, 399)],
            "eps": rng.choice([0.5, 2.0, "public"], 400),
            "region": rng.choice(["north", "south", "east"], 400),
            "plan": rng.choice(["free", "pro"], 400),
        }
    )
    return df.to_csv(index=False).encode()


def test_mean_per_segment_from_the_page(app, ledger_path):
    at = open_page(app, "release")
    at.get("file_uploader")[0].upload("users.csv", _csv(), "text/csv").run()
    at.number_input(key="rel_lo").set_value(0.0).run()
    at.number_input(key="rel_hi").set_value(100.0).run()
    at.radio(key="rel_target").set_value("No").run()
    assert not at.exception
    at.radio(key="rel_seg_mode").set_value("A mean per segment").run()
    assert at.button(key="rel_seg_go").disabled  # no segment column yet
    assert list(at.multiselect(key="rel_seg_by").options) == ["region", "plan"]
    at.multiselect(key="rel_seg_by").set_value(["region", "plan"]).run()
    at.button(key="rel_seg_go").click().run()
    assert not at.exception
    # the only message: the whole budget is now spent (this release spent 100%)
    assert all("budget" in e.value for e in at.error), [e.value for e in at.error]
    g = at.session_state["rel_seg_last"]["g"]
    assert len(g) == 6 and g.target == "population"
    assert [e for e in at.success if "per segment" in e.value]
    shown = "\n".join(d.value.to_string() for d in at.dataframe)
    assert "north / free" in shown and SHOWN not in shown
    assert len(PrivacyLedger(ledger_path).history()) == 1  # charged once
    assert any("release_means(" in c.value for c in at.code)


def test_mean_per_segment_with_an_id_and_the_snippet_makes_the_same_call(
    app, ledger_path, tmp_path, monkeypatch
):
    """With the person id column (preselected), each person is charged once in their own
    segment; the per-person receipt per segment is shown; "Reproduce in Python" makes the
    same release_means call (every argument)."""
    import inspect

    import hdp_release
    import hdp_release.grouped
    from hdp_release.ledger.people import person_summary

    seen: list[dict] = []
    real = hdp_release.release_means

    def spy(source, **kw):
        seen.append({"source": source, **kw})
        return real(source, **kw)

    monkeypatch.setattr(hdp_release, "release_means", spy)
    monkeypatch.setattr("hdp_app.segments_section.release_means", spy)
    n = 400
    rng = np.random.default_rng(4)
    data = pd.DataFrame(
        {
            "user_id": [f"u{k:04d}" for k in range(n)],
            "value": np.r_[SECRET, rng.uniform(0, 100, n - 1)],
            "eps": np.where(np.arange(n) < 300, 0.05, 1.0),
            "region": rng.choice(["north", "south"], n),
        }
    ).to_csv(index=False)
    at = open_page(app, "release")
    at.get("file_uploader")[0].upload("users.csv", data.encode(), "text/csv").run()
    assert at.selectbox(key="rel_id").value == "user_id"
    at.number_input(key="rel_lo").set_value(0.0).run()
    at.number_input(key="rel_hi").set_value(100.0).run()
    at.radio(key="rel_target").set_value("No").run()
    at.slider(key="rel_spend").set_value(50).run()
    at.radio(key="rel_seg_mode").set_value("A mean per segment").run()
    assert list(at.multiselect(key="rel_seg_by").options) == ["region"]  # not the id
    at.multiselect(key="rel_seg_by").set_value(["region"]).run()
    at.button(key="rel_seg_go").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    g = at.session_state["rel_seg_last"]["g"]
    assert g.id_column == "user_id" and g.people is not None
    assert int(person_summary(PrivacyLedger(ledger_path)).persons.sum()) == n
    assert any("was charged once" in m.value for m in at.markdown)
    shown = "\n".join(d.value.to_string() for d in at.dataframe)
    assert "u0001" not in shown and SHOWN not in shown and "Kept" in shown
    code = next(c.value for c in at.code if "release_means(" in c.value)
    pd.read_csv(__import__("io").StringIO(data)).to_csv(tmp_path / "users.csv", index=False)
    monkeypatch.chdir(tmp_path)
    page_call = seen[-1]
    exec(compile(code, "snippet", "exec"), {})
    snippet_call = seen[-1]
    assert snippet_call is not page_call and snippet_call["source"] == "users.csv"
    params = inspect.signature(hdp_release.grouped.release_means).parameters
    full = {k: p.default for k, p in params.items() if k != "source"}
    page_call, snippet_call = {**full, **page_call}, {**full, **snippet_call}
    for k in page_call:
        a, b = page_call[k], snippet_call[k]
        if k == "source":
            continue
        if k == "ledger":
            assert a.path == b == str(ledger_path)
        elif k == "spend":
            assert float(a) == float(b) == 0.5
        elif k == "by":
            assert list(a) == list(b)
        else:
            assert a == b, k
    assert len(PrivacyLedger(ledger_path).history()) == 2  # the snippet charged the same
