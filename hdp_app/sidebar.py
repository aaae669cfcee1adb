"""The sidebar's summary of the current profile and the note above the page."""

from __future__ import annotations

import math

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from hdp_app.cache import cached_summary
from hdp_app.state import SIDEBAR_NOTE, get_label, get_profile, profile_note
from hdp_app.views.explain import sidebar_lines
from hdp_app.views.formatting import compact_count, count_noun, plain, sidebar_eps


def render_note(where: DeltaGenerator | None = None) -> None:
    """Show the pending profile note (e.g. a bad link fell back to the default) above the
    page, into container ``where`` (filled after the page ran, so a profile the page just
    changed clears it); it stays until the profile changes."""
    note = profile_note()
    if note:
        (where if where is not None else st).warning(note, icon=":material/warning:")


def render_sidebar(where: DeltaGenerator | None = None) -> None:
    """The current profile at a glance, on every page (into container ``where``)."""
    prof = get_profile()
    s = cached_summary(prof)
    n = s["n"]
    page_note = st.session_state.pop(SIDEBAR_NOTE, None)  # set by this run's page only
    with where if where is not None else st.sidebar:
        st.markdown("#### Current profile")
        if page_note:
            st.caption(page_note)
        st.caption(plain(get_label()))
        first, second = sidebar_lines(s)
        st.markdown(f"{first}  \n{second}")
        # the details, folded: a narrow sidebar leaves the page its width on a projector;
        # one metric a row, so no value is cut in the narrow column
        details = st.expander("Profile at a glance", expanded=False)
        c1 = c2 = details
        c1.metric("Users n", compact_count(n), help=f"{count_noun(n, 'user')} in the profile.")
        c2.metric(
            "Distinct levels",
            f"{s['distinct']:,}",
            help="How many different privacy levels the users ask for.",
        )
        c1.metric(
            "min eps",
            sidebar_eps(s["min"]),
            help="The strictest level asked for (smaller eps = more privacy; 0 = data not used).",
        )
        c2.metric(
            "max eps",
            sidebar_eps(s["max"]),
            help="The loosest level asked for ('public' = eps ∞, public data).",
        )
        c1.metric(
            "median eps",
            sidebar_eps(s["median"]),
            help="Half the users ask for this level or less.",
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
