"""hdp_app.views.simulation, the Simulation page's labels, tables, cards and sentences
(issue 20: moved out of pages/simulation.py and tested here without Streamlit).

Oracles: the distributions' closed-form moments (Beta(a, b) mean a/(a+b), uniform sd
1/sqrt(12), two-point mean p - 1/2), hand-built rows whose minimum, ratio and gap are known,
and the column names the page and its CSV promise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.views import group_sweep as gs
from hdp_app.views import paper_table as pt
from hdp_app.views import simulation as sv
from hdp_app.views import simulation_controls as sc


def test_dist_spec_normalises_unused_parameters_and_builds_the_distribution():
    assert sv.dist_spec("uniform", 7, 8, 0.1) == sv.dist_spec("uniform", 1, 1, 0.9)
    assert sv.dist_spec("beta", 2, 3, 0.1) == sv.dist_spec("beta", 2, 3, 0.7)
    assert sv.dist_spec("twopoint", 5, 6, 0.3) == sv.dist_spec("twopoint", 1, 2, 0.3)
    beta = sv.make_distribution(*sv.dist_spec("beta", 2, 3, 0.5))
    assert beta.mean == pytest.approx(2 / 5 - 0.5)
    tp = sv.make_distribution(*sv.dist_spec("twopoint", 0, 0, 0.8))
    assert tp.mean == pytest.approx(0.3) and tp.variance == pytest.approx(0.8 * 0.2)
    for kind in sc.DIST_KINDS.values():  # every radio option builds a distribution
        sv.make_distribution(*sv.dist_spec(kind, 2, 3, 0.5))


def test_labels():
    assert "reconstructed" in sv.method_label("FME") and sv.short_label("FME").startswith("FME")
    assert sv.short_label("ADPM") == "ADPM" and sv.method_label("nope") == "nope"
    assert set(sc.DEFAULT_HIST) <= set(hdp.METHODS)


def test_tuned_to_uses_the_own_spread_or_the_guess_clipped():
    uni = sv.make_distribution("uniform")
    assert sv.tuned_to(True, 0.3, uni, 0.01) == pytest.approx(1 / math.sqrt(12))
    assert sv.tuned_to(False, 0.3, uni, 0.01) == 0.3
    assert sv.tuned_to(False, 0.9, uni, 0.01) == 0.5
    assert sv.tuned_to(False, 1e-6, uni, 0.01) == 0.01


def _row(method, mse, ratio):
    return {
        "method": method,
        "mse": mse,
        "ci_low": mse * 0.9,
        "ci_high": mse * 1.1,
        "exact": mse,
        "ln_mse": math.log(mse) if mse > 0 else None,
        "ln_exact": math.log(mse) if mse > 0 else None,
        "ratio": ratio,
        "ratio_exact": ratio,
        "rmse_real": math.sqrt(mse) * 10,
        "rmse_real_exact": math.sqrt(mse) * 10,
    }


ROWS = [_row("ADPM", 1e-4, 1.0), _row("UNI", 5e-4, 5.0), _row("PropDPM", 2e-4, 2.0)]


def test_results_and_download_frames():
    df = sv.results_frame(ROWS, real=False)
    assert list(df["Method"]) == [sv.method_label(m) for m in ("ADPM", "UNI", "PropDPM")]
    assert list(df["Simulated MSE"]) == [1e-4, 5e-4, 2e-4]
    assert "RMSE (real units)" not in df and "RMSE (real units)" in sv.results_frame(ROWS, True)
    dl = sv.download_frame(ROWS, True, "my profile", "Beta(2, 3)", 500, 7, 42)
    assert list(dl.columns[:2]) == ["Profile", "Method"]
    assert list(dl.columns[-4:]) == ["Distribution", "Trials", "Seed", "Users"]
    assert set(dl["Users"]) == {42} and set(dl["Profile"]) == {"my profile"}
    ex = sv.exact_frame(ROWS)
    assert list(ex.columns) == ["Method", "Exact MSE", "ln MSE (exact)", "× ADPM (exact)"]


def test_headline_cards_pick_the_best_other_method():
    cards = sv.headline_metrics(ROWS[0], ROWS)
    assert cards[0].value == "1.000e-04" and "exact 1.000e-04" in cards[0].help
    assert cards[1].value == f"{math.log(1e-4):.2f}"
    # the smallest MSE among the others is PropDPM's (2e-4), twice ADPM's
    assert cards[2].label == "Best other method: PropDPM" and cards[2].value == "2× ADPM's MSE"
    assert "Exact MSE" in cards[2].help and "95% CI" in cards[2].help
    # issue 31: the headline follows the exact column, not the simulated MSE: UNI simulated
    # below ADPM (0.98x) but exactly above it (1.05x), PropDPM exactly 1.2x
    adpm = _row("ADPM", 1e-4, 1.0)
    uni = {**_row("UNI", 0.98e-4, 0.98), "exact": 1.05e-4, "ratio_exact": 1.05}
    prop = {**_row("PropDPM", 1.1e-4, 1.1), "exact": 1.2e-4, "ratio_exact": 1.2}
    card = sv.headline_metrics(adpm, [adpm, prop, uni])[2]
    assert card.label == "Best other method: UNI" and card.value == "1.05× ADPM's MSE"
    uni_first = {**uni, "exact": 1.3e-4, "ratio_exact": 1.3}  # PropDPM's exact is lower
    card = sv.headline_metrics(adpm, [adpm, prop, uni_first])[2]
    assert card.label == "Best other method: PropDPM" and card.value == "1.2× ADPM's MSE"
    zero = _row("ADPM", 0.0, None)
    only = sv.headline_metrics(zero, [zero, _row("UNI", 1e-3, None)])
    assert len(only) == 2 and only[1].value == "−∞"


def test_sweep_cards_and_who_beats_adpm():
    mse = {"ADPM": np.array([2.0, 1.0]), "PropDPM": np.array([1.5, 3.0]), "UNI": np.array([3, 4])}
    cards = gs.sweep_metrics(0.25, mse, "∞")
    assert [c.label for c in cards] == [
        "Saturation point",
        "ADPM MSE at eps = ∞",
        "PropDPM MSE at eps = ∞",
        "PropDPM ÷ ADPM at eps = ∞",
    ]
    assert cards[3].value == "3×"
    mse0 = {"ADPM": np.array([0.0]), "PropDPM": np.array([1.0])}
    assert len(gs.sweep_metrics(0.25, mse0, "10")) == 3  # no ratio to a zero MSE
    assert gs.sweep_beaters(mse, ["ADPM", "PropDPM", "UNI"]) == ["PropDPM"]
    # within 1e-9 relative of ADPM is a tie, not a dip
    assert gs.sweep_beaters({"ADPM": np.array([1.0]), "UNI": np.array([1 - 1e-12])}, ["UNI"]) == []
    assert gs.beaters_text(["PropDPM"]).startswith("Here PropDPM dips below ADPM")


def test_paper_frame_and_gap():
    rows = [
        {
            "method": m,
            "paper_high": ph,
            "sim_high": sh,
            "sim_high_lo": None,
            "sim_high_hi": sh + 0.1,
            "exact_high": sh,
            "paper_low": pl,
            "sim_low": sl,
            "sim_low_lo": sl - 0.1,
            "sim_low_hi": sl + 0.1,
            "exact_low": sl,
        }
        for m, ph, sh, pl, sl in (
            ("ADPM", -9.3, -9.25, -7.0, -7.3),
            ("UNI", -5.0, -math.inf, -4.0, -4.1),  # a -inf simulated value is left out
        )
    ]
    assert pt.paper_sim_gap(rows) == pytest.approx(0.3)  # |-7.3 - (-7.0)|
    df = pt.paper_frame(rows)
    assert list(df.columns) == [
        "Method",
        *(
            f"{k}: {c}"
            for k in ("High", "Low")
            for c in ("paper", "ours (simulated)", "95% CI", "exact")
        ),
    ]
    assert df["High: 95% CI"][0] == "−∞ to -9.15"


def test_sentences():
    plan = sv.TrialPlan(requested=20_000, trials=5_000, width=10_000, budget=50_000_000)
    assert "**5,000 trials instead of 20,000**" in sv.reduced_text(plan)
    assert sv.too_large_text(plan).startswith("This profile needs 10,000 random values")
    assert sv.run_caption(500, 3, "Uniform", 1).startswith(
        "500 trials, seed 3, data Uniform, 1 user."
    )
    assert sv.tuned_caption("T", True).endswith("own spread).")
