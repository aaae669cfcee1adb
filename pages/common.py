"""Shared UI plumbing for every page: session state, cached core calls, the sidebar.

Pages import from here; hdp_core never imports streamlit. The current profile lives in
``st.session_state`` under the keys in STATE_DEFAULTS, initialised once in ``init_state``.
"""

from __future__ import annotations

import math

import streamlit as st

import hdp_core as hdp
from hdp_core.profile import EpsilonProfile, format_eps

DEFAULT_PRESET = "paper_high"

PROFILE = "profile"  # the current EpsilonProfile
PROFILE_SPEC = "profile_spec"  # how it was made (a dict; encoded into the URL)
PROFILE_LABEL = "profile_label"  # one line describing it
PROFILE_NOTE = "profile_note"  # a message to show once (e.g. a bad link fell back)

_HASH = {EpsilonProfile: lambda p: p.key}


def default_state() -> dict:
    """The state a fresh session starts from: the paper's high-variance profile."""
    return {
        PROFILE: hdp.preset(DEFAULT_PRESET),
        PROFILE_SPEC: {"kind": "preset", "name": DEFAULT_PRESET, "seed": 0},
        PROFILE_LABEL: hdp.PRESETS[DEFAULT_PRESET],
        PROFILE_NOTE: None,
    }


def init_state() -> None:
    """Create every shared session-state key once (called by app.py before any page)."""
    for k, v in default_state().items():
        if k not in st.session_state:
            st.session_state[k] = v


def get_profile() -> EpsilonProfile:
    """The current profile (initialising state if a page runs on its own)."""
    init_state()
    return st.session_state[PROFILE]


def set_profile(profile: EpsilonProfile, spec: dict, label: str) -> None:
    """Make ``profile`` current; ``spec`` says how to rebuild it (for links)."""
    st.session_state[PROFILE] = profile
    st.session_state[PROFILE_SPEC] = spec
    st.session_state[PROFILE_LABEL] = label


@st.cache_data(hash_funcs=_HASH, max_entries=64, show_spinner=False)
def cached_adpm(profile: EpsilonProfile) -> hdp.ADPMSolution:
    """hdp.adpm(profile), cached on the profile's key."""
    return hdp.adpm(profile)


@st.cache_data(hash_funcs=_HASH, max_entries=64, show_spinner=False)
def cached_summary(profile: EpsilonProfile) -> dict:
    """Profile summary plus ADPM's tau*, capped users and worst case, cached."""
    s = profile.summary()
    sol = hdp.adpm(profile)
    s.update(
        tau=sol.saturation_level,
        n_saturated=sol.n_saturated,
        worst_case=sol.worst_case_mse,
    )
    return s


def render_sidebar(where=None) -> None:
    """The current profile at a glance, on every page (into container ``where``)."""
    prof = get_profile()
    s = cached_summary(prof)
    with where if where is not None else st.sidebar:
        st.markdown("### Current profile")
        st.caption(st.session_state.get(PROFILE_LABEL, ""))
        c1, c2 = st.columns(2)
        c1.metric("Users n", f"{s['n']:,}")
        c2.metric("Distinct levels", f"{s['distinct']:,}")
        c1, c2, c3 = st.columns(3)
        c1.metric("min eps", format_eps(s["min"]).split(" ")[0])
        c2.metric("median", format_eps(s["median"]).split(" ")[0])
        c3.metric("max eps", format_eps(s["max"]).split(" ")[0])
        st.metric("Public users", f"{100 * s['public_share']:.1f}%")
        tau = s["tau"]
        if math.isfinite(tau):
            st.metric(
                "Saturation level tau*",
                f"{tau:.4g}",
                help="ADPM grants every user who asked for eps ≥ tau* exactly tau*: more "
                "privacy than they asked for, at no cost in accuracy.",
            )
            st.caption(f"caps {s['n_saturated']:,} users ({100 * s['n_saturated'] / s['n']:.1f}%)")
        else:
            st.metric("Saturation level tau*", "none", help="No user is capped: levels are "
                      "close enough that proportional weights are optimal.")
        if s["n_excluded"]:
            st.caption(f"{s['n_excluded']:,} users with eps = 0 are excluded (data not used).")
        st.caption("Smaller eps = more privacy; ∞ = public data.")
