"""Tier designer: design a menu of privacy tiers and see what each tier really gets.

For product managers: named tiers, shares of users, errors in real units. The page is layout
and widgets only: the menu lives in ``st.session_state["td_menu"]`` (a validated
hdp_core.design.Menu) and its state and callbacks in hdp_app.design_state; every number,
table and sentence comes from hdp_core.design and hdp_app.views.design, every chart from
hdp_app.figures.design (cached in hdp_app.design_cache).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from hdp_app import design_state as S
from hdp_app import segments_planning
from hdp_app.common import (
    MENU_LINK_KEY,
    PROFILE_LABEL,
    cached_adpm,
    drop_bad_query_params,
    get_profile,
    metric_row,
    profile_version,
    run_through_app,
)
from hdp_app.design_cache import (
    cached_menu_figure,
    cached_release_errors,
    cached_report,
    cached_solve,
    cached_whatif_figure,
)
from hdp_app.figures.style import METHOD_COLORS
from hdp_app.navigation import app_page
from hdp_app.perf import live
from hdp_app.views import design as V
from hdp_app.views import design_link, explain, links
from hdp_app.views import segments as SEG
from hdp_app.views import slack as SL
from hdp_app.views import tuned as tview
from hdp_app.views import whatif as wv
from hdp_app.views.formatting import plain, plain_table, short_eps
from hdp_app.widgets import limit_bounds, show_metric
from hdp_core import design as D
from hdp_core import design_io as menu_io
from hdp_core import menu as M
from hdp_core.errors import ProfileError

run_through_app()  # first: a deep link on a fresh server must go through app.py

MENU = S.MENU
NOTE = S.NOTE
LINK_KEY = S.LINK_KEY
PAGE_PATH = "tier_designer"
METRIC_LABELS = V.METRIC_LABELS
_BOX = {"success": st.success, "error": st.error, "warning": st.warning, "info": st.info}


# ------------------------------------------------------------------------------------------
# the page, section by section
# ------------------------------------------------------------------------------------------
def intro() -> None:
    """Menu state (from the link on a first visit), the title and the introduction."""
    S.init_menu()
    S.init_goal()
    if st.session_state.pop(S.FROM_PROFILE, False):  # the Profile page's "open in ..."
        S.cb_load_profile_tiers()

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
        kind = ss.get(S.NOTE_KIND, "info")
        (st.warning if kind == "warning" else st.info)(ss[NOTE], icon="ℹ️")

    if get_profile().is_tiered:
        st.button(
            "Load the current profile's tiers",
            key="td_load_profile",
            on_click=S.cb_load_profile_tiers,
            help="Replace the menu below by the tiers of the profile built on the Profile "
            "page (names, levels and shares; the data range stays).",
        )


def menu_section() -> M.Menu:
    """1. The menu: tiers, users, data range and spread. Returns the menu the page is about
    (the last valid one when the inputs have a problem) and keeps the link in sync."""
    ss = st.session_state
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    c1.selectbox(
        "Start from a template",
        list(M.TEMPLATES),
        format_func=M.TEMPLATES.__getitem__,
        key="td_template",
        help="Ready-made menus. Loading one replaces the tiers (your number of users and data "
        "range stay).",
    )
    c2.button(
        "Load template",
        key="td_load_template",
        on_click=S.cb_template,
        help="Replace the tiers below by the chosen template.",
    )

    opts = ss[S.EPS_OPTS]
    for i in range(ss["td_k"]):
        cols = st.columns([2.2, 4, 1.6, 0.7], vertical_alignment="bottom")
        cols[0].text_input(
            f"Tier {i + 1} name",
            key=f"td_name_{i}",
            max_chars=M.MAX_NAME_CHARS,
            help="What your users see, e.g. 'Strict' or 'Open'. Each tier needs its own name.",
        )
        if ss.get(f"td_eps_{i}") not in opts:  # a value Streamlit lost: fall back to the menu's
            ss[f"td_eps_{i}"] = float(ss[MENU].tiers[i].eps) if i < ss[MENU].k else 1.0
        cols[1].select_slider(
            f"eps of tier {i + 1}",
            options=opts,
            key=f"td_eps_{i}",
            format_func=short_eps,
            help=V.EPS_HELP,
        )
        cols[2].number_input(
            f"Share % of tier {i + 1}",
            min_value=0.0,
            max_value=100.0,
            step=1.0,
            format="%.2f",
            key=f"td_share_{i}",
            help=V.SHARE_HELP,
        )
        cols[3].button(
            ":material/delete:",
            key=f"td_remove_{i}",
            on_click=S.cb_remove_tier,
            args=(i,),
            disabled=ss["td_k"] <= 1,
            help=f"Remove tier {i + 1} (the other shares are scaled to 100%).",
        )
    st.button(
        ":material/add: Add a tier",
        key="td_add",
        on_click=S.cb_add_tier,
        disabled=ss["td_k"] >= M.MAX_MENU_TIERS,
        help=V.ADD_HELP,
    )

    # the users box gets the most room: at 1024 px a narrow one showed 1,000,000 as "100000"
    c1, c2, c3, c4 = st.columns([1.7, 1, 1, 0.8])
    c1.number_input(
        "Total number of users",
        min_value=1,
        max_value=int(M.MAX_USERS),
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
        max_chars=M.MAX_UNIT_CHARS,
        help="Label for the data's unit, e.g. USD, minutes, km.",
    )
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    c1.radio(
        "How spread out is the data?",
        list(V.SPREAD_LABELS),
        format_func=V.SPREAD_LABELS.get,
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

    menu, shares_msg, input_error = S.menu_from_widgets()
    spread_note = tview.designer_spread_note(menu if menu is not None else ss[MENU])
    if spread_note:
        st.caption(spread_note)
    if menu is None:
        st.error(V.input_error_text(input_error or ""), icon=":material/block:")
        menu = ss[MENU]
    else:
        if shares_msg:
            st.warning(shares_msg, icon=":material/balance:")
        S.keep_menu(menu)
    token = links.encode_menu_link(menu)
    if st.query_params.get(LINK_KEY) != token:
        st.query_params[LINK_KEY] = token
    return menu


def tiers_section(menu: M.Menu, report: D.MenuReport) -> str:
    """2. What each tier really gets, and the comparison with UNI and PropDPM. Returns the
    error measure chosen for display ('half_width' or 'rmse')."""
    # two rows of two: at 1024 px four in a row cut the numbers ("± 0.49…")
    cols = [*st.columns(2), *st.columns(2)]
    for col, m in zip(cols, V.headline_metrics(menu, report)):
        show_metric(col, m)

    kind, text = V.saturation_message(menu, report)
    _BOX[kind](text, icon=":material/info:")
    with st.expander("What do 'saturated' and 'worst case' mean?"):
        st.markdown(explain.DESIGNER_SATURATION_TEXT)
        st.markdown(explain.WORST_CASE_DATA_TEXT)

    # a static table: a few rows, drawn in the same frame as the rest (st.dataframe's grid
    # re-wrote its hidden cells ~200 ms after each slider step)
    st.table(plain_table(V.tier_table(menu, report)), hide_index=True)

    st.subheader("Compared with simpler designs")
    metric_view = st.radio(
        "Show errors as",
        list(METRIC_LABELS),
        format_func=METRIC_LABELS.get,
        key="td_view",
        on_change=S.changed,
        args=("td_view",),
        horizontal=True,
        help="The 95% half-width is the '±' people quote; the RMSE is the "
        "typical size of the error.",
    )
    row = metric_row()  # wraps at 1024 px instead of cutting the labels
    for m in V.method_metrics(report, metric_view, menu.unit, METHOD_COLORS):
        show_metric(row, m, width="content")
    if metric_view == "half_width":
        st.caption(V.half_width_note(menu, report))
    st.caption(V.all_public_caption(report, metric_view, menu.unit))

    # on request (its state is in the link): the table and cards above hold its numbers,
    # and redrawing it took most of a slider step's time in the browser (issue 23)
    if (box := lazy_section("chart")) is not None:
        with box:
            st.plotly_chart(
                cached_menu_figure(menu, metric_view), key="td_fig_menu", width="stretch"
            )

    return metric_view


def target_section(menu: M.Menu, report: D.MenuReport) -> None:
    """3. Accuracy first: the accuracy-first solvers for a target error."""
    ss = st.session_state
    S.goal(report)  # seeds the metric and the target as the link and the export see them
    st.markdown("Set the error you need, in your data's units, and ask what it takes.")
    c1, c2 = st.columns(2)
    metric = c1.radio(
        "Target measured as",
        list(METRIC_LABELS),
        format_func=METRIC_LABELS.get,
        key="td_metric",
        on_change=S.changed,
        args=("td_metric",),
        horizontal=True,
        help="95% half-width: the estimate is within ± this 95% of the time. RMSE: "
        "the typical size of the error.",
    )
    target = c2.number_input(
        f"Target error ({plain(menu.unit) or 'data units'})",
        min_value=0.0,
        key="td_target",
        on_change=S.changed,
        args=("td_target",),
        format="%g",
        help="The largest error of the mean you accept, in real units. It "
        "must be positive and less than half the data range.",
    )
    question = st.radio(
        "Question",
        list(V.QUESTION_LABELS),
        format_func=V.QUESTION_LABELS.get,
        key="td_question",
        on_change=S.changed,
        args=("td_question",),
        help=tview.SOLVER_HELP,
    )
    idx = list(range(menu.k))
    for key, default in V.solver_tier_defaults(menu).items():
        if ss.get(key) not in idx:
            S.put(key, default)
    a = b = 0
    if question == "level":
        a = st.selectbox(
            "Tier",
            idx,
            format_func=lambda i: V.tier_label(menu, i),
            key="td_solve_tier",
            on_change=S.changed,
            args=("td_solve_tier",),
            help="The tier whose level you want to make as strict as possible; the "
            "other tiers stay as they are.",
        )
    elif question == "move":
        c1, c2 = st.columns(2)
        a = c1.selectbox(
            "Move users from",
            idx,
            format_func=lambda i: V.tier_label(menu, i),
            key="td_move_from",
            on_change=S.changed,
            args=("td_move_from",),
            help="The stricter tier users would leave.",
        )
        b = c2.selectbox(
            "to the looser tier",
            idx,
            format_func=lambda i: V.tier_label(menu, i),
            key="td_move_to",
            on_change=S.changed,
            args=("td_move_to",),
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
        _BOX[V.answer_box(answer, menu)](plain(answer.message))
        cards = V.answer_metrics(answer, menu)
        if cards:
            for col, m in zip(st.columns(2), cards):
                show_metric(col, m)
            applied = answer.apply(menu)
            if applied is not None:
                st.button(
                    "Apply this to the menu",
                    key="td_apply",
                    on_click=S.cb_apply,
                    args=(applied, V.applied_note(answer, menu)),
                    help="Change the menu above to this answer.",
                )


def whatif_section(menu: M.Menu, report: D.MenuReport, metric_view: str) -> None:
    """4. What if users move between two tiers: a slider over tier A's share."""
    ss = st.session_state
    if menu.k < 2:
        st.info("Add a second tier to explore moving users between tiers.")
        return
    idx = list(range(menu.k))
    seed_a, seed_b = V.whatif_tiers(menu, ss.get("td_wi_a"), ss.get("td_wi_b"))
    S.put("td_wi_a", seed_a)
    S.put("td_wi_b", seed_b)
    c1, c2 = st.columns(2)
    wa = c1.selectbox(
        "Tier A",
        idx,
        format_func=lambda i: V.tier_label(menu, i),
        key="td_wi_a",
        on_change=S.changed,
        args=("td_wi_a",),
        help="The slider sets this tier's share of all users.",
    )
    wb = c2.selectbox(
        "Tier B (takes the rest)",
        idx,
        format_func=lambda i: V.tier_label(menu, i),
        key="td_wi_b",
        on_change=S.changed,
        args=("td_wi_b",),
        help="This tier gets what tier A gives up (their total stays the same).",
    )
    if wa == wb:
        st.info("Choose two different tiers.")
        return
    start, both = V.whatif_share(menu, wa, wb)
    pair = (wa, wb, round(both, 9), menu.key)
    v = ss.get("td_wi_share")
    if ss.get("td_wi_pair") != pair or not isinstance(v, float) or not 0 <= v <= both:
        S.put("td_wi_share", start)
        ss["td_wi_pair"] = pair
    name_a, name_b = plain(menu.tiers[wa].name), plain(menu.tiers[wb].name)
    chosen = st.slider(
        f"Share of all users in {name_a} (%)",
        min_value=0.0,
        max_value=float(both) if both > 0 else 1.0,
        step=0.1,
        key="td_wi_share",
        on_change=S.changed,
        args=("td_wi_share",),
        disabled=both <= 0,
        format="%.1f%%",
        help=f"Move users between {name_a} and {name_b}; the chart marks this point (dashed "
        "line). The diamond is the menu as it is.",
    )
    moved = cached_report(D.move_share(menu, wa, wb, chosen))
    row = metric_row()
    for m in V.whatif_metrics(menu, report, moved, metric_view, wa, wb, chosen):
        show_metric(row, m, width="content")
    st.plotly_chart(
        cached_whatif_figure(menu, wa, wb, metric_view, float(chosen)),
        key="td_fig_whatif",
        width="stretch",
    )


