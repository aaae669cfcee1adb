"""Simulation page: simulated MSE of ADPM against the five baselines, live; the group sweep;
the paper's Table 1 in one click.

Layout and widgets only: reads the current profile and the widgets, calls hdp_core
(simulate_mse, group_sweep, experiments.table1), takes every table, card and sentence from
hdp_app.views.simulation (and views.explain, views.tuned) and every figure from
hdp_app.figures.simulation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

import hdp_core as hdp
from hdp_app.common import (
    PROFILE_HASH,
    PROFILE_LABEL,
    PROFILE_SPEC,
    drop_bad_query_params,
    get_profile,
    metric_row,
    run_through_app,
    set_profile,
)
from hdp_app.figures import simulation as figs
from hdp_app.views import codegen, explain
from hdp_app.views import simulation as simview
from hdp_app.views import tuned as tview
from hdp_app.views import whatif as wv
from hdp_app.views.formatting import frame_to_csv, plain
from hdp_app.views.limits import SPREAD, Limit, check_data_range
from hdp_app.widgets import limit_bounds, show_metric
from hdp_core import experiments
from hdp_core.profile import EpsilonProfile
from hdp_core.sweeps import group_sweep

run_through_app()  # first: a deep link on a fresh server must go through app.py


URL_LIMITS = {  # what each URL-bound number accepts (the bounds of its widget below)
    "sim_a": Limit(0.05, 1000.0),
    "sim_b": Limit(0.05, 1000.0),
    "sim_p": Limit(0.0, 1.0),
    "sim_trials": Limit(simview.MIN_TRIALS, 200_000, integer=True),
    "sim_seed": Limit(0, 2**31 - 1, integer=True),
    "sim_lo": Limit(),
    "sim_hi": Limit(),
    "sim_sw_n1": Limit(1, 10**9, integer=True),
    "sim_sw_e1": Limit(1e-4, 1e3),
    "sim_sw_n2": Limit(1, 10**9, integer=True),
    "sim_sw_lo": Limit(1e-4, 1e4),
    "sim_sw_hi": Limit(1e-4, 1e6),
}

DIST_KINDS = simview.DIST_KINDS
SWEEP_DATA = simview.SWEEP_DATA
SWEEP_POINTS = simview.SWEEP_POINTS
DEFAULT_HIST = simview.DEFAULT_HIST
method_label = simview.method_label
short_label = simview.short_label
dist_spec = simview.dist_spec
LOADED_NOTE = "sim_loaded_note"
PAPER_SHOWN = "sim_paper_shown"
APP_RERUN = "sim_app_rerun"


# cached core calls ------------------------------------------------------------------------
@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=24, show_spinner=False)
def run_simulation(
    profile: EpsilonProfile,
    spec: tuple,
    trials: int,
    seed: int,
    tuned_sd: float | None = None,
    extra: tuple = (),
) -> dict:
    """hdp.simulate_mse of all six methods (with the estimates), cached by its inputs; with
    ``tuned_sd`` also ADPM tuned to it, and the ``extra`` methods (e.g. TableMean): the six
    keep their numbers (fixed noise streams)."""
    names = (*hdp.METHODS, *extra) + (() if tuned_sd is None else (tview.TUNED,))
    return hdp.simulate_mse(
        names,
        profile,
        simview.make_distribution(*spec),
        trials=trials,
        seed=seed,
        return_estimates=True,
        data_sd=tuned_sd,
    )


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def spread_curve(profile: EpsilonProfile, tuned_sd: float, mean: float):
    """tview.spread_curve: exact MSE against the true spread (ADPM, tuned, PropDPM)."""
    return tview.spread_curve(profile, tuned_sd, mean=mean)


@st.cache_data(max_entries=32, show_spinner=False)
def run_sweep(n_fixed: int, eps_fixed: float, n_var: int, values: tuple, spec: tuple):
    """hdp_core.sweeps.group_sweep of all six methods (exact MSE under the distribution)."""
    return group_sweep(
        n_fixed, eps_fixed, n_var, list(values), hdp.METHODS, simview.make_distribution(*spec)
    )


@st.cache_data(max_entries=4, show_spinner=False)
def run_table1(trials: int, seed: int) -> list[dict]:
    """experiments.table1: the paper's Table 1 recomputed (both profiles, every method)."""
    return experiments.table1(trials=trials, seed=seed, profile_seed=0)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def exact_table(profile: EpsilonProfile, spec: tuple, methods: tuple) -> list[dict]:
    """simview.exact_rows: exact MSEs only, for profiles too large to simulate."""
    return simview.exact_rows(profile, simview.make_distribution(*spec), methods)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def reproduce_code(
    profile, spec_json: str, dist, methods: tuple, trials: int, seed: int, sweep: tuple | None
) -> str:
    """codegen.reproduce_code, cached (rebuilding a preset to check it costs a little)."""
    spec = json.loads(spec_json)
    return codegen.reproduce_code(
        profile, spec, dist, methods, trials, seed, sweep=None if sweep is None else dict(sweep)
    )


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=8, show_spinner=False)
def profile_csv(profile: EpsilonProfile) -> bytes:
    """The profile as CSV (for the reproducible script)."""
    return profile.to_csv()


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def trial_plan(profile: EpsilonProfile, spec: tuple, trials: int) -> simview.TrialPlan:
    """simview.plan_trials: the trials actually run (capped for very large profiles)."""
    return simview.plan_trials(profile, simview.make_distribution(*spec), trials)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=32, show_spinner=False)
