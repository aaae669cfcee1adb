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
hdp_app.views.release, the session side from hdp_app.release_state.
"""

from __future__ import annotations

import streamlit as st

from hdp_app import segments_section
from hdp_app.common import (
    MENU_LINK_KEY,
    SIDEBAR_NOTE,
    TD_MENU,
    guarded,
    metric_row,
    run_through_app,
)
from hdp_app.release_state import (
    K_EPS,
    K_GO,
    K_HI,
    K_ID,
    K_LO,
    K_NAME,
    K_SD,
    K_SPEND,
    K_TARGET,
    K_UNIT,
    K_UPLOAD,
    K_USE_MENU,
    K_USE_SD,
    K_VALUE,
    LAST,
    TABLE,
    checked_levels,
    init_state,
    keep_within,
    levels_identity,
    load_upload,
    prefill_from_menu,
    server_ledger,
    signed_in_user,
)
from hdp_app.views import codegen, links
from hdp_app.views import ledger_texts as LT
from hdp_app.views import people as P
from hdp_app.views import release as V
from hdp_app.views.explain import TARGET_QUESTION
from hdp_app.views.formatting import plain, utc_timestamp
from hdp_core.errors import BudgetExceeded, HdpError, LedgerError, ReleaseError
from hdp_core.menu import Menu
from hdp_core.profile import MAX_UPLOAD_BYTES
from hdp_release import release_mean
from hdp_release.ledger.store import dataset_identities, name_identity
from hdp_release.preview import preview_tiers
from hdp_release.result import Release

run_through_app()  # first: a deep link on a fresh server must go through app.py


class _Stop(Exception):
    """A step of the page cannot go on (its message is already shown)."""


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
        help="A cell holding a tier's name (case and spaces ignored) takes that tier's "
        "level; numbers are read as levels. The menu's range, unit and declared spread fill "
        "the settings below (you can still change them).",
    )
    st.caption(V.menu_caption(menu, where))
    if not use:
        return None
    prefill_from_menu(menu)
    return menu


# ----------------------------------------------------------------------------- the table
def _upload_section(menu: Menu | None) -> None:
    up = st.file_uploader(
        f"Your table (CSV, one row per user, at most {MAX_UPLOAD_BYTES // 2**20} MB)",
        type=["csv"],
        key=K_UPLOAD,
        max_upload_size=MAX_UPLOAD_BYTES // 2**20,
        help="Needs a column of values (e.g. a salary) and a column with the privacy level "
        "each user asked for (0 = do not use my data, 'inf' or 'public' = no privacy), or the "
        "name of their tier on your menu. The file is sent to this app's server and kept only "
        "in your session's memory until you leave: it is never shown, written to disk or put "
        "in a link.",
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
        help="The numbers whose mean you want to release.",
    )
    eps = c2.selectbox(
        "Privacy-level column (eps or tier)",
        cols,
        index=eps_i,
        key=K_EPS,
        placeholder="Choose the column of privacy levels",
        help="Each user's privacy level (smaller = more privacy), or their tier's name when "
        "the menu is used.",
    )
    if value is None or eps is None:
        st.info("Choose the value column and the privacy-level column.")
        raise _Stop
    if value == eps:
        st.error(
            "The value column and the privacy-level column are the same column: choose the "
            "column that holds each user's privacy level (or tier)."
        )
        raise _Stop
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
        raise _Stop
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
        help=(
            "The public range must be fixed in advance from what you know about the data (not read "
            "off this table). Values outside it are clamped to it (by design)."
        ),
    )
    hi = c2.number_input(
        "Highest possible value",
        min_value=-V.RANGE_MAX,
        max_value=V.RANGE_MAX,
        value=None,
        step=1.0,
        key=K_HI,
        placeholder="e.g. 500",
        help="Together with the lowest value this sets the privacy noise: a wider range, "
        "more noise.",
    )
    unit = c3.text_input(
        "Unit (for display)",
        key=K_UNIT,
        max_chars=20,
        help="E.g. EUR, ms, kg. Only used to label numbers.",
    )
    if lo is None or hi is None:
        st.info(
            "Set the lowest and highest possible values first: the public range of the "
            "data, from what you know about it (not read off the table)."
        )
        raise _Stop
    problem = V.range_problem(lo, hi)
    if problem:
        st.error(problem)
        raise _Stop
    note = V.menu_range_note(lo, hi, menu)
    if note:
        st.caption(note)
    sd = None
    if st.toggle(
        "I know the data's standard deviation (a public assumption)",
        key=K_USE_SD,
        help="Tunes ADPM to a declared spread. It must come from outside the data "
        "(never estimated from this table); off = the worst case.",
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
            help="At most half the range: data inside the range cannot spread more. "
            "Empty = the worst case.",
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
        raise _Stop from None


def _preview(lv, ct, s: dict, menu: Menu | None, spend, answer) -> None:
    st.subheader("Before releasing: what each level gets")
    target = V.preview_target(answer)
    st.caption(V.preview_caption(target, spend))
    try:
        pv = preview_tiers(lv, ct, s["lo"], s["hi"], s["data_sd"], target=target, spend=spend)
    except HdpError as e:
        st.error(f"Check the settings: {plain(e)}. Nothing can be released yet.")
        raise _Stop from None
    note = V.off_menu_note(lv, ct, menu)
    if note:
        st.warning(note)
    shown = V.preview_table(pv, menu)
    if shown.caption:
        st.caption(shown.caption)
    st.dataframe(shown.frame, hide_index=True, key="rel_preview_table")
    label, help_text = V.level_metric(target)
    c1, c2 = st.columns(2)
    c1.metric(label, shown.tau, help=help_text)
    c2.metric(
        "Privacy noise scale",
        V.in_units(pv.noise_scale, s["unit"]),
        help="Scale of the Laplace noise added to the weighted mean.",
    )
    if pv.outputs_midrange:
        st.warning(
            "With these levels the noise would swamp the answer: the release will be "
            "the middle of the range, which uses no data."
        )


# ----------------------------------------------------------------------------- budget
def _budget_section(digest: str, df, s: dict, menu: Menu | None) -> tuple:
    """The dataset's name, its history and remaining budget in the server's ledger; returns
    (ledger, name or None, remaining, scope). Nothing shown depends on a value (issue 32):
    the budget is the name's and the levels' (hdp_release.ledger.store), the history the
    name's. A ledger that cannot be used stops the page."""
    st.subheader("Privacy budget")
    name = st.text_input(
        "Dataset name (optional)",
        key=K_NAME,
        max_chars=200,
        placeholder="e.g. Sales 2026",
        help=V.NAME_HELP,
    ).strip()
    try:
        led = server_ledger()
        scope = LT.name_scope(led.secret_key(), signed_in_user())
        lid = levels_identity(digest, df, s["eps"], menu, led)
        remaining = led.remaining(dataset_identities(lid, name or None, scope))
        history: list = []
        count = 0
        if name:
            history, count, _ = led.overview(name_identity(name, scope), limit=LT.HISTORY_ROWS)
    except LedgerError as e:
        st.error(V.ledger_problem(e))
        raise _Stop from None
    st.metric(
        "Budget remaining",
        V.percent(remaining),
        help="What remains of every user's privacy level on this dataset, over all "
        "releases from this server (its privacy ledger). " + LT.LEVELS_NOTICE,
    )
    st.caption(V.budget_caption(remaining, count, bool(name)))
    st.caption(LT.names_notice(scope is not None))
    if history:
        st.dataframe(V.history_frame(history), hide_index=True, key="rel_history_table")
    return led, name or None, remaining, scope


