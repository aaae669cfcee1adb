"""Bounds page: how close is ADPM to the best possible error?

ADPM's worst-case MSE f(r) ∧ 1/4 (Theorem 2) against the minimax lower bound (H ∧ 1/4)/512
(Theorem 3), their ratio (Theorem 4: f/H <= 443), a sweep over the privacy scale or the number
of users with the five baselines on the same axes, the paper's optimality-constant scatter and
the error in the data's own units. All numbers come from hdp_core; sweeps are cached per
profile so that moving a slider only moves the marker.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

import hdp_core as hdp
from hdp_app.common import (
    PROFILE_HASH,
    drop_bad_query_params,
    get_profile,
    get_spec,
    guarded,
    run_through_app,
)
from hdp_app.figures.bounds import bounds_glance_figure, scatter_figure, sweep_figure
from hdp_app.perf import live
from hdp_app.url import keep_in_link, start_from_link
from hdp_app.views import bounds as bviews
from hdp_app.views import codegen
from hdp_app.views import tuned as tview
from hdp_app.views.formatting import plain
from hdp_app.views.limits import SPREAD, Limit, check_data_range
from hdp_app.widgets import limit_bounds, metric_row, show_metric
from hdp_core import sweeps
from hdp_core.bounds import lower_bound_from_H
from hdp_core.errors import ProfileError
from hdp_core.experiments import optimality_scatter
from hdp_core.profile import EpsilonProfile

run_through_app()  # first: a deep link on a fresh server must go through app.py

BASELINES = tuple(m for m in hdp.METHODS if m != "ADPM")
# sweep modes: the label (also the value of bnd_mode in a shared link) and the sweep kind
MODES = {"Scale every eps": "scale", "Number of users": "n"}

K_MODE, K_SCALE, K_N = "bnd_mode", "bnd_scale", "bnd_n"
K_BASELINES, K_GUIDES = "bnd_baselines", "bnd_guides"
K_LO, K_HI = "bnd_lo", "bnd_hi"
URL_LIMITS = {K_SCALE: Limit(-3.0, 3.0), K_N: Limit(-3.0, 3.0), K_LO: Limit(), K_HI: Limit()}
"""What each URL-bound number accepts (the bounds of its widget)."""


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _bounds(profile: EpsilonProfile) -> dict:
    sol = hdp.adpm(profile)
    h = hdp.lower_bound_H(profile)
    worst = {m: hdp.get_method(m, profile).worst_case_mse for m in BASELINES}
    return {
        "upper": sol.worst_case_mse,
        "f": sol.objective,
        "H": h,
        "lower": float(lower_bound_from_H(h)),
        "worst": worst,
    }


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _sweep(profile: EpsilonProfile, mode: str) -> sweeps.Sweep:
    x = bviews.sweep_points(profile, mode)
    if mode == "scale":
        return sweeps.scale_sweep(profile, x, methods=BASELINES)
    return sweeps.n_sweep(profile, x, methods=BASELINES)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _tuned_sweep(profile: EpsilonProfile, mode: str, data_sd: float) -> np.ndarray:
    return tview.tuned_sweep_mse(profile, mode, bviews.sweep_points(profile, mode), data_sd)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=16, show_spinner=False)
def _guides(profile: EpsilonProfile, mode: str) -> dict:
    return bviews.regime_guides(profile, bviews.sweep_points(profile, mode), mode)


@st.cache_resource(hash_funcs=PROFILE_HASH, max_entries=64, show_spinner=False)
def _sweep_chart(
    profile: EpsilonProfile,
    mode: str,
    x_title: str,
    idx: int,
    show_base: bool,
    show_guides: bool,
    tuned_sd: float | None,
):
    """The sweep figure for one position of the controls, built once and shared by every
    session (never modified): a slider step that comes back to a position costs no rebuild."""
    guides = _guides(profile, mode) if show_guides else None
    tuned = None if tuned_sd is None else (tuned_sd, _tuned_sweep(profile, mode, tuned_sd))
    return sweep_figure(
        _sweep(profile, mode), x_title, idx, BASELINES if show_base else (), guides, tuned=tuned
    )


@st.cache_data(max_entries=2, show_spinner=False)
def _scatter() -> dict:
    return optimality_scatter(sequences=500, seed=0, max_n=200)


@st.cache_data(hash_funcs=PROFILE_HASH, max_entries=32, show_spinner=False)
def _errors(profile: EpsilonProfile, lo: float, hi: float) -> dict:
    return bviews.method_errors_real(profile, lo, hi, 0.95)


_g = bviews.bound_text
_u = bviews.units_text


# ----------------------------------------------------------------------------- sections
def _headline(b: dict) -> None:
    row = metric_row()  # wraps at 1024 px instead of cutting labels
    for m in bviews.headline_metrics(b):
        show_metric(row, m, width="content")
    st.markdown(
        "The best possible worst-case error lies between the two bounds. Their constants are "
        "loose: the 1/512 comes from the lower-bound argument (Le Cam's method) and the paper "
        "did not try to sharpen it. What the paper proves is **f/H ≤ 443** for every profile "
        "(Theorem 4), so ADPM is within a constant factor of the best possible method, whatever "
        "the privacy levels and n; its experiments suggest the 443 can be **4**."
    )


def _glance(b: dict) -> None:
    fig = bounds_glance_figure(b["upper"], b["lower"], min(b["H"], 0.25), b["worst"])
    st.plotly_chart(fig, key="bnd_glance_chart")
    st.caption(
        "Worst-case MSE for data in [-0.5, 0.5] (log scale; shorter is better). "
        "No method can go below the lower bound; ADPM is the best affine method."
    )


def _sweep_section(prof: EpsilonProfile) -> None:
    st.subheader("Sweep: from strict to loose privacy, from few to many users")
    label = st.radio(
        "Sweep",
        list(MODES),
        horizontal=True,
        key=K_MODE,
        bind="query-params",
        help=(
            "Scale: multiply every user's eps by the same factor (smaller = more "
            "privacy for everyone). Users: change n, keeping the share of users at "
            "each level."
        ),
    )
    live(_sweep_options, prof, MODES[label])  # a fragment: its controls rerun only it


def _sweep_options(prof: EpsilonProfile, mode: str) -> None:
    """What the sweep chart shows (the toggles and the assumed spread), then the slider and
    the chart in a fragment of their own: a slider step reruns only the slider, the chart and
    the numbers at the marker, not these controls (issue 23). The mode radio above reruns the
    page: the code under "Reproduce in Python" follows it."""
    c1, c2, _ = st.columns([1, 1, 2])
    show_base = c1.toggle(
        "Baselines",
        value=True,
        key=K_BASELINES,
        bind="query-params",
        help="Draw the five baselines' worst-case MSE on the same axes.",
    )
    show_guides = c2.toggle(
        "Regimes",
        value=True,
        key=K_GUIDES,
        bind="query-params",
        help="Dotted guides: ≈ 1/(4n) when privacy is loose and "
        "≈ 2/(n·mean eps)² when it is strict.",
    )
    k1, k2 = st.columns([1, 2], vertical_alignment="bottom")
    known = k1.toggle(
        "Known data spread",
        key="bnd_tuned",
        bind="query-params",
        help="Beyond the paper: with the data's standard deviation s known, "
        "ADPM tuned to it (Algorithm 1 with 8 replaced by 2/s²) has a smaller "
        "exact MSE than the worst-case curves.",
    )
    spread = k2.number_input(
        "Standard deviation s (on [−0.5, 0.5])",
        **limit_bounds(SPREAD),
        value=0.2,
        step=0.01,
        format="%.3f",
        key="bnd_spread",
        disabled=not known,
    )
    tuned_sd = float(spread) if known else None
    with st.spinner("Computing the sweep (once per profile)…"):
        _sweep(prof, mode)  # cached: the live part below finds it computed
        if tuned_sd is not None:
            _tuned_sweep(prof, mode, tuned_sd)
    live(_sweep_live, prof, mode, bool(show_base), bool(show_guides), tuned_sd)


def _sweep_live(
    prof: EpsilonProfile, mode: str, show_base: bool, show_guides: bool, tuned_sd: float | None
) -> None:
    """The sweep's slider, its chart and the numbers at the marker."""
    # The slider's value is kept in the link by the script (keep_in_link), not by the
    # browser (bind="query-params"): faster on every step, the same link.
    key = K_SCALE if mode == "scale" else K_N
    start_from_link(key)
    if mode == "scale":
        e = st.slider(
            "Scale factor c (log10)",
            -3.0,
            3.0,
            0.0,
            bviews.SWEEP_STEP,
            format="10^%.1f",
            key=K_SCALE,
            help=(
                "Every eps is multiplied by c = 10^x. Left: stricter privacy "
                "(smaller eps); right: looser. 10^0 is the current profile."
            ),
        )
        x_title = "scale factor c on every eps (log scale; 1 = current profile)"
    else:
        e = st.slider(
            "Number of users (log10 of the factor on n)",
            -3.0,
            3.0,
            0.0,
            bviews.SWEEP_STEP,
            format="10^%.1f",
            key=K_N,
            help=(
                "n is multiplied by 10^x, keeping each level's share of users. "
                "10^0 is the current profile."
            ),
        )
        x_title = "number of users n (log scale)"
    keep_in_link(key, float(e), 0.0)
    sw = _sweep(prof, mode)
    idx = bviews.sweep_index(sw.x, float(e), mode)
    fig = _sweep_chart(prof, mode, x_title, idx, show_base, show_guides, tuned_sd)
    st.plotly_chart(fig, key="bnd_sweep_chart")
    if tuned_sd is not None:
        tuned = _tuned_sweep(prof, mode, tuned_sd)
        st.caption(
            f"Sky blue: ADPM tuned to s = {tuned_sd:.3g}, its exact MSE when the data's "
            f"standard deviation is s ({float(tuned[idx]):.3e} at the marker, "
            f"against ADPM's worst case {float(sw.upper[idx]):.3e}). It is not a bound: "
            "data more spread out than s cost it more."
        )
    where = bviews.marker_place(float(sw.x[idx]), mode)
    cards = bviews.marker_metrics(
        where, float(sw.upper[idx]), float(sw.lower[idx]), float(sw.tau[idx])
    )
    row = metric_row()
    for m in cards:
        show_metric(row, m, width="content")
    at_marker = bviews.marker_sentence(
        float(sw.f[idx]), float(sw.upper[idx]), {m: float(sw.mse[m][idx]) for m in BASELINES}
    )
    st.caption(
        "Left of the bend privacy is strict and noise dominates: the error falls like "
        "1/(n eps)². Right of it privacy is loose and the error levels off near 1/(4n), the "
        "error without privacy. The shaded band is where the best possible error lies. " + at_marker
    )


