"""Simulation page: simulated MSE of ADPM against the five baselines, live; the group sweep;
the paper's Table 1 in one click.

Layout and widgets only: reads the current profile and the widgets, calls hdp_core through
hdp_app.caches.simulation (simulate_mse, group_sweep, experiments.table1), takes every table,
card, control and sentence from hdp_app.views (simulation, simulation_controls, group_sweep,
paper_table, whatif, explain, tuned) and every figure from hdp_app.figures.simulation.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import hdp_core as hdp
from hdp_app import simulation_results as R
from hdp_app import simulation_sweep as sweep
from hdp_app.caches import simulation as cache
from hdp_app.common import (
    PROFILE_LABEL,
    PROFILE_SPEC,
    drop_bad_query_params,
    get_profile,
    metric_row,
    run_through_app,
    set_profile,
)
from hdp_app.figures import simulation as figs
from hdp_app.views import explain
from hdp_app.views import group_sweep as gs
from hdp_app.views import paper_table as pt
from hdp_app.views import simulation as simview
from hdp_app.views import simulation_controls as sc
from hdp_app.views import tuned as tview
from hdp_app.views import whatif as wv
from hdp_app.views.fields import url_limits
from hdp_app.views.formatting import plain
from hdp_app.views.limits import check_data_range
from hdp_app.widgets import number, show_metric, wide_dataframe
from hdp_core.profile import EpsilonProfile

run_through_app()  # first: a deep link on a fresh server must go through app.py


URL_FIELDS = (sc.A, sc.B, sc.P, sc.TRIALS_FIELD, sc.SEED_FIELD, sc.LO, sc.HI, *gs.FIELDS)
URL_LIMITS = url_limits(*URL_FIELDS)
"""What each URL-bound number accepts (the bounds of its widget below)."""

DIST_KINDS = sc.DIST_KINDS
short_label = simview.short_label
LOADED_NOTE = "sim_loaded_note"
PAPER_SHOWN = "sim_paper_shown"
APP_RERUN = "sim_app_rerun"
PAGE_RUN, WHOLE_ASKED = "sim_page_run", "sim_whole_asked"  # the whole run, not a quick one
URL: dict[str, Any] = {"bind": "query-params"}


# the live simulation ---------------------------------------------------------------------
def distribution_controls() -> tuple:
    """Distribution radio and its parameters; returns the distribution spec."""
    choice = st.radio(
        "Data distribution",
        list(DIST_KINDS),
        key="sim_dist",
        horizontal=True,
        bind="query-params",
        help=sc.SIM_HELP["sim_dist"],
    )
    kind = DIST_KINDS.get(choice, "beta")
    a, b, p = sc.A.start, sc.B.start, sc.P.start
    if kind == "beta":
        ca, cb = st.columns(2)
        a, b = number(ca, sc.A, **URL), number(cb, sc.B, **URL)
    elif kind == "twopoint":
        p = st.slider(
            sc.P.label,
            sc.P_LIMIT.lo,
            sc.P_LIMIT.hi,
            sc.P.start,
            sc.P.step,
            key=sc.P.key,
            help=sc.P.help,
            **URL,
        )
    return simview.dist_spec(kind, a, b, p)


def sim_controls() -> tuple[sc.SimSettings, Any]:
    """The simulation's controls; returns their settings and a slot for the true-mean metrics."""
    methods = st.multiselect(  # the whole width: at 1024 px a column cut "FME (reconstructed)"
        "Methods",
        simview.method_options(),
        default=list(hdp.METHODS),
        format_func=short_label,
        key="sim_methods",
        bind="query-params",
        wrap=True,
        help=sc.SIM_HELP["sim_methods"],
    )
    c1, c2, c3 = st.columns([1.3, 1.2, 1])
    with c1:
        spec = distribution_controls()
    with c2:
        t1, t2 = st.columns(2)
        trials = number(t1, sc.TRIALS_FIELD, **URL)
        seed = number(t2, sc.SEED_FIELD, **URL)
    with c3:
        real = st.toggle(sc.REAL_UNITS_LABEL, key="sim_real", help=sc.REAL_UNITS_HELP, **URL)
        lo, hi = sc.LO.start, sc.HI.start
        if real:
            r1, r2 = st.columns(2)
            lo, hi = number(r1, sc.LO, **URL), number(r2, sc.HI, **URL)
        tuned_on = st.toggle(sc.TUNED_LABEL, key="sim_tuned", help=sc.TUNED_HELP, **URL)
        own, tuned_in = True, sc.TUNED_SD.start
        if tuned_on:
            own = st.checkbox(
                sc.TUNED_OWN_LABEL, value=True, key="sim_tuned_own", help=sc.TUNED_OWN_HELP
            )
            if not own:
                tuned_in = number(st, sc.TUNED_SD)
        metric_slot = st.container()

    settings = (int(trials), int(seed), bool(real), float(lo), float(hi), bool(tuned_on))
    return sc.SimSettings(spec, list(methods), *settings, bool(own), float(tuned_in)), metric_slot


