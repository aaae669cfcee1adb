"""The Profile page's cached figure (a profile is hashed by its key)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from hdp_app.cache import PROFILE_HASH
from hdp_app.figures.profile import profile_figure
from hdp_core.profile import EpsilonProfile


@st.cache_resource(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def figure(profile: EpsilonProfile, tau: float, n_saturated: int) -> Any:
    """The profile chart (hdp_app.figures.profile), cached on the profile and shared by every
    session (never modified): st.cache_data would unpickle, so rebuild and validate, the
    figure on every rerun (issue 11)."""
    return profile_figure(profile, tau, n_saturated)