def _scatter_section(b: dict) -> None:
    st.subheader("How loose is the constant 443?")
    sc = _scatter()
    cur = None
    if b["f"] > 0 and math.isfinite(b["f"]) and b["H"] > 0:
        cur = (math.log(b["f"]), math.log(b["H"]))
    st.plotly_chart(scatter_figure(sc["ln_f"], sc["ln_H"], sc["n"], cur), key="bnd_scatter_chart")
    c1, c2, c3 = st.columns(3)
    c1.metric(
        "Largest f/H in the scatter",
        f"{float(sc['max_ratio']):.3g}",
        help="Over 500 random unsaturated sequences (n from 1 to 200).",
    )
    c2.metric("Sequences with f/H > 4", f"{int(sc['n_above_4'])} of {sc['n'].size}")
    c3.metric("Current profile f/H", _g(b["f"] / b["H"]) if cur else "—")
    st.caption(
        "The paper's experiment: random sequences in which no user saturates (each eps drawn "
        "between the previous one and the cap tau). Every point above the dashed line "
        "(c = 443) is Theorem 4; the points also stay above the dotted line, which is why "
        "the paper suggests the constant can be 4. The star is the current profile "
        "(Theorem 4 holds with or without saturation)."
    )


def _use_data_range(lo: float, hi: float) -> None:
    st.session_state[K_LO], st.session_state[K_HI] = lo, hi


