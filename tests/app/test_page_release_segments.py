"""AppTest of the Release page's "a mean per segment" (issue 28): choose the mode and the
segment columns, release (charged once), see the table, chart, receipt, downloads and code;
raw values never shown."""

from __future__ import annotations

import numpy as np
import pandas as pd
from helpers import open_page

from hdp_release.ledger.store import PrivacyLedger

SECRET = 73.123456


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
    assert "north / free" in shown and "73.12" not in shown
    assert len(PrivacyLedger(ledger_path).history()) == 1  # charged once
    assert any("release_means(" in c.value for c in at.code)