def whatif_rows(
    profile: EpsilonProfile,
    spec: tuple,
    thr: float,
    shift: float,
    rng: tuple[float, float],
    methods: tuple,
    sd: float | None,
) -> tuple[list[dict], str]:
    """wv.whatif_rows and wv.whatif_sentence (exact, data units), cached."""
    dist = simview.make_distribution(*spec)
    lo, hi = rng
    rows = wv.whatif_rows(profile, dist, thr, shift, lo, hi, methods=methods, data_sd=sd)
    return rows, wv.whatif_sentence(profile, dist, thr, shift, lo, hi)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def whatif_curve(
    profile: EpsilonProfile,
    spec: tuple,
    thr: float,
    rng: tuple[float, float],
    methods: tuple,
    sd: float | None,
) -> wv.WhatIfCurve:
    """wv.whatif_curve: every method's error along the shifts the range allows, cached."""
    dist = simview.make_distribution(*spec)
    return wv.whatif_curve(profile, dist, thr, rng[0], rng[1], methods=methods, data_sd=sd)


# text -------------------------------------------------------------------------------------
INTRO = explain.SIMULATION_INTRO

EXPLAIN = explain.SIMULATION_EXPLAIN


# the live simulation ---------------------------------------------------------------------
def distribution_controls() -> tuple:
    """Distribution radio and its parameters; returns the distribution spec."""
    choice = st.radio(
        "Data distribution",
        list(DIST_KINDS),
        key="sim_dist",
        horizontal=True,
        bind="query-params",
        help=simview.SIM_HELP["sim_dist"],
    )
    kind = DIST_KINDS.get(choice, "beta")
    a, b, p = 2.0, 3.0, 0.5
    if kind == "beta":
        ca, cb = st.columns(2)
        a = ca.number_input(
            "a",
            **limit_bounds(URL_LIMITS["sim_a"]),
            value=2.0,
            step=0.5,
            key="sim_a",
            bind="query-params",
            help=simview.SIM_HELP["sim_a"],
        )
        b = cb.number_input(
            "b",
            **limit_bounds(URL_LIMITS["sim_b"]),
            value=3.0,
            step=0.5,
            key="sim_b",
            bind="query-params",
            help=simview.SIM_HELP["sim_b"],
        )
    elif kind == "twopoint":
        p = st.slider(
            "p: share of users at +0.5 (the rest at −0.5)",
            0.0,
            1.0,
            0.5,
            0.01,
            key="sim_p",
            bind="query-params",
            help=simview.SIM_HELP["sim_p"],
        )
    return dist_spec(kind, a, b, p)


