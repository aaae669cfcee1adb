"""hdp_app.views.simulation: trial budget, result rows, group-sweep grid, reproducible code.

Oracles: closed forms written out here from the hdp_core.baselines docstring and the
paper's two-group Remark, a recording distribution that counts what simulate_mse really
draws, direct calls of simulate_mse / group_sweep, and running the generated script.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.views import codegen
from hdp_app.views import paper_table as pt
from hdp_app.views import simulation as simview
from hdp_core.simulate import EXPAND_MAX
from hdp_core.sweeps import group_sweep


# distributions ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "args", "mean", "var"),
    [
        ("beta", (2.0, 3.0, 0.5), 2 / 5 - 0.5, 6 / (25 * 6)),
        ("beta", (1.0, 1.0, 0.5), 0.0, 1 / 12),
        ("uniform", (7.0, 7.0, 0.9), 0.0, 1 / 12),
        ("twopoint", (2.0, 3.0, 0.3), 0.3 - 0.5, 0.3 * 0.7),
    ],
)
def test_make_distribution_moments(kind, args, mean, var):
    d = simview.make_distribution(kind, *args)
    assert d.mean == pytest.approx(mean, abs=1e-15)
    assert d.variance == pytest.approx(var, rel=1e-12)


@pytest.mark.parametrize(
    ("kind", "args"),
    [("gauss", ()), ("beta", (0.0, 1.0)), ("beta", (1.0, -2.0)), ("twopoint", (2.0, 3.0, 1.5))],
)
def test_make_distribution_rejects_bad_input(kind, args):
    with pytest.raises(ValueError):
        simview.make_distribution(kind, *args)


@pytest.mark.parametrize("dist", [hdp.Beta(2.5, 0.7), hdp.Uniform(), hdp.TwoPoint(0.25)])
def test_distribution_code_round_trips(dist):
    assert eval(codegen.distribution_code(dist), {"hdp": hdp}) == dist


def test_real_value_maps_the_unit_range():
    assert simview.real_value(-0.5, 18, 90) == 18
    assert simview.real_value(0.5, 18, 90) == 90
    assert simview.real_value(0.0, 18, 90) == 54
    with pytest.raises(ValueError):
        simview.real_value(0.0, 5, 5)


# trial budget ----------------------------------------------------------------------------
class RecordingBeta(hdp.Beta):
    """Beta(2, 3) that records the shape of every per-user draw and aggregate-sum draw."""

    drawn: list  # set per instance below

    def sample(self, rng, size):
        object.__getattribute__(self, "drawn").append(("users", size))
        return super().sample(rng, size)

    def sample_sums(self, rng, counts):
        object.__getattribute__(self, "drawn").append(("sums", np.shape(counts)))
        return super().sample_sums(rng, counts)


def _recording() -> RecordingBeta:
    d = RecordingBeta(2.0, 3.0)
    object.__setattr__(d, "drawn", [])
    return d


@pytest.mark.parametrize(
    "profile",
    [
        hdp.EpsilonProfile.from_values(np.linspace(0.05, 3.0, 137)),
        hdp.EpsilonProfile.from_tiers([0.1, 1.0, math.inf], [40, 10**9, 3]),
        hdp.EpsilonProfile.from_tiers([0.1, 0.5, 2.0], [EXPAND_MAX, EXPAND_MAX + 1, 7]),
    ],
)
def test_simulated_width_counts_what_simulate_mse_draws(profile):
    d = _recording()
    hdp.simulate_mse(["ADPM", "UNI"], profile, d, trials=5, seed=1)
    per_user = sum(
        size[1] for what, size in d.drawn if what == "users" and len(size) == 2 and size[0] == 5
    )
    sums = max((size[-1] for what, size in d.drawn if what == "sums"), default=0)
    assert simview.simulated_width(profile, d) == per_user + sums


def test_simulated_width_rule_by_hand():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 1.0, math.inf, 3.0], [10**12, 5, 1, 0])
    # Beta: tiers up to EXPAND_MAX users are drawn user by user, bigger ones as one sum
    assert simview.simulated_width(prof, hdp.Beta(2, 3)) == 1 + 5 + 1
    # TwoPoint: every tier with more than one user is one exact binomial sum
    assert simview.simulated_width(prof, hdp.TwoPoint(0.5)) == 1 + 1 + 1
    assert simview.simulated_width(np.full(1000, 0.3), hdp.Uniform()) == 1000


def test_plan_trials_caps_and_floors():
    d = hdp.Beta(2, 3)
    small = hdp.paper_profile("high")
    plan = simview.plan_trials(small, d, 20_000)
    assert (plan.trials, plan.width, plan.reduced) == (20_000, 1000, False)
    assert plan.cells == 20_000_000 <= simview.MAX_SIM_CELLS
    big = hdp.EpsilonProfile.from_values(np.linspace(0.01, 1.0, 40_000))
    plan = simview.plan_trials(big, d, 20_000)
    assert plan.reduced and plan.trials == simview.MAX_SIM_CELLS // 40_000 == 1250
    assert plan.trials * plan.width <= simview.MAX_SIM_CELLS
    floor = simview.plan_trials(small, d, 20_000, budget=5_000)
    assert floor.trials == simview.MIN_TRIALS and floor.reduced
    assert simview.plan_trials(small, d, 7).trials == 7  # never above the request
    tiers = hdp.EpsilonProfile.from_tiers([0.1, 0.5, math.inf], [10**12, 10**11, 10**9])
    assert not simview.plan_trials(tiers, d, 200_000).reduced
    with pytest.raises(ValueError):
        simview.plan_trials(small, d, 1)


# result rows -----------------------------------------------------------------------------
def _two_group_oracle(n1, e1, n2, dist):
    """Exact MSE of ADPM, PropDPM and UNI for n1 users at e1 plus n2 public users, from the
    formulas of the hdp_core.baselines docstring and Algorithm 1 written out by hand."""
    v = dist.variance
    tau = e1 + 8.0 / (n1 * e1)  # the public group saturates at tau
    s1 = n1 * e1 + n2 * tau
    w2 = (n1 * e1**2 + n2 * tau**2) / s1**2
    adpm = v * w2 + 2.0 / s1**2
    prop = v / n2  # all weight on the public users, no noise
    uni = v / (n1 + n2) + 2.0 / ((n1 + n2) * e1) ** 2
    return {"ADPM": adpm, "PropDPM": prop, "UNI": uni}


def test_simulation_rows_against_closed_forms():
    dist = hdp.Beta(2, 3)
    prof = hdp.EpsilonProfile.from_tiers([0.1, math.inf], [900, 100])
    res = hdp.simulate_mse(hdp.METHODS, prof, dist, trials=3000, seed=4)
    rows = simview.simulation_rows(res, ["UNI", "ADPM", "PropDPM"], data_range=(18.0, 90.0))
    assert [r["method"] for r in rows] == ["ADPM", "PropDPM", "UNI"]  # the paper's order
    oracle = _two_group_oracle(900, 0.1, 100, dist)
    by = {r["method"]: r for r in rows}
    for m, exact in oracle.items():
        r = by[m]
        assert r["exact"] == pytest.approx(exact, rel=1e-10)
        assert r["ln_exact"] == pytest.approx(math.log(exact), rel=1e-10)
        assert r["ratio_exact"] == pytest.approx(exact / oracle["ADPM"], rel=1e-10)
        assert r["ln_mse"] == pytest.approx(math.log(r["mse"]))
        assert r["ln_ci_low"] == pytest.approx(math.log(r["ci_low"]))
        assert r["ratio"] == pytest.approx(r["mse"] / res["ADPM"].mse)
        assert r["ci_low"] <= r["mse"] <= r["ci_high"]
        assert r["rmse_real"] == pytest.approx(math.sqrt(r["mse"]) * 72.0)
        assert r["rmse_real_exact"] == pytest.approx(math.sqrt(exact) * 72.0)
        assert r["trials"] == 3000 and r["approximate"] is False
    assert by["ADPM"]["ratio"] == 1.0
    # with public users proportional weighting is worse than ADPM (the paper's Remark)
    assert by["PropDPM"]["ratio_exact"] > 1.5


def test_exact_rows_against_closed_forms_and_too_large_plans():
    dist = hdp.Uniform()
    prof = hdp.EpsilonProfile.from_tiers([0.1, math.inf], [900, 100])
    rows = simview.exact_rows(prof, dist, ["UNI", "PropDPM"])
    oracle = _two_group_oracle(900, 0.1, 100, dist)
    assert [r["method"] for r in rows] == ["PropDPM", "UNI"]
    for r in rows:
        assert r["exact"] == pytest.approx(oracle[r["method"]], rel=1e-10)
        assert r["ratio_exact"] == pytest.approx(oracle[r["method"]] / oracle["ADPM"], rel=1e-10)
        assert r["ln_exact"] == pytest.approx(math.log(oracle[r["method"]]), rel=1e-12)
    wide = hdp.EpsilonProfile.from_values(np.linspace(0.1, 1.0, 3000))
    assert simview.plan_trials(wide, dist, 500, budget=3000 * simview.MIN_TRIALS // 3).too_large
    assert not simview.plan_trials(wide, dist, 500, budget=3000 * simview.MIN_TRIALS).too_large
    assert not simview.plan_trials(wide, dist, 5, budget=3000 * 5).too_large


def test_simulation_rows_zero_mse_and_missing_reference():
    # every user public and data constant: every method is exact, MSE 0
    prof = hdp.EpsilonProfile.from_values([math.inf] * 5)
    res = hdp.simulate_mse(["ADPM", "PropDPM"], prof, hdp.TwoPoint(1.0), trials=10, seed=0)
    rows = simview.simulation_rows(res)
    for r in rows:
        assert r["mse"] == 0.0 and r["ln_mse"] is None and r["ratio"] is None
    res = hdp.simulate_mse(["UNI"], np.full(10, 0.5), hdp.Uniform(), trials=10, seed=0)
    (row,) = simview.simulation_rows(res)
    assert row["ratio"] is None and "rmse_real" not in row


# the group sweep -------------------------------------------------------------------------
def test_saturation_point_is_where_adpm_starts_capping():
    sat = simview.saturation_point(900, 0.1)
    assert sat == pytest.approx(0.1 + 8.0 / 90.0, rel=1e-14)
    below = hdp.adpm(hdp.EpsilonProfile.from_tiers([0.1, sat * (1 - 1e-9)], [900, 100]))
    above = hdp.adpm(hdp.EpsilonProfile.from_tiers([0.1, sat * (1 + 1e-9)], [900, 100]))
    assert below.n_saturated == 0 and math.isinf(below.saturation_level)
    assert above.n_saturated == 100 and above.saturation_level == pytest.approx(sat)
    assert math.isinf(simview.saturation_point(0, 0.1))
    with pytest.raises(ValueError):
        simview.saturation_point(10, 0.0)


def test_sweep_values_and_adpm_flat_after_saturation():
    sat = simview.saturation_point(900, 0.1)
    vals = simview.sweep_eps_values(0.1, 100.0, 40, public=True, include=[sat, 1e6, -1])
    assert vals[0] == pytest.approx(0.1) and vals[-2] == pytest.approx(100.0)
    assert math.isinf(vals[-1]) and sat in vals and 1e6 not in vals
    assert np.all(np.diff(vals[:-1]) > 0) and vals.size == 40 + 1 + 1
    sw = group_sweep(900, 0.1, 100, vals, hdp.METHODS, hdp.TwoPoint(0.5))
    after = vals >= sat
    adpm = sw.mse["ADPM"]
    assert np.ptp(adpm[after]) <= 1e-12 * adpm[after].max()  # flat once saturated
    assert np.all(np.diff(adpm[~after]) < 0)  # improving until then
    assert np.allclose(sw.tau[after], sat)
    # worst-case data: proportional weighting gets worse as the group goes public,
    # ending at the public users' plain mean, V/100 (hdp_core.baselines docstring)
    assert sw.mse["PropDPM"][-1] == pytest.approx(0.25 / 100)
    assert sw.mse["PropDPM"][-1] > 5 * adpm[-1]
    with pytest.raises(ValueError):
        simview.sweep_eps_values(1.0, 1.0)
    with pytest.raises(ValueError):
        simview.sweep_eps_values(0.0, 1.0)
    assert not np.isinf(simview.sweep_eps_values(0.5, 2.0, 5, public=False)).any()


# reproducible code -----------------------------------------------------------------------
def _run(code: str) -> dict:
    ns: dict = {"__name__": "repro"}
    exec(compile(code, "<repro>", "exec"), ns)
    return ns


CASES = [
    (hdp.preset("paper_high"), {"kind": "preset", "name": "paper_high", "seed": 0}, "preset("),
    (
        hdp.presets.log_uniform(300, 0.05, 2.0, 3),
        {"kind": "log_uniform", "n": 300, "lo": 0.05, "hi": 2.0, "seed": 3},
        "log_uniform(",
    ),
    (
        hdp.presets.mixture(200, 0.05, 1.0, 0.1, 2),
        {"kind": "mixture", "n": 200, "lo": 0.05, "hi": 1.0, "public": 0.1, "seed": 2},
        "mixture(",
    ),
    (
        hdp.EpsilonProfile.from_tiers([0.1, 0.5, math.inf], [10**9, 3000, 40], ["a", "b", "c"]),
        None,
        "from_tiers(",
    ),
    (hdp.EpsilonProfile.from_values([0.2, 1.5, math.inf, 0.0]), None, "from_values("),
    # spec says paper_high, but the profile is different: the spec must not be trusted
    (hdp.preset("paper_low"), {"kind": "preset", "name": "paper_high", "seed": 0}, "from_csv("),
]


@pytest.mark.parametrize(("profile", "spec", "expect"), CASES)
def test_reproduce_code_gives_the_same_numbers(profile, spec, expect, tmp_path, capsys):
    dist = hdp.Beta(2.0, 3.0)
    methods = ["ADPM", "SM", "UNI"]
    sweep = {
        "n_fixed": 50,
        "eps_fixed": 0.2,
        "n_var": 10,
        "lo": 0.2,
        "hi": 20.0,
        "points": 8,
        "public": True,
    }
    code = codegen.reproduce_code(profile, spec, dist, methods, 300, 5, sweep=sweep)
    assert expect in code
    (tmp_path / "profile.csv").write_bytes(profile.to_csv())
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        ns = _run(code)
    finally:
        os.chdir(cwd)
    assert ns["prof"].key == profile.key
    direct = hdp.simulate_mse(hdp.METHODS, profile, dist, trials=300, seed=5)
    for m in methods:
        assert ns["res"][m].mse == direct[m].mse
        assert ns["res"][m].ci_high == direct[m].ci_high
    printed = capsys.readouterr().out
    assert [ln.split()[0] for ln in printed.splitlines()[:3]] == methods
    sat = simview.saturation_point(50, 0.2)
    vals = simview.sweep_eps_values(0.2, 20.0, 8, public=True, include=[sat])
    sw = group_sweep(50, 0.2, 10, vals, hdp.METHODS, dist)
    assert np.array_equal(ns["sw"].x, sw.x)
    for m in methods:
        assert np.array_equal(ns["sw"].mse[m], sw.mse[m])


def test_profile_code_small_profile_inline_large_from_csv():
    big = hdp.EpsilonProfile.from_values(np.linspace(0.1, 1.0, codegen.INLINE_MAX_ENTRIES + 1))
    assert "from_csv" in codegen.profile_code(big, None)
    small = hdp.EpsilonProfile.from_values(np.linspace(0.1, 1.0, codegen.INLINE_MAX_ENTRIES))
    assert (
        eval(codegen.profile_code(small, {"kind": "nonsense"})[7:], {"hdp": hdp, "math": math}).key
        == small.key
    )


def test_lowest_exact_reports_ties_of_the_same_estimator():
    """The paper's low-variance profile saturates nobody, so ADPM's weights are PropDPM's and
    their exact MSEs are equal: Table 1's headline names both (found by a new user, who read
    "ADPM / PropDPM" as ADPM losing on the low profile)."""
    prof = hdp.paper_profile("low")
    assert math.isinf(hdp.adpm(prof).saturation_level)
    rows = [
        {"method": m, "exact_low": math.log(hdp.exact_mse(m, prof, hdp.Beta(2, 3)))}
        for m in hdp.METHODS
    ]
    assert pt.lowest_exact(rows, "low") == ["ADPM", "PropDPM"]
    rows[1]["exact_low"] += 0.01
    assert pt.lowest_exact(rows, "low") == ["ADPM"]


# an early draw of a long run (issue 29) ----------------------------------------------------
def test_early_draw_is_exactly_the_first_trials_of_the_run(monkeypatch):
    """views.simulation.early_trials: a run of that many trials with the same seed gives the
    whole run's first estimates bit for bit (oracle: the whole run itself), for every method
    and a tier drawn in aggregate (an approximate sum); a run under twice the early draw gets
    none."""
    from hdp_core.simulate import CHUNK_CELLS

    prof = hdp.EpsilonProfile.from_tiers([0.05, 0.8, math.inf], [300, 99, 5000])
    dist = hdp.Beta(2, 3)
    default = simview.plan_trials(hdp.paper_profile("high"), dist, 20_000)
    assert simview.early_trials(default) is None  # the default run is drawn whole at once
    monkeypatch.setattr(simview, "EARLY_MIN_CELLS", 0)  # a small run stands for a long one
    width = 300 + 99 + 1  # users drawn one by one, and the large public tier's sum
    plan = simview.plan_trials(prof, dist, 2 * (CHUNK_CELLS // width) + 17)
    first = simview.early_trials(plan)
    assert first is not None and first % (CHUNK_CELLS // width) == 0
    assert simview.EARLY_TRIALS <= first < simview.EARLY_TRIALS + CHUNK_CELLS // width
    names = [*hdp.METHODS, "TableMean"]
    whole = hdp.simulate_mse(names, prof, dist, trials=plan.trials, seed=5, return_estimates=True)
    early = hdp.simulate_mse(names, prof, dist, trials=first, seed=5, return_estimates=True)
    for m in names:
        assert np.array_equal(early[m].estimates, whole[m].estimates[:first]), m
    assert simview.early_trials(simview.plan_trials(prof, dist, 2 * first - 1)) is None
    text = simview.early_text(first, plan.trials)
    assert f"first {first:,} of the {plan.trials:,} trials" in text


# a step's quick result, the whole run on request (issue 29) ---------------------------------
def test_quick_result_is_exactly_the_first_trials_of_the_run(monkeypatch):
    """views.simulation.quick_trials: whole chunks reaching QUICK_TRIALS, so a run of that many
    trials with the same seed gives the whole run's first estimates bit for bit (oracle: the
    whole run itself); the default run of the paper's profile gets one on a step, a short run
    none."""
    from hdp_core.simulate import CHUNK_CELLS

    dist = hdp.Beta(2, 3)
    default = simview.plan_trials(hdp.paper_profile("high"), dist, 20_000)
    quick = simview.quick_trials(default)
    step = CHUNK_CELLS // default.width
    assert quick is not None and quick % step == 0
    assert simview.QUICK_TRIALS <= quick < simview.QUICK_TRIALS + step
    prof = hdp.EpsilonProfile.from_tiers([0.05, 0.8, math.inf], [300, 99, 5000])
    short = simview.plan_trials(prof, dist, 5_000)
    assert short.cells < simview.QUICK_MIN_CELLS and simview.quick_trials(short) is None
    monkeypatch.setattr(simview, "QUICK_MIN_CELLS", 0)  # a small run stands for a long one
    width = 300 + 99 + 1  # users drawn one by one, and the large public tier's sum
    plan = simview.plan_trials(prof, dist, 2 * (CHUNK_CELLS // width) * 3)
    first = simview.quick_trials(plan)
    assert first is not None and first % (CHUNK_CELLS // width) == 0
    names = [*hdp.METHODS, "TableMean"]
    whole = hdp.simulate_mse(names, prof, dist, trials=plan.trials, seed=9, return_estimates=True)
    part = hdp.simulate_mse(names, prof, dist, trials=first, seed=9, return_estimates=True)
    for m in names:
        assert np.array_equal(part[m].estimates, whole[m].estimates[:first]), m
    assert simview.quick_trials(simview.plan_trials(prof, dist, 2 * first - 1)) is None


@pytest.mark.parametrize(
    ("page_run", "asked", "ready", "shown"),
    [
        (True, False, False, "whole"),  # the page opened or fully rerun
        (False, True, False, "whole"),  # "Run all ... trials" pressed
        (False, False, True, "whole"),  # the whole run is cached
        (False, False, False, "quick"),  # a step of the live controls
    ],
)
def test_a_step_shows_the_quick_result_and_the_rest_the_whole_run(page_run, asked, ready, shown):
    plan = simview.plan_trials(hdp.paper_profile("high"), hdp.Beta(2, 3), 20_000)
    quick = simview.quick_trials(plan)
    want = {"whole": 20_000, "quick": quick}[shown]
    assert simview.shown_trials(plan, page_run, asked, ready) == want
    short = simview.plan_trials(hdp.paper_profile("high"), hdp.Beta(2, 3), 3_000)
    assert simview.shown_trials(short, False, False, False) == 3_000  # under twice the quick
    text = simview.quick_text(quick, 20_000)
    assert text.startswith(simview.QUICK_LABEL)
    assert f"the first {quick:,} of the 20,000 trials (same seed)" in text
    assert simview.whole_run_label(20_000) == "Run all 20,000 trials"


@pytest.mark.parametrize(
    "full_run, is_open, built",
    [
        (True, None, True),  # a full run builds every section, closed or not
        (True, False, True),
        (True, True, True),
        (False, True, True),  # a step rebuilds what is open
        (False, False, False),  # and leaves a closed section empty (issue 29)
        (False, None, False),
    ],
)
def test_builds_closed_sections_on_full_runs_and_while_open(full_run, is_open, built):
    assert simview.builds_closed(full_run, is_open) is built
