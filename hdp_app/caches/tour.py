"""The Tour page's cached numbers (shared by every session, never modified; the keys hold
control values only, no user data)."""

from __future__ import annotations

from typing import Any

import streamlit as st

import hdp_core as hdp
from hdp_app.views import simulation as simview
from hdp_app.views import tour as teach
from hdp_core.design import MenuReport, evaluate_menu

CONTROLS = {c.key: c for _, _, cs, _ in teach.TOUR for c in cs}
"""Every control of the tour's steps, by widget key."""

SIM_TRIALS = 1_000  # quick (about 0.6 s at n = 1000, then cached); the intervals need >= 500
SIM_METHODS = ("ADPM", "PropDPM", "UNI")
SIM_SEED = 0

Values = tuple[tuple[str, float], ...]
"""The control values a step is drawn for, as a hashable key."""


@st.cache_resource(max_entries=256, show_spinner=False)
def step(index: int, values: Values) -> teach.TourStep:
    """views.tour.tour_step for these control values."""
    return teach.tour_step(index, dict(values))


@st.cache_resource(max_entries=8, show_spinner=False)
def grid(key: str) -> tuple[Any, ...]:
    """The values control ``key``'s slider offers (views.tour.control_grid)."""
    return tuple(teach.control_grid(CONTROLS[key]))


@st.cache_resource(max_entries=64, show_spinner=False)
def simulation(values: Values) -> list[dict[str, Any]]:
    """Step 4's simulated rows: SIM_METHODS, SIM_TRIALS trials, seed SIM_SEED, the tour's data."""
    prof = step(4, values).profile
    res = hdp.simulate_mse(
        list(SIM_METHODS), prof, teach.TOUR_DATA, trials=SIM_TRIALS, seed=SIM_SEED
    )
    return simview.simulation_rows(res, list(SIM_METHODS))


@st.cache_resource(max_entries=64, show_spinner=False)
def menu_report(values: Values) -> MenuReport:
    """Step 5's menu evaluated (hdp_core.design.evaluate_menu)."""
    return evaluate_menu(teach.tour_menu(dict(values)))
