"""Shared UI plumbing for every page: session state, cached core calls, the sidebar, the URL.

Pages import from here; hdp_core never imports streamlit. The current profile lives in
``st.session_state`` under the keys below, initialised once per session in ``init_state``
(called by app.py before any page), which is also the one place the link's query string is
read. After every run app.py calls ``sync_url`` so that the URL always describes the current
profile (hdp_core.views.links encodes it) and ``render_sidebar`` so that the summary shows the
profile the page may just have changed.
"""

from __future__ import annotations

import json
import math

import streamlit as st
from streamlit.errors import StreamlitAPIException

import hdp_core as hdp
from hdp_core.errors import ProfileError
from hdp_core.profile import EpsilonProfile
from hdp_core.validate import format_eps
from hdp_core.views import links
from hdp_core.views.formatting import count_noun, plain

DEFAULT_PRESET = "paper_high"
DEFAULT_SPEC = {"kind": "preset", "name": DEFAULT_PRESET, "seed": 0}

PROFILE = "profile"  # the current EpsilonProfile
PROFILE_SPEC = "profile_spec"  # how it was made (a dict; encoded into the URL when it can be)
PROFILE_LABEL = "profile_label"  # one line describing it
PROFILE_NOTE = "profile_note"  # a message shown above the page until the profile changes
PROFILE_VERSION = "profile_version"  # bumped by set_profile, so pages can see a change

SIDEBAR_NOTE = "sidebar_note"  # a page's note above the sidebar summary (this run only)
TD_MENU = "td_menu"  # the Tier designer's current validated Menu (read by the Release page)
MENU_LINK_KEY = "menu"  # query-string parameter holding an encoded tier menu
PROFILE_HASH = {EpsilonProfile: lambda p: p.key}
"""hash_funcs for st.cache_data: a profile is hashed by its key (its levels and counts)."""


def _spec_key(spec: dict) -> str:
    """A canonical text key of a valid spec (for caching)."""
    return json.dumps(links.normalize_spec(spec), sort_keys=True)


@st.cache_data(max_entries=32, show_spinner=False)
def _profile_from_key(key: str) -> EpsilonProfile:
    return links.profile_from_spec(json.loads(key))


def profile_from_spec(spec: dict) -> EpsilonProfile:
    """hdp_core.views.links.profile_from_spec, cached on the spec; raises LinkError/ProfileError."""
    return _profile_from_key(_spec_key(spec))


def default_state() -> dict:
    """The state a fresh session starts from: the paper's high-variance profile."""
    return {
        PROFILE: profile_from_spec(DEFAULT_SPEC),
        PROFILE_SPEC: dict(DEFAULT_SPEC),
        PROFILE_LABEL: hdp.PRESETS[DEFAULT_PRESET],
        PROFILE_NOTE: None,
        PROFILE_VERSION: 0,
    }


def _query_dict() -> dict[str, list[str]]:
    qp = st.query_params
    return {k: qp.get_all(k) for k in list(qp.keys())}


def _state_from_link() -> dict:
    """Session-start state: the link's profile if the URL holds a valid one, else the default
    (with a note saying why, when the link held a profile that could not be used)."""
    state = default_state()
    try:
        spec = links.decode(_query_dict())
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


