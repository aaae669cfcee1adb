"""The Release page's Streamlit side: its session-state keys, reading an upload into the
session (through hdp_core.tables.read_upload_csv, the one reader of every upload), keeping a
widget's stored value inside the bounds it is drawn with, and the server's privacy ledger.

The ledger (hdp_release.ledger.PrivacyLedger) is the server's, shared by every session: its
file is ``$HDP_LEDGER`` when set, else hdp_release.ledger.DEFAULT_PATH. One PrivacyLedger object
per path lives as long as the server (st.cache_resource), so a ledger file that disappears while
the server runs is refused instead of silently started again empty."""

from __future__ import annotations

import contextlib
import hashlib
import os
from typing import Any

import streamlit as st

from hdp_core.errors import ReleaseError
from hdp_core.tables import read_upload_csv
from hdp_release.checks import check_values
from hdp_release.fingerprint import levels_identity_frame
from hdp_release.ledger.store import ENV_VAR, PrivacyLedger, default_ledger_path
from hdp_release.preview import level_counts

K_UPLOAD, K_VALUE, K_EPS = "rel_upload", "rel_value", "rel_eps"
K_ID = "rel_id"
K_LO, K_HI, K_UNIT = "rel_lo", "rel_hi", "rel_unit"
K_USE_SD, K_SD, K_GO = "rel_use_sd", "rel_sd", "rel_go"
K_USE_MENU = "rel_use_menu"
K_NAME, K_SPEND, K_TARGET = "rel_dataset", "rel_spend", "rel_target"
TABLE = "rel_table"  # (digest, file name, DataFrame) of the uploaded table (session only)
LAST = "rel_last"  # the last release: dict(rel, menu, settings, table, file, time), or None
PREFILLED = "rel_prefilled_for"  # key of the menu whose range and unit fill the settings
LEVELS = "rel_levels"  # (table digest, columns, menu key) -> the checked levels and counts
LEVELS_ID = "rel_levels_id"  # (digest, eps column, menu key, ledger id) -> keyed level profile


def init_state() -> None:
    """The page's own session-state keys, created once per session."""
    for k, v in ((TABLE, None), (LAST, None)):
        if k not in st.session_state:
            st.session_state[k] = v


def load_upload(up: Any) -> None:
    """Read an uploaded file into TABLE (unchanged if it is the same file); a file that
    cannot be used unloads the previous table and raises ReleaseError (with its fields)."""
    data = up.getvalue()
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    cur = st.session_state[TABLE]
    if cur is not None and cur[0] == digest:
        return
    st.session_state[TABLE] = None  # never keep an older table under a newer file's name
    st.session_state[LAST] = None
    table = read_upload_csv(data, text=False, min_columns=2, error=ReleaseError)
    st.session_state[TABLE] = (digest, up.name, table.frame)


def prefill_from_menu(menu: Any) -> None:
    """A new or edited menu fills the settings with its range, unit and declared spread
    (before the widgets are drawn); the same menu again leaves the user's changes."""
    ss = st.session_state
    if ss.get(PREFILLED) == menu.key:
        return
    ss[PREFILLED] = menu.key
    ss[K_LO], ss[K_HI] = float(menu.low), float(menu.high)
    ss[K_UNIT] = menu.unit
    ss[K_USE_SD] = menu.data_sd is not None
    ss[K_SD] = float(menu.data_sd) if menu.data_sd is not None else None


def keep_within(key: str, lo: float, hi: float) -> None:
    """Empty a number widget's stored value that lies outside [lo, hi] (e.g. a declared spread
    after the range shrank), so that the widget is drawn empty instead of failing."""
    v = st.session_state.get(key)
    if v is not None and not lo <= v <= hi:
        st.session_state[key] = None


def checked_levels(digest: str, df: Any, value: str, eps: str, menu: Any) -> tuple[Any, Any]:
    """The table's distinct levels and user counts (hdp_release.release.level_counts) after
    check_values passed, computed once per file, columns and menu in this session (a widget
    change elsewhere on the page does not read the table again). Raises ReleaseError."""
    key = (digest, value, eps, None if menu is None else menu.key)
    memo = st.session_state.get(LEVELS)
    if memo is not None and memo[0] == key:
        return memo[1]
    st.session_state[LEVELS] = None
    lv, ct = level_counts(df, eps, menu)
    check_values(df, value)
    st.session_state[LEVELS] = (key, (lv, ct))
    return lv, ct


def levels_identity(digest: str, df: Any, eps: str, menu: Any, led: PrivacyLedger) -> str:
    """The table's keyed level-profile identity in the server's ledger (under its secret;
    hdp_release.fingerprint.levels_identity_frame, as release_mean computes it in the
    engine): no value enters it. Once per file, column, menu and ledger in this session."""
    key = (digest, eps, None if menu is None else menu.key, led.ledger_id())
    memo = st.session_state.get(LEVELS_ID)
    if memo is not None and memo[0] == key:
        return memo[1]
    ident = levels_identity_frame(df, eps, menu, led.secret_key())
    st.session_state[LEVELS_ID] = (key, ident)
    return ident


def signed_in_user() -> str | None:
    """The signed-in user's stable id (the identity provider's 'sub', else the email) when
    the server has Streamlit authentication configured and the user logged in; else None
    (then dataset names are shared by every session)."""
    try:
        info = st.user.to_dict()
    except Exception:  # no authentication configured, or not in a script run
        return None
    if not info.get("is_logged_in"):
        return None
    who = info.get("sub") or info.get("email")
    return str(who) if who else None


@st.cache_resource(show_spinner=False, max_entries=8)
def _ledger_at(path: str) -> PrivacyLedger:
    return PrivacyLedger(path)


def server_ledger() -> PrivacyLedger:
    """The server's privacy ledger (``$HDP_LEDGER``, else hdp_release.ledger.DEFAULT_PATH),
    one object per path for the server's life. Raises LedgerError (busy, unusable); an error is
    not kept, so the next run tries again. The default folder is made (private to the
    user) on first use, as on a fresh machine."""
    path = default_ledger_path()
    if not os.environ.get(ENV_VAR):
        with contextlib.suppress(OSError):  # else PrivacyLedger says why it cannot be used
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    return _ledger_at(path)