def _units_section(prof: EpsilonProfile) -> None:
    st.subheader("Error in your data's units")
    c1, c2, c3 = st.columns([1, 1, 2])
    lo = c1.number_input(
        "Data range: lowest possible value",
        value=0.0,
        step=1000.0,
        key=K_LO,
        bind="query-params",
        help=(
            "The smallest value a user's data can take (e.g. 0 for a salary). "
            "The range must be known in advance: it sets the privacy noise."
        ),
    )
    hi = c2.number_input(
        "highest possible value",
        value=100_000.0,
        step=1000.0,
        key=K_HI,
        bind="query-params",
        help="The largest value a user's data can take.",
    )
    if prof.data is not None and prof.data.size:
        d_lo, d_hi = float(prof.data.min()), float(prof.data.max())
        if d_hi > d_lo:
            c3.button(
                f"Use the uploaded data's range ({d_lo:.4g} to {d_hi:.4g})",
                key="bnd_use_data_range",
                on_click=_use_data_range,
                args=(d_lo, d_hi),
                help="Set the range from the values in the uploaded file. Strictly, "
                "the range should be fixed before seeing the data.",
            )
    try:
        errs = _errors(prof, *check_data_range(lo, hi))
    except (ProfileError, ValueError) as exc:
        st.error(f"Cannot compute errors in data units: {plain(exc)}")
        return
    a = errs["ADPM"]
    row = metric_row()  # wraps at 1024 px instead of cutting labels
    for m in bviews.units_metrics(_u(a.rmse), _u(a.half_width), _u(a.noise_scale)):
        show_metric(row, m, width="content")
    # one row per method (a handful, whatever the profile): a static table, drawn at once
    st.table(bviews.units_table(errs), hide_index=True)
    st.caption(
        "LDPE and SM are not one weighted mean plus one Laplace noise, so only their "
        "RMSE is shown. The 95% errors are proven for any data in the range (the Tier "
        "designer's and the Release page's figure); the normal approximation, narrower and "
        "not proven with few users, is shown under its own name."
    )