def results_table(rows: list[dict], real: bool) -> pd.DataFrame:
    """The rows as the displayed (and downloaded) table (hdp_app.views.simulation)."""
    return simview.results_frame(rows, real)


TABLE_CONFIG = {
    "Simulated MSE": st.column_config.NumberColumn(format="%.3e"),
    "95% CI low": st.column_config.NumberColumn(format="%.3e"),
    "95% CI high": st.column_config.NumberColumn(format="%.3e"),
    "Exact MSE": st.column_config.NumberColumn(format="%.3e"),
    "ln MSE (simulated)": st.column_config.NumberColumn(format="%.2f"),
    "ln MSE (exact)": st.column_config.NumberColumn(format="%.2f"),
    "× ADPM (simulated)": st.column_config.NumberColumn(format="%.3g×"),
    "× ADPM (exact)": st.column_config.NumberColumn(format="%.3g×"),
    "RMSE (real units)": st.column_config.NumberColumn(format="%.4g"),
    "RMSE exact (real units)": st.column_config.NumberColumn(format="%.4g"),
}


@dataclass
class SimSettings:
    """What the simulation controls say (data distribution spec, methods, run, units, tuning)."""

    spec: tuple
    methods: list[str]
    trials: int
    seed: int
    real: bool
    lo: float
    hi: float
    tuned_on: bool
    own: bool
    tuned_in: float


def sim_controls() -> tuple[SimSettings, Any]:
    """The simulation's controls; returns their settings and a slot for the true-mean metrics."""
    c1, c2, c3 = st.columns([1.3, 1.2, 1])
    with c1:
        spec = distribution_controls()
    with c2:
        methods = st.multiselect(
            "Methods",
            simview.method_options(),
            default=list(hdp.METHODS),
            format_func=short_label,
            key="sim_methods",
            bind="query-params",
            help=simview.SIM_HELP["sim_methods"],
        )
        t1, t2 = st.columns(2)
        trials = t1.number_input(
            "Trials",
            **limit_bounds(URL_LIMITS["sim_trials"]),
            value=20_000,
            step=1_000,
            key="sim_trials",
            bind="query-params",
            help=simview.SIM_HELP["sim_trials"],
        )
        seed = t2.number_input(
            "Seed",
            **limit_bounds(URL_LIMITS["sim_seed"]),
            value=0,
            step=1,
            key="sim_seed",
            bind="query-params",
            help=simview.SIM_HELP["sim_seed"],
        )
    with c3:
        real = st.toggle(
            simview.REAL_UNITS_LABEL,
            key="sim_real",
            bind="query-params",
            help=simview.REAL_UNITS_HELP,
        )
        lo, hi = 0.0, 100.0
        if real:
            r1, r2 = st.columns(2)
            lo = r1.number_input(
                "Data from",
                value=0.0,
                key="sim_lo",
                bind="query-params",
                help=simview.SIM_HELP["sim_lo"],
            )
            hi = r2.number_input(
                "to",
                value=100.0,
                key="sim_hi",
                bind="query-params",
                help=simview.SIM_HELP["sim_hi"],
            )
        tuned_on = st.toggle(
            simview.TUNED_LABEL,
            key="sim_tuned",
            bind="query-params",
            help=simview.TUNED_HELP,
        )
        own, tuned_in = True, 0.2
        if tuned_on:
            own = st.checkbox(
                simview.TUNED_OWN_LABEL,
                value=True,
                key="sim_tuned_own",
                help=simview.TUNED_OWN_HELP,
            )
            if not own:
                tuned_in = st.number_input(
                    "Tuned to standard deviation s",
                    **limit_bounds(SPREAD),
                    value=0.2,
                    step=0.01,
                    format="%.3f",
                    key="sim_tuned_sd",
                    help=simview.SIM_HELP["sim_tuned_sd"],
                )
        metric_slot = st.container()

    return SimSettings(
        spec,
        list(methods),
        int(trials),
        int(seed),
        bool(real),
        float(lo),
        float(hi),
        bool(tuned_on),
        bool(own),
        float(tuned_in),
    ), metric_slot


