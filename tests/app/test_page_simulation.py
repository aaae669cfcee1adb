"""AppTest of the Simulation page: every control, the fragment, the sweep, the paper's
experiment, downloads and the reproducible script, for several current profiles.

Trials are kept small (a few hundred) where the point is the UI. Numbers shown by the page are
checked against direct hdp_core calls with the same inputs and against closed forms.
"""

from __future__ import annotations

import base64
import json
import math

import numpy as np
import pytest
from helpers import whole_frame

import hdp_core as hdp
from hdp_app.common import PROFILE, PROFILE_LABEL, PROFILE_SPEC
from hdp_app.figures.style import METHOD_COLORS
from hdp_app.views import simulation as simview
from hdp_core import experiments

PAGE = "pages/simulation.py"
TRIALS = 500  # the page minimum (simview.MIN_TRIALS)

PER_USER = hdp.paper_profile("high")
HUGE_TIERS = hdp.EpsilonProfile.from_tiers(
    [0.05, 0.5, 2.0, math.inf],
    [6 * 10**11, 3 * 10**11, 10**11, 10**9],
    ["Strict", "Balanced", "Relaxed", "Public"],
)
WITH_PUBLIC = hdp.EpsilonProfile.from_tiers([0.1, math.inf], [900, 100])


def open_sim(at, profile=None, trials: int = TRIALS, **params):
    """Open the app with query parameters, make ``profile`` current, go to the page."""
    at.query_params["sim_trials"] = str(trials)
    for k, v in params.items():
        at.query_params[k] = v if isinstance(v, list) else str(v)
    at.run()
    if profile is not None:
        at.session_state[PROFILE] = profile
        at.session_state[PROFILE_SPEC] = None
        at.session_state[PROFILE_LABEL] = "test profile"
    at.switch_page(PAGE).run()
    check(at)
    return at


def check(at):
    assert not at.exception, at.exception
    return at


def table(at):
    """The results table: the dataframe with a 'Simulated MSE' column, with its parts (a
    wide table is drawn in parts, hdp_app.widgets.wide_dataframe)."""
    for i, df in enumerate(at.dataframe):
        if "Simulated MSE" in df.value.columns:
            return whole_frame(at, i)
    raise AssertionError("no results table")


def metric(at, label):
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r}: {[m.label for m in at.metric]}"
    return found[0]


def chart(at, key):
    for el in at.get("plotly_chart"):
        if getattr(el, "key", None) == key:
            return json.loads(el.spec)
    raise AssertionError(f"no chart {key}")


def arr(v):
    """A plotly JSON array (a list, or numpy's {"dtype", "bdata"} base64 form) as numpy."""
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=np.float64)


def labels(methods):
    return [hdp.METHOD_CLASSES[m].label for m in methods]


