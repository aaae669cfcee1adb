"""Profile page: shape who asks for how much privacy, see it at once, share or export it.

Four ways to build the profile (a preset, a generator, a tiers editor, a CSV upload); the
controls always describe the current profile: whatever they say is applied at once, and when
the profile changes elsewhere (a link, another page) the controls are set from it.

State: the values of this page's controls are mirrored in ``st.session_state["prof_ui"]``
(Streamlit drops a widget's value when the user is on another page); the profile itself
lives in hdp_app.common (PROFILE, PROFILE_SPEC). The URL is written by app.py from the spec.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

import hdp_core as hdp
from hdp_app.common import (
    PROFILE,
    PROFILE_HASH,
    cached_adpm,
    compact_count,
    get_profile,
    get_spec,
    link_params,
    metric_row,
    profile_from_spec,
    profile_version,
    run_through_app,
    set_profile,
)
from hdp_app.figures.profile import profile_figure
from hdp_app.navigation import app_page
from hdp_app.views import explain, links
from hdp_app.views import profile_controls as pc
from hdp_app.views.formatting import count_noun, plain
from hdp_core.errors import ProfileError
from hdp_core.presets import PRESETS
from hdp_core.profile import MAX_UPLOAD_BYTES, EpsilonProfile
from hdp_core.tables import example_csv, profile_from_csv

run_through_app()  # first: a deep link on a fresh server must go through app.py

MODES = pc.MODES
DISTS = pc.DISTS
LEVEL_HELP = pc.LEVEL_HELP

UI = "prof_ui"  # widget values of this page (survive page switches)
SEEN = "prof_seen"  # the profile version the controls were last set from
TIERS = "prof_tiers"  # tiers editor: rows (latest edits), base (editor input), gen (key)
UPLOAD = "prof_upload_state"  # the last uploaded file: id, name, error

DEFAULT_ROWS = pc.DEFAULT_ROWS
_default_ui = pc.default_ui
_fmt_level = pc.fmt_level
_options = pc.level_options
_rows_from_profile = pc.rows_from_profile


@st.cache_resource(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _figure(profile: EpsilonProfile, tau: float, n_saturated: int):
    """The profile chart (hdp_app.figures.profile), cached on the profile and shared by every
    session (never modified): st.cache_data would unpickle, so rebuild and validate, the
    figure on every rerun (issue 11)."""
    return profile_figure(profile, tau, n_saturated)


def _ui_from_spec(spec: Any, prof: EpsilonProfile) -> dict[str, Any]:
    """Control values that describe ``spec`` (hdp_app.views.profile_controls.ui_from_spec);
    a tiers spec also loads its tiers into the editor."""
    ui, rows = pc.ui_from_spec(spec, prof)
    if rows is not None:
        _rebase_tiers(rows)
    return ui


def _rebase_tiers(rows: list[dict]) -> None:
    t = st.session_state[TIERS]
    t["rows"] = [dict(r) for r in rows]
    t["base"] = [dict(r) for r in rows]
    t["gen"] += 1


def _init_page_state() -> dict[str, Any]:
    """Create this page's state, set controls from the profile if it changed elsewhere, and
    restore widget values Streamlit dropped while the user was on another page."""
    ss = st.session_state
    if UI not in ss:
        ss[UI] = _default_ui()
    if TIERS not in ss:
        ss[TIERS] = {"rows": DEFAULT_ROWS, "base": DEFAULT_ROWS, "gen": 0}
    if UPLOAD not in ss:
        ss[UPLOAD] = {"file_id": None, "name": None, "error": None}
    ui = ss[UI]
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


def _apply(spec: dict) -> None:
    """Make the profile of ``spec`` current unless it already is; errors shown, old kept."""
    try:
        s = links.normalize_spec(spec)
        cur = get_spec()
        try:
            if cur is not None and links.normalize_spec(cur) == s:
                return
        except (ProfileError, ValueError):
            pass
        prof = profile_from_spec(s)
    except (ProfileError, ValueError) as e:
        st.error(f"{plain(e)}. The profile was not changed.", icon=":material/block:")
        return
    set_profile(prof, s, links.spec_label(s))
    st.session_state[SEEN] = profile_version()


# callbacks -------------------------------------------------------------------------------
def _keep(key: str) -> None:
    """on_change of every control: copy its new value into the mirror."""
    st.session_state[UI][key] = st.session_state[key]


def _kw(key: str) -> dict[str, Any]:
    """Keyword arguments of a mirrored control: its key and the callback that mirrors it."""
    return {"key": key, "on_change": _keep, "args": (key,)}


def _set(key: str, value: Any) -> None:
    """Set a control (from a callback): mirror and widget state together."""
    st.session_state[UI][key] = value
    st.session_state[key] = value


def _on_mode() -> None:
    _keep("prof_mode")
    up = st.session_state[UPLOAD]
    if st.session_state["prof_mode"] == "Upload" and up.get("profile") is not None:
        if up["profile"].key != st.session_state[PROFILE].key:  # back to the last good file
            set_profile(up["profile"], up["spec"], up["label"])
            st.session_state[SEEN] = profile_version()
    if st.session_state["prof_mode"] == "Tiers":
        rows = _rows_from_profile(st.session_state[PROFILE])
        if rows is not None:  # a profile with few levels: edit its tiers
            _rebase_tiers(rows)
            _set("prof_tiers_units", "count")
            _set("prof_tiers_total", int(sum(r["count"] for r in rows)))


def _new_draw(seed_key: str) -> None:
    _set(seed_key, (int(st.session_state[UI][seed_key]) + 1) % (links.SEED_MAX + 1))


def _on_units() -> None:
    """Convert the tiers between counts and shares of n, keeping the same tiers."""
    _keep("prof_tiers_units")
    t = st.session_state[TIERS]
    units = st.session_state["prof_tiers_units"]
    total = int(st.session_state[UI]["prof_tiers_total"])
    rows, new_total = pc.convert_rows(t["rows"], units, total)
    if new_total is not None:
        _set("prof_tiers_total", new_total)
    _rebase_tiers(rows)


# the four ways ------------------------------------------------------------------------------
def _preset_controls(ui: dict) -> dict:
    ui["prof_preset"] = st.selectbox(
        "Preset",
        list(PRESETS),
        format_func=PRESETS.__getitem__,
        **_kw("prof_preset"),
        help=pc.PROFILE_HELP["preset"],
    )
    random = ui["prof_preset"] in links.RANDOM_PRESETS
    c1, c2 = st.columns([1, 1], vertical_alignment="bottom")
    ui["prof_preset_seed"] = c1.number_input(
        "Seed",
        min_value=0,
        max_value=links.SEED_MAX,
        step=1,
        **_kw("prof_preset_seed"),
        disabled=not random,
        help="Which random draw (same seed = same profile)."
        if random
        else "This preset is not random.",
    )
    c2.button(
        ":material/casino: Redraw",
        key="prof_preset_draw",
        help=pc.PROFILE_HELP["prof_preset_draw"],
        on_click=_new_draw,
        args=("prof_preset_seed",),
        disabled=not random,
        width="stretch",
    )
    return {
        "kind": "preset",
        "name": ui["prof_preset"],
        "seed": int(ui["prof_preset_seed"]) if random else 0,
    }


def _users_input(ui: dict, key: str, max_n: int, label: str, help: str) -> int | None:
    """A number of users, read as a real number so that what was typed is what arrives
    (an integer input reads "1e15" as 1 in the browser), then checked here: a whole number
    from 1 to ``max_n``, else an error naming the limit and None (the profile is kept)."""
    if not isinstance(st.session_state.get(key), float):
        st.session_state[key] = float(ui[key])
    v = st.number_input(label, min_value=1.0, step=100.0, format="%.0f", **_kw(key), help=help)
    why = pc.users_error(v, max_n)
    if why is not None:
        st.error(f"{why}. The profile was not changed.", icon=":material/block:")
        return None
    ui[key] = int(v)
    return int(v)


def _seed_input(ui: dict, key: str) -> None:
    c1, c2 = st.columns([1, 1], vertical_alignment="bottom")
    ui[key] = c1.number_input(
        "Seed",
        min_value=0,
        max_value=links.SEED_MAX,
        step=1,
        **_kw(key),
        help=pc.PROFILE_HELP["seed"],
    )
    c2.button(
        ":material/casino: Redraw",
        key=key + "_draw",
        help=pc.PROFILE_HELP["material_casino_redraw"],
        on_click=_new_draw,
        args=(key,),
        width="stretch",
    )


def _range_slider(ui: dict, key: str) -> None:
    lo, hi = ui[key]  # (the widget's own state is not read before it is drawn)
    ui[key] = st.select_slider(
        "Range of eps (log scale)",
        options=_options(lo, hi),
        value=(lo, hi),
        **_kw(key),
        format_func=lambda x: f"{x:g}",
        help="Levels are drawn so that log(eps) is uniform between these two. " + LEVEL_HELP,
    )


def _generator_controls(ui: dict) -> dict | None:
    ui["prof_dist"] = st.radio(
        "Distribution",
        list(DISTS),
        format_func=DISTS.get,
        **_kw("prof_dist"),
        horizontal=True,
        help=pc.PROFILE_HELP["distribution"],
    )
    d = ui["prof_dist"]
    if d == "log_uniform":
        n = _users_input(
            ui,
            "prof_lu_n",
            links.GEN_MAX_N,
            "Users n",
            help=f"How many users (1 to {links.GEN_MAX_N:,}); each draws its own level.",
        )
        _range_slider(ui, "prof_lu_range")
        _seed_input(ui, "prof_lu_seed")
        lo, hi = ui["prof_lu_range"]
        return (
            None
            if n is None
            else {"kind": d, "n": n, "lo": lo, "hi": hi, "seed": int(ui["prof_lu_seed"])}
        )
    if d == "two_groups":
        n_tg = _users_input(
            ui,
            "prof_tg_n",
            links.TIER_MAX_USERS,
            "Users n",
            help=f"Total users in both groups (tiers: n can be huge, up to "
            f"{links.TIER_MAX_USERS:,}).",
        )
        ui["prof_tg_frac"] = st.slider(
            "Share of users in group 1",
            min_value=0.0,
            max_value=1.0,
            step=0.01,
            **_kw("prof_tg_frac"),
            format="%.2f",
            help=pc.PROFILE_HELP["share_of_users_in_group_1"],
        )
        e1, e2 = ui["prof_tg_eps1"], ui["prof_tg_eps2"]
        ui["prof_tg_eps1"] = st.select_slider(
            "Group 1 eps (log scale)",
            options=_options(e1),
            **_kw("prof_tg_eps1"),
            format_func=_fmt_level,
            help=LEVEL_HELP,
        )
        ui["prof_tg_eps2"] = st.select_slider(
            "Group 2 eps (log scale; far right = public)",
            options=_options(e2, public=True),
            **_kw("prof_tg_eps2"),
            format_func=_fmt_level,
            help=LEVEL_HELP,
        )
        if n_tg is None:
            return None
        spec = {
            "kind": d,
            "n": n_tg,
            "frac": float(ui["prof_tg_frac"]),
            "eps1": ui["prof_tg_eps1"],
            "eps2": ui["prof_tg_eps2"],
        }
        n, f, e1, e2 = spec["n"], spec["frac"], spec["eps1"], spec["eps2"]
        if 0 < f < 1 and e2 >= e1:  # the paper's two-group remark, on the profile built
            st.caption(explain.two_group_verdict(n, f, e1, e2).text)
        return spec
    n_mx = _users_input(
        ui,
        "prof_mx_n",
        links.GEN_MAX_N,
        "Users n",
        help=f"How many users (1 to {links.GEN_MAX_N:,}).",
    )
    _range_slider(ui, "prof_mx_range")
    ui["prof_mx_public"] = st.slider(
        "Share of public users (eps = ∞)",
        min_value=0.0,
        max_value=1.0,
        step=0.01,
        **_kw("prof_mx_public"),
        format="%.2f",
        help=pc.PROFILE_HELP["share_of_public_users_eps"],
    )
    _seed_input(ui, "prof_mx_seed")
    lo, hi = ui["prof_mx_range"]
    if n_mx is None:
        return None
    return {
        "kind": d,
        "n": n_mx,
        "lo": lo,
        "hi": hi,
        "public": float(ui["prof_mx_public"]),
        "seed": int(ui["prof_mx_seed"]),
    }


def _tiers_controls(ui: dict) -> dict | None:
    st.caption(
        "One row per tier. **eps**: a number like 0.5, or `public` for ∞; smaller eps = "
        "more privacy; 0 = the data is not used. Add or delete rows at the table's edge."
    )
    ui["prof_tiers_units"] = st.radio(
        "Tier sizes as",
        ["count", "share"],
        key="prof_tiers_units",
        horizontal=True,
        format_func={"count": "numbers of users", "share": "shares of n (%)"}.get,
        on_change=_on_units,
    )
    units = ui["prof_tiers_units"]
    if units == "share":
        ui["prof_tiers_total"] = st.number_input(
            "Total users n",
            min_value=1,
            max_value=links.TIER_MAX_USERS,
            step=1000,
            **_kw("prof_tiers_total"),
            help=pc.PROFILE_HELP["total_users_n"],
        )
    t = st.session_state[TIERS]
    key = f"prof_tiers_editor_{t['gen']}"
    if key not in st.session_state:  # first show, or back from another page: latest rows
        t["base"] = [dict(r) for r in t["rows"]]
    base = pd.DataFrame(t["base"], columns=["name", "eps", "count", "share"])
    base = base.astype({"name": "object", "eps": "object", "count": "float64", "share": "float64"})
    edited = st.data_editor(
        base,
        key=key,
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        column_order=["name", "eps", "count" if units == "count" else "share"],
        column_config={
            # defaults: a new row starts as a usable tier, not as empty "None" cells
            "name": st.column_config.TextColumn(
                "Tier", help="A name (optional).", max_chars=40, default="New tier"
            ),
            "eps": st.column_config.TextColumn(
                "eps",
                help="Privacy level: a number like 0.5 or `public` (∞). " + LEVEL_HELP,
                required=True,
                max_chars=30,
                default="1",
            ),
            "count": st.column_config.NumberColumn(
                "Users",
                help=pc.PROFILE_HELP["users"],
                min_value=0,
                max_value=links.TIER_MAX_USERS,
                step=1,
                format="%d",
                default=100,
            ),
            "share": st.column_config.NumberColumn(
                "Share (%)",
                help=pc.PROFILE_HELP["share"],
                min_value=0.0,
                max_value=100.0,
                format="%.4g",
                default=10.0,
            ),
        },
    )
    t["rows"] = edited.to_dict("records")
    _tier_log_slider(t)
    try:
        return links.tiers_spec_from_rows(t["rows"], units, int(ui["prof_tiers_total"]))
    except (ProfileError, ValueError) as e:
        st.error(f"{plain(e)}. The profile was not changed.", icon=":material/block:")
        return None


def _on_tier_slider(i: int, key: str) -> None:
    """Write a tier's level chosen on the log slider into the table (and redraw the table)."""
    t = st.session_state[TIERS]
    rows = [dict(r) for r in t["rows"]]
    if i < len(rows):
        rows[i]["eps"] = _fmt_level(st.session_state[key])
        _rebase_tiers(rows)


