"""Session state: the keys every page shares, the current profile and the Tier designer's
menu, initialised once per session.

The current profile lives in ``st.session_state`` under the keys below, initialised once per
session by :func:`init_state` (called by app.py before any page), which is also the one place
the link's profile is read (hdp_app.url).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import hdp_core as hdp
from hdp_app.cache import profile_from_spec
from hdp_app.url import link_spec
from hdp_app.views import links
from hdp_app.views.formatting import plain
from hdp_core.errors import ProfileError
from hdp_core.profile import EpsilonProfile

DEFAULT_PRESET = "paper_high"
DEFAULT_SPEC = {"kind": "preset", "name": DEFAULT_PRESET, "seed": 0}

PROFILE = "profile"  # the current EpsilonProfile
PROFILE_SPEC = "profile_spec"  # how it was made (a dict; encoded into the URL when it can be)
PROFILE_LABEL = "profile_label"  # one line describing it
PROFILE_NOTE = "profile_note"  # a message shown above the page until the profile changes
PROFILE_VERSION = "profile_version"  # bumped by set_profile, so pages can see a change

SIDEBAR_NOTE = "sidebar_note"  # a page's note above the sidebar summary (this run only)
TD_MENU = "td_menu"  # the Tier designer's current validated Menu (read by the Release page)


def default_state() -> dict[str, Any]:
    """The state a fresh session starts from: the paper's high-variance profile."""
    return {
        PROFILE: profile_from_spec(DEFAULT_SPEC),
        PROFILE_SPEC: dict(DEFAULT_SPEC),
        PROFILE_LABEL: hdp.PRESETS[DEFAULT_PRESET],
        PROFILE_NOTE: None,
        PROFILE_VERSION: 0,
    }


def _state_from_link() -> dict[str, Any]:
    """Session-start state: the link's profile if the URL holds a valid one, else the default
    (with a note saying why, when the link held a profile that could not be used)."""
    state = default_state()
    try:
        spec = link_spec()
        if spec is None:
            return state
        prof = profile_from_spec(spec)
    except (ProfileError, ValueError) as e:
        state[PROFILE_NOTE] = (
            f"The link's profile could not be used ({plain(e)}). Showing the default profile "
            f"instead: {plain(state[PROFILE_LABEL])}."
        )
        return state
    state.update({PROFILE: prof, PROFILE_SPEC: spec, PROFILE_LABEL: links.spec_label(spec)})
    return state


def init_state() -> None:
    """Create every shared session-state key once per session (app.py calls it first).

    The first call of a session reads the URL's query string: a valid profile link opens that
    profile; a malformed one falls back to the default with a visible note.
    """
    if PROFILE not in st.session_state:
        for k, v in _state_from_link().items():
            st.session_state[k] = v
    for k, v in ((PROFILE_NOTE, None), (PROFILE_VERSION, 0)):
        if k not in st.session_state:
            st.session_state[k] = v
    if PROFILE_SPEC not in st.session_state:
        st.session_state[PROFILE_SPEC] = None
    if PROFILE_LABEL not in st.session_state:
        st.session_state[PROFILE_LABEL] = ""


def get_profile() -> EpsilonProfile:
    """The current profile (initialising state if a page runs on its own)."""
    init_state()
    return st.session_state[PROFILE]


def get_spec() -> dict | None:
    """How the current profile was made (see hdp_app.views.links), or None if unknown."""
    init_state()
    return st.session_state.get(PROFILE_SPEC)


def get_label() -> str:
    """The one line describing the current profile."""
    init_state()
    return st.session_state.get(PROFILE_LABEL) or ""


def profile_version() -> int:
    """A counter that changes whenever set_profile is called."""
    init_state()
    return st.session_state[PROFILE_VERSION]


def set_profile(profile: EpsilonProfile, spec: dict | None, label: str) -> None:
    """Make ``profile`` current; ``spec`` says how to rebuild it (hdp_app.views.links; put in the
    URL when it can be; None or another dict if it cannot), ``label`` describes it."""
    init_state()
    st.session_state[PROFILE] = profile
    st.session_state[PROFILE_SPEC] = spec
    st.session_state[PROFILE_LABEL] = label
    st.session_state[PROFILE_NOTE] = None
    st.session_state[PROFILE_VERSION] = st.session_state[PROFILE_VERSION] + 1


def profile_note() -> str | None:
    """The pending profile note (a bad link fell back to the default), if any."""
    return st.session_state.get(PROFILE_NOTE)


def get_menu() -> Any:
    """The Tier designer's current validated menu (hdp_core.design.Menu), or None."""
    return st.session_state.get(TD_MENU)


def set_menu(menu: Any) -> None:
    """Make ``menu`` (a validated hdp_core.design.Menu) the Tier designer's current menu."""
    st.session_state[TD_MENU] = menu
