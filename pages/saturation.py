"""Saturation page: the paper's central phenomenon, privacy for free.

ADPM grants r_i = min(eps_i, tau*): users who ask for eps >= tau* are all capped at tau*
(Lemma 3). This page shows the r-versus-eps curve, who is capped and what they gain, the
two-group phase diagram and Algorithm 1 step by step. All numbers come from hdp_core.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from hdp_app.caches import saturation as cache
from hdp_app.common import drop_bad_query_params, get_profile, get_spec, guarded, run_through_app
from hdp_app.figures.saturation import phase_figure, tau_spread_figure, walkthrough_figure
from hdp_app.perf import live
from hdp_app.views import explain, snippets
from hdp_app.views import saturation as sat
from hdp_app.views import saturation_page as P
from hdp_app.views import tour as teach
from hdp_app.views import tuned as tview
from hdp_app.views.formatting import plain
from hdp_app.widgets import (
    limit_bounds,
    metric_row,
    number,
    number_columns,
    show_metric,
    wide_dataframe,
)
from hdp_core.errors import ProfileError
from hdp_core.profile import EpsilonProfile

run_through_app()  # first: a deep link on a fresh server must go through app.py

# widget keys (prefix sat_)
K_PHASE_N, K_PHASE_F, K_PHASE_E1 = "sat_phase_n", "sat_phase_f", "sat_phase_eps1"
K_PHASE_E2 = "sat_phase_eps2"
K_PHASE_FOR = "sat_phase_for"  # the profile the phase controls were last set from
K_STEP, K_EXAMPLE = "sat_trace_step", "sat_trace_example"

_level = sat.level_text


# ----------------------------------------------------------------------------- sections
def _metrics(fp: sat.FreePrivacy) -> None:
    row = metric_row()  # wraps at 1024 px instead of cutting labels and values
    for m in sat.free_privacy_metrics(fp):
        show_metric(row, m, arrow=False, width="content")


def _curve_section(prof: EpsilonProfile, fp: sat.FreePrivacy) -> None:
    st.subheader("Requested versus granted privacy")
    curve = cache.curve(prof)
    st.plotly_chart(cache.curve_figure(prof), key="sat_curve_chart")
    st.markdown(P.curve_text(curve, fp))
    notes = P.curve_notes(curve, fp)
    if notes:
        st.caption(notes)


def _spread_section(prof: EpsilonProfile) -> None:
    """tau* of ADPM tuned to an assumed data spread (issue 14; beyond the paper)."""
    st.subheader("Saturation against the assumed spread of the data")
    s = number(st, P.SPREAD_FIELD)
    spreads, tau = cache.tau_spread(prof)
    st.plotly_chart(tau_spread_figure(spreads, tau, float(s)), key="sat_spread_chart")
    st.markdown(tview.saturation_spread_sentence(prof, float(s)))


def _table_section(df: pd.DataFrame, csv: bytes, grouping: str, fp: sat.FreePrivacy) -> None:
    st.subheader("Free privacy, group by group")
    st.caption(P.table_caption(grouping))
    capped = P.capped_text(fp)
    if capped:
        st.markdown(capped)
    wide_dataframe(df, "sat_table", P.TABLE_FORMATS)
    st.download_button(
        "Download this table (CSV)",
        csv,
        file_name="free_privacy.csv",
        mime="text/csv",
        key="sat_table_csv",
        help="The table above as a CSV file (inf = public).",
        on_click="ignore",
    )


def _phase_intro() -> None:
    """The phase diagram's heading and what it shows (drawn by the page, not by the fragment
    below: a slider step there does not send them again)."""
    st.subheader("Two groups: when does the looser group saturate?")
    st.markdown(P.PHASE_INTRO)


def _phase_section(prof: EpsilonProfile) -> None:
    base, grid, two_levels = cache.phase_start(prof)
    # the controls start from the current profile, and follow it whenever it changes
    seed = P.phase_controls(base, grid)
    changed = st.session_state.get(K_PHASE_FOR) != prof.key
    st.session_state[K_PHASE_FOR] = prof.key
    for k, v in zip((K_PHASE_N, K_PHASE_F, K_PHASE_E1, K_PHASE_E2), seed):
        if changed or k not in st.session_state:
            st.session_state[k] = v
    c1, c2 = st.columns(2)
    n = c1.number_input(
        "Users n",
        **limit_bounds(P.PHASE_N),
        step=100,
        key=K_PHASE_N,
        help="Total number of users in the two groups. " + explain.PHASE_WHATIF,
    )
    f = c2.slider(
        "Share f of users in the stricter group",
        P.PHASE_F.lo,
        P.PHASE_F.hi,
        step=P.PHASE_F_STEP,
        key=K_PHASE_F,
        help="The fraction of the n users who ask for eps1. " + explain.PHASE_WHATIF,
    )
    c1, c2 = st.columns(2)
    e1 = c1.select_slider(
        "eps1 (stricter group)",
        options=grid,
        key=K_PHASE_E1,
        format_func=_level,
        help=explain.phase_level_help("stricter"),
    )
    e2 = c2.select_slider(
        "eps2 (looser group)",
        options=(*grid, math.inf),
        key=K_PHASE_E2,
        format_func=_level,
        help=explain.phase_level_help("looser") + " The last stop is public (eps = ∞).",
    )
    try:
        state = cache.phase(prof, float(e1), float(e2), int(n), float(f))
        thr = float(sat.phase_boundary(state.n, state.frac, [state.eps1])[1][0])
    except ValueError as e:
        st.error(plain(e))
        return
    c1, c2 = st.columns([1, 1])  # the metric's label whole at 1024 px
    c1.metric(
        "The looser group saturates from eps2 =",
        f"{thr:.4g}",
        help="With these n, f and eps1, any looser level eps2 at or above this is "
        "capped at it: asking for less privacy (even public) changes nothing.",
    )
    c2.markdown(state.verdict)
    st.caption(explain.phase_origin_text(state, two_levels))
    fig = phase_figure(
        state.boundary_eps1,
        state.boundary_eps2,
        float(state.n),
        float(state.frac),
        teach.phase_point(state),
        point_name=P.point_name(state),
    )
    st.plotly_chart(fig, key="sat_phase_chart")


def _step(delta: int, top: int) -> None:
    st.session_state[K_STEP] = sat.clamp_step(st.session_state.get(K_STEP, 1) + delta, top)


def _jump(step: int) -> None:
    st.session_state[K_STEP] = step


def _trace_section(prof: EpsilonProfile) -> None:
    st.subheader("Algorithm 1, step by step")
    small = prof.n <= P.TRACE_MAX
    if small:
        use_example = st.toggle(
            "Use the 50-user teaching example instead of the current profile",
            key=K_EXAMPLE,
            bind="query-params",
            help=P.EXAMPLE_HELP,
        )
    else:
        use_example = True
        st.caption(P.trace_too_large(prof.n))
    src = sat.teaching_example() if use_example else prof
    trace = cache.trace(src)
    m = int(trace.eps.size)
    if m == 0:
        st.info(P.TRACE_EMPTY)
        return
    st.markdown(sat.TRACE_INTRO)
    if use_example:  # its tau* is not the sidebar's: say so where it is quoted
        st.markdown(cache.tau_beside(src, prof, P.EXAMPLE_NAME))
    if m > 1:
        if K_STEP in st.session_state:  # keep the step inside a (possibly smaller) profile
            st.session_state[K_STEP] = sat.clamp_step(st.session_state[K_STEP], m)
        step = st.slider(
            "Step k",
            1,
            m,
            key=K_STEP,
            bind="query-params",
            help="How many users Algorithm 1 has processed so far.",
        )
        step = sat.clamp_step(step, m)
        # buttons in their own wide columns: at 1024 px (a projector) the labels stay whole
        c1, c2, c3 = st.columns([1, 1, 2])
        c1.button(
            "◀ Previous",
            key="sat_trace_prev",
            on_click=_step,
            args=(-1, m),
            help="Go back one step.",
            disabled=step <= 1,
            width="stretch",
        )
        c2.button(
            "Next ▶",
            key="sat_trace_next",
            on_click=_step,
            args=(1, m),
            help="Run the next step of the recursion.",
            disabled=step >= m,
            width="stretch",
        )
        jump = teach.saturation_step(trace)
        c3.button(
            "Jump to the saturation step",
            key="sat_trace_jump",
            on_click=_jump,
            args=(jump or 1,),
            help=P.jump_help(jump),
            disabled=jump is None or step == jump,
            width="stretch",
        )
    else:
        step = 1
    # the chart right under its controls: both on one 768 px screen (a projector)
    st.plotly_chart(walkthrough_figure(trace, int(step)), key="sat_trace_chart")
    st.info(cache.step_text(src, prof, int(step)))
    try:
        weights = teach.step_weights(trace, int(step))
    except ValueError:  # every usable user is public: equal weights, no noise
        weights = None
    if weights is not None:
        st.markdown(explain.step_weights_text(weights))
        with st.expander("Why the constant is 8"):
            st.markdown(explain.WHY_EIGHT)
            st.markdown(explain.why_eight_numbers(weights))
    if trace.n_excluded:
        st.caption(P.trace_excluded(trace.n_excluded))
    table = pd.DataFrame(P.trace_columns(trace, int(step), weights is not None))
    st.caption("Latest step first: the top row is the user just processed.")
    numbers = {c: "%.4g" for c in table.columns if c not in P.TRACE_TEXT_COLUMNS}
    st.dataframe(
        table,
        hide_index=True,
        key="sat_trace_table",
        width="stretch",
        column_config=number_columns(table.columns, numbers),
    )


def _reproduce(prof: EpsilonProfile) -> None:
    with st.expander("Reproduce in Python"):
        snippet = snippets.saturation(prof, get_spec())
        st.code(snippet.code, language="python", wrap_lines=True)
        if snippet.needs_profile_csv:
            st.caption(snippets.PROFILE_CSV_NOTE)


# ----------------------------------------------------------------------------- page
st.title("Saturation: privacy for free")
drop_bad_query_params({K_STEP: P.STEP_LIMIT})
st.markdown(P.INTRO)

try:
    prof = get_profile()
    fp, df, csv, grouping = cache.free(prof)
except (ProfileError, ValueError) as exc:
    st.error(f"This profile cannot be analysed: {plain(exc)}")
else:
    if fp.n_usable == 0:
        st.warning(P.NO_DATA)
    else:
        if fp.outputs_zero:
            st.warning(P.OUTPUTS_ZERO)
        guarded(_metrics, fp)
        guarded(_curve_section, prof, fp)
        guarded(_table_section, df, csv, grouping, fp)
    _phase_intro()
    live(_phase_section, prof)  # fragments: a control there reruns only its section
    live(_trace_section, prof)
    if fp.n_usable:
        live(_spread_section, prof)
    _reproduce(prof)
    if fp.n_excluded:
        st.caption(P.excluded_text(fp.n_excluded))
