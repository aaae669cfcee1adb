"""Release page: a real private mean of an uploaded table, with its privacy receipt.

Upload a CSV (one row per user: a value and the privacy level eps that user asked for, or
the name of a tier of your Tier designer menu), choose the columns, the public range and the
unit; before releasing the page checks the table and shows what each level gets and the
expected ±95% (hdp_release.release.preview_tiers: the Tier designer's numbers). The server's
privacy ledger (hdp_app.release_state.server_ledger: $HDP_LEDGER) shows the dataset's budget
(its name's and its privacy levels', never depending on a value) and its name's history; a
spend control sets the fraction of every user's level a release uses;
the page asks which mean to release (explain.TARGET_QUESTION, no answer preselected), showing
both answers' 95% error at that spend first. The Release button calls
hdp_release.release.release_mean (DuckDB, OpenDP noise, charged to the ledger first). The raw data
is never displayed, logged or put in the URL; it lives only in this session's state and is
dropped with it. Layout and widgets only: the tables, sentences and choices come from
hdp_app.views.release and hdp_app.views.release_budget, the session side from
hdp_app.release_state; the budget, spend, Release button and last-release sections are
hdp_app.release_sections, the per-segment ones hdp_app.segments_section.
"""

from __future__ import annotations

import streamlit as st

from hdp_app import release_sections as sections
from hdp_app import segments_section
from hdp_app.common import (
    MENU_LINK_KEY,
    SIDEBAR_NOTE,
    TD_MENU,
    guarded,
    run_through_app,
)
from hdp_app.release_sections import Stop
from hdp_app.release_state import (
    K_EPS,
    K_HI,
    K_ID,
    K_LO,
    K_SD,
    K_TARGET,
    K_UNIT,
    K_UPLOAD,
    K_USE_MENU,
    K_USE_SD,
    K_VALUE,
    TABLE,
    checked_levels,
    init_state,
    keep_within,
    load_upload,
    prefill_from_menu,
)
from hdp_app.views import links
from hdp_app.views import people as P
from hdp_app.views import release as V
from hdp_app.views import release_budget as B
from hdp_app.views.explain import TARGET_QUESTION
from hdp_app.views.formatting import plain
from hdp_core.errors import HdpError, ReleaseError
from hdp_core.menu import Menu
from hdp_release.preview import preview_tiers

run_through_app()  # first: a deep link on a fresh server must go through app.py


# ----------------------------------------------------------------------------- the menu
def _menu() -> tuple[Menu | None, str]:
    """The tier menu to read the table with, and where it came from: the link's (?menu=, as
    the Tier designer's "Release ... with this menu" opens this page), else this session's
    Tier designer menu, else none."""
    token = st.query_params.get(MENU_LINK_KEY)
    if token:
        try:
            return links.decode_menu_link(token), "the link"
        except (HdpError, ValueError) as e:
            st.warning(f"The link's tier menu could not be used ({plain(e)}).")
    menu = st.session_state.get(TD_MENU)
    return (menu, "the Tier designer") if isinstance(menu, Menu) else (None, "")


def _menu_section(menu: Menu | None, where: str) -> Menu | None:
    """Your tier menu: read tier names in the eps column with it, and take its range, unit and
    declared spread as the settings (again whenever the menu changes). Returns the menu in
    use, or None."""
    if menu is None:
        return None
    st.subheader("Your tier menu")
    use = st.toggle(
        "Read the eps column with this menu",
        value=True,
        key=K_USE_MENU,
        help=V.MENU_TOGGLE_HELP,
    )
    st.caption(V.menu_caption(menu, where))
    if not use:
        return None
    prefill_from_menu(menu)
    return menu