def run_through_app() -> None:
    """Make sure this run goes through app.py; every page file calls it first.

    The first session of a fresh server process starts in Streamlit's legacy multipage mode,
    because a folder named ``pages/`` sits beside app.py (Streamlit decides that once per
    process, in ``PagesManager.uses_pages_directory``; ``st.navigation`` switches it off).
    In that mode a deep link (``/saturation?...``) runs the page file on its own: no sidebar
    navigation or summary, no URL sync. So a page that finds the mode still on switches it
    off and reruns at once, before it has drawn anything; the rerun runs app.py, whose
    ``st.navigation`` opens the same page (the page's URL path is kept). Streamlit's own list
    of files, sent in that first run, is never shown: .streamlit/config.toml sets
    ``client.showSidebarNavigation = false`` and app.py draws the navigation itself.
    A run that came through app.py finds the mode off and returns at once.
    tests/test_streamlit_internals.py pins the Streamlit behaviour this relies on.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


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
    """How the current profile was made (see hdp_core.views.links), or None if unknown."""
    init_state()
    return st.session_state.get(PROFILE_SPEC)


def profile_version() -> int:
    """A counter that changes whenever set_profile is called."""
    init_state()
    return st.session_state[PROFILE_VERSION]


def set_profile(profile: EpsilonProfile, spec: dict | None, label: str) -> None:
    """Make ``profile`` current; ``spec`` says how to rebuild it (hdp_core.views.links; put in the
    URL when it can be; None or another dict if it cannot), ``label`` describes it."""
    init_state()
    st.session_state[PROFILE] = profile
    st.session_state[PROFILE_SPEC] = spec
    st.session_state[PROFILE_LABEL] = label
    st.session_state[PROFILE_NOTE] = None
    st.session_state[PROFILE_VERSION] = st.session_state[PROFILE_VERSION] + 1


@st.cache_data(max_entries=64, show_spinner=False)
def _encode_key(key: str) -> dict:
    return links.encode(json.loads(key))


def link_params(spec: dict | None = None) -> dict[str, str | list[str]]:
    """The query parameters of the current profile (or of ``spec``).

    Raises hdp.NotShareable (with a reason a person can read) when it cannot be linked.
    """
    spec = get_spec() if spec is None else spec
    if isinstance(spec, dict) and spec.get("kind") not in links.KINDS and spec.get("reason"):
        raise hdp.NotShareable(str(spec["reason"]))  # why a link could not hold it (upload)
    if not isinstance(spec, dict) or spec.get("kind") not in links.KINDS:
        raise hdp.NotShareable("this profile was not made from a preset, generator or tiers")
    try:
        return _encode_key(_spec_key(spec))
    except hdp.NotShareable:
        raise
    except (ProfileError, ValueError) as e:
        raise hdp.NotShareable(str(e)) from None


def sync_url() -> None:
    """Write the current profile into the URL's query string (only our keys, only when they
    differ). A profile that cannot be linked removes our keys, so the URL never describes a
    different profile than the one on screen."""
    try:
        want = link_params()
    except hdp.NotShareable:
        want = {}
    want_l = {k: list(v) if isinstance(v, list) else [v] for k, v in want.items()}
    qp = st.query_params
    have = {k: qp.get_all(k) for k in list(qp.keys()) if k in links.QUERY_KEYS}
    if have == want_l and list(have) == list(want_l):
        return
    if list(have) == list(want_l):
        # Same keys, new values (a slider step on the Profile page): one update sends one
        # message to the browser; deleting and re-adding sent two per key (issue 11).
        try:
            qp.update({k: want[k] for k in want if have[k] != want_l[k]})
        except StreamlitAPIException:  # a page bound a widget to one of our keys
            pass
        return
    try:
        for k in have:
            del qp[k]
        for k, v in want.items():
            qp[k] = v
    except StreamlitAPIException:  # a page bound a widget to one of our keys: leave the URL
        pass


def render_note(where=None) -> None:
    """Show the pending profile note (e.g. a bad link fell back to the default) above the
    page, into container ``where`` (filled after the page ran, so a profile the page just
    changed clears it); it stays until the profile changes."""
    note = st.session_state.get(PROFILE_NOTE)
    if note:
        (where if where is not None else st).warning(note, icon=":material/warning:")


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


def _short(x: float) -> str:
    return format_eps(x).split(" ")[0]


def compact_count(n: int) -> str:
    """A user count that fits a narrow metric: 12,345, 500k, 1.2M, 3B, 1T (3 digits)."""
    if n < 100_000:
        return f"{n:,}"
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.3g}{suffix}"
    return f"{n:,}"  # pragma: no cover


def render_sidebar(where=None) -> None:
    """The current profile at a glance, on every page (into container ``where``)."""
    prof = get_profile()
    s = cached_summary(prof)
    n = s["n"]
    page_note = st.session_state.pop(SIDEBAR_NOTE, None)  # set by this run's page only
    with where if where is not None else st.sidebar:
        st.markdown("#### Current profile")
        if page_note:
            st.caption(page_note)
        st.caption(plain(st.session_state.get(PROFILE_LABEL) or ""))
        c1, c2 = st.columns(2)
        c1.metric("Users n", compact_count(n), help=f"{count_noun(n, 'user')} in the profile.")
        c2.metric(
            "Distinct levels",
            f"{s['distinct']:,}",
            help="How many different privacy levels the users ask for.",
        )
        c1.metric(
            "min eps",
            _short(s["min"]),
            help="The strictest level asked for (smaller eps = more privacy; 0 = data not used).",
        )
        c2.metric(
            "max eps",
            _short(s["max"]),
            help="The loosest level asked for ('public' = eps ∞, public data).",
        )
        c1.metric(
            "median eps", _short(s["median"]), help="Half the users ask for this level or less."
        )
        c2.metric(
            "Public users",
            f"{100 * s['public_share']:.3g}%",
            help=f"{count_noun(s['n_public'], 'user')} with eps = ∞ (public data).",
        )
        tau = s["tau"]
        if math.isfinite(tau):
            c1.metric(
                "tau*",
                f"{tau:.4g}",
                help="Saturation level: ADPM grants every user who asked for eps ≥ tau* "
                "exactly tau*, more privacy than they asked for, at no cost in accuracy.",
            )
            c2.metric(
                "Users capped",
                compact_count(s["n_saturated"]),
                help=f"{s['n_saturated']:,} users ({100 * s['n_saturated'] / n:.3g}%) "
                "are granted tau* instead of their looser level.",
            )
        else:
            c1.metric(
                "tau*",
                "none",
                help="No user is capped: the levels are close enough "
                "that weights proportional to eps are optimal.",
            )
            c2.metric("Users capped", "0")
        if s["n_excluded"]:
            st.caption(f"{s['n_excluded']:,} users with eps = 0 are excluded (data not used).")
        st.caption("Smaller eps = more privacy · ∞ = public data · 0 = data not used.")


def metric_row():
    """A row for metrics that wraps onto a new line where the page is narrow (1024 px with the
    sidebar open) instead of cutting their values: give each metric ``width="content"``."""
    return st.container(horizontal=True, wrap=True, gap="large")


def guarded(section, *args):
    """Run one section of a page and return what it returns; bad input shows a message there
    instead of a traceback (and returns None), and the rest of the page (and the current
    profile) stays."""
    try:
        return section(*args)
    except (hdp.ProfileError, ValueError) as exc:
        st.error(f"This part of the page could not be computed: {plain(exc)}")
        return None


def _forget_query_param(key: str) -> None:
    """Remove ``key`` from the URL and from the values Streamlit seeds widgets from (the
    latter is kept separately by Streamlit, so deleting from st.query_params alone would still
    seed the widget from the original link)."""
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state

        with get_session_state().query_params() as qp:
            qp.remove_param(key)
            getattr(qp, "_initial_query_params", {}).pop(key, None)
    except (ImportError, AttributeError):  # pragma: no cover - another Streamlit version
        if key in st.query_params:
            del st.query_params[key]


def drop_bad_query_params(limits: dict) -> None:
    """Check the link's values of the page's URL-bound widgets before they are created
    (``limits``: widget key -> hdp_core.views.limits.Limit, the same bounds as the widget):
    an unparsable, non-finite or out-of-range value is dropped, the widget starts at its
    default, and a note above the page says what was ignored and why."""
    from hdp_core.views.limits import query_value_problem

    qp = st.query_params
    dropped = []
    for key, limit in limits.items():
        if key not in qp:
            continue
        raw = qp.get_all(key)
        problem = query_value_problem(raw if len(raw) != 1 else raw[0], limit)
        if problem is not None:
            _forget_query_param(key)
            shown = (raw[0] if raw else "")[:24] + ("…" if raw and len(raw[0]) > 24 else "")
            dropped.append(f"{key}={shown} ({problem})")
    if dropped:
        st.warning(
            "The link's value was ignored for "
            + plain("; ".join(dropped))
            + ". Those controls start at their defaults.",
            icon=":material/link_off:",
        )