def exact_only(prof: EpsilonProfile, s: sc.SimSettings, dist: Any, plan: Any) -> None:
    """A profile too wide to simulate: the exact MSEs instead, and the group sweep."""
    spec, methods, seed = s.spec, s.methods, s.seed
    st.warning(simview.too_large_text(plan))
    rows = cache.exact_table(prof, spec, tuple(methods) or hdp.METHODS)
    df = simview.exact_frame(rows)
    wide_dataframe(df, "sim_exact_table", simview.TABLE_FORMATS)
    whatif_section(prof, spec, methods, None, check_data_range(s.lo, s.hi) if s.real else None)
    every = sc.methods_or_all(methods)
    spec_now = st.session_state.get(PROFILE_SPEC)
    sweep.sweep_section(spec, every, sc.repro(prof, spec_now, dist, every, plan.requested, seed))


def tuned_part(prof: EpsilonProfile, dist: Any, tuned_sd: float, own: bool) -> None:
    """The tuned method's spread, and its MSE when the spread is guessed wrong."""
    st.caption(simview.tuned_caption(f"{tview.TUNED} = {tview.tuned_label(tuned_sd)}", own))
    st.subheader("If the spread is guessed wrong")
    curve = cache.spread_curve(prof, tuned_sd, float(dist.mean))
    st.plotly_chart(figs.spread_figure(curve), key="sim_spread_chart")
    st.caption(sc.SPREAD_CAPTION)


