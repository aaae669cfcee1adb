"""The Simulation page's results, drawn twice per long run (issue 29): an early draw of the
run's first trials, said so, then the whole run in its place (pages/simulation.py puts each in
a slot); on a step of the page's controls, a long run's quick result, said so, with a button
for the whole run; the results as a static HTML table (views.simulation_table) with the grid
folded under it; and the "Reproduce in Python" expander. Widgets and layout only: rows,
tables, sentences from hdp_app.views.simulation and simulation_controls, figures from
hdp_app.figures.simulation.

``run`` is the page's description of the run: shown methods, data range, tuned spread, seed,
distribution, trials of the whole run and users."""

from __future__ import annotations

from typing import Any

import streamlit as st

from hdp_app.caches import simulation as cache
from hdp_app.common import PROFILE_LABEL, metric_row
from hdp_app.figures import simulation as figs
from hdp_app.views import simulation as simview
from hdp_app.views import simulation_controls as sc
from hdp_app.views import simulation_table as stv
from hdp_app.views import tuned as tview
from hdp_app.views.formatting import frame_to_csv
from hdp_app.widgets import show_metric, wide_dataframe

EARLY = "_early"
"""The suffix of an early draw's element keys (the whole run's elements keep their keys)."""


def headline_metrics(results: dict, rows: list[dict]) -> dict:
    """ADPM's simulated MSE and ln MSE, and the best other method's ratio. Returns ADPM's row
    (all six methods are always simulated)."""
    adpm_all = simview.simulation_rows(results, ["ADPM"])[0]
    row = metric_row()
    for m in simview.headline_metrics(adpm_all, rows):
        show_metric(row, m, width="content")
    return adpm_all


def quick_part(first: int, trials: int, whole_key: str) -> None:
    """The note over a step's quick result (its ``first`` trials of ``trials``) and the button
    that asks for the whole run (it sets ``st.session_state[whole_key]``)."""
    st.info(simview.quick_text(first, trials), icon=":material/bolt:")
    st.button(
        simview.whole_run_label(trials),
        key="sim_whole_run",
        on_click=st.session_state.__setitem__,
        args=(whole_key, True),
    )


def results_part(results: dict, run: dict[str, Any], trials: int, early: bool) -> list[dict]:
    """Headline cards, the results table and the MSE chart of ``results`` (``trials`` trials;
    ``early``: the first trials of the run, said so, keys of their own); returns the rows."""
    sfx = EARLY if early else ""
    if early:
        st.info(simview.early_text(trials, run["trials"]), icon=":material/hourglass_top:")
    if any(r.approximate for r in results.values()):
        st.info(simview.APPROXIMATE_TEXT)
    rows = simview.simulation_rows(results, run["shown"], data_range=run["range"])
    adpm_all = headline_metrics(results, rows)
    dip = tview.dip_note(sc.exact_by_method(rows, adpm_all), run["tuned_sd"])
    if dip:
        st.caption(dip)
    real = run["range"] is not None
    st.html(stv.results_table_html(rows, real, figs.METHOD_COLORS))
    st.caption(simview.run_caption(trials, run["seed"], run["dist"].label(), run["n"]))
    st.plotly_chart(figs.mse_figure(rows), key="sim_mse_chart" + sfx)
    if not early:
        results_grid(rows, real, bool(run.get("full_run")))
    return rows


def results_grid(rows: list[dict], real: bool, full_run: bool) -> None:
    """The results as a dataframe grid (to sort or copy; views.simulation.results_frame), in a
    folded section built on a full run of the page and while open, not on a step while
    folded (views.simulation.builds_closed; opening it reruns): the grid's canvas and
    accessibility tables, three parts at 1024 px, cost a step more than the rest of it."""
    box = st.expander(stv.GRID_LABEL, key="sim_grid_box", on_change="rerun")
    if simview.builds_closed(full_run, box.open):
        with box:
            wide_dataframe(simview.results_frame(rows, real), "sim_table", simview.TABLE_FORMATS)


def histogram_chart(results: dict, hist: list[str], run: dict, early: bool) -> None:
    """Where the answers land around the true mean, for the ``hist`` methods."""
    if hist:
        ests, mu, unit = simview.histogram_data(results, hist, run["dist"], run["range"])
        key = "sim_hist_chart" + (EARLY if early else "")
        st.plotly_chart(figs.estimates_figure(ests, mu, unit=unit), key=key)


def download_part(rows: list[dict], run: dict) -> None:
    """The results table with the settings that produced it, as CSV."""
    label = st.session_state.get(PROFILE_LABEL, "")
    real, dist = run["range"] is not None, run["dist"]
    table = simview.download_frame(
        rows, real, label, dist.label(), run["trials"], run["seed"], run["n"]
    )
    st.download_button(
        "Download results (CSV)",
        frame_to_csv(table),
        file_name="hdp_simulation.csv",
        mime="text/csv",
        key="sim_csv",
        help=sc.SIM_HELP["sim_csv"],
    )


def reproduce_expander(repro: dict, sweep: dict | None, full_run: bool) -> None:
    """The exact hdp_core calls for the current settings (and profile.csv if needed), in an
    expander whose content is built on a full run of the page and whenever it is open, not
    on a step while it is closed (views.simulation.builds_closed; opening it reruns)."""
    box = st.expander("Reproduce in Python", key="sim_repro_box", on_change="rerun")
    if not simview.builds_closed(full_run, box.open):
        return
    with box:
        snippet = cache.reproduce(repro, sweep)
        st.code(snippet.code, language="python", wrap_lines=True)
        if snippet.needs_profile_csv:
            st.download_button(
                "Download profile.csv",
                cache.profile_csv(repro["profile"]),
                file_name="profile.csv",
                mime="text/csv",
                key="sim_profile_csv",
                help=sc.SIM_HELP["sim_profile_csv"],
            )