def _tier_log_slider(t: dict) -> None:
    """A log-scale slider (far right = public) for one tier's eps, next to the table."""
    rows = t["rows"]
    if not rows:
        return
    labels = pc.tier_pick_labels(rows)
    c1, c2 = st.columns([2, 3], vertical_alignment="bottom")
    i = c1.selectbox(
        "Tier to slide",
        range(len(rows)),
        format_func=labels.__getitem__,
        key="prof_tier_pick",
        help=pc.PROFILE_HELP["prof_tier_pick"],
    )
    i = min(int(i or 0), len(rows) - 1)
    cur = pc.level_or_one(rows[i].get("eps"))
    key = f"prof_tier_eps_{t['gen']}_{i}"
    c2.select_slider(
        "Its eps on a log scale (far right = public)",
        options=_options(cur, public=True),
        value=cur,
        key=key,
        format_func=_fmt_level,
        on_change=_on_tier_slider,
        args=(i, key),
        help=LEVEL_HELP,
    )


def _upload_controls() -> None:
    up = st.session_state[UPLOAD]
    st.caption(
        f"A CSV file with a column **eps** (or epsilon): one row per user, or one row per "
        f"tier with a **count** column; optional **value** (each user's data) and **name** "
        f"columns. `inf` or `public` means public data; 0 means the data is not used. "
        f"Up to {MAX_UPLOAD_BYTES // 2**20} MB."
    )
    f = st.file_uploader(  # (the limit is in the label: a larger file is refused by the
        # browser with only a red mark whose message shows on hover)
        f"CSV file (at most {MAX_UPLOAD_BYTES // 2**20} MB)",
        type=["csv", "tsv", "txt", "text/csv"],
        key="prof_upload",
        max_upload_size=MAX_UPLOAD_BYTES // 2**20,
        help=pc.PROFILE_HELP["prof_upload"],
    )
    c1, c2 = st.columns(2)
    c1.download_button(
        "Example: per user",
        example_csv("values"),
        file_name="example_users.csv",
        mime="text/csv",
        key="prof_example_values",
        on_click="ignore",
        width="stretch",
    )
    c2.download_button(
        "Example: tiers",
        example_csv("tiers"),
        file_name="example_tiers.csv",
        mime="text/csv",
        key="prof_example_tiers",
        on_click="ignore",
        width="stretch",
    )
    if f is not None and f.file_id != up["file_id"]:
        up.update(file_id=f.file_id, name=f.name, error=None)
        try:
            with st.spinner(f"Reading {plain(f.name)}…"):
                prof = profile_from_csv(f.getvalue())
        except (ProfileError, ValueError) as e:
            up["error"] = str(e)
        else:
            spec: dict | None
            try:
                spec = links.spec_from_profile(prof)
                links.encode(spec)
            except hdp.LinkError as e:
                spec = {"kind": "upload", "name": f.name, "reason": str(e)}
            label = pc.upload_label(f.name, prof.n)
            up.update(profile=prof, spec=spec, label=label, good_name=f.name)
            set_profile(prof, spec, label)
            st.session_state[SEEN] = profile_version()
    if f is not None and up["error"]:
        st.error(
            f"Could not use **{plain(up['name'])}**: {plain(up['error'])}. The previous "
            "profile is kept.",
            icon=":material/block:",
        )
    elif f is not None:
        st.success(f"Using **{plain(up['name'])}**.", icon=":material/check_circle:")
    elif up.get("profile") is not None and up["profile"].key == get_profile().key:
        st.success(
            f"Using **{plain(up['good_name'])}** (uploaded earlier).",
            icon=":material/check_circle:",
        )
    else:
        spec = get_spec()
        kind = spec.get("kind") if isinstance(spec, dict) else None
        if kind not in pc.SPEC_KINDS:
            st.info(f"Current profile: {plain(st.session_state.get('profile_label', ''))}")