def _reproduce(prof: EpsilonProfile, mode: str) -> None:
    with st.expander("Reproduce in Python"):
        st.code(codegen.bounds_code(prof, get_spec(), mode), language="python")
        if "profile.csv" in codegen.profile_code(prof, get_spec()):
            st.caption("Download profile.csv on the Profile page to run this script.")


# ----------------------------------------------------------------------------- page
st.title("Bounds: how close to the best possible?")
drop_bad_query_params(URL_LIMITS)
st.markdown(
    "Is ADPM's error the best any method could achieve? The paper brackets the best possible "
    "worst-case error between ADPM's own worst case (an upper bound) and a lower bound that "
    "holds for every method granting each user their eps (smaller eps = more privacy)."
)
try:
    prof = get_profile()
    b = _bounds(prof)
except (ProfileError, ValueError) as exc:
    st.error(f"This profile cannot be analysed: {plain(exc)}")
else:
    if prof.n_excluded == prof.n:
        st.warning(
            "Every user has eps = 0: no data may be used, so every method outputs a "
            "constant and the worst-case MSE is 1/4. Change the profile on the Profile "
            "page."
        )
    for section, arg in (
        (_headline, b),
        (_glance, b),
        (_sweep_section, prof),
        (_scatter_section, b),
    ):
        guarded(section, arg)
    live(_units_section, prof)
    _reproduce(prof, MODES.get(str(st.session_state.get(K_MODE)), "scale"))
