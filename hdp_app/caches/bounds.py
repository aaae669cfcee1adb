"""The Bounds page's cached calls (a profile is hashed by its key): its summary, the sweeps
and their figure, the optimality scatter and the errors in the data's units."""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from hdp_app.cache import PROFILE_HASH
from hdp_app.figures.bounds import sweep_figure
from hdp_app.views import bounds as bviews
from hdp_app.views import tuned as tview
from hdp_core import sweeps
from hdp_core.experiments import optimality_scatter
from hdp_core.profile import EpsilonProfile
from hdp_core.units import Accuracy

SCATTER_SEQUENCES, SCATTER_SEED, SCATTER_MAX_N = 500, 0, 200
"""The optimality scatter's settings (the paper's experiment: 500 sequences, n up to 200)."""


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def summary(profile: EpsilonProfile) -> bviews.Summary:
    """views.bounds.summary(profile), cached."""
    return bviews.summary(profile)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def sweep(profile: EpsilonProfile, mode: str) -> sweeps.Sweep:
    """The scale ('scale') or users ('n') sweep around the profile, the five baselines with
    ADPM (hdp_core.sweeps), cached."""
    x = bviews.sweep_points(profile, mode)
    if mode == "scale":
        return sweeps.scale_sweep(profile, x, methods=bviews.BASELINES)
    return sweeps.n_sweep(profile, x, methods=bviews.BASELINES)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def tuned_sweep(profile: EpsilonProfile, mode: str, data_sd: float) -> np.ndarray:
    """views.tuned.tuned_sweep_mse along the sweep's points, cached."""
    return tview.tuned_sweep_mse(profile, mode, bviews.sweep_points(profile, mode), data_sd)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def guides(profile: EpsilonProfile, mode: str) -> dict[str, np.ndarray]:
    """views.bounds.regime_guides along the sweep's points, cached."""
    return bviews.regime_guides(profile, bviews.sweep_points(profile, mode), mode)


@st.cache_resource(hash_funcs=PROFILE_HASH, max_entries=64, show_spinner=False)
def sweep_chart(
    profile: EpsilonProfile,
    mode: str,
    x_title: str,
    idx: int,
    show_base: bool,
    show_guides: bool,
    tuned_sd: float | None,
) -> Any:
    """The sweep figure for one position of the controls, built once and shared by every
    session (never modified): a slider step that comes back to a position costs no rebuild."""
    g = guides(profile, mode) if show_guides else None
    tuned = None if tuned_sd is None else (tuned_sd, tuned_sweep(profile, mode, tuned_sd))
    base = bviews.BASELINES if show_base else ()
    return sweep_figure(sweep(profile, mode), x_title, idx, base, g, tuned=tuned)


@st.cache_data(max_entries=2, show_spinner=False)
def scatter() -> dict[str, Any]:
    """hdp_core.experiments.optimality_scatter with the settings above, cached."""
    return optimality_scatter(sequences=SCATTER_SEQUENCES, seed=SCATTER_SEED, max_n=SCATTER_MAX_N)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=32, show_spinner=False)
def errors(profile: EpsilonProfile, lo: float, hi: float) -> dict[str, Accuracy]:
    """views.bounds.method_errors_real at 95% on the data range [lo, hi], cached."""
    return bviews.method_errors_real(profile, lo, hi, 0.95)