def targets_section(menu: M.Menu) -> None:
    """5. Which mean, and k releases: the 95% error under each target (population: ADPM;
    table: TableMean) of each of k releases at eps / k."""
    k = int(
        st.number_input(
            "Releases (k)",
            **limit_bounds(wv.RELEASES),
            step=1,
            key="td_releases",
            on_change=S.changed,
            args=("td_releases",),
            bind="query-params",
            help=wv.RELEASES_HELP,
        )
    )
    single, each = cached_release_errors(menu, 1), cached_release_errors(menu, k)
    st.markdown(wv.releases_caption(k))
    for col, target, m in zip(
        st.columns(2), wv.TARGET_LABELS, wv.target_metrics(single, each, k, menu.unit)
    ):
        show_metric(col, m)
        col.caption(wv.TARGET_TEXTS[target])
        col.caption(SL.slack_caption(SL.menu_slack(menu, k, target), menu.unit))


def export_targets(menu: M.Menu) -> dict:
    """The JSON export's block of section 5 (its k, kept while the section is closed)."""
    k = S.releases()
    return wv.targets_to_dict(cached_release_errors(menu, 1), cached_release_errors(menu, k), k)


def save_section(menu: M.Menu, report: D.MenuReport, goal: str) -> None:
    """6. Save, share and use the menu: JSON/CSV downloads, the link, import, use as profile."""
    ss = st.session_state
    token = links.encode_menu_link(menu)
    targets = export_targets(menu)
    # a row that wraps: in three columns the labels were cut at 1024 px
    row = st.container(horizontal=True, wrap=True)
    json_text = menu_io.menu_to_json(menu, report, {"targets": targets})
    row.download_button(
        "⬇️ Menu and results (JSON)",
        json_text.encode(),
        "tier_menu.json",
        "application/json",
        key="td_dl_json",
        help="The menu and every number on this page; import it back below.",
    )
    row.download_button(
        "⬇️ Per-tier results (CSV)",
        menu_io.report_to_csv(report),
        "tier_menu.csv",
        "text/csv",
        key="td_dl_csv",
        help="One row per tier (name, eps, count, granted eps, ...); the Profile "
        "page can read it as a tiered profile.",
    )
    row.button(
        ":material/swap_horiz: Use this menu as the current profile",
        key="td_use",
        on_click=S.cb_use_profile,
        args=(menu,),
        type="primary",
        help="Make these tiers (with their numbers of users) the profile every other page shows.",
    )
    if ss.pop(S.USED, False):
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
    st.markdown("**Shareable link** (opens this menu; the address bar already holds it):")
    link = V.shareable_link(
        st.context.url, PAGE_PATH, [(LINK_KEY, token), (design_link.GOAL_KEY, goal)]
    )
    st.code(link, language=None)
    with st.expander("Preview the JSON"):
        st.code(json_text, language="json")

    st.file_uploader(
        f"Import a menu (JSON or CSV, at most {menu_io.MAX_MENU_BYTES // 1024} KB)",
        type=["json", "csv"],
        key="td_upload",
        on_change=S.cb_import,
        max_upload_size=1,
        help=V.import_help(menu_io.MAX_MENU_BYTES),
    )
    msg = ss.get(S.IMPORT_MSG)
    if msg:
        (st.error if msg[0] == "error" else st.success)(msg[1])


