"""Saturation page: the paper's central phenomenon, privacy for free.

ADPM grants r_i = min(eps_i, tau*): users who ask for eps >= tau* are all capped at tau*
(Lemma 3). This page shows the r-versus-eps curve, who is capped and what they gain, the
two-group phase diagram and Algorithm 1 step by step. All numbers come from hdp_core.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

import hdp_core as hdp
from hdp_app.common import (
    PROFILE_HASH,
    drop_bad_query_params,
    get_profile,
    get_spec,
    guarded,
    run_through_app,
)
from hdp_app.figures.saturation import (
    phase_figure,
    r_curve_figure,
    tau_spread_figure,
    trace_figure,
)
from hdp_app.perf import live
from hdp_app.views import codegen, explain
from hdp_app.views import saturation as sat
from hdp_app.views import tour as teach
from hdp_app.views import tuned as tview
from hdp_app.views.formatting import count_noun, frame_to_csv, plain
from hdp_app.views.limits import SPREAD, Limit
from hdp_app.widgets import limit_bounds, metric_row, show_metric
from hdp_core.errors import ProfileError
from hdp_core.profile import EpsilonProfile
from hdp_core.validate import format_eps

run_through_app()  # first: a deep link on a fresh server must go through app.py

TRACE_MAX = 50  # the step-by-step walk is for profiles of at most this many users

# widget keys (prefix sat_)
K_PHASE_N, K_PHASE_F, K_PHASE_E1 = "sat_phase_n", "sat_phase_f", "sat_phase_eps1"
K_PHASE_E2 = "sat_phase_eps2"
K_PHASE_FOR = "sat_phase_for"  # the profile the phase controls were last set from
K_STEP, K_EXAMPLE = "sat_trace_step", "sat_trace_example"


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _curve(profile: EpsilonProfile) -> sat.RCurve:
    return sat.r_curve(profile)


@st.cache_resource(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _curve_figure(profile: EpsilonProfile):
    """The r-versus-eps figure, built once per profile and shared (never modified)."""
    return r_curve_figure(_curve(profile))


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _free(profile: EpsilonProfile) -> tuple[sat.FreePrivacy, pd.DataFrame, bytes, str]:
    table = sat.free_privacy_table(profile)
    df = pd.DataFrame(table.columns)
    return sat.free_privacy(profile), df, frame_to_csv(df), table.grouping


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _trace(profile: EpsilonProfile) -> hdp.AlgorithmTrace:
    return hdp.adpm_trace(profile)


_level = sat.level_text


# ----------------------------------------------------------------------------- sections
def _metrics(fp: sat.FreePrivacy) -> None:
    row = metric_row()  # wraps at 1024 px instead of cutting labels and values
    for m in sat.free_privacy_metrics(fp):
        show_metric(row, m, arrow=False, width="content")


def _curve_section(prof: EpsilonProfile, fp: sat.FreePrivacy) -> None:
    st.subheader("Requested versus granted privacy")
    curve = _curve(prof)
    st.plotly_chart(_curve_figure(prof), key="sat_curve_chart")
    if math.isfinite(fp.tau) and fp.n_saturated:
        st.markdown(
            f"Users 1 to {curve.k_unsaturated:,} (sorted by the eps they asked for) get exactly "
            f"what they asked for; from user {curve.k_unsaturated + 1:,} on (the **saturation "
            f"index**), asking for more stops helping the estimate, so ADPM grants every one of "
            f"them **tau\\* = {fp.tau:.4g}**, stricter than they asked, at no cost in accuracy."
        )
    elif curve.n_usable and not math.isfinite(fp.tau) and fp.n_public == fp.n_usable:
        st.markdown(
            "Every usable user is public: ADPM is the plain sample mean, nobody is "
            "capped and there is no noise."
        )
    else:
        st.markdown(
            "Nobody is capped: the levels are close together, so weights proportional "
            "to eps are optimal and every user gets exactly what they asked for."
        )
    notes = []
    if curve.per_tier:
        notes.append("Each tier is drawn as a flat segment over its users.")
    if curve.downsampled:
        notes.append(
            f"{curve.rank_start.size:,} of {curve.n_usable:,} users are drawn "
            "(evenly in rank and in eps; the saturation point is exact)."
        )
    if fp.n_public:
        notes.append("Public users (eps = ∞) are drawn on the line at the top.")
    if curve.n_excluded:
        notes.append(
            f"{curve.n_excluded:,} users with eps = 0 are not drawn: their data is "
            "not used (weight 0)."
        )
    if notes:
        st.caption(" ".join(notes))


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _tau_spread(profile: EpsilonProfile) -> tuple:
    return tview.tau_vs_spread(profile)


def _spread_section(prof: EpsilonProfile) -> None:
    """tau* of ADPM tuned to an assumed data spread (issue 14; beyond the paper)."""
    st.subheader("Saturation against the assumed spread of the data")
    s = st.number_input(
        "Assumed standard deviation s (on [−0.5, 0.5])",
        **limit_bounds(SPREAD),
        value=0.2,
        step=0.01,
        format="%.3f",
        key="sat_spread",
        help="From 0.001 to 0.5: data in [−0.5, 0.5] cannot spread more than 0.5, so a "
        "larger value is not accepted. ADPM assumes that worst case, s = 0.5. Tuned "
        "to a smaller known spread (Algorithm 1 with 8 replaced by 2/s²), it "
        "caps later.",
    )
    spreads, tau = _tau_spread(prof)
    st.plotly_chart(tau_spread_figure(spreads, tau, float(s)), key="sat_spread_chart")
    st.markdown(tview.saturation_spread_sentence(prof, float(s)))


def _table_section(df: pd.DataFrame, csv: bytes, grouping: str, fp: sat.FreePrivacy) -> None:
    st.subheader("Free privacy, group by group")
    what = {
        "tier": "one row per tier",
        "level": "one row per distinct level",
        "bin": "levels grouped into bins on a log scale (split at tau*)",
    }[grouping]
    st.caption(
        f"{what.capitalize()}. 'Weight of one user' is that user's share of the estimate; "
        "'share of total weight' sums to 1 over all users. A saturated group is granted "
        "tau* whatever it asked for."
    )
    if fp.n_saturated:
        st.markdown(
            f"**{fp.n_saturated:,} users** ({100 * fp.saturated_share:.3g}%) are capped: they "
            f"hold {100 * fp.weight_share:.3g}% of the total weight and each gets tau* = "
            f"{fp.tau:.4g} instead of the looser level they asked for."
        )
    fmt = {
        c: st.column_config.NumberColumn(c, format="%.4g")
        for c in df.columns
        if c.startswith(("requested", "granted"))
    }
    fmt.update(
        {
            c: st.column_config.NumberColumn(c, format="%.3e")
            for c in df.columns
            if c.startswith("weight")
        }
    )
    fmt["share of total weight"] = st.column_config.NumberColumn(
        "share of total weight", format="percent"
    )
    fmt["users"] = st.column_config.NumberColumn("users", format="localized")
    st.dataframe(df, hide_index=True, column_config=fmt, key="sat_table")
    st.download_button(
        "Download this table (CSV)",
        csv,
        file_name="free_privacy.csv",
        mime="text/csv",
        key="sat_table_csv",
        help="The table above as a CSV file (inf = public).",
        on_click="ignore",
    )


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _phase_start(profile: EpsilonProfile) -> tuple[teach.PhaseState, tuple, bool]:
    """The diagram at the profile's own levels, the level sliders' grid and whether the
    profile has exactly two levels."""
    base = teach.phase_state(profile)
    grid = teach.log_grid(
        base.slider_min, base.slider_max, 0.05, (base.start_eps1, base.start_eps2)
    )
    return base, grid, sat.two_level_point(profile) is not None


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=64, show_spinner=False)
def _phase(profile: EpsilonProfile, e1: float, e2: float, n: int, f: float) -> teach.PhaseState:
    return teach.phase_state(profile, e1, e2, n, f)


def _phase_intro() -> None:
    """The phase diagram's heading and what it shows (drawn by the page, not by the fragment
    below: a slider step there does not send them again)."""
    st.subheader("Two groups: when does the looser group saturate?")
    st.markdown(
        "A share f of n users asks for eps1 and the rest for a looser eps2. The looser group is "
        "capped (saturates) exactly when **eps2 ≥ eps1 + 8/(n f eps1)**; below that line "
        "weights proportional to eps are optimal. Move the two groups' levels to see where "
        "a profile falls."
    )


def _phase_section(prof: EpsilonProfile) -> None:
    base, grid, two_levels = _phase_start(prof)
    # the controls start from the current profile, and follow it whenever it changes
    seed = (
        int(base.n),
        float(min(max(round(base.frac, 2), 0.01), 1.0)),
        teach.nearest(grid, base.eps1),
        math.inf if math.isinf(base.eps2) else teach.nearest(grid, base.eps2),
    )
    changed = st.session_state.get(K_PHASE_FOR) != prof.key
    st.session_state[K_PHASE_FOR] = prof.key
    for k, v in zip((K_PHASE_N, K_PHASE_F, K_PHASE_E1, K_PHASE_E2), seed):
        if changed or k not in st.session_state:
            st.session_state[k] = v
    c1, c2 = st.columns(2)
    n = c1.number_input(
        "Users n",
        min_value=2,
        max_value=10**15,
        step=100,
        key=K_PHASE_N,
        help="Total number of users in the two groups. " + explain.PHASE_WHATIF,
    )
    f = c2.slider(
        "Share f of users in the stricter group",
        0.01,
        1.0,
        step=0.01,
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
        state = _phase(prof, float(e1), float(e2), int(n), float(f))
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
    name = "current profile" if state.from_profile else "what-if levels"
    fig = phase_figure(
        state.boundary_eps1,
        state.boundary_eps2,
        float(state.n),
        float(state.frac),
        teach.phase_point(state),
        point_name=name,
    )
    st.plotly_chart(fig, key="sat_phase_chart")


def _step(delta: int, top: int) -> None:
    st.session_state[K_STEP] = sat.clamp_step(st.session_state.get(K_STEP, 1) + delta, top)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=64, show_spinner=False)
def _step_text(shown: EpsilonProfile, current: EpsilonProfile, step: int) -> str:
    return explain.trace_step_beside_sidebar(_trace(shown), step, shown, current)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _tau_beside(shown: EpsilonProfile, current: EpsilonProfile) -> str:
    return explain.tau_beside_sidebar(shown, current, "the 50-user teaching example")


def _jump(step: int) -> None:
    st.session_state[K_STEP] = step


def _trace_section(prof: EpsilonProfile) -> None:
    st.subheader("Algorithm 1, step by step")
    small = prof.n <= TRACE_MAX
    if small:
        use_example = st.toggle(
            "Use the 50-user teaching example instead of the current profile",
            key=K_EXAMPLE,
            bind="query-params",
            help="A 50-user example (levels 0.2 to 8 and three public "
            "users) in the spirit of the paper's r-versus-eps figure.",
        )
    else:
        use_example = True
        st.caption(
            f"The walk-through is for profiles of at most {TRACE_MAX} users; the "
            f"current one has {prof.n:,}, so here is a 50-user teaching example (levels "
            "0.2 to 8 and three public users)."
        )
    src = sat.teaching_example() if use_example else prof
    trace = _trace(src)
    m = int(trace.eps.size)
    if m == 0:
        st.info(
            "Every user has eps = 0: no data may be used, so there is nothing to walk "
            "through (ADPM outputs 0)."
        )
        return
    st.markdown(sat.TRACE_INTRO)
    if use_example:  # its tau* is not the sidebar's: say so where it is quoted
        st.markdown(_tau_beside(src, prof))
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
            help="Go straight to the step where the first user is capped at tau*."
            if jump
            else "Nobody is capped here: every user gets the eps they asked for.",
            disabled=jump is None or step == jump,
            width="stretch",
        )
    else:
        step = 1
    st.info(_step_text(src, prof, int(step)))
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
        st.caption(
            f"{count_noun(trace.n_excluded, 'user')} with eps = 0 left out before the "
            "recursion starts (their data is not used)."
        )
    st.plotly_chart(trace_figure(trace, int(step)), key="sat_trace_chart")
    table = pd.DataFrame(sat.trace_table(trace, int(step)))
    # a public user's level reads "public (∞)", not the browser's "Infinity"
    table["εₖ asked"] = [_level(float(x)) for x in table["εₖ asked"]]
    if weights is not None:  # each user's weight now, beside what they were granted
        table.insert(3, "weight wₖ now", teach.weights_column(trace, int(step)))
    st.caption("Latest step first: the top row is the user just processed.")
    st.dataframe(
        table,
        hide_index=True,
        key="sat_trace_table",
        width="stretch",
        column_config={
            c: st.column_config.NumberColumn(c, format="%.4g")
            for c in table.columns
            if c not in ("step k", "saturated", "εₖ asked")
        },
    )


def _reproduce(prof: EpsilonProfile) -> None:
    with st.expander("Reproduce in Python"):
        st.code(codegen.saturation_code(prof, get_spec()), language="python")
        if "profile.csv" in codegen.profile_code(prof, get_spec()):
            st.caption("Download profile.csv on the Profile page to run this script.")


# ----------------------------------------------------------------------------- page
st.title("Saturation: privacy for free")
drop_bad_query_params({K_STEP: Limit(1, 10**9, integer=True)})
st.markdown(
    "ADPM, the optimal estimator, does not simply follow each user's request. Users who ask "
    "for little privacy (a large eps; smaller eps = more privacy, ∞ = public) are all granted "
    "the same level **tau\\***: beyond it, trusting their data more would not make the "
    "estimate more accurate, so they get extra privacy for free."
)

try:
    prof = get_profile()
    fp, df, csv, grouping = _free(prof)
except (ProfileError, ValueError) as exc:
    st.error(f"This profile cannot be analysed: {plain(exc)}")
else:
    if fp.n_usable == 0:
        st.warning(
            "Every user has eps = 0: no data may be used, so ADPM outputs 0 and there "
            "is no saturation to show. Change the profile on the Profile page."
        )
    else:
        if fp.outputs_zero:
            st.warning(
                "ADPM's worst-case error bound f(r) exceeds 1/4 for this profile, so ADPM "
                "outputs 0 instead of using the data; the levels below are what its weights "
                "would grant."
            )
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
        st.caption(f"{fp.n_excluded:,} users with eps = 0 ({format_eps(0.0)}) are excluded.")