@st.fragment
def simulation_section() -> None:
    """Controls, simulation, table, charts, downloads; reruns alone when its widgets change.
    A long run first draws its first trials (views.simulation.early_trials, said so), then the
    rest of the page, then the whole run in their place; a step of its controls shows a quick
    result of a long run's first trials, said so, and the whole run on request
    (views.simulation.shown_trials; issue 29). The results are a static HTML table
    (views.simulation_table); the same as a grid, the spread of the estimates, the sweep and
    the script sit in expanders, closed at first, built on a full run and while open: a step
    leaves a closed one empty (views.simulation.builds_closed), so it redraws the results
    only."""
    page_run, whole_asked = (bool(st.session_state.pop(k, False)) for k in (PAGE_RUN, WHOLE_ASKED))
    prof = get_profile()
    st.header("Simulated error of each method")
    s, metric_slot = sim_controls()
    spec, methods, seed, lo, hi = s.spec, s.methods, s.seed, s.lo, s.hi
    try:
        dist = simview.make_distribution(*spec)
        data_range = check_data_range(lo, hi) if s.real else None
        plan = cache.trial_plan(prof, spec, s.trials)
        tuned_sd = None
        if s.tuned_on:
            tuned_sd = simview.tuned_to(s.own, s.tuned_in, dist, tview.SPREAD_MIN)
    except (hdp.ProfileError, ValueError) as exc:
        st.error(plain(exc))
        return
    with metric_slot:  # the mean every method estimates (and in real units if given)
        row = metric_row()
        for m in simview.true_mean_metrics(dist, data_range, lo, hi):
            show_metric(row, m, width="content")
    if plan.too_large:
        exact_only(prof, s, dist, plan)
        return
    if plan.reduced:
        st.info(simview.reduced_text(plan))
    if not methods:
        st.warning(sc.NO_METHOD)
        sweep.sweep_section(spec, list(hdp.METHODS), None)
        return
    extra = sc.extra_methods(methods)
    shown = sc.shown_methods(methods, tuned_sd)
    run = dict(shown=shown, range=data_range, tuned_sd=tuned_sd, seed=seed, dist=dist)
    run.update(trials=plan.trials, n=prof.n, full_run=page_run)
    first = simview.early_trials(plan)
    ready = cache.has_run(prof, spec, plan.trials, seed, tuned_sd, extra)
    trials = simview.shown_trials(plan, page_run, whole_asked, ready)
    if ready or trials < plan.trials:
        first = None  # the whole run is at hand, or a quick result is shown: no early draw
    # the results: drawn in place, in containers (a step updates their elements, as the
    # floor's chart is updated, instead of drawing new ones); for an early draw in slots of
    # their own (a slot's container keeps elements it got earlier in the same run), then the
    # whole run in their place
    in_place = first is None

    def new_slot() -> Any:
        return st.container() if in_place else st.empty()

    def box(where: Any) -> Any:
        return where if in_place else where.container()

    early_top: Any = None if in_place else st.empty()
    top = new_slot()
    if tuned_sd is not None:
        tuned_part(prof, dist, tuned_sd, s.own)
    # the spread of the estimates: built on a full run and while open (not on a step while
    # closed: views.simulation.builds_closed); its choice of methods kept meanwhile
    hist_box = st.expander(sc.HIST_LABEL, key="sim_hist_box", on_change="rerun")
    hist: list[str] = []
    early_hist = hist_slot = None
    if simview.builds_closed(page_run, hist_box.open):
        with hist_box:
            hist = st.multiselect(
                "Show the spread of the estimates of",
                [m for m in simview.method_options() if m in shown or m in hdp.METHODS],
                default=sc.DEFAULT_HIST,
                format_func=short_label,
                key="sim_hist",
                wrap=True,
                help=sc.SIM_HELP["sim_hist"],
                persist_state="page",
            )
            early_hist = None if in_place else st.empty()
            hist_slot = new_slot()
    csv_slot = new_slot()
    try:
        if first is not None:
            early = cache.run_early(prof, spec, first, seed, tuned_sd, extra)
            for slot in (top, hist_slot, csv_slot):
                if slot is not None:
                    slot.empty()  # the last step's results go: the early draw stands alone
            with early_top.container():
                R.results_part(early, run, first, early=True)
            if early_hist is not None:
                with early_hist.container():
                    R.histogram_chart(early, hist, run, early=True)
            rest_of_page(prof, spec, methods, tuned_sd, data_range, dist, plan.trials, seed)
            results = cache.run_simulation(prof, spec, plan.trials, seed, tuned_sd, extra)
        else:
            n_methods = sc.methods_run(methods, tuned_sd is not None)
            simulate = cache.run_simulation if trials == plan.trials else cache.run_early
            with (
                box(top),
                st.spinner(sc.spinner_text(trials, prof.n, n_methods), show_time=True),
            ):
                results = simulate(prof, spec, trials, seed, tuned_sd, extra)
    except (hdp.ProfileError, ValueError) as exc:
        for slot in (early_top, early_hist):
            if slot is not None:
                slot.empty()
        box(top).error(plain(exc))
        return
    for slot in (early_top, early_hist):
        if slot is not None:
            slot.empty()  # the early draw goes
    run.update(trials=trials)  # a quick result's, or the whole run's
    with box(top):
        if trials < plan.trials:
            R.quick_part(trials, plan.trials, WHOLE_ASKED)
        rows = R.results_part(results, run, trials, early=False)
    if hist_slot is not None:
        with box(hist_slot):
            R.histogram_chart(results, hist, run, early=False)
    with box(csv_slot):
        R.download_part(rows, run)
    if first is None:
        rest_of_page(prof, spec, methods, tuned_sd, data_range, dist, trials, seed)


def rest_of_page(
    prof: EpsilonProfile,
    spec: tuple,
    methods: list[str],
    tuned_sd: float | None,
    data_range: Any,
    dist: Any,
    trials: int,
    seed: int,
) -> None:
    """The what-if and the group sweep under the simulation's results (they do not use them;
    the script reproduces the ``trials`` shown)."""
    whatif_section(prof, spec, methods, tuned_sd, data_range)
    spec_now = st.session_state.get(PROFILE_SPEC)
    sweep.sweep_section(spec, methods, sc.repro(prof, spec_now, dist, methods, trials, seed))