def _spend_control():
    lo, hi = V.SPEND_STEPS
    p = st.slider(
        "Spend: % of each user's level this release uses",
        min_value=lo,
        max_value=hi,
        value=hi,
        step=1,
        format="%d%%",
        key=K_SPEND,
        help=V.SPEND_HELP,
    )
    return V.spend_of_percent(p)


# ----------------------------------------------------------------------------- which mean
def _target_section(lv, ct, s: dict, spend) -> str | None:
    """Both answers' 95% error at this spend, side by side, then the question (no answer
    preselected). Returns the answer, or None."""
    st.subheader("Which mean?")
    try:
        errors = V.spend_errors(lv, ct, s["lo"], s["hi"], s["data_sd"], spend)
    except (HdpError, ValueError) as e:
        st.error(f"Check the settings: {plain(e)}. Nothing can be released yet.")
        raise _Stop from None
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
        help="Answer 'No' only if you are sure a person's privacy choice is unrelated to "
        "their value; otherwise the table's own mean is the honest answer.",
    )


# ----------------------------------------------------------------------------- release
def _release_section(
    df, s: dict, digest: str, name: str, menu: Menu | None, budget: tuple, spend, answer
) -> None:
    led, dataset, remaining, scope = budget
    st.subheader("Release")
    blocker = V.release_blocker(answer, P.budget_for(s["id"], remaining), spend)
    if blocker is not None:
        (st.error if blocker.kind == "error" else st.info)(blocker.text)
    if st.button(
        "Release the private mean", key=K_GO, type="primary", disabled=blocker is not None
    ):
        try:
            rel = release_mean(
                df,
                value=s["value"],
                eps=s["eps"],
                lo=s["lo"],
                hi=s["hi"],
                data_sd=s["data_sd"],
                tiers=menu,
                target=V.chosen_target(answer),
                ledger=led,
                spend=spend,
                dataset=dataset,
                id=s["id"],
                dataset_scope=scope,
            )
        except BudgetExceeded as e:
            st.error(P.budget_refusal(e))
            return
        except LedgerError as e:
            st.error(V.ledger_problem(e))
            return
        except HdpError as e:
            st.error(f"Nothing was released: {plain(e)}.")
            return
        st.session_state[LAST] = {
            "rel": rel,
            "menu": menu,
            "settings": dict(s),
            "table": digest,
            "file": name,
            "time": utc_timestamp(),  # ISO 8601 UTC: the download's released_at
        }
        st.rerun()  # the budget above shows this release's charge


