"""The Simulation page's group sweep ("when one group relaxes its privacy"): its controls,
cards, chart and captions in an expander, then the "Reproduce in Python" expander
(hdp_app.simulation_results), both built on a full run of the page and while open: a step of
the page's live controls leaves a closed one empty (issue 29). Widgets and layout only:
numbers and sentences from hdp_app.views (group_sweep, simulation), the figure from
hdp_app.figures.simulation."""

from __future__ import annotations

from typing import Any

import streamlit as st

import hdp_core as hdp
from hdp_app import simulation_results as R
from hdp_app.caches import simulation as cache
from hdp_app.common import metric_row
from hdp_app.figures import simulation as figs
from hdp_app.views import group_sweep as gs
from hdp_app.views import simulation as simview
from hdp_app.views.formatting import plain
from hdp_app.widgets import number, show_metric

FULL_RUN = "sim_full_run"
"""Session key: True while the whole Simulation page runs (pages/simulation.py sets it around
its sections), False during a fragment's rerun (a step)."""
SWEEP_DRAWN = "sim_sw_drawn"
"""Session key: the sweep's settings as last drawn (for the script while its box is closed)."""
URL: dict[str, Any] = {"bind": "query-params"}


def full_run() -> bool:
    """Whether the whole page is running (not a fragment's rerun: a step)."""
    return bool(st.session_state.get(FULL_RUN))


def sweep_section(spec: tuple, methods: list[str], repro: dict | None) -> None:
    """The group-sweep chart and the reproducible script (a nested fragment: its widgets
    rerun only it; ``repro`` holds the simulation's settings for the script)."""
    st.header("When one group relaxes its privacy")
    st.markdown(gs.INTRO)
    _sweep_fragment(spec, tuple(methods), repro)


@st.fragment
def _sweep_fragment(spec: tuple, methods: tuple, repro: dict | None) -> None:
    """The sweep in an expander built on a full run and whenever it is open (a step of the
    live controls leaves it empty while it is closed), then the reproducible script with the
    sweep's settings as last drawn (its widgets can change only while drawn)."""
    full = full_run()
    box = st.expander(gs.BOX_LABEL, key="sim_sweep_box", on_change="rerun")
    settings = st.session_state.get(SWEEP_DRAWN)
    if simview.builds_closed(full, box.open):
        with box:
            settings = _sweep_body(spec, methods)
        st.session_state[SWEEP_DRAWN] = settings
    if repro is not None:
        R.reproduce_expander(repro, settings, full)


def _sweep_body(spec: tuple, methods: tuple) -> dict | None:
    """The sweep's controls, cards, chart and captions; returns its settings for the script
    (views.group_sweep.sweep_settings), or None when they are not valid (said so)."""
    n_fixed, eps_fixed, n_var, lo, hi = (
        number(col, f, **URL) for col, f in zip(st.columns(5), gs.FIELDS)
    )
    # the toggle on its own line: in a sixth of the column its label was cut
    public = st.toggle(
        gs.SWEEP_PUBLIC_LABEL, value=True, key="sim_sw_pub", help=gs.SWEEP_PUBLIC_HELP, **URL
    )
    help_ = gs.SWEEP_DATA_HELP
    data = st.radio(
        "Data for the sweep", gs.SWEEP_DATA, key="sim_sw_data", help=help_, horizontal=True, **URL
    )
    if data == gs.SWEEP_DATA[1]:
        spec = gs.WORST_CASE
    try:
        sat = simview.saturation_point(int(n_fixed), float(eps_fixed))
        values = simview.sweep_eps_values(float(lo), float(hi), gs.SWEEP_POINTS, public, [sat])
        sw = cache.run_sweep(int(n_fixed), float(eps_fixed), int(n_var), tuple(values), spec)
    except (hdp.ProfileError, ValueError) as exc:
        st.error(plain(exc))
        return None
    shown = gs.shown(methods)
    row = metric_row()
    for m in gs.sweep_metrics(sat, sw.mse, gs.axis_end(public, hi)):
        show_metric(row, m, width="content")
    st.plotly_chart(
        figs.sweep_figure(sw, shown, sat, int(n_fixed), float(eps_fixed), int(n_var)),
        key="sim_sweep_chart",
    )
    st.caption(gs.sweep_caption(simview.make_distribution(*spec)))
    beats = gs.sweep_beaters(sw.mse, shown)
    if beats:
        st.caption(gs.beaters_text(beats))
    return gs.sweep_settings(n_fixed, eps_fixed, n_var, lo, hi, public)