# values differ by privacy level (issue 21) -----------------------------------------------
@st.fragment
def whatif_section(
    prof: EpsilonProfile, spec: tuple, methods: list[str], tuned_sd: float | None, data_range: Any
) -> None:
    """The what-if "values differ by privacy level": every method's exact bias and RMSE against
    the table's own mean when the strict users' values move (a fragment: its controls rerun
    only it)."""
    ss = st.session_state
    st.header("When values differ by privacy level")
    on = st.toggle(
        "Values differ by privacy level", key="sim_wi", help=wv.WHATIF_TOGGLE_HELP, **URL
    )
    if not on:
        return
    dist = simview.make_distribution(*spec)
    ctl = wv.shift_control(dist, data_range)
    if ss.get("sim_wi_for") != prof.key or wv.THRESHOLD.key not in ss:
        ss["sim_wi_for"] = prof.key
        ss[wv.THRESHOLD.key] = wv.default_threshold(prof)
    ss[ctl.key] = ctl.value(ss.get(ctl.key), dist)  # a new distribution or range: clipped
    c1, c2 = st.columns(2)
    thr = number(c1, wv.THRESHOLD)
    shift = c2.number_input(
        "Their values move by",
        min_value=ctl.low,
        max_value=ctl.high,
        step=ctl.step,
        format="%.4g",
        key=ctl.key,
        help=wv.SHIFT_HELP,
    )
    entries = len(prof.levels)
    extra = () if tuned_sd is None else (tview.TUNED,)
    names = tuple(wv.whatif_methods(methods, entries, extra))
    st.caption(wv.whatif_setup_text(wv.strict_share(prof, thr), thr, shift))
    rng = ctl.rng
    rows, sentence = cache.whatif_rows(prof, spec, float(thr), float(shift), rng, names, tuned_sd)
    st.info(sentence, icon=":material/balance:")
    df = wv.whatif_frame(rows)
    wide_dataframe(df, "sim_wi_table", wv.WHATIF_FORMATS, wv.WHATIF_HELPS)
    curve = cache.whatif_curve(
        prof, spec, float(thr), rng, tuple(wv.curve_methods(names, entries)), tuned_sd
    )
    st.plotly_chart(figs.whatif_figure(curve, float(shift)), key="sim_wi_chart")
    note = wv.sm_left_out(methods, entries)
    if note:
        st.caption(note)


# the paper's experiment -----------------------------------------------------------------
def _show_paper() -> None:
    st.session_state[PAPER_SHOWN] = True


def _load_paper_profile(kind: str) -> None:
    """Button callback: make the paper's ``kind`` profile current (a full rerun follows)."""
    name, spec = pt.paper_preset(kind)
    set_profile(pt.paper_profile(kind), spec, hdp.PRESETS[name])
    st.session_state[LOADED_NOTE] = pt.paper_profile_texts(kind)[2]
    st.session_state[APP_RERUN] = True


@st.fragment
def paper_section() -> None:
    """Table 1 reproduced next to the paper's values; offers to load either profile."""
    if st.session_state.pop(APP_RERUN, False):
        st.rerun(scope="app")  # the profile changed: every part of the page must follow
    st.header("The paper's experiment (Table 1)")
    st.markdown(pt.INTRO)
    c1, c2, c3 = st.columns([1, 1, 2])
    trials, seed = number(c1, pt.TRIALS), number(c2, pt.SEED_FIELD)
    c3.write("")
    run_help = sc.SIM_HELP["sim_paper_run"]
    c3.button(
        "Run the paper's experiment",
        key="sim_paper_run",
        help=run_help,
        on_click=_show_paper,
        type="primary",
    )
    if not st.session_state.get(PAPER_SHOWN):
        return
    with st.spinner(pt.spinner_text(int(trials)), show_time=True):
        rows = cache.run_table1(int(trials), int(seed))
    df = pt.paper_frame(rows)
    fmt = {c: "%.2f" for c in df.columns if c.endswith(pt.TABLE_NUMBER_ENDS)}
    wide_dataframe(df, "sim_paper_table", fmt)
    for col, m in zip(st.columns(2), pt.paper_metrics(rows)):
        show_metric(col, m)
    st.caption(pt.paper_caption(int(trials), int(seed)))
    st.plotly_chart(figs.paper_figure(rows), key="sim_paper_chart")
    cur = get_profile()
    for col, kind in zip(st.columns(2), pt.KINDS):
        prof = pt.paper_profile(kind)
        current, label, _ = pt.paper_profile_texts(kind)
        if prof.key == cur.key:
            col.success(current)
        else:
            col.button(
                label,
                key=f"sim_load_{kind}",
                on_click=_load_paper_profile,
                args=(kind,),
                help=pt.LOAD_PAPER_HELP,
            )


# page -----------------------------------------------------------------------------------
def main() -> None:
    """The page: introduction, the live simulation, the paper's experiment."""
    st.title("Simulation: how far off is each method?")
    drop_bad_query_params(URL_LIMITS)
    st.markdown(explain.SIMULATION_INTRO)
    note = st.session_state.pop(LOADED_NOTE, None)
    if note:
        st.success(note)
    with st.expander("What do MSE and ln MSE mean, and why does ADPM win?"):
        st.markdown(explain.SIMULATION_EXPLAIN)
        st.markdown(tview.TUNED_EXPLAIN)
    prof = get_profile()
    label = st.session_state.get(PROFILE_LABEL, "")
    st.caption(simview.current_profile_caption(label, prof.n, prof.n_public))
    st.session_state[PAGE_RUN] = True  # the whole run: the page was opened or fully rerun
    st.session_state[sweep.FULL_RUN] = True  # closed sections are built too (not on a step)
    try:
        simulation_section()
        paper_section()
    finally:
        st.session_state[sweep.FULL_RUN] = False


main()
