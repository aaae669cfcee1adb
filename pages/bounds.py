"""Bounds page: how close is ADPM to the best possible error?

ADPM's worst-case MSE f(r) ∧ 1/4 (Theorem 2) against the minimax lower bound (H ∧ 1/4)/512
(Theorem 3), their ratio (Theorem 4: f/H <= 443), a sweep over the privacy scale or the number
of users with the five baselines on the same axes, the paper's optimality-constant scatter and
the error in the data's own units. All numbers come from hdp_core; sweeps are cached per
profile so that moving a slider only moves the marker.
"""

from __future__ import annotations

import streamlit as st

from hdp_app.caches import bounds as cache
from hdp_app.common import (
    drop_bad_query_params,
    get_menu,
    get_profile,
    get_spec,
    guarded,
    run_through_app,
)
from hdp_app.figures.bounds import bounds_glance_figure, scatter_figure
from hdp_app.perf import live
from hdp_app.url import keep_in_link, start_from_link
from hdp_app.views import bounds as bviews
from hdp_app.views import snippets
from hdp_app.views.fields import url_limits
from hdp_app.views.formatting import plain
from hdp_app.views.limits import Limit, check_data_range
from hdp_app.widgets import metric_row, number, show_metric
from hdp_core.errors import ProfileError
from hdp_core.profile import EpsilonProfile

run_through_app()  # first: a deep link on a fresh server must go through app.py

BASELINES = bviews.BASELINES
MODES = bviews.MODES
K_MODE, K_SCALE, K_N = "bnd_mode", "bnd_scale", "bnd_n"
K_BASELINES, K_GUIDES = "bnd_baselines", "bnd_guides"
K_LO, K_HI = bviews.LO.key, bviews.HI.key
SLIDER_LIMIT = Limit(*bviews.SWEEP_LIMIT)
URL_LIMITS = {K_SCALE: SLIDER_LIMIT, K_N: SLIDER_LIMIT, **url_limits(bviews.LO, bviews.HI)}
"""What each URL-bound number accepts (the bounds of its widget)."""

_u = bviews.units_text


# ----------------------------------------------------------------------------- sections
def _headline(b: bviews.Summary) -> None:
    row = metric_row()  # wraps at 1024 px instead of cutting labels
    for m in bviews.headline_metrics(b.as_dict()):
        show_metric(row, m, width="content")
    st.markdown(bviews.HEADLINE_TEXT)


def _glance(b: bviews.Summary) -> None:
    fig = bounds_glance_figure(b.upper, b.lower, b.capped_H, b.worst)
    st.plotly_chart(fig, key="bnd_glance_chart")
    st.caption(bviews.GLANCE_CAPTION)


def _sweep_section(prof: EpsilonProfile) -> None:
    st.subheader("Sweep: from strict to loose privacy, from few to many users")
    label = st.radio(
        "Sweep",
        list(MODES),
        horizontal=True,
        key=K_MODE,
        bind="query-params",
        help=bviews.HELP["mode"],
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
        help=bviews.HELP["baselines"],
    )
    show_guides = c2.toggle(
        "Regimes", value=True, key=K_GUIDES, bind="query-params", help=bviews.HELP["guides"]
    )
    k1, k2 = st.columns([1, 2], vertical_alignment="bottom")
    known = k1.toggle(
        "Known data spread", key="bnd_tuned", bind="query-params", help=bviews.HELP["tuned"]
    )
    spread = number(k2, bviews.SPREAD_FIELD, disabled=not known)
    tuned_sd = float(spread) if known else None
    with st.spinner("Computing the sweep (once per profile)…"):
        cache.sweep(prof, mode)  # cached: the live part below finds it computed
        if tuned_sd is not None:
            cache.tuned_sweep(prof, mode, tuned_sd)
    live(_sweep_live, prof, mode, bool(show_base), bool(show_guides), tuned_sd)


