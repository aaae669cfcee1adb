"""Release page: a real private mean of an uploaded table, with its privacy receipt.

Upload a CSV (one row per user: a value and the privacy level eps that user asked for, or
the name of a tier of your Tier designer menu), choose the columns, the public range and the
unit; before releasing the page checks the table and shows what each level gets and the
expected ±95% (hdp_core.release.preview_tiers: the Tier designer's numbers); the Release
button calls hdp_core.release.release_mean (DuckDB, OpenDP noise). The raw data is never
displayed, logged or put in the URL; it lives only in this session's state and is dropped
with it. A session ledger lists the releases made; a second release of the same file asks
first and says how the losses add up.
"""

from __future__ import annotations

import hashlib
import io
import math
import time

import pandas as pd
import streamlit as st

from hdp_app.common import MENU_LINK_KEY, SIDEBAR_NOTE, TD_MENU, guarded, run_through_app
from hdp_core.design import Menu
from hdp_core.errors import HdpError
from hdp_core.profile import MAX_UPLOAD_BYTES
from hdp_core.release import (
    Release,
    ReleaseError,
    check_values,
    level_counts,
    preview_tiers,
    release_mean,
    tier_levels,
    tier_names_of,
)
from hdp_core.views import links
from hdp_core.views.formatting import count_noun, plain, short_eps, telling_eps

run_through_app()  # first: a deep link on a fresh server must go through app.py

K_UPLOAD, K_VALUE, K_EPS = "rel_upload", "rel_value", "rel_eps"
K_LO, K_HI, K_UNIT = "rel_lo", "rel_hi", "rel_unit"
K_USE_SD, K_SD, K_GO, K_CONFIRM = "rel_use_sd", "rel_sd", "rel_go", "rel_confirm_again"
K_USE_MENU = "rel_use_menu"
TABLE = "rel_table"  # (digest, file name, DataFrame) of the uploaded table (session only)
LEDGER = "rel_ledger"  # list of dicts: the releases made in this session
LAST = "rel_last"  # the last release: dict(rel, unit, menu, settings), or None
PREFILLED = "rel_prefilled_for"  # key of the menu whose range and unit fill the settings

VALUE_NAMES = ("value", "values", "x", "data", "amount", "spend", "salary", "income")
EPS_NAMES = ("eps", "epsilon", "tier", "tiers", "level", "privacy", "privacy_level")


def init_state() -> None:
    """The page's own session-state keys, created once per session."""
    for k, v in ((TABLE, None), (LEDGER, []), (LAST, None)):
        if k not in st.session_state:
            st.session_state[k] = v


def _fmt(x: float, unit: str = "") -> str:
    """A number in data units: 4 significant digits, scientific beyond 1e9."""
    if not math.isfinite(x):
        return "—"
    if abs(x) >= 1e9:
        s = f"{x:.4g}"
    else:
        s = f"{x:,.4g}" if abs(x) < 1e5 else f"{x:,.0f}"
    return f"{s} {plain(unit)}".strip()


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
    tiers = " · ".join(
        f"{t.name}: " + ("public" if math.isinf(t.eps) else f"eps {short_eps(t.eps)}")
        for t in menu.tiers
    )
    unit = f" {menu.unit}" if menu.unit else ""
    st.caption(plain(f"From {where}: {tiers}. Range {menu.low:g} to {menu.high:g}{unit}."))
    if not use:
        return None
    ss = st.session_state
    if ss.get(PREFILLED) != menu.key:  # a new or edited menu: its settings (widgets not drawn yet)
        ss[PREFILLED] = menu.key
        ss[K_LO], ss[K_HI] = float(menu.low), float(menu.high)
        ss[K_UNIT] = menu.unit
        ss[K_USE_SD] = menu.data_sd is not None
        ss[K_SD] = float(menu.data_sd) if menu.data_sd is not None else None
    return menu


# ----------------------------------------------------------------------------- the table
def _load(up) -> None:
    """Read the upload into TABLE; a file that cannot be used unloads the previous one."""
    data = up.getvalue()
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    cur = st.session_state[TABLE]
    if cur is not None and cur[0] == digest:
        return
    st.session_state[TABLE] = None  # never keep an older table under a newer file's name
    st.session_state[LAST] = None
    if len(data) > MAX_UPLOAD_BYTES:
        raise ReleaseError(
            f"the file has {len(data) / 2**20:.1f} MB; at most {MAX_UPLOAD_BYTES // 2**20} MB"
        )
    if not data.strip():
        raise ReleaseError("the file is empty")
    try:
        df = pd.read_csv(io.BytesIO(data))
    except Exception as exc:  # pandas raises many kinds
        raise ReleaseError(
            f"the file could not be read as CSV ({str(exc).splitlines()[0]})"
        ) from None
    if df.shape[1] < 2:
        raise ReleaseError("the table needs at least two columns: a value and an eps column")
    if len(df) == 0:
        raise ReleaseError("the file has a header line but no rows: no users")
    st.session_state[TABLE] = (digest, up.name, df)