# ----------------------------------------------------------------------------- the table
def _upload_section(menu: Menu | None) -> None:
    up = st.file_uploader(
        V.UPLOAD_LABEL,
        type=["csv"],
        key=K_UPLOAD,
        max_upload_size=V.UPLOAD_MB,
        help=V.UPLOAD_HELP,
    )
    if up is None:
        st.session_state[TABLE] = None
        st.info(V.upload_hint(menu))
        return
    try:
        with st.spinner("Reading the file…"):
            load_upload(up)
    except ReleaseError as e:
        st.error(f"This file cannot be used: {plain(e)}. Nothing is loaded.")


def _columns(df, menu: Menu | None) -> tuple[str, str]:
    cols = [str(c) for c in df.columns]
    value_i, eps_i = V.guess_columns(df, menu)
    c1, c2 = st.columns(2)
    value = c1.selectbox(
        "Value column",
        cols,
        index=value_i,
        key=K_VALUE,
        placeholder="Choose the column of values",
        help=V.VALUE_COLUMN_HELP,
    )
    eps = c2.selectbox(
        "Privacy-level column (eps or tier)",
        cols,
        index=eps_i,
        key=K_EPS,
        placeholder="Choose the column of privacy levels",
        help=V.EPS_COLUMN_HELP,
    )
    if value is None or eps is None:
        st.info(V.CHOOSE_COLUMNS)
        raise Stop
    if value == eps:
        st.error(V.SAME_COLUMN)
        raise Stop
    return value, eps


def _id_column(df, value: str, eps: str) -> str | None:
    cols = [str(c) for c in df.columns]
    ident = P.id_of(
        st.selectbox(
            P.ID_LABEL, P.id_options(cols), index=P.guess_id(cols), key=K_ID, help=P.ID_HELP
        )
    )
    if ident is None:
        st.caption(P.NO_ID_NOTE)
    elif P.id_problem(ident, value, eps):
        st.error(P.id_problem(ident, value, eps))
        raise Stop
    return ident


def _settings(df, menu: Menu | None) -> dict:
    value, eps = _columns(df, menu)
    ident = _id_column(df, value, eps)
    c1, c2, c3 = st.columns(3)
    lo = c1.number_input(
        "Lowest possible value",
        min_value=-V.RANGE_MAX,
        max_value=V.RANGE_MAX,
        value=None,
        step=1.0,
        key=K_LO,
        placeholder="e.g. 0",
        help=V.LO_HELP,
    )
    hi = c2.number_input(
        "Highest possible value",
        min_value=-V.RANGE_MAX,
        max_value=V.RANGE_MAX,
        value=None,
        step=1.0,
        key=K_HI,
        placeholder="e.g. 500",
        help=V.HI_HELP,
    )
    unit = c3.text_input(
        "Unit (for display)",
        key=K_UNIT,
        max_chars=20,
        help="E.g. EUR, ms, kg. Only used to label numbers.",
    )
    if lo is None or hi is None:
        st.info(V.RANGE_FIRST)
        raise Stop
    problem = V.range_problem(lo, hi)
    if problem:
        st.error(problem)
        raise Stop
    note = V.menu_range_note(lo, hi, menu)
    if note:
        st.caption(note)
    sd = None
    if st.toggle(
        "I know the data's standard deviation (a public assumption)",
        key=K_USE_SD,
        help=V.SD_TOGGLE_HELP,
    ):
        sd_min, sd_max = V.sd_bounds(lo, hi)
        keep_within(K_SD, sd_min, sd_max)
        sd = st.number_input(
            "Declared standard deviation (data units)",
            min_value=sd_min,
            max_value=sd_max,
            value=None,
            key=K_SD,
            placeholder=f"between {V.in_units(sd_min)} and {V.in_units(sd_max)}",
            help=V.SD_HELP,
        )
    return {
        "value": value,
        "eps": eps,
        "id": ident,
        "lo": float(lo),
        "hi": float(hi),
        "unit": unit or "",
        "data_sd": None if sd is None else float(sd),
    }