# the page ----------------------------------------------------------------------------------
ui = _init_page_state()
st.title("Privacy profile")
st.markdown(
    "Who asks for how much privacy? Each user picks a level **eps**: smaller eps = more "
    "privacy, **∞ = public** data, **0** = the data is not used. Shape the profile on the "
    "left; every page of the app uses it."
)

left, right = st.columns([5, 7], gap="large")
with left:
    ui["prof_mode"] = st.radio(
        "Build the profile from",
        MODES,
        key="prof_mode",
        horizontal=True,
        on_change=_on_mode,
        help=pc.PROFILE_HELP["prof_mode"],
    )
    mode = ui["prof_mode"]
    if mode == "Preset":
        _apply(_preset_controls(ui))
    elif mode == "Generator":
        spec = _generator_controls(ui)
        if spec is not None:
            _apply(spec)
    elif mode == "Tiers":
        spec = _tiers_controls(ui)
        if spec is not None:
            _apply(spec)
    else:
        _upload_controls()

prof = get_profile()
sol = cached_adpm(prof)
tau = sol.saturation_level

with right:
    row = metric_row()
    for m in pc.summary_metrics(prof, sol, compact_count):
        row.metric(m.label, m.value, help=m.help, width="content")
    st.plotly_chart(
        _figure(prof, tau, sol.n_saturated), key="prof_chart", config={"displaylogo": False}
    )
    st.caption(explain.saturation_caption(prof))
    if prof.is_tiered and st.button(
        "Open these tiers in the Tier designer",
        key="prof_to_designer",
        help=pc.PROFILE_HELP["prof_to_designer"],
    ):
        st.session_state["td_from_profile"] = True
        st.switch_page(app_page("pages/tier_designer.py"))
    if prof.n_excluded:
        st.caption(f"{prof.n_excluded:,} users chose 0: their data is not used.")

st.subheader("Share and export")
s1, s2 = st.columns([3, 2], vertical_alignment="top")  # the CSV button whole at 1024 px
with s1:
    try:
        qs = urlencode(link_params(), doseq=True)
    except hdp.NotShareable as e:
        st.info(pc.not_shareable_text(e), icon=":material/attach_file:")
    else:
        base_url = st.context.url or ""
        # In a popover: its content is drawn only when opened, so the first load does not
        # fetch the code viewer (1.6 MB of the client's JavaScript and a font).
        with st.popover("Link to this profile", icon=":material/link:"):
            st.code(f"{base_url}?{qs}", language=None, wrap_lines=True)
        st.caption("The link (also in the address bar) reopens this exact profile.")
with s2:
    st.download_button(
        "⬇️ Download profile (CSV)",
        data=prof.to_csv,
        file_name="privacy_profile.csv",
        mime="text/csv",
        key="prof_download",
        on_click="ignore",
        width="stretch",
        help=pc.PROFILE_HELP["prof_download"],
    )
    st.caption(
        f"{count_noun(prof.n, 'user')}, {'tiers' if prof.is_tiered else 'one row per user'}."
    )
