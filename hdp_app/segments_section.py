"""The Release page's "a mean per segment" section (issue 28): the choice one mean / a mean
per segment, the segment columns, the release (hdp_release.release_means, charged once to
the server's ledger; with the page's person id column, each person charged once, what they
lost in their own segment) and its result (table, chart, receipt per segment, downloads, the exact
"Reproduce in Python"). Widgets and layout only: numbers, sentences and decisions come from
hdp_app.views.segments, the chart from hdp_app.figures.segments."""

from __future__ import annotations

from typing import Any

import streamlit as st

from hdp_app.figures.segments import segments_figure
from hdp_app.views import people as P
from hdp_app.views import release as V
from hdp_app.views import release_budget as B
from hdp_app.views import segments as S
from hdp_app.views.formatting import utc_timestamp
from hdp_app.widgets import metric_row
from hdp_core.errors import HdpError
from hdp_release import release_means

K_MODE = "rel_seg_mode"
K_BY = "rel_seg_by"
K_GO = "rel_seg_go"
LAST = "rel_seg_last"  # the last release per segment: dict(g, settings, file, by, time)


def choose_mode(df: Any, s: dict) -> list[str] | None:
    """The choice "One mean / A mean per segment"; returns the chosen segment columns, or
    None for one mean."""
    mode = st.radio("What to release", S.MODES, key=K_MODE, horizontal=True, help=S.MODE_HELP)
    if mode != S.MODES[1]:
        return None
    return list(
        st.multiselect(
            f"Segment columns (at most {S.MAX_PAGE_BY})",
            S.segment_columns(list(df.columns), s["value"], s["eps"], s.get("id")),
            key=K_BY,
            max_selections=S.MAX_PAGE_BY,
        )
    )


def release_section(
    df: Any, s: dict, name: str, menu: Any, budget: tuple, spend: Any, answer: Any, by: list
) -> None:
    """The button that releases a mean per segment (the same blockers as one mean)."""
    remaining = budget[2]  # (ledger, dataset, remaining, scope)
    st.subheader("Release a mean per segment")
    blocker = B.release_blocker(answer, P.budget_for(s.get("id"), remaining), spend)
    problem = S.by_problem(by)
    if blocker is not None:
        (st.error if blocker.kind == "error" else st.info)(blocker.text)
    elif problem is not None:
        st.info(problem)
    if st.button(
        "Release a private mean per segment",
        key=K_GO,
        type="primary",
        disabled=blocker is not None or problem is not None,
    ):
        try:
            g = release_means(df, by=by, **B.release_arguments(s, menu, answer, budget, spend))
        except HdpError as e:
            st.error(P.refusal_text(e))
            return
        st.session_state[LAST] = {
            "g": g,
            "settings": dict(s),
            "file": name,
            "by": list(by),
            "time": utc_timestamp(),  # ISO 8601 UTC: the download's released_at
            "menu": menu,
            "scope": budget[3],  # the snippet passes it as the page did
        }
        st.rerun()


def last_section() -> None:
    """The last release per segment: sentence, table, chart, receipt, downloads, code."""
    last = st.session_state.get(LAST)
    if last is None:
        return
    g, s = last["g"], last["settings"]
    unit = s.get("unit") or ""
    st.success("Released a private mean per segment. Safe to share: the table, chart and receipt.")
    st.caption(V.released_caption(s, last["file"], last["time"]))
    st.markdown(S.segments_sentence(g, unit))
    table = S.segments_table(g)
    st.dataframe(table, hide_index=True, key="rel_seg_table")
    st.plotly_chart(
        segments_figure(table, g.target, g.lo, g.hi, unit),
        key="rel_seg_chart",
        config={"displayModeBar": False},
    )
    said = S.people_sentence(g)
    if said is not None:
        st.markdown(said)
        st.dataframe(
            S.people_segments_table(g, P.people_frame(g.people)),
            hide_index=True,
            key="rel_seg_people",
        )
    with st.expander("Privacy receipt per segment and level"):
        st.dataframe(g.receipt(), hide_index=True, key="rel_seg_receipt")
    row = metric_row()
    row.download_button(
        "⬇️ Segments (CSV)",
        S.segments_csv(g),
        file_name="private_means.csv",
        mime="text/csv",
        key="rel_seg_dl_csv",
        on_click="ignore",
    )
    row.download_button(
        "⬇️ Result and receipts (JSON)",
        S.segments_json(g, s, last["file"], last["time"]),
        file_name="private_means.json",
        mime="application/json",
        key="rel_seg_dl_json",
        on_click="ignore",
    )
    row.download_button(
        "⬇️ Receipt (CSV)",
        S.receipt_csv(g),
        file_name="privacy_receipt_segments.csv",
        mime="text/csv",
        key="rel_seg_dl_receipt",
        on_click="ignore",
    )
    with st.expander("Reproduce in Python"):
        code = S.segments_code(
            s, last["file"], last["by"], g.target, g, last.get("menu"), last.get("scope")
        )
        st.code(code, language="python", wrap_lines=True)