def true_mean_metrics(slot: Any, dist: Any, data_range: Any, lo: float, hi: float) -> None:
    """The mean every method estimates, on [-0.5, 0.5] and (if given) in real units."""
    with slot:
        row = metric_row()
        for m in simview.true_mean_metrics(dist, data_range, lo, hi):
            show_metric(row, m, width="content")


def exact_only(prof: EpsilonProfile, s: SimSettings, dist: Any, plan: Any) -> None:
    """A profile too wide to simulate: the exact MSEs instead, and the group sweep."""
    spec, methods, seed = s.spec, s.methods, s.seed
    st.warning(simview.too_large_text(plan))
    rows = exact_table(prof, spec, tuple(methods) or hdp.METHODS)
    st.dataframe(
        simview.exact_frame(rows),
        hide_index=True,
        column_config=TABLE_CONFIG,
        key="sim_exact_table",
    )
    whatif_section(prof, spec, methods, None, check_data_range(s.lo, s.hi) if s.real else None)
    sweep_section(
        spec,
        methods or list(hdp.METHODS),
        {
            "profile": prof,
            "spec": st.session_state.get(PROFILE_SPEC),
            "dist": dist,
            "methods": methods or list(hdp.METHODS),
            "trials": plan.requested,
            "seed": int(seed),
        },
    )


def headline_metrics(results: dict, rows: list[dict]) -> dict:
    """ADPM's simulated MSE and ln MSE, and the best other method's ratio. Returns ADPM's row
    (all six methods are always simulated)."""
    adpm_all = simview.simulation_rows(results, ["ADPM"])[0]
    row = metric_row()
    for m in simview.headline_metrics(adpm_all, rows):
        show_metric(row, m, width="content")
    return adpm_all


def tuned_part(prof: EpsilonProfile, dist: Any, tuned_sd: float, own: bool) -> None:
    """The tuned method's spread, and its MSE when the spread is guessed wrong."""
    st.caption(simview.tuned_caption(f"{tview.TUNED} = {tview.tuned_label(tuned_sd)}", own))
    st.subheader("If the spread is guessed wrong")
    st.plotly_chart(
        figs.spread_figure(spread_curve(prof, tuned_sd, float(dist.mean))), key="sim_spread_chart"
    )
    st.caption(
        "Exact MSE when the data's true standard deviation is on the x axis (same "
        "mean). The tuned weights are the best at the spread they are tuned to "
        "(dotted line); ADPM is the best for the worst case (0.5)."
    )


def histogram_part(results: dict, dist: Any, data_range: Any, lo: float, hi: float) -> None:
    """Where the answers land around the true mean, method by method."""
    st.subheader("What the noise does to one answer")
    hist = st.multiselect(
        "Show the spread of the estimates of",
        [m for m in simview.method_options() if m in results],
        default=DEFAULT_HIST,
        format_func=short_label,
        key="sim_hist",
        help=simview.SIM_HELP["sim_hist"],
    )
    if hist:
        ests = {m: results[m].estimates for m in hist}
        mu, unit = dist.mean, "data in [−0.5, 0.5]"
        if data_range is not None:
            ests = {m: lo + (v + 0.5) * (hi - lo) for m, v in ests.items()}
            mu, unit = simview.real_value(dist.mean, lo, hi), "real units"
        st.plotly_chart(figs.estimates_figure(ests, mu, unit=unit), key="sim_hist_chart")


