"""Release page: a real private mean of an uploaded table, with its privacy receipt.

Upload a CSV (one row per user: a value and the privacy level eps that user asked for), choose
the columns, the public range and the unit; before releasing the page shows what each level
gets and the expected ±95% (hdp_core.release.preview_tiers: the Tier designer's numbers); the
Release button calls hdp_core.release.release_mean (DuckDB, OpenDP noise). The raw data is
never displayed, logged or put in the URL; it lives only in this session's state and is
dropped with it. A session ledger lists the releases made.
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
    ReleaseError,
    level_counts,
    preview_tiers,
    release_mean,
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
LAST = "rel_last"  # the last Release (or None)


def init_state() -> None:
    """The page's own session-state keys, created once per session."""
    for k, v in ((TABLE, None), (LEDGER, []), (LAST, None)):
        if k not in st.session_state:
            st.session_state[k] = v


def _fmt(x: float, unit: str = "") -> str:
    if not math.isfinite(x):
        return "—"
    s = f"{x:,.4g}" if abs(x) < 1e5 else f"{x:,.0f}"
    return f"{s} {plain(unit)}".strip()


def _load(up) -> None:
    data = up.getvalue()
    if len(data) > MAX_UPLOAD_BYTES:
        raise ReleaseError(
            f"the file has {len(data) / 2**20:.1f} MB; at most {MAX_UPLOAD_BYTES // 2**20} MB"
        )
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    cur = st.session_state[TABLE]
    if cur is not None and cur[0] == digest:
        return
    try:
        df = pd.read_csv(io.BytesIO(data))
    except Exception as exc:  # pandas raises many kinds
        raise ReleaseError(
            f"the file could not be read as CSV ({str(exc).splitlines()[0]})"
        ) from None
    if df.shape[1] < 2:
        raise ReleaseError("the table needs at least two columns: a value and an eps column")
    st.session_state[TABLE] = (digest, up.name, df)
    st.session_state[LAST] = None


def _upload_section() -> None:
    up = st.file_uploader(
        "Your table (CSV, one row per user)",
        type=["csv"],
        key=K_UPLOAD,
        help="Needs a column of values (e.g. a salary) and a column eps with the privacy level "
        "each user asked for (0 = do not use my data, 'inf' or 'public' = no privacy). The "
        "file stays in this browser session only: it is never shown, stored or put in a link.",
    )
    if up is None:
        st.session_state[TABLE] = None
        st.info("Upload a CSV to start. Example columns: `value,eps` with rows like `52000,0.5`.")
        return
    _load(up)


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


def _menu_section() -> Menu | None:
    """Your tier menu: read tier names in the eps column with it, and take its range, unit and
    declared spread as the settings' starting values. Returns the menu in use, or None."""
    menu, where = _menu()
    if menu is None:
        return None
    st.subheader("Your tier menu")
    use = st.toggle(
        "Read the eps column with this menu",
        value=True,
        key=K_USE_MENU,
        help="A cell holding a tier's name (case and spaces ignored) takes that tier's "
        "level; numbers are read as levels. The menu's range, unit and declared spread fill "
        "the settings below while they are empty.",
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
    if ss.get(K_LO) is None and ss.get(K_HI) is None:  # before the widgets exist
        ss[K_LO], ss[K_HI] = float(menu.low), float(menu.high)
        if not ss.get(K_UNIT):
            ss[K_UNIT] = menu.unit
        if menu.data_sd is not None and K_USE_SD not in ss:
            ss[K_USE_SD], ss[K_SD] = True, float(menu.data_sd)
    return menu


def _guess(cols: list[str], names: tuple[str, ...], fallback: int) -> int:
    low = [c.strip().lower() for c in cols]
    for n in names:
        if n in low:
            return low.index(n)
    return min(fallback, len(cols) - 1)


def _settings(df: pd.DataFrame) -> dict:
    cols = [str(c) for c in df.columns]
    c1, c2 = st.columns(2)
    value = c1.selectbox(
        "Value column",
        cols,
        index=_guess(cols, ("value", "x", "data"), 0),
        key=K_VALUE,
        help="The numbers whose mean you want to release.",
    )
    eps = c2.selectbox(
        "Privacy-level column (eps)",
        cols,
        index=_guess(cols, ("eps", "epsilon"), 1),
        key=K_EPS,
        help="Each user's privacy level: smaller = more privacy.",
    )
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
        help="Together with the lowest value this sets the privacy noise.",
    )
    unit = c3.text_input(
        "Unit (for display)",
        value="",
        key=K_UNIT,
        max_chars=20,
        help="E.g. EUR, ms, kg. Only used to label numbers.",
    )
    if lo is None or hi is None:
        raise _RangeMissing
    sd = None
    if st.toggle(
        "I know the data's standard deviation (a public assumption)",
        key=K_USE_SD,
        help="Tunes ADPM to a declared spread. It must come from outside the data "
        "(never estimated from this table); off = worst case.",
    ):
        sd = st.number_input(
            "Declared standard deviation (data units)",
            min_value=0.0,
            value=max((hi - lo) / 4, 0.0),
            key=K_SD,
        )
    return {
        "value": value,
        "eps": eps,
        "lo": float(lo),
        "hi": float(hi),
        "unit": unit,
        "data_sd": sd,
    }


class _RangeMissing(Exception):
    """The public range is not set yet (it has no default: it must come from the user)."""


def _tier_column(levels, menu: Menu | None) -> dict:
    """The receipt's and preview's "tier" column (names on the menu), when a menu is used."""
    if menu is None:
        return {}
    names = tier_names_of(levels, menu)
    return {"tier": [n or ("—" if x == 0 else "not on the menu") for n, x in zip(names, levels)]}


