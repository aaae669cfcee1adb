"""The link: the profile's query parameters and the URL-bound widgets' values, read and
written through ``st.query_params`` only.

hdp_app.views.links encodes and decodes a profile spec; the values of URL-bound widgets are
checked against the same hdp_app.views.limits.Limit objects that bound the widgets.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st
from streamlit.errors import StreamlitAPIException

import hdp_core as hdp
from hdp_app.cache import encode_spec
from hdp_app.views import links
from hdp_app.views.formatting import plain
from hdp_app.views.limits import Limit, query_value_problem
from hdp_core.errors import ProfileError

MENU_LINK_KEY = "menu"  # query-string parameter holding an encoded tier menu
DROPPED_NOTE = "url_dropped_note"
"""Session key of the note naming link values just dropped (shown after the rerun)."""


def query_dict() -> dict[str, list[str]]:
    """The URL's query string: parameter -> its values."""
    qp = st.query_params
    return {k: qp.get_all(k) for k in list(qp.keys())}


def link_spec() -> dict | None:
    """The profile spec the URL holds (None if it holds none); raises LinkError or
    ProfileError (with a reason a person can read) when it holds one that cannot be used."""
    return links.decode(query_dict())


def link_params(spec: dict | None) -> dict[str, str | list[str]]:
    """The query parameters of the profile made by ``spec``.

    Raises hdp.NotShareable (with a reason a person can read) when it cannot be linked.
    """
    if isinstance(spec, dict) and spec.get("kind") not in links.KINDS and spec.get("reason"):
        raise hdp.NotShareable(str(spec["reason"]))  # why a link could not hold it (upload)
    if not isinstance(spec, dict) or spec.get("kind") not in links.KINDS:
        raise hdp.NotShareable("this profile was not made from a preset, generator or tiers")
    try:
        return encode_spec(spec)
    except hdp.NotShareable:
        raise
    except (ProfileError, ValueError) as e:
        raise hdp.NotShareable(str(e)) from None


def sync_url(spec: dict | None) -> None:
    """Write the profile made by ``spec`` into the URL's query string (only our keys, only
    when they differ). A profile that cannot be linked removes our keys, so the URL never
    describes a different profile than the one on screen."""
    try:
        want = link_params(spec)
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


def drop_bad_query_params(limits: Mapping[str, Limit]) -> None:
    """Check the link's values of the page's URL-bound widgets before they are created
    (``limits``: widget key -> Limit, the same bounds as the widget): an unparsable,
    non-finite or out-of-range value is removed from the URL and the run starts again at
    once, so the widget starts at its default; a note above the page says what was ignored
    and why."""
    qp = st.query_params
    dropped = []
    for key, limit in limits.items():
        if key not in qp:
            continue
        raw = qp.get_all(key)
        problem = query_value_problem(raw if len(raw) != 1 else raw[0], limit)
        if problem is not None:
            del qp[key]
            shown = (raw[0] if raw else "")[:24] + ("…" if raw and len(raw[0]) > 24 else "")
            dropped.append(f"{key}={shown} ({problem})")
    if dropped and DROPPED_NOTE not in st.session_state:
        # Streamlit seeds a bound widget from the query string the run started with: a new
        # run starts from the URL without the dropped values (once: the note marks it).
        st.session_state[DROPPED_NOTE] = "; ".join(dropped)
        st.rerun()
    note = st.session_state.pop(DROPPED_NOTE, None)
    if note:
        st.warning(
            "The link's value was ignored for "
            + plain(note)
            + ". Those controls start at their defaults.",
            icon=":material/link_off:",
        )


LINKED = "url_linked"
"""Session key: widget key -> its last value, for the widgets kept in the link by
:func:`keep_in_link` (Streamlit forgets a widget's value while the user is on another page)."""


def start_from_link(key: str) -> None:
    """Call before drawing a number widget that :func:`keep_in_link` keeps in the link: the
    first time it is drawn it starts from the link's value (checked beforehand by
    :func:`drop_bad_query_params`), and back from another page from its last value."""
    ss = st.session_state
    if key in ss:
        return
    last = ss.get(LINKED, {})
    if key in last:
        ss[key] = last[key]
    elif key in st.query_params:
        ss[key] = float(st.query_params[key])


def keep_in_link(key: str, value: float, default: float) -> None:
    """Write a widget's value into the link (left out at ``default``), from the server after
    the run, as ``bind="query-params"`` would from the browser: for a slider whose every step
    must redraw at once (issue 23: the browser's own URL update for a bound widget costs
    20-30 ms on every key press on this machine; a write from the script costs nothing
    measurable). Only number widgets: the value is written as a short decimal (-2.4, 1)."""
    st.session_state.setdefault(LINKED, {})[key] = value
    qp = st.query_params
    text = f"{round(float(value), 9):g}"
    if float(value) == float(default):
        if key in qp:
            del qp[key]
    elif qp.get(key) != text:
        qp[key] = text