def download_part(
    rows: list[dict], dist: Any, data_range: Any, trials: int, seed: int, n_users: int
) -> None:
    """The results table with the settings that produced it, as CSV."""
    table = simview.download_frame(
        rows,
        data_range is not None,
        st.session_state.get(PROFILE_LABEL, ""),
        dist.label(),
        trials,
        seed,
        n_users,
    )
    st.download_button(
        "Download results (CSV)",
        frame_to_csv(table),
        file_name="hdp_simulation.csv",
        mime="text/csv",
        key="sim_csv",
        help=simview.SIM_HELP["sim_csv"],
    )


@st.fragment
def simulation_section() -> None:
    """Controls, simulation, table, charts, downloads; reruns alone when its widgets change."""
    prof = get_profile()
    st.header("Simulated error of each method")
    s, metric_slot = sim_controls()
    spec, methods, seed, lo, hi = s.spec, s.methods, s.seed, s.lo, s.hi
    try:
        dist = simview.make_distribution(*spec)
        data_range = check_data_range(lo, hi) if s.real else None
        plan = trial_plan(prof, spec, s.trials)
        tuned_sd = None
        if s.tuned_on:
            tuned_sd = simview.tuned_to(s.own, s.tuned_in, dist, tview.SPREAD_MIN)
    except (hdp.ProfileError, ValueError) as exc:
        st.error(plain(exc))
        return
    true_mean_metrics(metric_slot, dist, data_range, lo, hi)
    if plan.too_large:
        exact_only(prof, s, dist, plan)
        return
    if plan.reduced:
        st.info(simview.reduced_text(plan))
    extra = tuple(m for m in methods if m not in hdp.METHODS)
    n_methods = len(hdp.METHODS) + len(extra) + (tuned_sd is not None)
    try:
        with st.spinner(
            f"Simulating {plan.trials:,} trials × {prof.n:,} users for {n_methods} methods…",
            show_time=True,
        ):
            results = run_simulation(prof, spec, plan.trials, seed, tuned_sd, extra)
    except (hdp.ProfileError, ValueError) as exc:
        st.error(plain(exc))
        return
    if any(r.approximate for r in results.values()):
        st.info(simview.APPROXIMATE_TEXT)
    if not methods:
        st.warning("Choose at least one method to see results.")
        sweep_section(spec, list(hdp.METHODS), None)
        return

    shown = list(methods) + ([tview.TUNED] if tuned_sd is not None else [])
    rows = simview.simulation_rows(results, shown, data_range=data_range)
    adpm_all = headline_metrics(results, rows)
    dip = tview.dip_note(
        {**{r["method"]: r["exact"] for r in rows}, "ADPM": adpm_all["exact"]}, tuned_sd
    )
    if dip:
        st.caption(dip)
    st.dataframe(
        results_table(rows, data_range is not None),
        hide_index=True,
        column_config=TABLE_CONFIG,
        key="sim_table",
    )
    st.caption(simview.run_caption(plan.trials, seed, dist.label(), prof.n))
    st.plotly_chart(figs.mse_figure(rows), key="sim_mse_chart")
    if tuned_sd is not None:
        tuned_part(prof, dist, tuned_sd, s.own)
    histogram_part(results, dist, data_range, lo, hi)
    download_part(rows, dist, data_range, plan.trials, seed, prof.n)
    whatif_section(prof, spec, methods, tuned_sd, data_range)
    repro = {
        "profile": prof,
        "spec": st.session_state.get(PROFILE_SPEC),
        "dist": dist,
        "methods": methods,
        "trials": plan.trials,
        "seed": seed,
    }
    sweep_section(spec, methods, repro)


# values differ by privacy level (issue 21) -----------------------------------------------
WHATIF_TABLE_CONFIG = {
    short: st.column_config.NumberColumn(format="%.4g", help=text)
    for short, text in wv.WHATIF_COLUMNS.values()
}


