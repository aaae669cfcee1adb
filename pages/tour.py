"""Tour page: the paper's story in five steps (issue 23), for a teacher on a projector.

Who saturates, privacy for free, the bound gap, the simulation, a tier menu: each step shows
its title, its sentences, its live controls and the chart and numbers it names, all from
hdp_app.views.tour.tour_step (every number from the same function as its chart). The step
(a bound query parameter) and every control's value (written into the query string each run,
so a control a step hides keeps its value) are in the link, so a teacher can share a step.
The tour uses its own two-group example; the current profile is never changed.
"""

from __future__ import annotations

import functools

import pandas as pd
import streamlit as st

import hdp_core as hdp
from hdp_app.caches import tour as cache
from hdp_app.common import run_through_app
from hdp_app.figures.bounds import bounds_glance_figure
from hdp_app.figures.design import method_error_figure
from hdp_app.figures.saturation import r_curve_figure
from hdp_app.figures.simulation import mse_figure
from hdp_app.figures.style import PROJECTOR_CHART_PX, projector
from hdp_app.views import explain
from hdp_app.views import saturation as sat
from hdp_app.views import simulation as simview
from hdp_app.views import tour as teach
from hdp_app.views.formatting import plain
from hdp_app.widgets import metric_row, show_metric, wide_dataframe

run_through_app()  # first: a deep link on a fresh server must go through app.py

K_STEP = "tour_step"  # the step (1..5), in the link
K_VALUES = "tour_values"  # every control's last value (a plain session key)
STEPS = tuple(range(1, len(teach.TOUR) + 1))
CONTROLS = cache.CONTROLS


# ----------------------------------------------------------------------------- widgets
def _go(delta: int) -> None:
    st.session_state[K_STEP] = teach.next_step(st.session_state.get(K_STEP), delta)


def _known(key: str) -> float:
    """A control's value whether or not this step shows it: its slider's, the value last
    used in this session (a control of step 1 carries to step 3), the link's (a shared link
    of step 4 keeps the levels set in step 1), else its default."""
    v = st.session_state.get(key)
    if isinstance(v, (int, float)) and v in cache.grid(key):
        return float(v)
    kept = st.session_state.get(K_VALUES, {}).get(key)
    if kept is not None:
        return float(kept)
    link = teach.parse_control(CONTROLS[key], st.query_params.get(key))
    return teach.nearest(cache.grid(key), CONTROLS[key].default if link is None else link)


def _control(c: teach.Control) -> float:
    """A tour control as a slider over its grid (log-spaced for a level or a count). Not
    bound to the link (a bound widget that a step hides would lose its value): _values
    writes every control's value into the link instead."""
    if c.key not in st.session_state:  # seeded here, so no default is passed below
        st.session_state[c.key] = _known(c.key)
    return float(
        st.select_slider(
            c.label,
            options=cache.grid(c.key),
            key=c.key,
            format_func=functools.partial(teach.control_text, c),
            help=c.help,
        )
    )


def _values() -> tuple[tuple[str, float], ...]:
    """Every control's value (see _known), kept in the session for the next step and written
    into the link (as the slider shows it), so a link of any step holds all of them."""
    out = {k: _known(k) for k in teach.tour_defaults()}
    st.session_state[K_VALUES] = out
    want = {k: teach.control_text(CONTROLS[k], v) for k, v in out.items()}
    changed = {k: t for k, t in want.items() if st.query_params.get(k) != t}
    if changed:
        st.query_params.update(changed)
    return tuple(sorted(out.items()))


# ----------------------------------------------------------------------------- the step
def _numbers(step: teach.TourStep) -> None:
    row = metric_row(gap="small")  # step 2's four cards on one row at 1024 px
    for m in teach.step_cards(step):
        show_metric(row, m, width="content")


def _chart(step: teach.TourStep, values: tuple[tuple[str, float], ...]) -> None:
    prof = step.profile
    if step.chart == "r_curve":
        fig = projector(r_curve_figure(sat.r_curve(prof)), PROJECTOR_CHART_PX)
        st.plotly_chart(fig, key="tour_chart_r")
    elif step.chart == "free_privacy":  # its cards are the step's (_numbers), in one row
        _numbers(step)
        table = sat.free_privacy_table(prof)
        wide_dataframe(pd.DataFrame(table.columns), "tour_free_table")
    elif step.chart == "bounds":
        n = step.numbers
        fig = bounds_glance_figure(n["ADPM worst case f ∧ 1/4"], n["lower bound (H ∧ 1/4)/512"])
        st.plotly_chart(projector(fig, PROJECTOR_CHART_PX), key="tour_chart_bounds")
    elif step.chart == "simulation":
        with st.spinner(f"Simulating {cache.SIM_TRIALS:,} trials…"):
            rows = cache.simulation(values)
        st.plotly_chart(projector(mse_figure(rows), PROJECTOR_CHART_PX), key="tour_chart_sim")
        st.caption(
            simview.run_caption(cache.SIM_TRIALS, cache.SIM_SEED, teach.TOUR_DATA.label(), prof.n)
        )
    else:
        rep = cache.menu_report(values)
        fig = projector(method_error_figure(rep, metric="rmse"), PROJECTOR_CHART_PX)
        st.plotly_chart(fig, key="tour_chart_menu")


def _tour() -> None:
    st.segmented_control(
        "Step",
        STEPS,
        key=K_STEP,
        default=STEPS[0],
        required=True,
        help="The five steps of the tour (their titles below); the link keeps the step you are on.",
        bind="query-params",
        width="stretch",
    )
    index = int(st.session_state.get(K_STEP) or 1)
    c1, c2, _ = st.columns([1, 1, 2])
    c1.button(
        "◀ Previous",
        key="tour_prev",
        on_click=_go,
        args=(-1,),
        disabled=index <= STEPS[0],
        help="The step before.",
        width="stretch",
    )
    c2.button(
        "Next ▶",
        key="tour_next",
        on_click=_go,
        args=(1,),
        disabled=index >= STEPS[-1],
        help="The next step.",
        width="stretch",
    )
    _, title, controls, _ = teach.TOUR[index - 1]
    st.subheader(title)
    cols = st.columns(2)
    for i, c in enumerate(controls):
        with cols[i % 2]:
            _control(c)
    values = _values()
    try:
        step = cache.step(index, values)
    except (hdp.HdpError, ValueError) as exc:
        st.error(f"This step could not be computed: {plain(exc)}")
        return
    # the controls, then at once the chart they move (one 768 px screen), then its numbers
    # and sentences
    _chart(step, values)
    if step.chart != "free_privacy":
        _numbers(step)
    for sentence in step.sentences:
        st.markdown(sentence)


# ----------------------------------------------------------------------------- page
st.title("Tour: the paper in five steps")
st.markdown(explain.TOUR_INTRO)
_tour()