def _upload_section(menu: Menu | None) -> None:
    up = st.file_uploader(
        f"Your table (CSV, one row per user, at most {MAX_UPLOAD_BYTES // 2**20} MB)",
        type=["csv"],
        key=K_UPLOAD,
        help="Needs a column of values (e.g. a salary) and a column with the privacy level "
        "each user asked for (0 = do not use my data, 'inf' or 'public' = no privacy), or the "
        "name of their tier on your menu. The file is sent to this app's server and kept only "
        "in your session's memory until you leave: it is never shown, written to disk or put "
        "in a link.",
    )
    if up is None:
        st.session_state[TABLE] = None
        example = (
            f"`value,tier` with rows like `120,{menu.tiers[0].name}`"
            if menu is not None
            else "`value,eps` with rows like `120,0.5`"
        )
        st.info(f"Upload a CSV to start. Example columns: {plain(example)}.")
        return
    try:
        _load(up)
    except ReleaseError as e:
        st.error(f"This file cannot be used: {plain(e)}. Nothing is loaded.")


def _guess(cols: list[str], names: tuple[str, ...], skip: str | None = None) -> int | None:
    low = [c.strip().lower() for c in cols]
    for n in names:
        if n in low and cols[low.index(n)] != skip:
            return low.index(n)
    return None


def _menu_column(df: pd.DataFrame, menu: Menu | None, skip: str | None) -> int | None:
    """The column whose first cells are mostly the menu's tier names, if any."""
    if menu is None:
        return None
    names = set(tier_levels(menu))
    for i, c in enumerate(df.columns):
        if c == skip or df[c].dtype.kind in "biufc":
            continue
        cells = df[c].head(1000).dropna().astype(str).str.strip().str.lower()
        if len(cells) and cells.isin(names).mean() >= 0.5:
            return i
    return None


def _columns(df: pd.DataFrame, menu: Menu | None) -> tuple[str, str]:
    cols = [str(c) for c in df.columns]
    eps_i = _guess(cols, EPS_NAMES)
    if eps_i is None:
        eps_i = _menu_column(df, menu, None)
    value_i = _guess(cols, VALUE_NAMES, skip=cols[eps_i] if eps_i is not None else None)
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


