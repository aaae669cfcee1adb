"""Tier designer: design a menu of privacy tiers and see what each tier really gets.

For product managers: named tiers, shares of users, errors in real units. The page is layout
and widgets only: the menu lives in ``st.session_state["td_menu"]`` (a validated
hdp_core.design.Menu) and its state and callbacks in hdp_app.design_state; every number,
table and sentence comes from hdp_core.design and hdp_app.views.design, every chart from
hdp_app.figures.design (cached in hdp_app.caches.design), every help text from
hdp_app.views.design_controls.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from hdp_app import design_menu, segments_planning
from hdp_app import design_state as S
from hdp_app.caches import design as cache
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
from hdp_app.figures.design import MENU_FIGURE_CONFIG
from hdp_app.figures.style import METHOD_COLORS
from hdp_app.navigation import app_page
from hdp_app.perf import live
from hdp_app.views import design as V
from hdp_app.views import design_controls as T
from hdp_app.views import design_link, explain, links
from hdp_app.views import tuned as tview
from hdp_app.views import whatif as wv
from hdp_app.views.formatting import plain, plain_table, short_eps
from hdp_app.widgets import lazy_expander, number, show_metric
from hdp_core import design as D
from hdp_core import design_io as menu_io
from hdp_core import menu as M
from hdp_core.errors import ProfileError

run_through_app()  # first: a deep link on a fresh server must go through app.py

NOTE = S.NOTE
PAGE_PATH = "tier_designer"
METRIC_LABELS = V.METRIC_LABELS
_BOX = {"success": st.success, "error": st.error, "warning": st.warning, "info": st.info}


def _tier_pick(where: Any, key: str, menu: M.Menu) -> int:
    """A tier of ``menu`` chosen in a kept selectbox (label and help from design_controls)."""
    idx = list(range(menu.k))
    return where.selectbox(
        T.TIER_PICKS[key],
        idx,
        format_func=lambda i: V.tier_label(menu, i),
        **S.tracked(key),
        help=T.HELP[key],
    )


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
    st.markdown(T.INTRO)


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
            help=T.HELP["td_load_profile"],
        )


def menu_section() -> None:
    """1. The menu's controls: tiers, users, data range and spread. An edit of a tier's name,
    eps or share, of the users, range, unit or sd reruns only :func:`outputs`
    (design_state.cb_menu_input); the template, adding or removing a tier and the spread's
    kind rerun the page's fragment (they change the controls too)."""
    ss = st.session_state
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    c1.selectbox(
        "Start from a template",
        list(M.TEMPLATES),
        format_func=M.TEMPLATES.__getitem__,
        key="td_template",
        help=T.HELP["td_template"],
    )
    c2.button(
        "Load template",
        key="td_load_template",
        on_click=S.cb_template,
        help=T.HELP["td_load_template"],
    )

    opts = ss[S.EPS_OPTS]
    for i in range(ss["td_k"]):
        cols = st.columns([2.2, 4, 1.6, 0.7], vertical_alignment="bottom")
        cols[0].text_input(
            T.name_label(i),
            key=f"td_name_{i}",
            max_chars=M.MAX_NAME_CHARS,
            help=T.HELP["td_name"],
            on_change=S.cb_menu_input,
        )
        S.keep_eps_option(i)
        cols[1].select_slider(
            T.eps_label(i),
            options=opts,
            key=f"td_eps_{i}",
            format_func=short_eps,
            help=V.EPS_HELP,
            on_change=S.cb_menu_input,
        )
        number(cols[2], T.share_field(i), on_change=S.cb_menu_input)
        cols[3].button(
            ":material/delete:",
            key=f"td_remove_{i}",
            on_click=S.cb_remove_tier,
            args=(i,),
            disabled=ss["td_k"] <= 1,
            help=T.remove_help(i),
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
    number(c1, T.USERS, on_change=S.cb_menu_input)
    number(c2, T.LO, on_change=S.cb_menu_input)
    number(c3, T.HI, on_change=S.cb_menu_input)
    c4.text_input(
        "Unit",
        key="td_unit",
        max_chars=M.MAX_UNIT_CHARS,
        help=T.HELP["td_unit"],
        on_change=S.cb_menu_input,
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
    number(c2, T.SD, disabled=ss["td_spread"] != "sd", on_change=S.cb_menu_input)


def tiers_section(menu: M.Menu, report: D.MenuReport) -> str:
    """2. What each tier really gets, and the comparison with UNI and PropDPM. Returns the
    error measure chosen for display ('half_width' or 'rmse')."""
    # two rows of two: at 1024 px four in a row cut the numbers ("± 0.49…"); one pair of
    # columns holding two cards each (the same grid, three blocks fewer to send per step)
    cols = st.columns(2)
    for i, m in enumerate(V.headline_metrics(menu, report)):
        show_metric(cols[i % 2], m)

    kind, text = V.saturation_message(menu, report)
    _BOX[kind](text, icon=":material/info:")
    with st.expander("What do 'saturated' and 'worst case' mean?"):
        st.markdown(f"{explain.DESIGNER_SATURATION_TEXT}\n\n{explain.WORST_CASE_DATA_TEXT}")

    # a static table: a few rows, drawn in the same frame as the rest (st.dataframe's grid
    # re-wrote its hidden cells ~200 ms after each slider step)
    st.table(plain_table(V.tier_table(menu, report)), hide_index=True)

    st.subheader("Compared with simpler designs")
    metric_view = st.radio(
        "Show errors as",
        list(METRIC_LABELS),
        format_func=METRIC_LABELS.get,
        key="td_view",
        on_change=S.cb_view,
        horizontal=True,
        help=T.HELP["td_view"],
    )
    row = metric_row()  # wraps at 1024 px instead of cutting the labels
    for m in V.method_metrics(report, metric_view, menu.unit, METHOD_COLORS):
        show_metric(row, m, width="content")
    if metric_view == "half_width":
        st.caption(V.half_width_note(menu, report))
    st.caption(V.all_public_caption(report, metric_view, menu.unit))

    fig = cache.cached_menu_figure(menu, metric_view)
    st.plotly_chart(fig, key="td_fig_menu", width="stretch", config=MENU_FIGURE_CONFIG)

    return metric_view


def target_section(menu: M.Menu, report: D.MenuReport) -> None:
    """3. Accuracy first: the accuracy-first solvers for a target error."""
    S.goal(report)  # seeds the metric and the target as the link and the export see them
    st.markdown(T.TARGET_INTRO)
    c1, c2 = st.columns(2)
    metric = c1.radio(
        "Target measured as",
        list(METRIC_LABELS),
        format_func=METRIC_LABELS.get,
        **S.tracked("td_metric"),
        horizontal=True,
        help=T.HELP["td_metric"],
    )
    target = number(c2, T.target_field(plain(menu.unit)), **S.tracking("td_target"))
    question = st.radio(
        "Question",
        list(V.QUESTION_LABELS),
        format_func=V.QUESTION_LABELS.get,
        **S.tracked("td_question"),
        help=tview.SOLVER_HELP,
    )
    S.seed_solver_tiers(menu)
    a = b = 0
    if question == "level":
        a = _tier_pick(st, "td_solve_tier", menu)
    elif question == "move":
        c1, c2 = st.columns(2)
        a = _tier_pick(c1, "td_move_from", menu)
        b = _tier_pick(c2, "td_move_to", menu)

    answers: dict[str, Any] = {}
    try:  # one answer per target answered (views.design.solver_metrics)
        answers = cache.cached_answers(menu, question, float(target), metric, a, b)
    except (ProfileError, ValueError) as e:
        (st.info(T.ENTER_TARGET) if target <= 0 else st.error(plain(e), icon=":material/block:"))
    for col, key in zip(st.columns(2), wv.TARGET_LABELS):
        box = col.container(border=True)
        box.markdown(f"**{wv.TARGET_LABELS[key]}**")
        if key == "table":
            now = cache.cached_release_errors(menu, 1).table
            show_metric(box, V.table_target_card(now, target, metric, menu.unit), arrow=False)
            if key not in V.solver_metrics(metric):
                box.caption(V.TABLE_RMSE_NOTE)
        if key in answers:
            answer_column(box, key, answers[key], menu)


def answer_column(box: Any, key: str, answer: Any, menu: M.Menu) -> None:
    """One target's answer in its box: message, cards, "Apply" when it can be applied."""
    getattr(box, V.answer_box(answer, menu))(plain(answer.message))
    row = box.container(horizontal=True, wrap=True)
    for m in V.answer_metrics(answer, menu):
        show_metric(row, m, width="content")
    if (applied := answer.apply(menu)) is not None:
        args = (applied, V.applied_note(answer, menu))
        box.button(**T.apply_button(key), on_click=S.cb_apply, args=args)


def whatif_section(menu: M.Menu, report: D.MenuReport, metric_view: str) -> None:
    """4. What if users move between two tiers: a slider over tier A's share."""
    if menu.k < 2:
        st.info(T.ONE_TIER)
        return
    S.seed_whatif_tiers(menu)
    c1, c2 = st.columns(2)
    wa = _tier_pick(c1, "td_wi_a", menu)
    wb = _tier_pick(c2, "td_wi_b", menu)
    if wa == wb:
        st.info(T.SAME_TIERS)
        return
    both = S.seed_whatif_share(menu, wa, wb)
    name_a, name_b = plain(menu.tiers[wa].name), plain(menu.tiers[wb].name)
    chosen = st.slider(
        f"Share of all users in {name_a} (%)",
        min_value=0.0,
        max_value=T.share_slider_max(both),
        step=0.1,
        **S.tracked("td_wi_share"),
        disabled=both <= 0,
        format="%.1f%%",
        help=T.share_slider_help(name_a, name_b),
    )
    moved = cache.cached_report(D.move_share(menu, wa, wb, chosen))
    row = metric_row()
    for m in V.whatif_metrics(menu, report, moved, metric_view, wa, wb, chosen):
        show_metric(row, m, width="content")
    st.plotly_chart(
        cache.cached_whatif_figure(menu, wa, wb, metric_view, float(chosen)),
        key="td_fig_whatif",
        width="stretch",
    )


def save_section(menu: M.Menu, report: D.MenuReport, goal: str) -> None:
    """6. Save, share and use the menu: JSON/CSV downloads, the link, import, use as profile."""
    ss = st.session_state
    token = links.encode_menu_link(menu)
    targets = cache.export_targets(menu, S.releases())
    # a row that wraps: in three columns the labels were cut at 1024 px
    row = st.container(horizontal=True, wrap=True)
    json_text = menu_io.menu_to_json(menu, report, {"targets": targets})
    row.download_button(
        "⬇️ Menu and results (JSON)",
        json_text.encode(),
        "tier_menu.json",
        "application/json",
        key="td_dl_json",
        help=T.HELP["td_dl_json"],
    )
    row.download_button(
        "⬇️ Per-tier results (CSV)",
        menu_io.report_to_csv(report),
        "tier_menu.csv",
        "text/csv",
        key="td_dl_csv",
        help=T.HELP["td_dl_csv"],
    )
    row.button(
        ":material/swap_horiz: Use this menu as the current profile",
        key="td_use",
        on_click=S.cb_use_profile,
        args=(menu,),
        type="primary",
        help=T.HELP["td_use"],
    )
    if ss.pop(S.USED, False):
        st.success(T.USED, icon=":material/check_circle:")

    st.page_link(
        app_page("pages/release.py"),
        label=T.RELEASE_LINK,
        icon=":material/lock_open:",
        query_params={MENU_LINK_KEY: token},
        help=T.HELP["release_link"],
    )
    st.markdown(T.LINK_LABEL)
    link = V.shareable_link(
        st.context.url, PAGE_PATH, [(S.LINK_KEY, token), (design_link.GOAL_KEY, goal)]
    )
    st.code(link, language=None, wrap_lines=True)
    with st.expander("Preview the JSON"):
        st.code(json_text, language="json", wrap_lines=True)

    st.file_uploader(
        T.import_label(menu_io.MAX_MENU_BYTES),
        type=["json", "csv"],
        key="td_upload",
        on_change=S.cb_import,
        max_upload_size=1,
        help=V.import_help(menu_io.MAX_MENU_BYTES),
    )
    msg = ss.get(S.IMPORT_MSG)
    if msg:
        (st.error if msg[0] == "error" else st.success)(msg[1])


@st.fragment(key=S.OUTPUTS)
def outputs() -> tuple[M.Menu, D.MenuReport, str, str]:
    """What the menu's inputs give, as a fragment of its own (design_state.OUTPUTS): the
    inputs' problem or note, whose numbers these are and section 2. Returns the menu, its
    report, the error measure shown and the goal's link token (for sections 3 to 6)."""
    menu = design_menu.menu_checks()
    report = cache.cached_report(menu)
    label, tau = st.session_state.get(PROFILE_LABEL, ""), cached_adpm(get_profile())
    st.caption(design_link.whose_numbers(menu, report.tau_star, label, tau.saturation_level))
    st.header("2. What each tier really gets")
    metric_view = tiers_section(menu, report)
    return menu, report, metric_view, S.sync_goal(report)


FULL_RUN_VERSION = "td_full_run_version"  # the profile version the last full run drew


def main() -> None:
    drop_bad_query_params({T.RELEASES.key: wv.RELEASES})
    intro()
    S.init_sections()
    st.session_state[FULL_RUN_VERSION] = profile_version()
    body()


def lazy_section(name: str) -> Any:
    """Sections 3 to 6, drawn only when open (widgets.lazy_expander)."""
    return lazy_expander(f"**{S.LAZY_TITLES[name]}**", S.OPEN[name])


@st.fragment(key=S.BODY)
def body() -> None:
    """Sections 1 to 6, as a fragment (issue 11): the menu's controls rerun only this part,
    not the page's introduction, the sidebar and the URL sync. "Use this menu as the current
    profile" changes the profile, which the sidebar and the other pages follow: then the whole
    app reruns at once, before anything is drawn. Sections 3 to 6 are drawn only when opened
    (issue 23: a slider step redraws sections 1 and 2); section 4 is a fragment of its own
    inside this one: the what-if controls rerun only that section. Issue 29: an edit of the
    menu's inputs reruns only :func:`outputs` (section 2) while sections 3 to 6 are closed."""
    if st.session_state.get(FULL_RUN_VERSION) != profile_version():
        st.rerun(scope="app")
    S.keep_section_state()
    menu_note()
    st.header("1. Your menu")
    menu_section()
    menu, report, metric_view, goal = outputs()

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
            design_menu.targets_section(menu)
    if (box := lazy_section("save")) is not None:
        with box:
            save_section(menu, report, goal)
    segments_planning.planning_expander(menu)


main()
