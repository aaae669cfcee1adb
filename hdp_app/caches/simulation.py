"""The Simulation page's cached core calls (a profile is hashed by its key): the simulation,
the exact tables, the group sweep, Table 1, the what-if and the reproducible script."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

import streamlit as st

import hdp_core as hdp
from hdp_app.cache import PROFILE_HASH
from hdp_app.views import simulation as simview
from hdp_app.views import snippets
from hdp_app.views import tuned as tview
from hdp_app.views import whatif as wv
from hdp_core import experiments
from hdp_core.distributions import Distribution
from hdp_core.profile import EpsilonProfile
from hdp_core.sweeps import group_sweep

RUNS_KEPT = 24
"""Runs of :func:`run_simulation` kept in its cache."""
_ran: OrderedDict[tuple, None] = OrderedDict()  # the inputs of the last RUNS_KEPT runs
_ran_lock = threading.Lock()  # sessions run in threads of their own


def _run_key(
    profile: EpsilonProfile, spec: tuple, trials: int, seed: int, tuned_sd: Any, extra: tuple
) -> tuple:
    return (profile.key, tuple(spec), int(trials), int(seed), tuned_sd, tuple(extra))


def has_run(
    profile: EpsilonProfile,
    spec: tuple,
    trials: int,
    seed: int,
    tuned_sd: float | None = None,
    extra: tuple = (),
) -> bool:
    """Whether :func:`run_simulation` ran these inputs among its last RUNS_KEPT runs in this
    process (its cache then most likely holds the result: no early draw is needed)."""
    with _ran_lock:
        return _run_key(profile, spec, trials, seed, tuned_sd, extra) in _ran


def _simulate(
    profile: EpsilonProfile,
    spec: tuple,
    trials: int,
    seed: int,
    tuned_sd: float | None,
    extra: tuple,
) -> dict:
    names = (*hdp.METHODS, *extra) + (() if tuned_sd is None else (tview.TUNED,))
    out = hdp.simulate_mse(
        names,
        profile,
        simview.make_distribution(*spec),
        trials=trials,
        seed=seed,
        return_estimates=True,
        data_sd=tuned_sd,
    )
    with _ran_lock:
        _ran[_run_key(profile, spec, trials, seed, tuned_sd, extra)] = None
        while len(_ran) > RUNS_KEPT:
            _ran.popitem(last=False)
    return out


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=RUNS_KEPT, show_spinner=False)
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
    return _simulate(profile, spec, trials, seed, tuned_sd, extra)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=4, show_spinner=False)
def run_early(
    profile: EpsilonProfile,
    spec: tuple,
    trials: int,
    seed: int,
    tuned_sd: float | None = None,
    extra: tuple = (),
) -> dict:
    """:func:`run_simulation` for an early draw (views.simulation.early_trials), in a small
    cache of its own: it is needed once per whole run, and must not push whole runs out."""
    return _simulate(profile, spec, trials, seed, tuned_sd, extra)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def spread_curve(profile: EpsilonProfile, tuned_sd: float, mean: float) -> Any:
    """tview.spread_curve: exact MSE against the true spread (ADPM, tuned, PropDPM)."""
    return tview.spread_curve(profile, tuned_sd, mean=mean)


@st.cache_data(max_entries=32, show_spinner=False)
def run_sweep(n_fixed: int, eps_fixed: float, n_var: int, values: tuple, spec: tuple) -> Any:
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
    profile: EpsilonProfile,
    spec_json: str,
    dist: Distribution,
    methods: tuple,
    trials: int,
    seed: int,
    sweep: tuple | None,
) -> snippets.Snippet:
    """views.snippets.simulation (codegen.reproduce_code and its needs), cached (rebuilding a
    preset to check it costs a little)."""
    spec = json.loads(spec_json)
    sw = None if sweep is None else dict(sweep)
    return snippets.simulation(profile, spec, dist, methods, trials, seed, sweep=sw)


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


def reproduce(repro: dict[str, Any], sweep: dict[str, Any] | None) -> snippets.Snippet:
    """:func:`reproduce_code` for the settings ``repro`` (views.simulation_controls.repro)
    and the group sweep's ``sweep`` (views.group_sweep.sweep_settings), keyed on text."""
    return reproduce_code(
        repro["profile"],
        json.dumps(repro["spec"], sort_keys=True, default=str),
        repro["dist"],
        tuple(repro["methods"]),
        repro["trials"],
        repro["seed"],
        None if sweep is None else tuple(sorted(sweep.items())),
    )