def _sweep_live(
    prof: EpsilonProfile, mode: str, show_base: bool, show_guides: bool, tuned_sd: float | None
) -> None:
    """The sweep's slider, its chart and the numbers at the marker."""
    # The slider's value is kept in the link by the script (keep_in_link), not by the
    # browser (bind="query-params"): faster on every step, the same link.
    key = K_SCALE if mode == "scale" else K_N
    start_from_link(key)
    label, help_, x_title = bviews.SLIDERS[mode]
    lo, hi = bviews.SWEEP_LIMIT
    e = st.slider(label, lo, hi, 0.0, bviews.SWEEP_STEP, format="10^%.1f", key=key, help=help_)
    keep_in_link(key, float(e), 0.0)
    sw = cache.sweep(prof, mode)
    idx = bviews.sweep_index(sw.x, float(e), mode)
    fig = cache.sweep_chart(prof, mode, x_title, idx, show_base, show_guides, tuned_sd)
    st.plotly_chart(fig, key="bnd_sweep_chart")
    if tuned_sd is not None:
        tuned = cache.tuned_sweep(prof, mode, tuned_sd)
        st.caption(bviews.tuned_caption(tuned_sd, float(tuned[idx]), float(sw.upper[idx])))
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
    st.caption(bviews.SWEEP_CAPTION + at_marker)


def _scatter_section(b: bviews.Summary) -> None:
    st.subheader("How loose is the constant 443?")
    sc = cache.scatter()
    fig = scatter_figure(sc["ln_f"], sc["ln_H"], sc["n"], b.scatter_point)
    st.plotly_chart(fig, key="bnd_scatter_chart")
    c1, c2, c3 = st.columns(3)
    c1.metric(
        "Largest f/H in the scatter",
        bviews.bound_text(float(sc["max_ratio"])),
        help=bviews.HELP["max_ratio"],
    )
    c2.metric(
        "Sequences with f/H > 4", bviews.scatter_above_text(int(sc["n_above_4"]), sc["n"].size)
    )
    c3.metric("Current profile f/H", b.fh_text)
    st.caption(bviews.SCATTER_CAPTION)


def _use_data_range(lo: float, hi: float) -> None:
    st.session_state[K_LO], st.session_state[K_HI] = lo, hi


def _units_section(prof: EpsilonProfile) -> None:
    st.subheader("Error in your data's units")
    c1, c2, c3 = st.columns([1, 1, 2])
    start = bviews.units_start(get_menu())  # the Tier designer menu's range and unit
    lo_field, hi_field = bviews.units_fields(start)
    lo = number(c1, lo_field, bind="query-params")
    hi = number(c2, hi_field, bind="query-params")
    data_range = bviews.data_range_of(prof)
    if data_range is not None:
        c3.button(
            bviews.data_range_label(*data_range),
            key="bnd_use_data_range",
            on_click=_use_data_range,
            args=data_range,
            help=bviews.HELP["data_range"],
        )
    try:
        errs = cache.errors(prof, *check_data_range(lo, hi))
    except (ProfileError, ValueError) as exc:
        st.error(f"Cannot compute errors in data units: {plain(exc)}")
        return
    st.caption(bviews.units_source_caption(start, lo, hi))
    a, unit = errs["ADPM"], start.unit
    row = metric_row()  # wraps at 1024 px instead of cutting labels
    shown = (_u(a.rmse, unit), _u(a.half_width, unit), _u(a.noise_scale, unit))
    for m in bviews.units_metrics(*shown):
        show_metric(row, m, width="content")
    # one row per method (a handful, whatever the profile): a static table, drawn at once
    st.table(bviews.units_table(errs, unit), hide_index=True)
    st.caption(bviews.UNITS_CAPTION)


def _reproduce(prof: EpsilonProfile, mode: str) -> None:
    with st.expander("Reproduce in Python"):
        snippet = snippets.bounds(prof, get_spec(), mode)
        st.code(snippet.code, language="python", wrap_lines=True)
        if snippet.needs_profile_csv:
            st.caption(snippets.PROFILE_CSV_NOTE)


# ----------------------------------------------------------------------------- page
st.title("Bounds: how close to the best possible?")
drop_bad_query_params(URL_LIMITS)
st.markdown(bviews.INTRO)
try:
    prof = get_profile()
    b = cache.summary(prof)
except (ProfileError, ValueError) as exc:
    st.error(f"This profile cannot be analysed: {plain(exc)}")
else:
    if prof.n_excluded == prof.n:
        st.warning(bviews.ALL_EXCLUDED)
    guarded(_headline, b)
    guarded(_glance, b)
    guarded(_sweep_section, prof)
    guarded(_scatter_section, b)
    live(_units_section, prof)
    _reproduce(prof, MODES.get(str(st.session_state.get(K_MODE)), "scale"))