@st.fragment
def whatif_section(
    prof: EpsilonProfile, spec: tuple, methods: list[str], tuned_sd: float | None, data_range: Any
) -> None:
    """The what-if "values differ by privacy level": every method's exact bias and RMSE against
    the table's own mean when the strict users' values move (a fragment: its controls rerun
    only it)."""
    ss = st.session_state
    st.header("When values differ by privacy level")
    if not st.toggle(
        "Values differ by privacy level",
        key="sim_wi",
        bind="query-params",
        help=wv.WHATIF_TOGGLE_HELP,
    ):
        return
    dist = simview.make_distribution(*spec)
    rng = (-0.5, 0.5) if data_range is None else (float(data_range[0]), float(data_range[1]))
    low, high = wv.shift_limits(dist, rng[0], rng[1])
    shift_key = "sim_wi_shift" if data_range is None else "sim_wi_shift_real"
    if ss.get("sim_wi_for") != prof.key or "sim_wi_eps" not in ss:
        ss["sim_wi_for"] = prof.key
        ss["sim_wi_eps"] = wv.default_threshold(prof)
    if not isinstance(ss.get(shift_key), float):
        ss[shift_key] = wv.default_shift(dist, rng[0], rng[1])
    ss[shift_key] = min(max(ss[shift_key], low), high)  # a new distribution or range
    c1, c2 = st.columns(2)
    thr = c1.number_input(
        "Stricter than eps",
        min_value=1e-6,
        max_value=1e6,
        format="%.4g",
        key="sim_wi_eps",
        help=wv.THRESHOLD_HELP,
    )
    shift = c2.number_input(
        "Their values move by",
        min_value=low,
        max_value=high,
        step=(high - low) / 100,
        format="%.4g",
        key=shift_key,
        help=wv.SHIFT_HELP,
    )
    entries = len(prof.levels)
    extra = () if tuned_sd is None else (tview.TUNED,)
    names = tuple(wv.whatif_methods(methods, entries, extra))
    st.caption(wv.whatif_setup_text(wv.strict_share(prof, thr), thr, shift))
    rows, sentence = whatif_rows(prof, spec, float(thr), float(shift), rng, names, tuned_sd)
    st.info(sentence, icon=":material/balance:")
    st.dataframe(
        wv.whatif_frame(rows),
        hide_index=True,
        column_config=WHATIF_TABLE_CONFIG,
        key="sim_wi_table",
    )
    curve = whatif_curve(
        prof, spec, float(thr), rng, tuple(wv.curve_methods(names, entries)), tuned_sd
    )
    st.plotly_chart(figs.whatif_figure(curve, float(shift)), key="sim_wi_chart")
    note = wv.sm_left_out(methods, entries)
    if note:
        st.caption(note)


# the group sweep ------------------------------------------------------------------------
def sweep_section(spec: tuple, methods: list[str], repro: dict | None) -> None:
    """The group-sweep chart and the reproducible script (a nested fragment: its widgets
    rerun only it; ``repro`` holds the simulation's settings for the script)."""
    st.header("When one group relaxes its privacy")
    st.markdown(
        "A fixed group keeps its privacy level while a second group asks for less and less "
        "privacy, all the way to public data. ADPM's error **stops changing once the second "
        "group saturates** (it is granted tau* and weighted as such), while proportional "
        "weighting (PropDPM) puts more and more weight on fewer users and gets worse."
    )
    _sweep_fragment(spec, tuple(methods), repro)


def reproduce_expander(repro: dict, sweep: dict | None) -> None:
    """The exact hdp_core calls for the current settings (and profile.csv if needed)."""
    with st.expander("Reproduce in Python"):
        code = reproduce_code(
            repro["profile"],
            json.dumps(repro["spec"], sort_keys=True, default=str),
            repro["dist"],
            tuple(repro["methods"]),
            repro["trials"],
            repro["seed"],
            None if sweep is None else tuple(sorted(sweep.items())),
        )
        st.code(code, language="python")
        if "profile.csv" in code:
            st.download_button(
                "Download profile.csv",
                profile_csv(repro["profile"]),
                file_name="profile.csv",
                mime="text/csv",
                key="sim_profile_csv",
                help=simview.SIM_HELP["sim_profile_csv"],
            )