def _settings(df: pd.DataFrame, menu: Menu | None) -> dict:
    value, eps = _columns(df, menu)
    c1, c2, c3 = st.columns(3)
    lo = c1.number_input(
        "Lowest possible value",
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
    if not lo < hi:
        st.error("The lowest possible value must be below the highest possible value.")
        raise _Stop
    if menu is not None and (lo, hi) != (menu.low, menu.high):
        st.caption(
            plain(
                f"Your range differs from the menu's ({menu.low:g} to {menu.high:g}): the "
                "numbers below are for the range you set."
            )
        )
    sd = None
    if st.toggle(
        "I know the data's standard deviation (a public assumption)",
        key=K_USE_SD,
        help="Tunes ADPM to a declared spread. It must come from outside the data "
        "(never estimated from this table); off = the worst case.",
    ):
        sd = st.number_input(
            "Declared standard deviation (data units)",
            min_value=(hi - lo) * 1e-6,
            max_value=(hi - lo) / 2,
            value=None,
            key=K_SD,
            placeholder=f"between {_fmt((hi - lo) * 1e-6)} and {_fmt((hi - lo) / 2)}",
            help="At most half the range: data inside the range cannot spread more. "
            "Empty = the worst case.",
        )
    return {
        "value": value,
        "eps": eps,
        "lo": float(lo),
        "hi": float(hi),
        "unit": unit or "",
        "data_sd": None if sd is None else float(sd),
    }


# ----------------------------------------------------------------------------- preview
def _tier_column(levels, menu: Menu | None) -> dict:
    """The receipt's and preview's "tier" column (names on the menu), when a menu is used."""
    if menu is None:
        return {}
    names = tier_names_of(levels, menu)
    return {"tier": [n or ("—" if x == 0 else "not on the menu") for n, x in zip(names, levels)]}


def _check_table(df: pd.DataFrame, s: dict, menu: Menu | None, menu_off: bool):
    """The table's levels and a check of its values, as the release will read them; a problem
    is shown as what to fix, and stops the page before the Release button."""
    try:
        lv, ct = level_counts(df, s["eps"], menu)
        check_values(df, s["value"])
    except ReleaseError as e:
        hint = ""
        if menu_off and "is not a number" in str(e) and s["eps"] in str(e):
            hint = " To read tier names, turn on 'Read the eps column with this menu' above."
        st.error(f"Check the table: {plain(e)}.{hint} Nothing can be released yet.")
        raise _Stop from None
    return lv, ct


def _preview(lv, ct, s: dict, menu: Menu | None) -> None:
    st.subheader("Before releasing: what each level gets")
    try:
        pv = preview_tiers(lv, ct, s["lo"], s["hi"], s["data_sd"])
    except ReleaseError as e:
        st.error(f"Check the settings: {plain(e)}. Nothing can be released yet.")
        raise _Stop from None
    t = pv.tiers
    if menu is not None:
        off = [(x, n) for x, n, name in zip(lv, ct, tier_names_of(lv, menu)) if x > 0 and not name]
        if off:
            listed = ", ".join(f"{short_eps(x)} ({count_noun(n, 'user')})" for x, n in off[:5])
            more = f" and {len(off) - 5:,} more" if len(off) > 5 else ""
            st.warning(
                f"{count_noun(len(off), 'level')} in the table "
                f"{'is' if len(off) == 1 else 'are'} not on your menu: {listed}{more}. "
                "Their users are treated like everyone else: granted the level they asked "
                "for or tau*, whichever is smaller. Check the column if you did not expect them."
            )
    show = pd.DataFrame(
        {
            **_tier_column(t["eps"], menu),
            "requested eps": [short_eps(x) if x > 0 else "0 (not used)" for x in t["eps"]],
            "users": t["users"],
            "granted eps": [telling_eps(x, t["eps"]) if x > 0 else "—" for x in t["granted_eps"]],
            "share of the weight": [f"{100 * w:.3g}%" for w in t["weight_share"]],
        }
    )
    if len(show) > 200:
        st.caption(f"{len(show):,} distinct levels: showing the 200 strictest.")
        show = show.head(200)
    st.dataframe(show, hide_index=True, key="rel_preview_table")
    c1, c2, c3 = st.columns(3)
    tau = pv.saturation_level
    c1.metric(
        "tau* (saturation level)",
        "none" if math.isinf(tau) else telling_eps(tau, t["eps"]),
        help="Every user asking for eps ≥ tau* is granted tau*: more privacy than asked, "
        "at no cost in accuracy.",
    )
    c2.metric("95% error: ±", _fmt(pv.half_width95, s["unit"]), help=ERROR_HELP)
    c3.metric(
        "Privacy noise scale",
        _fmt(pv.noise_scale, s["unit"]),
        help="Scale of the Laplace noise added to the weighted mean.",
    )
    if pv.outputs_midrange:
        st.warning(
            "With these levels the noise would swamp the answer: the release will be "
            "the middle of the range, which uses no data."
        )


ERROR_HELP = (
    "With 95% probability the released mean is within this distance of the mean of the "
    "population the users come from (values clamped to the range). It counts the privacy "
    "noise and the sampling spread, for the worst-case spread of data in the range, or the "
    "spread you declared."
)


# ----------------------------------------------------------------------------- release
def _release_section(df, s: dict, digest: str, name: str, menu: Menu | None) -> None:
    again = [r for r in st.session_state[LEDGER] if r["table"] == digest]
    st.subheader("Release again?" if again else "Release")
    ok = True
    if again:
        k = len(again)
        times = "once" if k == 1 else f"{k} times"
        st.warning(
            f"This file has been released {times} in this session. Each release adds its "
            "privacy loss (see its receipt) to every user's total: after one more, a user "
            f"who asked for eps has lost up to {k + 1} × eps, more than they asked for.",
            icon=":material/warning:",
        )
        ok = st.checkbox("I understand: release again", key=K_CONFIRM)
    if st.button("Release the private mean", key=K_GO, type="primary", disabled=not ok):
        try:
            rel = release_mean(
                df,
                value=s["value"],
                eps=s["eps"],
                lo=s["lo"],
                hi=s["hi"],
                data_sd=s["data_sd"],
                tiers=menu,
            )
        except ReleaseError as e:
            st.error(f"Nothing was released: {plain(e)}.")
            return
        when = time.strftime("%H:%M:%S")
        st.session_state[LAST] = {
            "rel": rel,
            "menu": menu,
            "settings": dict(s),
            "table": digest,
            "file": name,
            "time": when,
        }
        st.session_state[LEDGER].append(
            {
                "table": digest,
                "time": when,
                "file": name,
                "columns": f"{s['value']}, {s['eps']}",
                "range": f"[{s['lo']:g}, {s['hi']:g}]",
                "private mean": _fmt(rel.estimate, s["unit"]),
                "95% error: ±": _fmt(rel.half_width95, s["unit"]),
                "users": rel.n_users,
                "release of this file": len(again) + 1,
            }
        )
        st.session_state.pop(K_CONFIRM, None)  # the next release asks again
        st.rerun()


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
    st.caption(
        plain(
            f"Released at {last['time']} from {last['file']}: value column {s['value']}, "
            f"privacy-level column {s['eps']}, range {s['lo']:g} to {s['hi']:g} {unit}".strip()
            + "."
        )
    )
    if current is not None and (current[0] != last["table"] or current[1] != s):
        st.warning(
            "The file or the settings above have changed since this release: its numbers "
            "are for the file and settings listed here, the preview above for the new ones.",
            icon=":material/history:",
        )
    c1, c2, c3 = st.columns(3)
    c1.metric("Private mean", _fmt(rel.estimate, unit))
    c2.metric("95% error: ±", _fmt(rel.half_width95, unit), help=ERROR_HELP)
    c3.metric(
        "Users used",
        f"{rel.n_users:,}",
        help=f"{count_noun(rel.n_excluded, 'user')} with eps = 0 not used.",
    )
    for note in rel.notes:
        st.caption(plain(note))
    st.markdown(
        "**Privacy receipt**: for each level, the users, the level they were granted and "
        "their privacy loss in this release (computed by OpenDP before anything was "
        "released; never more than the level asked for). Losses of several releases of the "
        "same table add up."
    )
    t = rel.tiers
    st.dataframe(
        pd.DataFrame(
            {
                **_tier_column(t["eps"], menu),
                "requested eps": [short_eps(x) for x in t["eps"]],
                "users": t["users"],
                "granted eps": [telling_eps(x, t["eps"]) for x in t["granted_eps"]],
                "privacy loss": [short_eps(x) for x in t["privacy_loss"]],
            }
        ),
        hide_index=True,
        key="rel_receipt_table",
    )
    with st.expander("Technical details"):
        st.markdown(
            plain(
                f"Noise: Laplace, scale {_fmt(rel.noise_scale, unit)}, drawn by OpenDP. "
                f"Privacy loss of a user: OpenDP's privacy map of that measurement at the most "
                f"one user's value can move the weighted mean (their weight × the range, "
                f"plus twice the rounding bound {rel.rounding_bound:.3g}). Plan: {rel.plan}. "
                f"tau* = {'none' if math.isinf(rel.saturation_level) else rel.saturation_level}."
            )
        )


def _ledger_section() -> None:
    led = st.session_state[LEDGER]
    if not led:
        return
    st.subheader("Releases in this session")
    df = pd.DataFrame(led).drop(columns=["table"])
    st.dataframe(df, hide_index=True, key="rel_ledger_table")
    st.caption(
        "Each release of the same table adds its privacy loss to every user's total (see the "
        "receipts)."
    )


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
        "they asked for (repeated releases add up)."
    )
    guarded(_body)  # an unexpected bad input shows a message, never a traceback
    _ledger_section()


def _body() -> None:
    menu_found, where = _menu()
    menu = _menu_section(menu_found, where)
    _upload_section(menu_found)
    table = st.session_state[TABLE]
    current = None
    if table is not None:
        digest, name, df = table
        st.caption(
            f"Loaded {plain(name)}: {len(df):,} rows, {df.shape[1]} columns (not displayed)."
        )
        try:
            s = _settings(df, menu)
            current = (digest, s)
            lv, ct = _check_table(df, s, menu, menu_off=menu_found is not None and menu is None)
            _preview(lv, ct, s, menu)
        except _Stop:
            _last_section(current)
        else:
            _last_section(current)
            _release_section(df, s, digest, name, menu)
    else:
        _last_section(None)


main()
