"""AppTest of the Simulation page's results table (issue 29): the results as one static HTML
table (st.html; views.simulation_table), the dataframe grid folded under it (built on a full
run of the page, which every AppTest run is).

Oracle: hdp_core.simulate_mse called here with the page's inputs, its numbers formatted in
tests/simulation_table_support.py (Python's format mini-language, not the view's formats).
"""

from __future__ import annotations

from helpers import whole_frame
from simulation_table_support import Tables, merged, oracle

import hdp_core as hdp
from hdp_app.views import simulation_table as stv

PAGE = "pages/simulation.py"
TRIALS = 500
SEED = 3


def open_sim(at, **params):
    at.query_params["sim_trials"] = str(TRIALS)
    at.query_params["sim_seed"] = str(SEED)
    for k, v in params.items():
        at.query_params[k] = str(v)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def results_tables(at) -> list[str]:
    return [h.value for h in at.html if "hdp-sim-table" in h.value]


def test_the_results_table_shows_the_runs_numbers_and_the_grid_is_folded_under_it(app):
    """The default page (the paper's 'high' profile, Beta(2, 3)): one HTML element holding
    one table whose cells are the oracle's for every method; the grid section (folded) holds
    the same numbers as the grid the page drew before (views.simulation.results_frame)."""
    at = open_sim(app)
    bodies = results_tables(at)
    assert len(bodies) == 1 and len(Tables(bodies[0]).tables) == 1
    res = hdp.simulate_mse(hdp.METHODS, hdp.paper_profile("high"), hdp.Beta(2, 3), TRIALS, SEED)
    assert merged(bodies[0]) == oracle(res)
    box = [e for e in at.expander if e.label == stv.GRID_LABEL]
    assert len(box) == 1
    grids = [i for i, d in enumerate(at.dataframe) if "Simulated MSE" in d.value.columns]
    grid = whole_frame(at, grids[0])
    assert list(grid["Simulated MSE"]) == [res[m].mse for m in hdp.METHODS]
    assert list(grid["Exact MSE"]) == [res[m].exact for m in hdp.METHODS]
    inside = [d.value for d in box[0].dataframe]  # the grid's parts are in the section
    assert inside and "Simulated MSE" in inside[0].columns
    assert len(inside) == len(at.dataframe)


def test_real_units_add_the_rmse_and_stack_the_exact_numbers(app):
    """With the data's range (18 to 90) the RMSEs in real units join each group, and the
    exact numbers go to a second table under the simulated ones (the main column at 1024 px
    holds no more)."""
    at = open_sim(app, sim_real="true", sim_lo="18", sim_hi="90", sim_dist="Uniform")
    bodies = results_tables(at)
    assert len(bodies) == 1 and len(Tables(bodies[0]).tables) == 2
    res = hdp.simulate_mse(hdp.METHODS, hdp.paper_profile("high"), hdp.Uniform(), TRIALS, SEED)
    assert merged(bodies[0]) == oracle(res, (18.0, 90.0))
