"""The Profile page's session state: a mirror of its controls, the tiers editor's rows, the
last uploaded file, and the callbacks that keep them and the current profile in step (they
run before the script, so they may rewrite widget values).

The values of the page's controls are mirrored in ``st.session_state[UI]`` (Streamlit drops a
widget's value when the user is on another page); the profile itself lives in hdp_app.state
(PROFILE, PROFILE_SPEC). When the profile changes elsewhere (a link, another page) the
controls are set from it. Every value and text comes from hdp_app.views.profile_controls and
hdp_app.views.links; here they are only read from and written to ``st.session_state``.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import hdp_core as hdp
from hdp_app.cache import profile_from_spec
from hdp_app.state import (
    PROFILE,
    PROFILE_LABEL,
    get_profile,
    get_spec,
    profile_version,
    set_profile,
)
from hdp_app.views import links
from hdp_app.views import profile_controls as pc
from hdp_app.views.formatting import plain
from hdp_core.errors import ProfileError
from hdp_core.tables import profile_from_csv

UI = "prof_ui"  # widget values of this page (survive page switches)
SEEN = "prof_seen"  # the profile version the controls were last set from
TIERS = "prof_tiers"  # tiers editor: rows (latest edits), base (editor input), gen (key)
UPLOAD = "prof_upload_state"  # the last uploaded file: id, name, error
NOT_CHANGED = "The profile was not changed."


def rebase_tiers(rows: list[dict[str, Any]]) -> None:
    """Load ``rows`` into the tiers editor (a new editor key, so the table is redrawn)."""
    t = st.session_state[TIERS]
    t["rows"] = [dict(r) for r in rows]
    t["base"] = [dict(r) for r in rows]
    t["gen"] += 1


def _ui_from_spec(spec: Any, prof: hdp.EpsilonProfile) -> dict[str, Any]:
    """Control values that describe ``spec`` (views.profile_controls.ui_from_spec); a tiers
    spec also loads its tiers into the editor."""
    ui, rows = pc.ui_from_spec(spec, prof)
    if rows is not None:
        rebase_tiers(rows)
    return ui


def init_page_state() -> dict[str, Any]:
    """Create the page's state, set the controls from the profile if it changed elsewhere,
    and restore widget values Streamlit dropped while the user was on another page. Returns
    the mirror (control key -> value)."""
    ss = st.session_state
    if UI not in ss:
        ss[UI] = pc.default_ui()
    if TIERS not in ss:
        ss[TIERS] = {"rows": pc.DEFAULT_ROWS, "base": pc.DEFAULT_ROWS, "gen": 0}
    if UPLOAD not in ss:
        ss[UPLOAD] = {"file_id": None, "name": None, "error": None}
    ui: dict[str, Any] = ss[UI]
    version = profile_version()
    if ss.get(SEEN) != version:  # changed by a link or another page: follow it
        ui.update(_ui_from_spec(get_spec(), get_profile()))
        ss[SEEN] = version
    # Every control is drawn from the mirror. Callbacks copy a control's new value into the
    # mirror before this runs, so nothing the user did is lost, and a control Streamlit
    # forgot (or half-forgot) while the user was on another page comes back as it was.
    for k, v in ui.items():
        ss[k] = v
    return ui


def _make_current(prof: hdp.EpsilonProfile, spec: Any, label: str) -> None:
    set_profile(prof, spec, label)
    st.session_state[SEEN] = profile_version()


def apply(spec: dict[str, Any]) -> str | None:
    """Make the profile of ``spec`` current unless it already is. Returns None, or the
    message (markdown) saying why it was refused; the old profile is then kept."""
    try:
        s = links.normalize_spec(spec)
        cur = get_spec()
        try:
            if cur is not None and links.normalize_spec(cur) == s:
                return None
        except (ProfileError, ValueError):
            pass
        prof = profile_from_spec(s)
    except (ProfileError, ValueError) as e:
        return f"{plain(e)}. {NOT_CHANGED}"
    _make_current(prof, s, links.spec_label(s))
    return None


# callbacks -------------------------------------------------------------------------------
def keep(key: str) -> None:
    """on_change of every control: copy its new value into the mirror."""
    st.session_state[UI][key] = st.session_state[key]


def kw(key: str) -> dict[str, Any]:
    """Keyword arguments of a mirrored control: its key and the callback that mirrors it."""
    return {"key": key, "on_change": keep, "args": (key,)}


def put(key: str, value: Any) -> None:
    """Set a control (from a callback): mirror and widget state together."""
    st.session_state[UI][key] = value
    st.session_state[key] = value


def on_mode() -> None:
    """The way of building changed: back to the last good upload, or the current profile's
    tiers into the editor (a profile with few levels)."""
    keep("prof_mode")
    up = st.session_state[UPLOAD]
    if st.session_state["prof_mode"] == "Upload" and up.get("profile") is not None:
        if up["profile"].key != st.session_state[PROFILE].key:  # back to the last good file
            _make_current(up["profile"], up["spec"], up["label"])
    if st.session_state["prof_mode"] == "Tiers":
        rows = pc.rows_from_profile(st.session_state[PROFILE])
        if rows is not None:  # a profile with few levels: edit its tiers
            rebase_tiers(rows)
            put("prof_tiers_units", "count")
            put("prof_tiers_total", int(sum(r["count"] for r in rows)))


def new_draw(seed_key: str) -> None:
    """'Redraw': the next seed (wrapping after links.SEED_MAX)."""
    put(seed_key, (int(st.session_state[UI][seed_key]) + 1) % (links.SEED_MAX + 1))


def on_units() -> None:
    """Convert the tiers between counts and shares of n, keeping the same tiers."""
    keep("prof_tiers_units")
    t = st.session_state[TIERS]
    units = st.session_state["prof_tiers_units"]
    total = int(st.session_state[UI]["prof_tiers_total"])
    rows, new_total = pc.convert_rows(t["rows"], units, total)
    if new_total is not None:
        put("prof_tiers_total", new_total)
    rebase_tiers(rows)


def on_tier_slider(i: int, key: str) -> None:
    """Write a tier's level chosen on the log slider into the table (and redraw the table)."""
    t = st.session_state[TIERS]
    rows = [dict(r) for r in t["rows"]]
    if i < len(rows):
        rows[i]["eps"] = pc.fmt_level(st.session_state[key])
        rebase_tiers(rows)