FULL_RUN_VERSION = "td_full_run_version"  # the profile version the last full run drew


def main() -> None:
    drop_bad_query_params({"td_releases": wv.RELEASES})
    intro()
    S.init_sections()
    st.session_state[FULL_RUN_VERSION] = profile_version()
    body()


def lazy_section(name: str) -> Any:
    """Section 2's chart and sections 3 to 6: an expander that draws its content only when
    open (its state is in the link). Returns the container to draw into, or None when the
    part is closed."""
    box = st.expander(
        f"**{S.LAZY_TITLES[name]}**", key=S.OPEN[name], on_change="rerun", bind="query-params"
    )
    return box if box.open else None


@st.fragment
def body() -> None:
    """Sections 1 to 6, as a fragment (issue 11): the menu's controls rerun only this part,
    not the page's introduction, the sidebar and the URL sync. "Use this menu as the current
    profile" changes the profile, which the sidebar and the other pages follow: then the whole
    app reruns at once, before anything is drawn. Sections 3 to 6 are drawn only when opened
    (issue 23: a slider step redraws sections 1 and 2); section 4 is a fragment of its own
    inside this one: the what-if controls rerun only that section."""
    if st.session_state.get(FULL_RUN_VERSION) != profile_version():
        st.rerun(scope="app")
    S.keep_section_state()
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
    goal = design_link.encode_goal(*S.goal(report))
    if st.query_params.get(design_link.GOAL_KEY) != goal:
        st.query_params[design_link.GOAL_KEY] = goal

    st.subheader("More about this menu")
    st.caption(V.SECTIONS_INTRO)
    if (box := lazy_section("target")) is not None:
        with box:
            target_section(menu, report)
    if (box := lazy_section("whatif")) is not None:
        with box:
            live(whatif_section, menu, report, metric_view)  # its slider reruns only this
    if (box := lazy_section("releases")) is not None:
        with box:
            targets_section(menu)
    if (box := lazy_section("save")) is not None:
        with box:
            save_section(menu, report, goal)
    seg = st.expander(f"**{SEG.PLANNING_TITLE}**", key="td_open_segments", on_change="rerun")
    if seg.open:  # drawn only when open, as sections 3 to 6
        with seg:
            segments_planning.planning_section(menu)


main()