# a long run: its first trials early, then the whole run (issue 29) -------------------------
def test_a_long_run_draws_its_first_trials_then_the_whole_run(app, monkeypatch):
    """A run of over twice views.simulation.EARLY_TRIALS draws its first trials first (they
    were computed: caches.simulation.has_run) and ends showing the whole run's numbers only
    (oracle: simulate_mse of the whole run), with no early note and no early element left."""
    from hdp_app.caches import simulation as cache
    from hdp_core.simulate import CHUNK_CELLS

    monkeypatch.setattr(simview, "EARLY_MIN_CELLS", 0)  # a small run stands for a long one
    prof = hdp.EpsilonProfile.from_tiers([0.05, 0.8, math.inf], [300, 99, 5000])
    trials, seed, dist = 2 * (CHUNK_CELLS // 400) + 17, 7919, hdp.Beta(2, 3)
    at = open_sim(app, prof, trials=trials, sim_seed=seed)
    core = hdp.simulate_mse(hdp.METHODS, prof, dist, trials=trials, seed=seed)
    assert list(table(at)["Simulated MSE"]) == [core[m].mse for m in hdp.METHODS]
    assert f"{trials:,} trials, seed {seed}" in " ".join(c.value for c in at.caption)
    assert not [i for i in at.info if "Early result" in i.value]
    assert not [el for el in at.get("plotly_chart") if "early" in (el.key or "")]
    first = simview.early_trials(simview.plan_trials(prof, dist, trials))
    assert first is not None and cache.has_run(prof, ("beta", 2.0, 3.0, 0.5), first, seed)


# defaults, numbers and the reproducible script ---------------------------------------------
def test_defaults_match_hdp_core_and_the_script(app):
    at = open_sim(app, sim_seed=3)
    df = table(at)
    assert list(df["Method"]) == labels(hdp.METHODS)
    dist = hdp.Beta(2, 3)
    core = hdp.simulate_mse(hdp.METHODS, PER_USER, dist, trials=TRIALS, seed=3)
    for i, m in enumerate(hdp.METHODS):
        assert df["Simulated MSE"][i] == core[m].mse
        assert df["95% CI low"][i] == core[m].ci_low
        assert df["95% CI high"][i] == core[m].ci_high
        assert df["Exact MSE"][i] == pytest.approx(hdp.exact_mse(m, PER_USER, dist), rel=1e-12)
        assert df["ln MSE (simulated)"][i] == pytest.approx(math.log(core[m].mse))
        assert df["× ADPM (simulated)"][i] == pytest.approx(core[m].mse / core["ADPM"].mse)
    assert metric(at, "True mean") == "-0.1000"  # Beta(2, 3) - 1/2: 2/5 - 1/2
    assert metric(at, "ADPM simulated MSE") == f"{core['ADPM'].mse:.3e}"
    assert len(at.get("plotly_chart")) >= 3
    mse_chart = chart(at, "sim_mse_chart")
    names = [t["name"] for t in mse_chart["data"]]
    assert names == [*hdp.METHODS, "exact MSE"]
    colors = {t["name"]: t["marker"]["color"] for t in mse_chart["data"][:6]}
    assert colors == {m: METHOD_COLORS[m] for m in hdp.METHODS}
    assert mse_chart["layout"]["yaxis"]["type"] == "log"
    assert "Download results (CSV)" in [d.label for d in at.get("download_button")]
    # the "Reproduce in Python" script prints the numbers the page shows
    code = at.code[0].value
    assert "hdp.preset('paper_high', seed=0)" in code and "seed=3" in code
    ns: dict = {}
    exec(compile(code, "<repro>", "exec"), ns)
    for i, m in enumerate(hdp.METHODS):
        assert ns["res"][m].mse == df["Simulated MSE"][i]
    assert not at.error


# distribution controls --------------------------------------------------------------------
def test_distribution_choice_and_parameters(app):
    at = open_sim(app)
    assert at.number_input(key="sim_a").value == 2.0
    at.number_input(key="sim_a").set_value(5.0).run()
    at.number_input(key="sim_b").set_value(1.0).run()
    check(at)
    assert metric(at, "True mean") == f"{5 / 6 - 0.5:.4f}"
    df = table(at)
    exact = hdp.exact_mse("UNI", PER_USER, hdp.Beta(5, 1))
    assert df["Exact MSE"][5] == pytest.approx(exact, rel=1e-12)

    at.radio(key="sim_dist").set_value("Uniform").run()
    check(at)
    assert metric(at, "True mean") == "0.0000"
    assert not [n for n in at.number_input if n.key in ("sim_a", "sim_b")]
    core = hdp.simulate_mse(hdp.METHODS, PER_USER, hdp.Uniform(), trials=TRIALS, seed=0)
    assert table(at)["Simulated MSE"][0] == core["ADPM"].mse

    at.radio(key="sim_dist").set_value("Two-point").run()
    at.slider(key="sim_p").set_value(0.3).run()
    check(at)
    assert metric(at, "True mean") == "-0.2000"
    # two-point: V = p(1 - p); ADPM's exact MSE = V ||w||^2 + 2 eta^2 (affine estimator)
    sol = hdp.adpm(PER_USER)
    want = 0.21 * float(np.sum(sol.weights**2)) + 2 * sol.noise_scale**2
    assert table(at)["Exact MSE"][0] == pytest.approx(want, rel=1e-10)


def test_bad_parameters_show_an_error_not_a_traceback(app):
    at = open_sim(app)
    at.toggle(key="sim_real").set_value(True).run()
    at.number_input(key="sim_lo").set_value(50.0).run()
    at.number_input(key="sim_hi").set_value(50.0).run()
    check(at)
    assert any("range" in e.value for e in at.error)
    assert at.session_state[PROFILE].key == PER_USER.key  # the profile is untouched


def test_real_units(app):
    at = open_sim(app, sim_real="true", sim_lo="18", sim_hi="90")
    assert metric(at, "Mean (real units)") == f"{18 + 0.4 * 72:.4g}"
    df = table(at)
    assert df["RMSE (real units)"][0] == pytest.approx(math.sqrt(df["Simulated MSE"][0]) * 72)
    hist = chart(at, "sim_hist_chart")
    x = arr(hist["data"][0]["x"])
    assert x.min() >= 18 - 1 and x.max() <= 90 + 1 and x.max() - x.min() > 1


def test_a_link_opens_the_same_settings(app):
    at = open_sim(
        app,
        sim_dist="Two-point",
        sim_p="0.25",
        sim_seed="4",
        sim_methods=["ADPM", "UNI"],
        sim_sw_data="Worst case",
        sim_sw_n2="20",
    )
    assert metric(at, "True mean") == "-0.2500"
    df = table(at)
    core = hdp.simulate_mse(hdp.METHODS, PER_USER, hdp.TwoPoint(0.25), trials=TRIALS, seed=4)
    assert list(df["Simulated MSE"]) == [core["ADPM"].mse, core["UNI"].mse]
    assert metric(at, "PropDPM MSE at eps = ∞") == f"{0.25 / 20:.3e}"


# methods, trials, seed, histogram ----------------------------------------------------------
def test_methods_trials_seed_and_histogram(app):
    at = open_sim(app)
    at.multiselect(key="sim_methods").set_value(["SM", "ADPM"]).run()
    check(at)
    assert list(table(at)["Method"]) == labels(["ADPM", "SM"])
    assert [t["name"] for t in chart(at, "sim_mse_chart")["data"]] == ["ADPM", "SM", "exact MSE"]

    before = table(at)["Simulated MSE"][0]
    at.number_input(key="sim_seed").set_value(11).run()
    check(at)
    after = table(at)["Simulated MSE"][0]
    core = hdp.simulate_mse(hdp.METHODS, PER_USER, hdp.Beta(2, 3), trials=TRIALS, seed=11)
    assert after == core["ADPM"].mse and after != before

    at.number_input(key="sim_trials").set_value(600).run()
    check(at)
    core = hdp.simulate_mse(hdp.METHODS, PER_USER, hdp.Beta(2, 3), trials=600, seed=11)
    assert table(at)["Simulated MSE"][1] == core["SM"].mse
    assert any(c.value.startswith("600 trials, seed 11") for c in at.caption)

    at.multiselect(key="sim_hist").set_value(["LDPE", "FME"]).run()
    check(at)
    hist = chart(at, "sim_hist_chart")
    assert [t["name"].split()[0] for t in hist["data"]] == ["LDPE", "FME"]
    at.multiselect(key="sim_hist").set_value([]).run()
    check(at)
    assert all(getattr(c, "key", None) != "sim_hist_chart" for c in at.get("plotly_chart"))

    at.multiselect(key="sim_methods").set_value([]).run()
    check(at)
    assert any("at least one method" in w.value for w in at.warning)


# the sweep ------------------------------------------------------------------------------
def test_sweep_controls(app):
    at = open_sim(app)
    assert metric(at, "Saturation point") == f"{0.1 + 8 / 90:.4g}"
    sw = chart(at, "sim_sweep_chart")
    assert "public (∞)" in sw["layout"]["xaxis"]["ticktext"]
    v = simview.sweep_eps_values(0.1, 100.0, 60, True, [simview.saturation_point(900, 0.1)])
    exact = hdp.sweeps.group_sweep(900, 0.1, 100, v, hdp.METHODS, hdp.Beta(2, 3))
    assert metric(at, "ADPM MSE at eps = ∞") == f"{exact.mse['ADPM'][-1]:.3e}"

    at.number_input(key="sim_sw_n1").set_value(400).run()
    at.number_input(key="sim_sw_e1").set_value(0.2).run()
    at.number_input(key="sim_sw_n2").set_value(50).run()
    check(at)
    assert metric(at, "Saturation point") == f"{0.2 + 8 / (400 * 0.2):.4g}"
    at.radio(key="sim_sw_data").set_value("Worst case").run()
    check(at)
    # worst case, group public: PropDPM = plain mean of the 50 public users, 1/4 / 50
    assert metric(at, "PropDPM MSE at eps = ∞") == f"{0.25 / 50:.3e}"
    at.toggle(key="sim_sw_pub").set_value(False).run()
    at.number_input(key="sim_sw_hi").set_value(30.0).run()
    check(at)
    assert "public (∞)" not in chart(at, "sim_sweep_chart")["layout"]["xaxis"]["ticktext"]
    assert metric(at, "PropDPM MSE at eps = 30")
    at.number_input(key="sim_sw_lo").set_value(50.0).run()  # from > to
    check(at)
    assert any("eps range" in e.value for e in at.error)
    assert table(at) is not None  # the simulation above is still shown


# profiles -------------------------------------------------------------------------------
def test_tiered_profile_with_huge_counts(app):
    at = open_sim(app, profile=HUGE_TIERS)
    assert any("normal approximation" in i.value for i in at.info)
    df = table(at)
    core = hdp.simulate_mse(hdp.METHODS, HUGE_TIERS, hdp.Beta(2, 3), trials=TRIALS, seed=0)
    assert core["ADPM"].approximate
    assert list(df["Simulated MSE"]) == [core[m].mse for m in hdp.METHODS]
    assert "from_tiers(" in at.code[0].value
    # two-point sums are exact binomials: no approximation note
    at.radio(key="sim_dist").set_value("Two-point").run()
    check(at)
    assert not any("normal approximation" in i.value for i in at.info)


def test_profile_with_public_users(app):
    at = open_sim(app, profile=WITH_PUBLIC)
    df = table(at).set_index("Method")
    # PropDPM and SM keep only the 100 public users: MSE V/100 (hdp_core.baselines docstring),
    # V = 1/25
    for m in ("PropDPM", "SM"):
        assert df.loc[labels([m])[0], "Exact MSE"] == pytest.approx(0.04 / 100, rel=1e-9)
    assert df.loc[labels(["PropDPM"])[0], "× ADPM (exact)"] > 1.5
    assert metric(at, "Best other method: UNI")


def test_large_profile_reduces_trials(app, monkeypatch):
    monkeypatch.setattr(simview, "MAX_SIM_CELLS", 1_200_000)
    prof = hdp.EpsilonProfile.from_values(np.linspace(0.05, 2.0, 2_000))
    at = open_sim(app, profile=prof, trials=5_000)
    assert any("600 trials instead of 5,000" in i.value for i in at.info)
    assert any(c.value.startswith("600 trials") for c in at.caption)
    assert "from_csv" in at.code[0].value
    assert [d.label for d in at.get("download_button")] == [
        "Download results (CSV)",
        "Download profile.csv",
    ]


def test_profile_too_large_to_simulate_shows_exact_mse(app, monkeypatch):
    monkeypatch.setattr(simview, "MAX_SIM_CELLS", 10_000)
    prof = hdp.EpsilonProfile.from_values(np.linspace(0.05, 2.0, 2_000))
    at = open_sim(app, profile=prof, trials=5_000)
    assert any("too many to simulate" in w.value for w in at.warning)
    assert not [df for df in at.dataframe if "Simulated MSE" in df.value.columns]
    (exact,) = [
        whole_frame(at, i) for i, df in enumerate(at.dataframe) if "Exact MSE" in df.value.columns
    ]
    dist = hdp.Beta(2, 3)
    for i, m in enumerate(hdp.METHODS):
        assert exact["Exact MSE"][i] == pytest.approx(hdp.exact_mse(m, prof, dist), rel=1e-12)
    assert chart(at, "sim_sweep_chart") and "simulate_mse" in at.code[0].value


# the paper's experiment ---------------------------------------------------------------------
def test_paper_experiment_button_and_loading_a_profile(app):
    at = open_sim(app, profile=WITH_PUBLIC)
    assert not [df for df in at.dataframe if "High: paper" in df.value.columns]
    at.number_input(key="sim_paper_trials").set_value(500).run()
    at.button(key="sim_paper_run").click().run()
    check(at)
    (paper,) = [
        whole_frame(at, i) for i, df in enumerate(at.dataframe) if "High: paper" in df.value.columns
    ]
    assert list(paper["Method"]) == labels(hdp.METHODS)
    rows = experiments.table1(trials=500, seed=0, profile_seed=0)
    for i, m in enumerate(hdp.METHODS):
        assert paper["High: paper"][i] == experiments.PAPER_TABLE1[m][0]
        assert paper["Low: paper"][i] == experiments.PAPER_TABLE1[m][1]
        assert paper["High: ours (simulated)"][i] == rows[i]["sim_high"]
        assert paper["Low: exact"][i] == pytest.approx(
            math.log(hdp.exact_mse(m, hdp.paper_profile("low"), hdp.Beta(2, 3)))
        )
    assert chart(at, "sim_paper_chart")
    at.number_input(key="sim_paper_seed").set_value(1).run()
    check(at)
    (paper,) = [
        whole_frame(at, i) for i, df in enumerate(at.dataframe) if "High: paper" in df.value.columns
    ]
    rows1 = experiments.table1(trials=500, seed=1, profile_seed=0)
    assert list(paper["Low: ours (simulated)"]) == [r["sim_low"] for r in rows1]
    # showing the table did not change the current profile
    assert at.session_state[PROFILE].key == WITH_PUBLIC.key
    # the table stays while another control changes
    at.number_input(key="sim_seed").set_value(2).run()
    assert [df for df in at.dataframe if "High: paper" in df.value.columns]
    at.button(key="sim_load_low").click().run()
    check(at)
    assert at.session_state[PROFILE].key == hdp.paper_profile("low").key
    assert any("low-variance" in s.value for s in at.success)
    df = table(at)
    core = hdp.simulate_mse(
        hdp.METHODS, hdp.paper_profile("low"), hdp.Beta(2, 3), trials=TRIALS, seed=2
    )
    assert df["Simulated MSE"][0] == core["ADPM"].mse