# ----------------------------------------------------------------------------- preview
def _check_table(digest: str, df, s: dict, menu: Menu | None, menu_off: bool):
    """The table's levels and a check of its values, as the release will read them; a problem
    is shown as what to fix, and stops the page before the Release button."""
    try:
        return checked_levels(digest, df, s["value"], s["eps"], menu)
    except ReleaseError as e:
        hint = V.table_hint(e, s["eps"], menu_off)
        st.error(f"Check the table: {plain(e)}.{hint} Nothing can be released yet.")
        raise Stop from None


def _preview(lv, ct, s: dict, menu: Menu | None, spend, answer) -> None:
    st.subheader("Before releasing: what each level gets")
    target = B.preview_target(answer)
    st.caption(B.preview_caption(target, spend))
    try:
        pv = preview_tiers(lv, ct, s["lo"], s["hi"], s["data_sd"], target=target, spend=spend)
    except HdpError as e:
        st.error(f"Check the settings: {plain(e)}. Nothing can be released yet.")
        raise Stop from None
    note = V.off_menu_note(lv, ct, menu)
    if note:
        st.warning(note)
    shown = V.preview_table(pv, menu)
    if shown.caption:
        st.caption(shown.caption)
    st.dataframe(shown.frame, hide_index=True, key="rel_preview_table")
    label, help_text = B.level_metric(target)
    c1, c2 = st.columns(2)
    c1.metric(label, shown.tau, help=help_text)
    c2.metric(
        "Privacy noise scale",
        V.in_units(pv.noise_scale, s["unit"]),
        help=V.NOISE_HELP,
    )
    if pv.outputs_midrange:
        st.warning(V.MIDRANGE_WARNING)


# ----------------------------------------------------------------------------- which mean
def _target_section(lv, ct, s: dict, spend) -> str | None:
    """Both answers' 95% error at this spend, side by side, then the question (no answer
    preselected). Returns the answer, or None."""
    st.subheader("Which mean?")
    try:
        errors = V.spend_errors(lv, ct, s["lo"], s["hi"], s["data_sd"], spend)
    except (HdpError, ValueError) as e:
        st.error(f"Check the settings: {plain(e)}. Nothing can be released yet.")
        raise Stop from None
    cols = st.columns(2)
    for col, choice in zip(cols, V.target_choices(errors), strict=True):
        with col.container(border=True):
            st.markdown(f"**{choice.answer}**")
            st.metric("95% error: ±", V.in_units(choice.error, s["unit"]), help=V.ERROR_HELP)
            st.caption(choice.text)
    return st.radio(
        TARGET_QUESTION,
        V.TARGET_ANSWERS,
        index=None,
        key=K_TARGET,
        horizontal=True,
        help=V.TARGET_HELP,
    )


# ----------------------------------------------------------------------------- page
def main() -> None:
    init_state()
    st.session_state[SIDEBAR_NOTE] = V.SIDEBAR_TEXT
    st.title("Release a private mean")
    st.markdown(V.PAGE_INTRO)
    guarded(_body)  # an unexpected bad input shows a message, never a traceback


def _body() -> None:
    menu_found, where = _menu()
    menu = _menu_section(menu_found, where)
    _upload_section(menu_found)
    table = st.session_state[TABLE]
    current = None
    if table is not None:
        digest, name, df = table
        st.caption(V.loaded_caption(name, df))
        try:
            s = _settings(df, menu)
            current = (digest, s)
            lv, ct = _check_table(
                digest, df, s, menu, menu_off=menu_found is not None and menu is None
            )
            budget = sections.budget_section(digest, df, s, menu)
            spend = sections.spend_control()
            answer = _target_section(lv, ct, s, spend)
            _preview(lv, ct, s, menu, spend, answer)
        except Stop:
            sections.last_section(current)
            segments_section.last_section()
        else:
            sections.last_section(current)
            segments_section.last_section()
            by = segments_section.choose_mode(df, s)
            if by is None:
                sections.release_section(df, s, digest, name, menu, budget, spend, answer)
            else:
                segments_section.release_section(df, s, name, menu, budget, spend, answer, by)
    else:
        sections.last_section(None)
        segments_section.last_section()


main()