def _last_section(current: tuple[str, dict] | None) -> None:
    last = st.session_state[LAST]
    if last is None:
        return
    rel: Release = last["rel"]
    s, menu = last["settings"], last["menu"]
    unit = s["unit"]
    st.success(
        "Released. Safe to share: the private mean, its 95% error and the receipt (the "
        "levels and their user counts are treated as public, like your menu)."
    )
    st.caption(V.released_caption(s, last["file"], last["time"]))
    unrecorded = V.not_recorded_warning(rel)
    if unrecorded is not None:
        st.warning(unrecorded, icon=":material/warning:")
    st.markdown(V.released_sentence(rel))
    if V.is_stale(last, current):
        st.warning(
            "The file or the settings above have changed since this release: its numbers "
            "are for the file and settings listed here, the preview above for the new ones.",
            icon=":material/history:",
        )
    c1, c2, c3 = st.columns(3)
    c1.metric("Private mean", V.in_units(rel.estimate, unit))
    c2.metric("95% error: ±", V.in_units(rel.half_width95, unit), help=V.ERROR_HELP)
    c3.metric(
        "Users used",
        f"{rel.n_users:,}",
        help=V.excluded_help(rel),
    )
    for note in rel.notes:
        st.caption(plain(note))
    for line in P.kept_sentences(rel):
        st.markdown(line)
    if rel.people is not None:
        st.dataframe(P.people_table(rel), hide_index=True, key="rel_people_table")
    st.markdown(
        "**Privacy receipt**: for each level, the users, the level they were granted and "
        "their privacy loss in this release (computed by OpenDP before anything was "
        "released; never more than the level asked for at this release's spend). The "
        "privacy ledger adds up the spends of every release of the same data."
    )
    st.dataframe(V.receipt_table(rel, menu), hide_index=True, key="rel_receipt_table")
    _downloads(last)
    with st.expander("Technical details"):
        st.markdown(V.technical_details(rel, unit))


def _downloads(last: dict) -> None:
    rel, s, menu = last["rel"], last["settings"], last["menu"]
    args = (rel, s, last["file"], last["time"], menu)
    row = metric_row()  # wraps at 1024 px instead of cutting the labels
    row.download_button(
        "⬇️ Result and receipt (JSON)",
        V.result_json(*args),
        file_name="private_mean.json",
        mime="application/json",
        key="rel_dl_json",
        on_click="ignore",
    )
    row.download_button(
        "⬇️ Result (CSV)",
        V.result_csv(*args),
        file_name="private_mean.csv",
        mime="text/csv",
        key="rel_dl_csv",
        on_click="ignore",
    )
    row.download_button(
        "⬇️ Receipt (CSV)",
        V.receipt_csv(rel, menu),
        file_name="privacy_receipt.csv",
        mime="text/csv",
        key="rel_dl_receipt",
        on_click="ignore",
    )
    with st.expander("Reproduce in Python"):
        st.code(codegen.release_code(s, last["file"], menu, rel), language="python")


# ----------------------------------------------------------------------------- page
def main() -> None:
    init_state()
    st.session_state[SIDEBAR_NOTE] = (
        "This page releases your uploaded table; the profile below (its tau* and other "
        "numbers) is what the other pages show, not this table's."
    )
    st.title("Release a private mean")
    st.markdown(
        "Go from a tier menu to a real answer: upload your table, check what each privacy "
        "level gets, and release the mean with ADPM's weights and OpenDP's Laplace noise. "
        "Before each release, every user's privacy loss in it is checked against the level "
        "they asked for, and the server's privacy ledger keeps each user's level as their "
        "total budget on the dataset over all releases."
    )
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
            budget = _budget_section(digest, df, s, menu)
            spend = _spend_control()
            answer = _target_section(lv, ct, s, spend)
            _preview(lv, ct, s, menu, spend, answer)
        except _Stop:
            _last_section(current)
            segments_section.last_section()
        else:
            _last_section(current)
            segments_section.last_section()
            by = segments_section.choose_mode(df, s)
            if by is None:
                _release_section(df, s, digest, name, menu, budget, spend, answer)
            else:
                segments_section.release_section(df, s, name, menu, budget, spend, answer, by)
    else:
        _last_section(None)
        segments_section.last_section()


main()