# the upload --------------------------------------------------------------------------------
def new_upload(file_id: Any) -> bool:
    """Whether the uploader holds a file not read yet (read once per file id)."""
    return bool(file_id != st.session_state[UPLOAD]["file_id"])


def read_upload(file_id: Any, name: str, data: bytes) -> None:
    """Read an uploaded file and make its profile current; an error is kept for
    :func:`upload_status` (the profile is then kept)."""
    up = st.session_state[UPLOAD]
    up.update(file_id=file_id, name=name, error=None)
    try:
        prof = profile_from_csv(data)
    except (ProfileError, ValueError) as e:
        up["error"] = str(e)
        return
    spec: dict[str, Any]
    try:
        spec = links.spec_from_profile(prof)
        links.encode(spec)
    except hdp.LinkError as e:
        spec = {"kind": "upload", "name": name, "reason": str(e)}
    label = pc.upload_label(name, prof.n)
    up.update(profile=prof, spec=spec, label=label, good_name=name)
    _make_current(prof, spec, label)


def upload_status(has_file: bool) -> tuple[str, str] | None:
    """(kind, markdown) of the note under the uploader: the file's error, that it is used,
    that an earlier upload is still the profile, or which profile is current; None when
    there is nothing to say. ``kind`` is 'error', 'success' or 'info'."""
    up = st.session_state[UPLOAD]
    if has_file and up["error"]:
        return "error", (
            f"Could not use **{plain(up['name'])}**: {plain(up['error'])}. The previous "
            "profile is kept."
        )
    if has_file:
        return "success", f"Using **{plain(up['name'])}**."
    if up.get("profile") is not None and up["profile"].key == get_profile().key:
        return "success", f"Using **{plain(up['good_name'])}** (uploaded earlier)."
    spec = get_spec()
    kind = spec.get("kind") if isinstance(spec, dict) else None
    if kind not in pc.SPEC_KINDS:
        return "info", f"Current profile: {plain(st.session_state.get(PROFILE_LABEL, ''))}"
    return None
