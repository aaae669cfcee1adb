"""The Saturation page's cached calls (a profile is hashed by its key)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from hdp_app.cache import PROFILE_HASH
from hdp_app.figures.saturation import r_curve_figure
from hdp_app.views import explain
from hdp_app.views import saturation as sat
from hdp_app.views import tour as teach
from hdp_app.views import tuned as tview
from hdp_app.views.formatting import frame_to_csv
from hdp_core.adpm import AlgorithmTrace, adpm_trace
from hdp_core.profile import EpsilonProfile

PHASE_GRID_STEP = 0.05
"""The phase diagram's level sliders: a log grid in steps of 0.05 decades."""


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def curve(profile: EpsilonProfile) -> sat.RCurve:
    """views.saturation.r_curve, cached."""
    return sat.r_curve(profile)


@st.cache_resource(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def curve_figure(profile: EpsilonProfile) -> Any:
    """The r-versus-eps figure, built once per profile and shared (never modified)."""
    return r_curve_figure(curve(profile))


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def free(profile: EpsilonProfile) -> tuple[sat.FreePrivacy, pd.DataFrame, bytes, str]:
    """views.saturation.free_privacy, its table as a frame and as CSV, and its grouping."""
    table = sat.free_privacy_table(profile)
    df = pd.DataFrame(table.columns)
    return sat.free_privacy(profile), df, frame_to_csv(df), table.grouping


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def trace(profile: EpsilonProfile) -> AlgorithmTrace:
    """hdp_core.adpm_trace (Algorithm 1 step by step), cached."""
    return adpm_trace(profile)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def tau_spread(profile: EpsilonProfile) -> tuple[np.ndarray, np.ndarray]:
    """views.tuned.tau_vs_spread, cached."""
    return tview.tau_vs_spread(profile)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def phase_start(profile: EpsilonProfile) -> tuple[teach.PhaseState, tuple[float, ...], bool]:
    """The diagram at the profile's own levels, the level sliders' grid and whether the
    profile has exactly two levels."""
    base = teach.phase_state(profile)
    grid = teach.log_grid(
        base.slider_min, base.slider_max, PHASE_GRID_STEP, (base.start_eps1, base.start_eps2)
    )
    return base, grid, sat.two_level_point(profile) is not None


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=64, show_spinner=False)
def phase(profile: EpsilonProfile, e1: float, e2: float, n: int, f: float) -> teach.PhaseState:
    """views.tour.phase_state at the controls' values, cached."""
    return teach.phase_state(profile, e1, e2, n, f)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=64, show_spinner=False)
def step_text(shown: EpsilonProfile, current: EpsilonProfile, step: int) -> str:
    """views.explain.trace_step_beside_sidebar, cached."""
    return explain.trace_step_beside_sidebar(trace(shown), step, shown, current)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def tau_beside(shown: EpsilonProfile, current: EpsilonProfile, name: str) -> str:
    """views.explain.tau_beside_sidebar, cached."""
    return explain.tau_beside_sidebar(shown, current, name)