@st.fragment
def _sweep_fragment(spec: tuple, methods: tuple, repro: dict | None) -> None:
    c = st.columns(5)
    n_fixed = c[0].number_input(
        "Fixed group: users",
        **limit_bounds(URL_LIMITS["sim_sw_n1"]),
        value=900,
        step=100,
        key="sim_sw_n1",
        bind="query-params",
        help=simview.SIM_HELP["sim_sw_n1"],
    )
    eps_fixed = c[1].number_input(
        "Fixed group: eps",
        **limit_bounds(URL_LIMITS["sim_sw_e1"]),
        value=0.1,
        step=0.05,
        format="%.4g",
        key="sim_sw_e1",
        bind="query-params",
        help=simview.SIM_HELP["sim_sw_e1"],
    )
    n_var = c[2].number_input(
        "Varying group: users",
        **limit_bounds(URL_LIMITS["sim_sw_n2"]),
        value=100,
        step=10,
        key="sim_sw_n2",
        bind="query-params",
        help=simview.SIM_HELP["sim_sw_n2"],
    )
    lo = c[3].number_input(
        "Their eps from",
        **limit_bounds(URL_LIMITS["sim_sw_lo"]),
        value=0.1,
        step=0.05,
        format="%.4g",
        key="sim_sw_lo",
        bind="query-params",
        help="Start of the x axis.",
    )
    hi = c[4].number_input(
        "to",
        **limit_bounds(URL_LIMITS["sim_sw_hi"]),
        value=100.0,
        step=10.0,
        format="%.4g",
        key="sim_sw_hi",
        bind="query-params",
        help=simview.SIM_HELP["sim_sw_hi"],
    )
    public = st.toggle(  # on its own line: in a sixth of the column its label was cut
        simview.SWEEP_PUBLIC_LABEL,
        value=True,
        key="sim_sw_pub",
        bind="query-params",
        help=simview.SWEEP_PUBLIC_HELP,
    )
    data = st.radio(
        "Data for the sweep",
        SWEEP_DATA,
        horizontal=True,
        key="sim_sw_data",
        bind="query-params",
        help=simview.SIM_HELP["sim_sw_data"],
    )
    if data == SWEEP_DATA[1]:
        spec = dist_spec("twopoint", 2.0, 3.0, 0.5)
    try:
        sat = simview.saturation_point(int(n_fixed), float(eps_fixed))
        values = simview.sweep_eps_values(float(lo), float(hi), SWEEP_POINTS, public, [sat])
        sw = run_sweep(int(n_fixed), float(eps_fixed), int(n_var), tuple(values), spec)
    except (hdp.ProfileError, ValueError) as exc:
        st.error(plain(exc))
        if repro is not None:
            reproduce_expander(repro, None)
        return
    shown = [m for m in hdp.METHODS if m in methods] or list(hdp.METHODS)
    end = "∞" if public else f"{hi:g}"
    row = metric_row()
    for m in simview.sweep_metrics(sat, sw.mse, end):
        show_metric(row, m, width="content")
    st.plotly_chart(
        figs.sweep_figure(sw, shown, sat, int(n_fixed), float(eps_fixed), int(n_var)),
        key="sim_sweep_chart",
    )
    st.caption(simview.sweep_caption(simview.make_distribution(*spec)))
    beats = simview.sweep_beaters(sw.mse, shown)
    if beats:
        st.caption(simview.beaters_text(beats))
    if repro is not None:
        reproduce_expander(
            repro,
            {
                "n_fixed": int(n_fixed),
                "eps_fixed": float(eps_fixed),
                "n_var": int(n_var),
                "lo": float(lo),
                "hi": float(hi),
                "points": SWEEP_POINTS,
                "public": bool(public),
            },
        )


# the paper's experiment -----------------------------------------------------------------
def _show_paper() -> None:
    st.session_state[PAPER_SHOWN] = True


