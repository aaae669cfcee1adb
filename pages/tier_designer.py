"""Tier designer: design a menu of privacy tiers and see what each tier really gets.

For product managers: named tiers, shares of users, errors in real units. The page is thin:
the menu lives in ``st.session_state["td_menu"]`` (a validated hdp_core.design.Menu); the
widgets are seeded from it, every number comes from hdp_core.design, every chart from
hdp_core.figures.design.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

import hdp_core as hdp
from hdp_app.cache import MENU_HASH
from hdp_app.common import (
    MENU_LINK_KEY,
    PROFILE_LABEL,
    TD_MENU,
    cached_adpm,
    get_profile,
    metric_row,
    profile_version,
    run_through_app,
    set_profile,
)
from hdp_app.navigation import app_page
from hdp_app.perf import live
from hdp_core import design as D
from hdp_core.errors import ProfileError
from hdp_core.figures.design import method_error_figure, tier_privacy_figure, whatif_figure
from hdp_core.figures.style import METHOD_COLORS
from hdp_core.views import design_link, explain, links, menu_io
from hdp_core.views import tuned as tview
from hdp_core.views.formatting import count_noun, plain, short_eps, telling_eps

run_through_app()  # first: a deep link on a fresh server must go through app.py

MENU = TD_MENU  # the current validated Menu (not a widget)
NOTE = "td_note"  # a message about the menu (bad link, import result), shown until replaced
IMPORT_MSG = "td_import_msg"  # (kind, text) from the last import attempt
EPS_OPTS = "td_eps_opts"  # options of the eps sliders (a log grid plus the menu's own levels)
LINK_KEY = MENU_LINK_KEY  # query-string parameter holding the encoded menu
PAGE_PATH = "tier_designer"

_HASH = MENU_HASH
# Levels offered by the eps sliders: about ten per decade from 0.001 to 1000, log spaced.
# (A bare string here would be printed by Streamlit's "magic".)
EPS_GRID = sorted(
    {round(m * 10.0**e, 10) for e in range(-3, 3) for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)}
    | {1000.0}
)
METRIC_LABELS = {"half_width": "95% error half-width", "rmse": "RMSE (root-mean-squared error)"}
SPREAD_LABELS = {
    "worst": "Worst case (as spread out as the range allows)",
    "sd": "I know the data's standard deviation",
}

EPS_HELP = (
    "The privacy level this tier promises. Smaller eps = more privacy (0.1 is strict, "
    "1 is moderate, 5 or more is loose); 'public' = no privacy at all. The scale is "
    "logarithmic: each step multiplies eps by about 1.25."
)
SHARE_HELP = (
    "Percent of your users you expect to pick this tier. The shares should add up "
    "to 100%; if they do not, they are scaled so that they do."
)
SAT_TEXT = (
    "A **saturated** tier is capped: every tier looser than τ* gets τ*, so "
    "offering a looser tier adds no accuracy. ADPM (the paper's optimal estimator) "
    "never gives a user more weight than a τ* user gets. " + explain.SATURATION_WHY
)
WORST_TEXT = (
    "**Worst-case data** means data as spread out as the range allows: half the "
    "users at the bottom of the range and half at the top (standard deviation = half "
    "the range). The RMSE shown is then an upper bound for *any* data in the range. "
    + explain.HALF_WIDTH_TEXT
)


def fmt_err(x: float, unit: str) -> str:
    """An error in real units as markdown (the user's unit shown as plain text)."""
    return f"{x:.3g} {plain(unit)}".strip()


# ------------------------------------------------------------------------------------------
# state: the menu, and the widgets seeded from it
# ------------------------------------------------------------------------------------------
def _eps_options(menu: D.Menu) -> list[float]:
    extra = {float(t.eps) for t in menu.tiers if math.isfinite(t.eps)}
    return [*sorted(set(EPS_GRID) | extra), math.inf]


def _widget_values(menu: D.Menu) -> dict:
    vals = {
        "td_k": menu.k,
        "td_n": int(menu.n_users),
        "td_lo": float(menu.low),
        "td_hi": float(menu.high),
        "td_unit": menu.unit,
        "td_spread": "worst" if menu.data_sd is None else "sd",
        "td_sd": float(menu.data_sd) if menu.data_sd is not None else float(menu.width / 4),
    }
    for i, t in enumerate(menu.tiers):
        vals[f"td_name_{i}"] = t.name
        vals[f"td_eps_{i}"] = float(t.eps)
        vals[f"td_share_{i}"] = min(float(t.share_percent), 100.0)
    return vals


def load_menu(menu: D.Menu, note: str | None = None) -> None:
    """Make ``menu`` current and write it into every widget (call before widgets render)."""
    ss = st.session_state
    old_k = ss.get("td_k", 0)
    ss[MENU] = menu
    ss[EPS_OPTS] = _eps_options(menu)
    for key, v in _widget_values(menu).items():
        ss[key] = v
    for i in range(menu.k, max(old_k, D.MAX_TIERS)):
        for f in ("name", "eps", "share"):
            ss.pop(f"td_{f}_{i}", None)
    ss[NOTE] = note
    ss.pop(IMPORT_MSG, None)


def init_menu() -> None:
    """First visit of the session: the ?menu= link's menu, else the default menu (with a
    note when the link could not be read). Later visits re-seed widgets Streamlit dropped."""
    ss = st.session_state
    if MENU not in ss:
        token = st.query_params.get(LINK_KEY)
        if token:
            try:
                load_menu(links.decode_menu_link(token), "Opened the menu from the link.")
            except (ProfileError, ValueError) as e:
                load_menu(
                    D.default_menu(),
                    f"The link's menu could not be used ({plain(e)}). Showing the default "
                    "menu instead.",
                )
                ss[NOTE + "_kind"] = "warning"
                return
            ss[NOTE + "_kind"] = "info"
        else:
            load_menu(D.default_menu())
        return
    menu = ss[MENU]
    if EPS_OPTS not in ss:
        ss[EPS_OPTS] = _eps_options(menu)
    for key, v in _widget_values(menu).items():
        if key not in ss:
            ss[key] = v


def menu_from_widgets() -> tuple[D.Menu | None, str | None, str | None]:
    """(menu, note, error) built from the widgets; menu is None when the input is invalid."""
    ss = st.session_state
    k = ss["td_k"]
    names = [ss.get(f"td_name_{i}", "") for i in range(k)]
    eps = [ss.get(f"td_eps_{i}", 1.0) for i in range(k)]
    shares = [ss.get(f"td_share_{i}", 0.0) for i in range(k)]
    sd = ss["td_sd"] if ss["td_spread"] == "sd" else None
    note = D.shares_note(shares)
    try:
        menu = D.make_menu(
            names,
            eps,
            shares,
            ss["td_n"],
            ss["td_lo"],
            ss["td_hi"],
            ss["td_unit"] or "",
            sd,
            normalise=True,
        )
    except (ProfileError, ValueError) as e:
        return None, None, str(e)
    return menu, note, None


# callbacks (run before the script, so they may rewrite widget values) ---------------------
def _cb_template() -> None:
    ss = st.session_state
    cur = ss[MENU]
    load_menu(
        D.template_menu(ss["td_template"], cur.n_users, cur.low, cur.high, cur.unit),
        f"Loaded the template: {D.TEMPLATES[ss['td_template']]}.",
    )
    ss[NOTE + "_kind"] = "info"


def _cb_add_tier() -> None:
    ss = st.session_state
    cur = ss[MENU]
    if cur.k >= D.MAX_TIERS:
        return
    names = set(cur.names)
    j = cur.k + 1
    while f"Tier {j}" in names:
        j += 1
    tiers = [(t.name, t.eps, t.share_percent) for t in cur.tiers] + [(f"Tier {j}", 2.0, 0.0)]
    load_menu(
        D.make_menu(
            *zip(*tiers), cur.n_users, cur.low, cur.high, cur.unit, cur.data_sd, normalise=True
        )
    )


def _cb_remove_tier(i: int) -> None:
    ss = st.session_state
    cur = ss[MENU]
    if cur.k <= 1:
        return
    tiers = [(t.name, t.eps, t.share_percent) for j, t in enumerate(cur.tiers) if j != i]
    if sum(s for _, _, s in tiers) <= 0:
        tiers = [(a, b, 100.0 / len(tiers)) for a, b, _ in tiers]
    load_menu(
        D.make_menu(
            *zip(*tiers), cur.n_users, cur.low, cur.high, cur.unit, cur.data_sd, normalise=True
        ),
        f"Removed the tier {plain(cur.tiers[i].name)}; the other shares were scaled to 100%.",
    )
    ss[NOTE + "_kind"] = "info"


def _cb_import() -> None:
    ss = st.session_state
    up = ss.get("td_upload")
    if up is None:
        return
    try:
        if up.size > menu_io.MAX_MENU_BYTES:
            raise hdp.MenuError(
                f"the file is {up.size / 1024:.0f} KB; a menu file is at most "
                f"{menu_io.MAX_MENU_BYTES // 1024} KB"
            )
        menu = menu_io.menu_from_json(up.getvalue())
    except (ProfileError, ValueError) as e:
        ss[IMPORT_MSG] = (
            "error",
            f"Could not import {plain(up.name)}: {plain(e)}. The current menu is unchanged.",
        )
        return
    load_menu(menu, f"Imported the menu from {plain(up.name)}.")
    ss[NOTE + "_kind"] = "info"
    ss[IMPORT_MSG] = ("success", f"Imported {count_noun(menu.k, 'tier')} from {plain(up.name)}.")


def _cb_apply(menu: D.Menu, note: str) -> None:
    load_menu(menu, note)
    st.session_state[NOTE + "_kind"] = "info"


def _cb_use_profile(menu: D.Menu) -> None:
    prof = menu.to_profile()
    spec = {
        "kind": "tiers",
        "levels": [float(x) for x in prof.levels],
        "counts": [int(c) for c in prof.counts],
        "names": list(prof.names),
    }
    set_profile(
        prof,
        spec,
        f"Tier menu: {count_noun(menu.k, 'tier')} "
        f"({', '.join(menu.names)}), {count_noun(menu.n_users, 'user')}",
    )
    st.session_state["td_used"] = True


# cached core calls --------------------------------------------------------------------------
# The report, the sweep and the figures are kept as objects shared by every session (they are
# never modified): st.cache_data pickles its results and unpickles them on every hit, which
# rebuilt and revalidated the three plotly figures on every rerun (issue 11).
@st.cache_resource(hash_funcs=_HASH, max_entries=64, show_spinner=False)
def cached_report(menu: D.Menu) -> D.MenuReport:
    return D.evaluate_menu(menu)


@st.cache_data(hash_funcs=_HASH, max_entries=64, show_spinner=False)
def cached_solve(
    menu: D.Menu, question: str, target: float, metric: str, a: int, b: int
) -> D.DesignAnswer:
    if question == "users":
        return D.min_users(menu, target, metric)
    if question == "level":
        return D.strictest_level(menu, a, target, metric)
    return D.share_to_move(menu, a, b, target, metric)


@st.cache_resource(hash_funcs=_HASH, max_entries=32, show_spinner=False)
def cached_sweep(menu: D.Menu, a: int, b: int) -> D.ShareSweep:
    return D.share_sweep(menu, a, b, points=41)


@st.cache_resource(hash_funcs=_HASH, max_entries=32, show_spinner=False)
def cached_whatif_figure(menu: D.Menu, a: int, b: int, metric: str, chosen: float):
    """The what-if chart for tiers a and b with the slider at ``chosen`` (cached)."""
    cur = menu.tiers[a].share_percent
    e_cur = cached_report(menu).errors["ADPM"].get(metric)
    return whatif_figure(
        cached_sweep(menu, a, b),
        metric,
        (menu.tiers[a].name, menu.tiers[b].name),
        menu.unit,
        cur,
        e_cur,
        chosen,
    )


@st.cache_resource(hash_funcs=_HASH, max_entries=32, show_spinner=False)
def cached_figures(menu: D.Menu, metric: str):
    """The two menu charts (plotly figures are slow to build: cache them per menu)."""
    rep = cached_report(menu)
    return tier_privacy_figure(rep), method_error_figure(rep, metric)


# ------------------------------------------------------------------------------------------
# the page
def _cb_load_profile_tiers() -> None:
    """Load the current (tiered) profile's tiers into the designer (issue 13)."""
    ss = st.session_state
    try:
        menu = design_link.menu_from_profile(get_profile(), ss[MENU])
    except (ProfileError, ValueError) as e:
        ss[NOTE], ss[NOTE + "_kind"] = f"The current profile cannot be loaded here: {e}.", "warning"
        return
    load_menu(menu, "Loaded the current profile's tiers from the Profile page.")
    ss[NOTE + "_kind"] = "info"


def _init_goal() -> None:
    """First visit: the accuracy-first target from the link (?goal=metric~value)."""
    ss = st.session_state
    if "td_target" in ss:
        return
    text = st.query_params.get(design_link.GOAL_KEY)
    if text:
        try:
            ss["td_metric"], ss["td_target"] = design_link.decode_goal(text)
        except ValueError:
            pass  # a bad target falls back to the default; the menu still opens


# ------------------------------------------------------------------------------------------
# the page, section by section
# ------------------------------------------------------------------------------------------
QUESTIONS = {
    "users": "How many users does this menu need?",
    "level": "How strict can one tier be?",
    "move": "How many users must move to a looser tier?",
}


def _labeller(menu: D.Menu):
    """Option labels for choosing a tier of ``menu`` (plain text: selectbox options)."""

    def label(i: int) -> str:
        return f"{menu.tiers[i].name} (eps {short_eps(menu.tiers[i].eps)})"

    return label


def intro() -> None:
    """Menu state (from the link on a first visit), the title and the introduction."""
    ss = st.session_state
    init_menu()
    _init_goal()
    if ss.pop("td_from_profile", False):  # the Profile page's "open in the Tier designer"
        _cb_load_profile_tiers()

    st.title("Tier designer")
    st.markdown(
        "Design the menu of privacy levels your product offers and see what each tier **really** "
        "gets. Each tier promises a privacy level eps: *smaller eps = more privacy*, *public = no "
        "privacy*. The mean of your users' data is then estimated with ADPM, the paper's optimal "
        "method, and the page tells you how accurate it is in your data's own units."
    )


def menu_note() -> None:
    """The note about the menu (bad link, import, applied answer) and loading the current
    profile's tiers (in the fragment: the menu's controls change the note)."""
    ss = st.session_state
    if ss.get(NOTE):
        kind = ss.get(NOTE + "_kind", "info")
        (st.warning if kind == "warning" else st.info)(ss[NOTE], icon="ℹ️")

    _sidebar_prof = get_profile()
    if _sidebar_prof.is_tiered:
        st.button(
            "Load the current profile's tiers",
            key="td_load_profile",
            on_click=_cb_load_profile_tiers,
            help="Replace the menu below by the tiers of the profile built on the Profile "
            "page (names, levels and shares; the data range stays).",
        )


def menu_section() -> D.Menu:
    """1. The menu: tiers, users, data range and spread. Returns the menu the page is about
    (the last valid one when the inputs have a problem) and keeps the link in sync."""
    ss = st.session_state
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    c1.selectbox(
        "Start from a template",
        list(D.TEMPLATES),
        format_func=D.TEMPLATES.__getitem__,
        key="td_template",
        help="Ready-made menus. Loading one replaces the tiers (your number of users and data "
        "range stay).",
    )
    c2.button(
        "Load template",
        key="td_load_template",
        on_click=_cb_template,
        help="Replace the tiers below by the chosen template.",
    )

    opts = ss[EPS_OPTS]
    for i in range(ss["td_k"]):
        cols = st.columns([2.2, 4, 1.6, 0.7], vertical_alignment="bottom")
        cols[0].text_input(
            f"Tier {i + 1} name",
            key=f"td_name_{i}",
            max_chars=D.MAX_NAME_CHARS,
            help="What your users see, e.g. 'Strict' or 'Open'. Each tier needs its own name.",
        )
        if ss.get(f"td_eps_{i}") not in opts:  # a value Streamlit lost: fall back to the menu's
            ss[f"td_eps_{i}"] = float(ss[MENU].tiers[i].eps) if i < ss[MENU].k else 1.0
        cols[1].select_slider(
            f"eps of tier {i + 1}",
            options=opts,
            key=f"td_eps_{i}",
            format_func=short_eps,
            help=EPS_HELP,
        )
        cols[2].number_input(
            f"Share % of tier {i + 1}",
            min_value=0.0,
            max_value=100.0,
            step=1.0,
            format="%.2f",
            key=f"td_share_{i}",
            help=SHARE_HELP,
        )
        cols[3].button(
            ":material/delete:",
            key=f"td_remove_{i}",
            on_click=_cb_remove_tier,
            args=(i,),
            disabled=ss["td_k"] <= 1,
            help=f"Remove tier {i + 1} (the other shares are scaled to 100%).",
        )
    st.button(
        ":material/add: Add a tier",
        key="td_add",
        on_click=_cb_add_tier,
        disabled=ss["td_k"] >= D.MAX_TIERS,
        help=f"Add a tier (at most {D.MAX_TIERS}); it starts with 0% of the users.",
    )

    # the users box gets the most room: at 1024 px a narrow one showed 1,000,000 as "100000"
    c1, c2, c3, c4 = st.columns([1.7, 1, 1, 0.8])
    c1.number_input(
        "Total number of users",
        min_value=1,
        max_value=int(D.MAX_USERS),
        step=1000,
        key="td_n",
        help="How many users will choose among the tiers (up to 10^15). "
        "Tiers are never expanded user by user, so any size is instant.",
    )
    c2.number_input(
        "Data range: lowest value",
        key="td_lo",
        step=1.0,
        format="%g",
        help="Smallest value a user's data can take, in real units (e.g. 0 dollars "
        "of monthly spend). Errors are reported in these units.",
    )
    c3.number_input(
        "Data range: highest value",
        key="td_hi",
        step=1.0,
        format="%g",
        help="Largest value a user's data can take (e.g. 500 dollars). Privacy "
        "noise is proportional to the width of the range.",
    )
    c4.text_input(
        "Unit",
        key="td_unit",
        max_chars=D.MAX_UNIT_CHARS,
        help="Label for the data's unit, e.g. USD, minutes, km.",
    )
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    c1.radio(
        "How spread out is the data?",
        list(SPREAD_LABELS),
        format_func=SPREAD_LABELS.get,
        key="td_spread",
        horizontal=True,
        help=explain.SPREAD_HELP,
    )
    c2.number_input(
        "Data standard deviation",
        min_value=0.0,
        key="td_sd",
        format="%g",
        disabled=ss["td_spread"] != "sd",
        help="Standard deviation of one user's value, in real units; at most half the range.",
    )

    menu, shares_msg, input_error = menu_from_widgets()
    _spread_note = tview.designer_spread_note(menu if not input_error else ss[MENU])
    if _spread_note:
        st.caption(_spread_note)
    if input_error:
        st.error(
            f"Please fix the menu: {plain(input_error)}. The results below are for the "
            "last valid "
            "menu.",
            icon=":material/block:",
        )
        menu = ss[MENU]
    else:
        if shares_msg:
            st.warning(shares_msg, icon=":material/balance:")
        if menu != ss[MENU]:
            ss[MENU] = menu
            ss[NOTE] = None
            ss.pop(IMPORT_MSG, None)
    token = links.encode_menu_link(menu)
    if st.query_params.get(LINK_KEY) != token:
        st.query_params[LINK_KEY] = token
    return menu


def tiers_section(menu: D.Menu, report: D.MenuReport) -> str:
    """2. What each tier really gets, and the comparison with UNI and PropDPM. Returns the
    error measure chosen for display ('half_width' or 'rmse')."""
    unit = menu.unit
    adpm_err = report.errors["ADPM"]
    # two rows of two: at 1024 px four in a row cut the numbers ("± 0.49…")
    (c1, c2), (c3, c4) = st.columns(2), st.columns(2)
    c1.metric(
        "Error of the mean (95%)",
        f"± {fmt_err(adpm_err.half_width, unit)}",
        help="With ADPM, the estimated mean is within this distance of the true mean 95% "
        "of the time, for worst-case data (as spread out as the range allows) unless you "
        "gave a standard deviation.",
    )
    c2.metric(
        "RMSE of the mean",
        fmt_err(adpm_err.rmse, unit),
        help="Root-mean-squared error of ADPM's estimate of the mean, in real units, for "
        "worst-case data (or the standard deviation you gave).",
    )
    tau = report.tau_star
    c3.metric(
        "Loosest tier worth offering (tau*)",
        telling_eps(report.worth_offering, menu.levels),  # 0.10003 is not the tier's 0.1
        help="Any tier looser than this is capped at it: its users get this privacy "
        "instead, and offering it adds no accuracy. "
        + (
            "Some tiers are capped now."
            if math.isfinite(tau)
            else "No tier is capped now: this is where a new looser tier would be capped."
        ),
    )
    c4.metric(
        "Users capped at tau*",
        f"{report.n_saturated:,}",
        help="Users whose tier is looser than tau*: they get tau*, more privacy than "
        "they asked for, at no cost in accuracy.",
    )

    if math.isfinite(tau):
        sat_names = [t.name for t, s in zip(menu.tiers, report.saturated) if s]
        st.info(
            f"**Saturated: {plain(', '.join(sat_names))}.** Every tier looser than tau* = "
            f"{telling_eps(tau, menu.levels)} gets tau*: offering a looser tier adds no "
            f"accuracy. Their users are granted eps = {telling_eps(tau, menu.levels)} "
            "whatever they chose.",
            icon=":material/info:",
        )
    else:
        st.success(
            f"No tier is saturated: every tier gets exactly the privacy it promises. A new "
            f"tier looser than {telling_eps(report.worth_offering, menu.levels)} would be "
            "capped at that level.",
            icon=":material/check_circle:",
        )
    with st.expander("What do 'saturated' and 'worst case' mean?"):
        st.markdown(SAT_TEXT)
        st.markdown(WORST_TEXT)

    rows = report.rows()
    table = pd.DataFrame(
        {
            "tier": [r["tier"] for r in rows],
            "offers eps": [short_eps(r["eps asked"]) for r in rows],
            "users": [f"{r['users']:,}" for r in rows],
            "share %": [round(r["share %"], 4) for r in rows],
            "granted eps": [telling_eps(r["eps granted"], menu.levels) for r in rows],
            "saturated": ["yes, capped at tau*" if r["saturated"] else "no" for r in rows],
            "share of the estimate %": [round(r["share of the estimate %"], 4) for r in rows],
        }
    )
    st.dataframe(table, hide_index=True, width="stretch")

    st.subheader("Compared with simpler designs")
    metric_view = st.radio(
        "Show errors as",
        list(METRIC_LABELS),
        format_func=METRIC_LABELS.get,
        key="td_view",
        horizontal=True,
        help="The 95% half-width is the '±' people quote; the RMSE is the "
        "typical size of the error.",
    )
    c1, c2, c3 = st.columns(3)
    for col, m, label, hint in (
        (c1, "ADPM", "ADPM (this page's numbers)", "The paper's optimal weights."),
        (
            c2,
            "UNI",
            "Everyone at the strictest tier (UNI)",
            "Simplest design: give every user the strictest tier's privacy and take the plain "
            "mean.",
        ),
        (
            c3,
            "PropDPM",
            "Weights proportional to eps (PropDPM)",
            "Weight each user by their eps; a few public users then take almost all the weight.",
        ),
    ):
        v = report.errors[m].get(metric_view)
        ref = adpm_err.get(metric_view)
        delta = None if m == "ADPM" or ref <= 0 else f"{explain.approx_percent(v, ref)} vs ADPM"
        col.metric(
            label,
            fmt_err(v, unit),
            delta=delta,
            delta_color="inverse",
            help=f"{hint} Colour on every chart: {METHOD_COLORS[m]}.",
        )
    if metric_view == "half_width":
        st.caption(explain.half_width_note(adpm_err, unit))
    st.caption(
        f"For reference, if every user were public the {METRIC_LABELS[metric_view]} would "
        f"be {fmt_err(report.all_public.get(metric_view), unit)}: no menu can do better."
    )

    fig_tiers, fig_methods = cached_figures(menu, metric_view)
    c1, c2 = st.columns(2)
    c1.plotly_chart(fig_tiers, key="td_fig_tiers", width="stretch")
    c2.plotly_chart(fig_methods, key="td_fig_methods", width="stretch")

    return metric_view


def target_section(menu: D.Menu, report: D.MenuReport) -> str:
    """3. Accuracy first: the accuracy-first solvers for a target error. Returns the target's
    link value (metric~value) for the shareable link."""
    ss = st.session_state
    unit = menu.unit
    adpm_err = report.errors["ADPM"]
    st.markdown("Set the error you need, in your data's units, and ask what it takes.")
    c1, c2 = st.columns(2)
    metric = c1.radio(
        "Target measured as",
        list(METRIC_LABELS),
        format_func=METRIC_LABELS.get,
        key="td_metric",
        horizontal=True,
        help="95% half-width: the estimate is within ± this 95% of the time. RMSE: "
        "the typical size of the error.",
    )
    if "td_target" not in ss:
        ss["td_target"] = float(f"{adpm_err.half_width / 2:.2g}") or 1.0
    target = c2.number_input(
        f"Target error ({plain(unit) or 'data units'})",
        min_value=0.0,
        key="td_target",
        format="%g",
        help="The largest error of the mean you accept, in real units. It "
        "must be positive and less than half the data range.",
    )
    goal = design_link.encode_goal(metric, target)
    if st.query_params.get(design_link.GOAL_KEY) != goal:
        st.query_params[design_link.GOAL_KEY] = goal
    question = st.radio(
        "Question",
        list(QUESTIONS),
        format_func=QUESTIONS.get,
        key="td_question",
        help=tview.SOLVER_HELP,
    )
    idx = list(range(menu.k))
    _tier_label = _labeller(menu)
    for key, default in (
        ("td_solve_tier", 0),
        ("td_move_from", 0),
        ("td_move_to", int(menu.levels.argmax())),
    ):
        if ss.get(key) not in idx:
            ss[key] = default
    a = b = 0
    if question == "level":
        a = st.selectbox(
            "Tier",
            idx,
            format_func=_tier_label,
            key="td_solve_tier",
            help="The tier whose level you want to make as strict as possible; the "
            "other tiers stay as they are.",
        )
    elif question == "move":
        c1, c2 = st.columns(2)
        a = c1.selectbox(
            "Move users from",
            idx,
            format_func=_tier_label,
            key="td_move_from",
            help="The stricter tier users would leave.",
        )
        b = c2.selectbox(
            "to the looser tier",
            idx,
            format_func=_tier_label,
            key="td_move_to",
            help="The looser tier (larger eps or public) they would join.",
        )

    answer = None
    if target <= 0:
        st.info("Enter a positive target error to get an answer.")
    else:
        try:
            answer = cached_solve(menu, question, float(target), metric, int(a), int(b))
        except (ProfileError, ValueError) as e:
            st.error(plain(e), icon=":material/block:")
    if answer is not None:
        show = {
            "ok": st.success,
            "already": st.success,
            "impossible": st.error,
            "trivial": st.warning,
        }[answer.status]
        show(plain(answer.message))
        c1, c2 = st.columns(2)
        applied = None
        if answer.status in ("ok", "already") and answer.value is not None:
            if question == "users":
                c1.metric(
                    "Minimum number of users",
                    f"{int(answer.value):,}",
                    delta=f"{int(answer.value) - menu.n_users:+,} vs now",
                    delta_color="inverse",
                    help="The fewest users for which this menu "
                    "(same tiers and shares) meets the target.",
                )
                applied = (
                    menu.with_n_users(int(answer.value)),
                    f"Set the number of users to {int(answer.value):,}.",
                )
            elif question == "level":
                c1.metric(
                    f"Strictest eps for {plain(menu.tiers[a].name)}",
                    short_eps(answer.value),
                    help="Any smaller eps (more privacy) for this tier misses the target.",
                )
                if math.isinf(answer.value) or answer.value >= D.EPS_MIN:
                    applied = (
                        menu.with_eps(a, float(answer.value)),
                        f"Set {plain(menu.tiers[a].name)} to eps = {short_eps(answer.value)}.",
                    )
            else:
                m_users = int(answer.value)
                c1.metric(
                    "Users who must move",
                    f"{m_users:,}",
                    delta=f"{100 * m_users / menu.n_users:.3g}% of all users",
                    delta_color="off",
                    help="The fewest users moving from the first tier "
                    "to the second that meets the target.",
                )
                ct = menu.counts.copy()
                ct[a] -= m_users
                ct[b] += m_users
                applied = (
                    menu.with_counts(ct),
                    f"Moved {count_noun(m_users, 'user')} from "
                    f"{plain(menu.tiers[a].name)} to {plain(menu.tiers[b].name)}.",
                )
            c2.metric(
                "Error there",
                fmt_err(answer.error, unit),
                help="The error at the answer (it meets the target; one step less does not).",
            )
            if applied is not None and answer.status == "ok":
                st.button(
                    "Apply this to the menu",
                    key="td_apply",
                    on_click=_cb_apply,
                    args=applied,
                    help="Change the menu above to this answer.",
                )

    return goal


def whatif_section(menu: D.Menu, report: D.MenuReport, metric_view: str) -> None:
    """4. What if users move between two tiers: a slider over tier A's share."""
    ss = st.session_state
    unit = menu.unit
    adpm_err = report.errors["ADPM"]
    if menu.k < 2:
        st.info("Add a second tier to explore moving users between tiers.")
        return
    idx = list(range(menu.k))
    _tier_label = _labeller(menu)
    if ss.get("td_wi_a") not in idx:
        ss["td_wi_a"] = int(menu.levels.argmin())
    if ss.get("td_wi_b") not in idx or ss["td_wi_b"] == ss["td_wi_a"]:
        ss["td_wi_b"] = next(j for j in reversed(idx) if j != ss["td_wi_a"])
    c1, c2 = st.columns(2)
    wa = c1.selectbox(
        "Tier A",
        idx,
        format_func=_tier_label,
        key="td_wi_a",
        help="The slider sets this tier's share of all users.",
    )
    wb = c2.selectbox(
        "Tier B (takes the rest)",
        idx,
        format_func=_tier_label,
        key="td_wi_b",
        help="This tier gets what tier A gives up (their total stays the same).",
    )
    if wa == wb:
        st.info("Choose two different tiers.")
    else:
        both = menu.tiers[wa].share_percent + menu.tiers[wb].share_percent
        cur = menu.tiers[wa].share_percent
        pair = (wa, wb, round(both, 9), menu.key)
        v = ss.get("td_wi_share")
        if ss.get("td_wi_pair") != pair or not isinstance(v, float) or not 0 <= v <= both:
            ss["td_wi_share"] = float(round(cur, 1)) if round(cur, 1) <= both else float(cur)
            ss["td_wi_pair"] = pair
        chosen = st.slider(
            f"Share of all users in {plain(menu.tiers[wa].name)} (%)",
            min_value=0.0,
            max_value=float(both) if both > 0 else 1.0,
            step=0.1,
            key="td_wi_share",
            disabled=both <= 0,
            format="%.1f%%",
            help=f"Move users between {plain(menu.tiers[wa].name)} and "
            f"{plain(menu.tiers[wb].name)}; the "
            "chart marks this point (dashed line). The diamond is the menu as it is.",
        )
        moved = cached_report(D.move_share(menu, wa, wb, chosen))
        row = metric_row()
        e_new, e_cur = moved.errors["ADPM"].get(metric_view), adpm_err.get(metric_view)
        row.metric(
            f"{METRIC_LABELS[metric_view].split(' (')[0]} at this point",
            fmt_err(e_new, unit),
            delta=(
                f"{e_new - e_cur:+.3g} {plain(unit)} vs now".replace("  ", " ")
                if f"{e_new:.3g}" != f"{e_cur:.3g}"
                else None
            ),  # not rounding noise
            delta_color="inverse",
            help="ADPM's error of the mean with the shares set by the slider.",
            width="content",
        )
        row.metric(
            "tau* at this point",
            telling_eps(moved.worth_offering, menu.levels),
            help="The loosest level worth offering with these shares.",
            width="content",
        )
        row.metric(
            f"{plain(menu.tiers[wa].name)} / {plain(menu.tiers[wb].name)}",
            f"{chosen:.1f}% / {both - chosen:.1f}%",
            help="Shares of all users in the two tiers at the slider's point.",
            width="content",
        )
        st.plotly_chart(
            cached_whatif_figure(menu, wa, wb, metric_view, float(chosen)),
            key="td_fig_whatif",
            width="stretch",
        )


def save_section(menu: D.Menu, report: D.MenuReport, goal: str) -> None:
    """5. Save, share and use the menu: JSON/CSV downloads, the link, import, use as profile."""
    ss = st.session_state
    token = links.encode_menu_link(menu)
    c1, c2, c3 = st.columns(3)
    json_text = menu_io.menu_to_json(menu, report)
    c1.download_button(
        "⬇️ Menu and results (JSON)",
        json_text.encode(),
        "tier_menu.json",
        "application/json",
        key="td_dl_json",
        help="The menu and every number on this page; import it back below.",
    )
    c2.download_button(
        "⬇️ Per-tier results (CSV)",
        menu_io.report_to_csv(report),
        "tier_menu.csv",
        "text/csv",
        key="td_dl_csv",
        help="One row per tier (name, eps, count, granted eps, ...); the Profile "
        "page can read it as a tiered profile.",
    )
    c3.button(
        ":material/check: Use this menu as the current profile",
        key="td_use",
        on_click=_cb_use_profile,
        args=(menu,),
        type="primary",
        help="Make these tiers (with their numbers of users) the profile every other page shows.",
    )
    if ss.pop("td_used", False):
        st.success(
            "This menu is now the current profile: the other pages show it.",
            icon=":material/check_circle:",
        )

    st.page_link(
        app_page("pages/release.py"),
        label="Release a private mean with this menu on your own table",
        icon=":material/lock_open:",
        query_params={MENU_LINK_KEY: token},
        help="Opens the Release page with this menu: an eps column may then hold your tier "
        "names, and the menu's range, unit and spread fill its settings.",
    )
    base = st.context.url or ""
    base = base.split("?")[0] if base else f"/{PAGE_PATH}"
    st.markdown("**Shareable link** (opens this menu; the address bar already holds it):")
    st.code(f"{base}?{LINK_KEY}={token}&{design_link.GOAL_KEY}={goal}", language=None)
    with st.expander("Preview the JSON"):
        st.code(json_text, language="json")

    st.file_uploader(
        f"Import a menu (JSON, at most {menu_io.MAX_MENU_BYTES // 1024} KB)",
        type=["json"],
        key="td_upload",
        on_change=_cb_import,
        max_upload_size=1,
        help=f"A menu file exported from this page, or written by hand: tiers with name, eps "
        f'(a number or "public") and share_percent adding up to 100, and n_users. At most '
        f"{D.MAX_TIERS} tiers and {menu_io.MAX_MENU_BYTES // 1024} KB. A bad file leaves the "
        "current "
        "menu unchanged.",
    )
    msg = ss.get(IMPORT_MSG)
    if msg:
        (st.error if msg[0] == "error" else st.success)(msg[1])


FULL_RUN_VERSION = "td_full_run_version"  # the profile version the last full run drew


def main() -> None:
    intro()
    st.session_state[FULL_RUN_VERSION] = profile_version()
    body()


@st.fragment
def body() -> None:
    """Sections 1 to 5, as a fragment (issue 11): the menu's controls rerun only this part,
    not the page's introduction, the sidebar and the URL sync. "Use this menu as the current
    profile" changes the profile, which the sidebar and the other pages follow: then the whole
    app reruns at once, before anything is drawn. Section 4 is a fragment of its own inside
    this one: the what-if controls rerun only that section."""
    if st.session_state.get(FULL_RUN_VERSION) != profile_version():
        st.rerun(scope="app")
    menu_note()
    st.header("1. Your menu")
    menu = menu_section()
    report = cached_report(menu)
    st.caption(
        design_link.whose_numbers(
            menu,
            report.tau_star,
            st.session_state.get(PROFILE_LABEL, ""),
            cached_adpm(get_profile()).saturation_level,
        )
    )
    st.header("2. What each tier really gets")
    metric_view = tiers_section(menu, report)
    st.header("3. Accuracy first: what does a target error take?")
    goal = target_section(menu, report)
    st.header("4. What if users move between two tiers?")
    live(whatif_section, menu, report, metric_view)  # its slider reruns only this section
    st.header("5. Save, share and use the menu")
    save_section(menu, report, goal)


main()
