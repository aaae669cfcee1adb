"""The Simulation page's controls and choices moved out of the page (issue 27):
views.simulation_controls (fields, what runs, what is shown), views.group_sweep (settings for
the script, the methods drawn), views.paper_table (the paper's presets), views.whatif's shift
control and views.simulation.histogram_data. Milliseconds each.

Oracles: the paper's setup (six methods, n = 1,000, Beta(2, 3), 20,000 trials), the affine
map x -> lo + (x + 1/2)(hi - lo) written out, and the shift limits (-1/2 - mu)R, (1/2 - mu)R
from the definition.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.views import group_sweep as gs
from hdp_app.views import paper_table as pt
from hdp_app.views import simulation as sv
from hdp_app.views import simulation_controls as sc
from hdp_app.views import whatif as wv
from hdp_app.views.limits import query_value_problem

SIX = ["ADPM", "PropDPM", "LDPE", "SM", "FME", "UNI"]  # the registry's (Table 1's) order


def test_fields_default_to_the_paper_and_lie_within_their_limits():
    assert (sc.A.default, sc.B.default) == (2.0, 3.0)  # Beta(2, 3)
    assert sc.TRIALS_FIELD.default == pt.TRIALS.default == 20_000
    fields = (sc.A, sc.B, sc.P, sc.TRIALS_FIELD, sc.SEED_FIELD, sc.LO, sc.HI, sc.TUNED_SD)
    for f in (*fields, *gs.FIELDS, pt.TRIALS, pt.SEED_FIELD):
        assert f.limit is not None and f.limit.lo <= f.default <= f.limit.hi, f.key
        assert query_value_problem(repr(f.default), f.limit) is None, f.key
    assert query_value_problem("499", sc.TRIALS) and query_value_problem(str(2**31), sc.SEED)
    assert len({f.key for f in (*fields, *gs.FIELDS, pt.TRIALS, pt.SEED_FIELD)}) == 15


def test_what_runs_and_what_is_shown():
    assert sc.extra_methods(["ADPM", "TableMean"]) == ("TableMean",)
    assert sc.methods_run(["ADPM", "TableMean"], tuned=True) == 8  # six + TableMean + tuned
    assert sc.methods_run([], tuned=False) == 6
    assert sc.shown_methods(["UNI"], None) == ["UNI"]
    assert sc.shown_methods(["UNI"], 0.2)[-1] != "UNI"  # the tuned ADPM is added last
    assert sc.methods_or_all([]) == SIX and sc.methods_or_all(["SM"]) == ["SM"]
    rows = [{"method": "UNI", "exact": 2.0}, {"method": "ADPM", "exact": 9.0}]
    assert sc.exact_by_method(rows, {"exact": 1.0}) == {"UNI": 2.0, "ADPM": 1.0}
    r = sc.repro("p", {"kind": "x"}, "d", ("ADPM",), 500.0, 3.0)
    assert r == {"profile": "p", "spec": {"kind": "x"}, "dist": "d", "methods": ["ADPM"],
                 "trials": 500, "seed": 3}  # fmt: skip
    assert "1,000 users" in sc.spinner_text(20_000, 1000, 6)


def test_group_sweep_settings_and_methods():
    s = gs.sweep_settings(900.0, 0.1, 100.0, 0.1, 100.0, True)
    assert s == {"n_fixed": 900, "eps_fixed": 0.1, "n_var": 100, "lo": 0.1, "hi": 100.0,
                 "points": 60, "public": True}  # fmt: skip
    assert gs.shown(["UNI", "ADPM", "TableMean"]) == ["ADPM", "UNI"]  # the paper's order
    assert gs.shown(["TableMean"]) == SIX
    assert gs.axis_end(True, 100.0) == "∞" and gs.axis_end(False, 100.0) == "100"
    worst = sv.make_distribution(*gs.WORST_CASE)
    assert worst.mean == 0.0 and worst.variance == pytest.approx(0.25)  # every value ±1/2


def test_paper_presets_are_the_apps_paper_profiles():
    name, spec = pt.paper_preset("high")
    assert name == "paper_high" and name in hdp.PRESETS
    assert spec == {"kind": "preset", "name": "paper_high", "seed": 0}
    for kind in pt.KINDS:
        prof = pt.paper_profile(kind)
        assert prof.n == 1000
        assert prof.key == hdp.preset(f"paper_{kind}", seed=0).key
    assert "2 profiles × 20,000 trials" in pt.spinner_text(20_000)


def test_shift_control_from_the_definition():
    dist = sv.make_distribution("beta", 2.0, 3.0)  # mean 2/5 - 1/2 = -0.1 on the unit scale
    unit = wv.shift_control(dist, None)
    assert unit.rng == (-0.5, 0.5) and unit.key == "sim_wi_shift"
    assert unit.low == pytest.approx(-0.4) and unit.high == pytest.approx(0.6)
    assert unit.step == pytest.approx(0.01)
    real = wv.shift_control(dist, (0.0, 200.0))
    assert real.key == "sim_wi_shift_real"
    assert (real.low, real.high) == (pytest.approx(-80.0), pytest.approx(120.0))
    assert real.value(500.0, dist) == pytest.approx(120.0)  # clipped into the range
    assert real.value(-3.5, dist) == -3.5
    assert real.value(None, dist) == wv.default_shift(dist, 0.0, 200.0)  # no choice yet
    assert wv.THRESHOLD.limit is not None and wv.THRESHOLD.limit.lo > 0


def test_histogram_data_maps_estimates_onto_the_range():
    est = np.array([-0.5, 0.0, 0.25])
    res = {"ADPM": SimpleNamespace(estimates=est)}  # a run's result: only its estimates read
    dist = sv.make_distribution("uniform")
    ests, mu, unit = sv.histogram_data(res, ["ADPM"], dist, None)
    assert np.array_equal(ests["ADPM"], est) and mu == 0.0 and "[−0.5, 0.5]" in unit
    ests, mu, unit = sv.histogram_data(res, ["ADPM"], dist, (10.0, 30.0))
    assert np.allclose(ests["ADPM"], [10.0, 20.0, 25.0]) and mu == 20.0 and unit == "real units"
    assert math.isfinite(mu)
