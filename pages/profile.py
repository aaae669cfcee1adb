"""Profile page: shape who asks for how much privacy, see it at once, share or export it.

Four ways to build the profile (a preset, a generator, a tiers editor, a CSV upload); the
controls always describe the current profile: whatever they say is applied at once, and when
the profile changes elsewhere (a link, another page) the controls are set from it.

State: the values of this page's controls are mirrored in ``st.session_state["prof_ui"]``
(Streamlit drops a widget's value when the user is on another page); the profile itself
lives in hdp_app.common (PROFILE, PROFILE_SPEC). The URL is written by app.py from the spec.
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

import hdp_core as hdp
from hdp_app import profile_state as S
from hdp_app.caches import profile as cache
from hdp_app.common import (
    cached_adpm,
    compact_count,
    get_profile,
    link_params,
    metric_row,
    run_through_app,
)
from hdp_app.navigation import app_page
from hdp_app.views import explain, links
from hdp_app.views import profile_controls as pc
from hdp_app.views.formatting import plain
from hdp_app.widgets import limit_bounds
from hdp_core.errors import ProfileError
from hdp_core.presets import PRESETS
from hdp_core.tables import example_csv

run_through_app()  # first: a deep link on a fresh server must go through app.py

MODES = pc.MODES
DISTS = pc.DISTS
LEVEL_HELP = pc.LEVEL_HELP
BLOCK = ":material/block:"
_fmt_level = pc.fmt_level
_options = pc.level_options
_kw = S.kw


def _apply(spec: dict | None) -> None:
    """Make ``spec``'s profile current (profile_state.apply); a refusal shown here."""
    why = None if spec is None else S.apply(spec)
    if why:
        st.error(why, icon=BLOCK)


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
        on_click=S.new_draw,
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
    v = st.number_input(
        label, min_value=pc.USERS_MIN, step=100.0, format="%.0f", **_kw(key), help=help
    )
    why = pc.users_error(v, max_n)
    if why is not None:
        st.error(f"{why}. {S.NOT_CHANGED}", icon=BLOCK)
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
        on_click=S.new_draw,
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
            **limit_bounds(pc.SHARE),
            step=pc.SHARE_STEP,
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
        note = pc.two_group_note(spec)  # the paper's two-group remark, on the profile built
        if note:
            st.caption(note)
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
        **limit_bounds(pc.SHARE),
        step=pc.SHARE_STEP,
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
    st.caption(pc.TIERS_CAPTION)
    ui["prof_tiers_units"] = st.radio(
        "Tier sizes as",
        ["count", "share"],
        key="prof_tiers_units",
        horizontal=True,
        format_func={"count": "numbers of users", "share": "shares of n (%)"}.get,
        on_change=S.on_units,
    )
    units = ui["prof_tiers_units"]
    if units == "share":
        ui["prof_tiers_total"] = st.number_input(
            "Total users n",
            **limit_bounds(pc.TIER_TOTAL),
            step=1000,
            **_kw("prof_tiers_total"),
            help=pc.PROFILE_HELP["total_users_n"],
        )
    t = st.session_state[S.TIERS]
    key = f"prof_tiers_editor_{t['gen']}"
    if key not in st.session_state:  # first show, or back from another page: latest rows
        t["base"] = [dict(r) for r in t["rows"]]
    import pandas as pd  # here: the first page (a preset) draws no table (issue 29)

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
            c: (st.column_config.TextColumn if kind == "text" else st.column_config.NumberColumn)(
                **settings
            )
            for c, (kind, settings) in pc.TIER_COLUMNS.items()
        },
    )
    t["rows"] = edited.to_dict("records")
    _tier_log_slider(t)
    try:
        return links.tiers_spec_from_rows(t["rows"], units, int(ui["prof_tiers_total"]))
    except (ProfileError, ValueError) as e:
        st.error(f"{plain(e)}. {S.NOT_CHANGED}", icon=BLOCK)
        return None


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
    i = pc.pick_index(i, len(rows))
    cur = pc.level_or_one(rows[i].get("eps"))
    key = f"prof_tier_eps_{t['gen']}_{i}"
    c2.select_slider(
        "Its eps on a log scale (far right = public)",
        options=_options(cur, public=True),
        value=cur,
        key=key,
        format_func=_fmt_level,
        on_change=S.on_tier_slider,
        args=(i, key),
        help=LEVEL_HELP,
    )


def _upload_controls() -> None:
    st.caption(pc.UPLOAD_CAPTION)
    f = st.file_uploader(  # (the limit is in the label: a larger file is refused by the
        # browser with only a red mark whose message shows on hover)
        pc.UPLOAD_LABEL,
        type=["csv", "tsv", "txt", "text/csv"],
        key="prof_upload",
        max_upload_size=pc.UPLOAD_MB,
        help=pc.PROFILE_HELP["prof_upload"],
    )
    row = metric_row()  # wraps at 1024 px instead of cutting "Example: per user"
    row.download_button(
        "Example: per user",
        example_csv("values"),
        file_name="example_users.csv",
        mime="text/csv",
        key="prof_example_values",
        on_click="ignore",
    )
    row.download_button(
        "Example: tiers",
        example_csv("tiers"),
        file_name="example_tiers.csv",
        mime="text/csv",
        key="prof_example_tiers",
        on_click="ignore",
    )
    if f is not None and S.new_upload(f.file_id):
        with st.spinner(f"Reading {plain(f.name)}…"):
            S.read_upload(f.file_id, f.name, f.getvalue())
    status = S.upload_status(f is not None)
    if status is not None:
        kind, text = status
        icon = {"error": ":material/block:", "success": ":material/check_circle:"}.get(kind)
        {"error": st.error, "success": st.success, "info": st.info}[kind](text, icon=icon)


# the page ----------------------------------------------------------------------------------
ui = S.init_page_state()
st.title("Privacy profile")
st.markdown(pc.INTRO)

left, right = st.columns([11, 13], gap="medium")  # at 1024 px: room for the tiers editor
with left:
    ui["prof_mode"] = st.radio(
        "Build the profile from",
        MODES,
        key="prof_mode",
        horizontal=True,
        on_change=S.on_mode,
        help=pc.PROFILE_HELP["prof_mode"],
    )
    mode = ui["prof_mode"]
    if mode == "Preset":
        _apply(_preset_controls(ui))
    elif mode == "Generator":
        _apply(_generator_controls(ui))
    elif mode == "Tiers":
        _apply(_tiers_controls(ui))
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
        cache.figure(prof, tau, sol.n_saturated), key="prof_chart", config={"displaylogo": False}
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
        st.caption(pc.excluded_caption(prof.n_excluded))

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
        st.caption(pc.LINK_CAPTION)
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
    st.caption(pc.download_caption(prof.n, prof.is_tiered))