def _preview(df: pd.DataFrame, s: dict, menu: Menu | None) -> None:
    st.subheader("Before releasing: what each level gets")
    lv, ct = level_counts(df, s["eps"], menu)
    pv = preview_tiers(lv, ct, s["lo"], s["hi"], s["data_sd"])
    t = pv.tiers
    if menu is not None:
        off = [(x, n) for x, n, name in zip(lv, ct, tier_names_of(lv, menu)) if x > 0 and not name]
        if off:
            listed = ", ".join(f"{short_eps(x)} ({n:,} users)" for x, n in off[:5])
            more = f" and {len(off) - 5:,} more" if len(off) > 5 else ""
            st.warning(
                f"{count_noun(len(off), 'level')} in the table "
                f"{'is' if len(off) == 1 else 'are'} not on your menu: {listed}{more}. "
                "Those users are released at the level they asked for."
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
    c2.metric(
        "Expected 95% error: ±",
        _fmt(pv.half_width95, s["unit"]),
        help=(
            "With 95% probability the released mean is within this distance of the true mean of "
            "the clamped values (worst-case or declared spread, and the exact privacy noise)."
        ),
    )
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


def _release_section(df: pd.DataFrame, s: dict, digest: str, name: str, menu: Menu | None) -> None:
    again = [r for r in st.session_state[LEDGER] if r["table"] == digest]
    st.subheader("Release again?" if again else "Release")
    ok = True
    if again:
        times = "once" if len(again) == 1 else f"{len(again)} times"
        st.warning(
            f"This table has been released {times} in this session. Releasing it again "
            "spends every user's eps again: their total privacy loss adds up.",
            icon=":material/warning:",
        )
        ok = st.checkbox("I understand: release again", key=K_CONFIRM)
    if st.button("Release the private mean", key=K_GO, type="primary", disabled=not ok):
        rel = release_mean(
            df,
            value=s["value"],
            eps=s["eps"],
            lo=s["lo"],
            hi=s["hi"],
            data_sd=s["data_sd"],
            tiers=menu,
        )
        st.session_state[LAST] = (rel, s["unit"], menu)
        st.session_state[LEDGER].append(
            {
                "table": digest,
                "file": name,
                "time": time.strftime("%H:%M:%S"),
                "value column": s["value"],
                "range": f"[{s['lo']:g}, {s['hi']:g}]",
                "estimate": rel.estimate,
                "± 95%": rel.half_width95,
                "users": rel.n_users,
            }
        )
        st.rerun()


def _last_section() -> None:
    last = st.session_state[LAST]
    if last is None:
        return
    rel, unit, menu = last
    st.success("Released. Only the number below and the receipt are private-safe to share.")
    c1, c2, c3 = st.columns(3)
    c1.metric("Private mean", _fmt(rel.estimate, unit))
    c2.metric(
        "± 95%",
        _fmt(rel.half_width95, unit),
        help="From the public noise law and the worst-case or declared spread.",
    )
    c3.metric(
        "Users used",
        f"{rel.n_users:,}",
        help=f"{rel.n_excluded:,} users with eps = 0 were not used.",
    )
    for note in rel.notes:
        st.caption(plain(note))
    st.markdown(
        "**Privacy receipt** of this release (loss = OpenDP's privacy map at one user's "
        "sensitivity; each loss is at most the level asked for; the losses of several "
        "releases of the same table add up)"
    )
    t = rel.tiers
    st.dataframe(
        pd.DataFrame(
            {
                **_tier_column(t["eps"], menu),
                "requested eps": [short_eps(x) for x in t["eps"]],
                "users": t["users"],
                "granted eps": [telling_eps(x, t["eps"]) for x in t["granted_eps"]],
                "privacy loss": [telling_eps(x, t["eps"]) for x in t["privacy_loss"]],
            }
        ),
        hide_index=True,
        key="rel_receipt_table",
    )
    st.caption(
        f"Noise: Laplace, scale {_fmt(rel.noise_scale, unit)} (OpenDP). Plan: "
        f"{rel.plan}. Rounding bound added to every sensitivity: "
        f"{rel.rounding_bound:.3g}."
    )


def _ledger_section() -> None:
    led = st.session_state[LEDGER]
    if not led:
        return
    st.subheader("Releases in this session")
    df = pd.DataFrame(led).drop(columns=["table"])
    st.dataframe(df, hide_index=True, key="rel_ledger_table")
    st.caption("Each release of the same table spends every user's eps once more.")


# ----------------------------------------------------------------------------- page
init_state()
st.session_state[SIDEBAR_NOTE] = (
    "This page releases your uploaded table; the profile below is what the other pages show."
)
st.title("Release a private mean")
st.markdown(
    "Go from a tier menu to a real answer: upload your table, check what each privacy level "
    "gets, and release the mean with ADPM's weights and OpenDP's Laplace noise. Every user's "
    "privacy loss is checked against the level they asked for before anything is released."
)
menu_used = guarded(_menu_section)
guarded(_upload_section)
table = st.session_state[TABLE]
if table is not None:
    digest, name, df = table
    st.caption(f"Loaded {plain(name)}: {len(df):,} rows, {df.shape[1]} columns (not displayed).")
    try:
        settings = _settings(df)
    except _RangeMissing:
        st.info(
            "Set the lowest and highest possible values first: the public range of the "
            "data, from what you know about it (not read off the table)."
        )
    except (ReleaseError, ValueError) as exc:
        st.error(f"Check the settings: {plain(exc)}")
    else:
        guarded(_preview, df, settings, menu_used)
        guarded(_last_section)
        guarded(_release_section, df, settings, digest, name, menu_used)
else:
    guarded(_last_section)
guarded(_ledger_section)