def _load_paper_profile(kind: str) -> None:
    """Button callback: make the paper's ``kind`` profile current (a full rerun follows)."""
    name = f"paper_{kind}"
    prof = hdp.paper_profile(kind, experiments.PAPER_N, 0)
    set_profile(prof, {"kind": "preset", "name": name, "seed": 0}, hdp.PRESETS[name])
    st.session_state[LOADED_NOTE] = simview.paper_profile_texts(kind)[2]
    st.session_state[APP_RERUN] = True


@st.fragment
def paper_section() -> None:
    """Table 1 reproduced next to the paper's values; offers to load either profile."""
    if st.session_state.pop(APP_RERUN, False):
        st.rerun(scope="app")  # the profile changed: every part of the page must follow
    st.header("The paper's experiment (Table 1)")
    st.markdown(
        "n = 1,000 users with log eps uniform on [−4, 2] (**high** variance of eps) or "
        "[−3, −2] (**low** variance), data Beta(2, 3), every method, 20,000 trials. "
        "This runs both profiles and puts our numbers next to the paper's. **It does not "
        "change your current profile**; load either one afterwards if you want to explore it."
    )
    c1, c2, c3 = st.columns([1, 1, 2])
    trials = c1.number_input(
        "Trials",
        min_value=simview.MIN_TRIALS,
        max_value=experiments.MAX_TABLE1_TRIALS,
        value=20_000,
        step=1_000,
        key="sim_paper_trials",
        help=simview.SIM_HELP["sim_paper_trials"],
    )
    seed = c2.number_input(
        "Seed",
        min_value=0,
        max_value=2**31 - 1,
        value=0,
        step=1,
        key="sim_paper_seed",
        help=simview.SIM_HELP["sim_paper_seed"],
    )
    c3.write("")
    c3.button(
        "Run the paper's experiment",
        key="sim_paper_run",
        type="primary",
        on_click=_show_paper,
        help=simview.SIM_HELP["sim_paper_run"],
    )
    if not st.session_state.get(PAPER_SHOWN):
        return
    with st.spinner(f"Running Table 1: 2 profiles × {int(trials):,} trials…", show_time=True):
        rows = run_table1(int(trials), int(seed))
    df = simview.paper_frame(rows)
    fmt = st.column_config.NumberColumn(format="%.2f")
    st.dataframe(
        df,
        hide_index=True,
        key="sim_paper_table",
        column_config={c: fmt for c in df.columns if c.endswith(("paper", "simulated)", "exact"))},
    )
    for col, m in zip(st.columns(2), simview.paper_metrics(rows)):
        show_metric(col, m)
    st.caption(simview.paper_caption(int(trials), int(seed)))
    st.plotly_chart(figs.paper_figure(rows), key="sim_paper_chart")
    cur = get_profile()
    b1, b2 = st.columns(2)
    for col, kind in ((b1, "high"), (b2, "low")):
        prof = hdp.paper_profile(kind, experiments.PAPER_N, 0)
        current, label, _ = simview.paper_profile_texts(kind)
        if prof.key == cur.key:
            col.success(current)
        else:
            col.button(
                label,
                key=f"sim_load_{kind}",
                on_click=_load_paper_profile,
                args=(kind,),
                help=simview.LOAD_PAPER_HELP,
            )


# page -----------------------------------------------------------------------------------
def main() -> None:
    """The page: introduction, the live simulation, the paper's experiment."""
    st.title("Simulation: how far off is each method?")
    drop_bad_query_params(URL_LIMITS)
    st.markdown(INTRO)
    note = st.session_state.pop(LOADED_NOTE, None)
    if note:
        st.success(note)
    with st.expander("What do MSE and ln MSE mean, and why does ADPM win?"):
        st.markdown(EXPLAIN)
        st.markdown(tview.TUNED_EXPLAIN)
    prof = get_profile()
    label = st.session_state.get(PROFILE_LABEL, "")
    st.caption(simview.current_profile_caption(label, prof.n, prof.n_public))
    simulation_section()
    paper_section()


main()
