"""Every ``st.cache_*`` wrapper of the app and the hash functions they use.

Cache keys are built from the inputs only (a profile's key: its levels and counts; a spec's
canonical JSON), never from anything tied to a session, so one session never sees another's
data: two sessions share an entry only when they asked for the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import streamlit as st

import hdp_core as hdp
from hdp_app.views import links
from hdp_core.menu import Menu
from hdp_core.profile import EpsilonProfile

HashFuncs = dict[str | type[Any], Callable[[Any], Any]]
"""The type st.cache_data and st.cache_resource take as ``hash_funcs``."""

PROFILE_HASH: HashFuncs = {EpsilonProfile: lambda p: p.key}
"""hash_funcs for st.cache_data: a profile is hashed by its key (its levels and counts)."""

MENU_HASH: HashFuncs = {Menu: lambda m: m.key}
"""hash_funcs for st.cache_data: a tier menu is hashed by its key (its canonical JSON)."""


def spec_key(spec: dict) -> str:
    """A canonical text key of a valid spec (for caching); raises LinkError/ProfileError."""
    return json.dumps(links.normalize_spec(spec), sort_keys=True)


@st.cache_data(max_entries=32, show_spinner=False)
def _profile_from_key(key: str) -> EpsilonProfile:
    return links.profile_from_spec(json.loads(key))


def profile_from_spec(spec: dict) -> EpsilonProfile:
    """hdp_app.views.links.profile_from_spec, cached on the spec; raises LinkError/ProfileError."""
    return _profile_from_key(spec_key(spec))


@st.cache_data(max_entries=64, show_spinner=False)
def _encode_key(key: str) -> dict:
    return links.encode(json.loads(key))


def encode_spec(spec: dict) -> dict[str, Any]:
    """hdp_app.views.links.encode(spec) (the link's query parameters), cached on the spec."""
    return _encode_key(spec_key(spec))


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=64, show_spinner=False)
def cached_adpm(profile: EpsilonProfile) -> hdp.ADPMSolution:
    """hdp.adpm(profile), cached on the profile's key."""
    return hdp.adpm(profile)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=64, show_spinner=False)
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
