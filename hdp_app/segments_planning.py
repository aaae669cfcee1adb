"""The Tier designer's planning for segments (issue 28): segment sizes in, each segment's
95% error for both targets and the smallest segment that meets a target error out. Widgets
only: the sentences and numbers come from hdp_app.views.segments (hdp_core.segments)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from hdp_app.views import segments as S

K_SIZES = "td_seg_sizes"
K_ERROR = "td_seg_error"


def planning_section(menu: Any) -> None:
    """Draw the planning section for ``menu`` (a hdp_core.menu.Menu)."""
    st.caption(S.PLANNING_INTRO)
    text = st.text_area("Segments and their users", S.PLANNING_EXAMPLE, key=K_SIZES, height=120)
    try:
        sizes = S.parse_sizes(text)
    except ValueError as e:
        st.error(f"Segment sizes: {e}.")
        return
    levels, shares = menu.levels, [t.share_percent for t in menu.tiers]
    lo, hi = float(menu.low), float(menu.high)
    if sizes:
        st.dataframe(
            S.planning_table(levels, shares, sizes, lo, hi, menu.data_sd),
            hide_index=True,
            key="td_seg_table",
        )
    err = st.number_input(
        "Target 95% error (±, in the data's units)",
        min_value=0.0,
        value=(hi - lo) / 50,
        key=K_ERROR,
    )
    if err > 0:
        st.markdown(S.smallest_segment_sentence(levels, shares, err, lo, hi, menu.unit))


def planning_expander(menu: Any) -> None:
    """The Tier designer's segments section as a lazy expander (drawn only when open, as
    sections 3 to 6; kept open in the link as td_open_segments)."""
    seg = st.expander(f"**{S.PLANNING_TITLE}**", key="td_open_segments", on_change="rerun")
    if seg.open:
        with seg:
            planning_section(menu)
