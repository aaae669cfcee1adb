"""AppTest of the Tier designer's planning for segments (issue 28): drawn only when open;
sizes in, each segment's 95% error for both targets and the smallest segment out."""

from __future__ import annotations

from helpers import open_page

from hdp_app.views import segments as S


def test_planning_for_segments(app):
    at = open_page(app, "tier_designer")
    assert not at.exception
    assert not [d for d in at.dataframe if "segment" in d.value.columns]  # closed: not drawn
    at.session_state["td_open_segments"] = True
    at.run()
    assert not at.exception
    tables = [d.value for d in at.dataframe if "segment" in d.value.columns]
    assert tables and list(tables[0]["segment"]) == ["north", "south", "islands"]
    assert any("smallest segment" in m.value for m in at.markdown)
    at.text_area(key="td_seg_sizes").set_value("a,1\nb,x\n").run()
    assert any("line 2" in e.value for e in at.error)
    assert S.PLANNING_TITLE
