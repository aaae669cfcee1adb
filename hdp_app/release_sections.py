"""The Release page's sections for one mean (issue 27, split from pages/release.py): the
privacy budget (the dataset's name, its history and remaining budget in the server's ledger),
the spend control, the Release button and the last release with its receipt, downloads and
technical details. Widgets and layout only: numbers, sentences and decisions come from
hdp_app.views.release and hdp_app.views.release_budget, the session side from
hdp_app.release_state."""

from __future__ import annotations

from fractions import Fraction

import streamlit as st

import hdp_release  # called as hdp_release.release_mean: looked up at each release
from hdp_app import release_state as RS
from hdp_app.release_state import K_GO, K_NAME, K_SPEND, LAST
from hdp_app.views import codegen
from hdp_app.views import ledger_texts as LT
from hdp_app.views import people as P
from hdp_app.views import release as V
from hdp_app.views import release_budget as B
from hdp_app.views.formatting import plain, utc_timestamp
from hdp_app.widgets import metric_row
from hdp_core.errors import HdpError, LedgerError
from hdp_core.menu import Menu
from hdp_release.ledger.store import dataset_identities, name_identity
from hdp_release.result import Release


class Stop(Exception):
    """A step of the page cannot go on (its message is already shown)."""


# ----------------------------------------------------------------------------- budget
def budget_section(digest: str, df, s: dict, menu: Menu | None) -> tuple:
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
        help=B.NAME_HELP,
    ).strip()
    try:
        led = RS.server_ledger()
        scope = LT.name_scope(led.secret_key(), RS.signed_in_user())
        lid = RS.levels_identity(digest, df, s["eps"], menu, led)
        remaining = led.remaining(dataset_identities(lid, name or None, scope))
        history: list = []
        count = 0
        if name:
            history, count, _ = led.overview(name_identity(name, scope), limit=LT.HISTORY_ROWS)
    except LedgerError as e:
        st.error(B.ledger_problem(e))
        raise Stop from None
    if s.get("id"):  # the dataset's remainder does not apply: each person has their own
        st.metric(P.PER_PERSON_LABEL, P.PER_PERSON_VALUE, help=P.PER_PERSON_TEXT)
        st.caption(P.PER_PERSON_TEXT)
    else:
        st.metric(
            "Budget remaining",
            B.percent(remaining),
            help="What remains of every user's privacy level on this dataset, over all "
            "releases from this server (its privacy ledger). " + LT.LEVELS_NOTICE,
        )
        st.caption(B.budget_caption(remaining, count, bool(name)))
    st.caption(LT.names_notice(scope is not None))
    if history:  # a static table: its cells wrap at 1024 px instead of hiding columns
        st.table(B.history_frame(history), hide_index=True)  # app-made text only
    return led, name or None, remaining, scope


def spend_control() -> Fraction:
    """The spend control; returns the exact spend (a fraction of every user's level)."""
    lo, hi = B.SPEND_STEPS
    p = st.slider(
        "Spend: % of each user's level this release uses",
        min_value=lo,
        max_value=hi,
        value=hi,
        step=1,
        format="%d%%",
        key=K_SPEND,
        help=B.SPEND_HELP,
    )
    return B.spend_of_percent(p)


# ----------------------------------------------------------------------------- release
def release_section(
    df, s: dict, digest: str, name: str, menu: Menu | None, budget: tuple, spend, answer
) -> None:
    """The Release button (one mean) and why it is disabled; a release is charged to the
    server's ledger, kept in this session (LAST) and the page reruns."""
    remaining = budget[2]  # (ledger, dataset, remaining, scope)
    st.subheader("Release")
    blocker = B.release_blocker(answer, P.budget_for(s["id"], remaining), spend)
    if blocker is not None:
        (st.error if blocker.kind == "error" else st.info)(blocker.text)
    if st.button(
        "Release the private mean", key=K_GO, type="primary", disabled=blocker is not None
    ):
        try:
            rel = hdp_release.release_mean(
                df, **B.release_arguments(s, menu, answer, budget, spend)
            )
        except HdpError as e:
            st.error(P.refusal_text(e))
            return
        st.session_state[LAST] = {
            "rel": rel,
            "menu": menu,
            "settings": dict(s),
            "table": digest,
            "file": name,
            "time": utc_timestamp(),  # ISO 8601 UTC: the download's released_at
            "scope": budget[3],  # the snippet passes it as the page did
        }
        st.rerun()  # the budget above shows this release's charge


def last_section(current: tuple[str, dict] | None) -> None:
    """The last release of one mean in this session: its numbers, receipt, downloads and
    technical details (a warning when the file or settings changed since)."""
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
    unrecorded = B.not_recorded_warning(rel)
    if unrecorded is not None:
        st.warning(unrecorded, icon=":material/warning:")
    st.markdown(B.released_sentence(rel))
    if V.is_stale(last, current):
        st.warning(
            "The file or the settings above have changed since this release: its numbers "
            "are for the file and settings listed here, the preview above for the new ones.",
            icon=":material/history:",
        )
    row = metric_row()  # wraps at 1024 px instead of cutting "938.4 USD/week"
    row.metric("Private mean", V.in_units(rel.estimate, unit), width="content")
    row.metric(
        "95% error: ±", V.in_units(rel.half_width95, unit), help=V.ERROR_HELP, width="content"
    )
    row.metric("Users used", f"{rel.n_users:,}", help=V.excluded_help(rel), width="content")
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
    """The release's downloads (JSON, CSV, receipt CSV) and its "Reproduce in Python"."""
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
        st.code(
            codegen.release_code(s, last["file"], menu, rel, last.get("scope")),
            language="python",
            wrap_lines=True,
        )
