"""The Simulation page's what-if section and the Tier designer's "which mean, k releases"
(hdp_app.views.whatif, issues 21 and 22), against independent oracles: closed forms from
each estimator's own weights and noise, a Monte Carlo simulation of the estimates, and
intervals.expected_error_95 on profiles whose levels are divided by k by hand."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.figures.simulation import whatif_figure
from hdp_app.figures.style import METHOD_COLORS
from hdp_app.views import explain
from hdp_app.views import simulation as simview
from hdp_app.views import whatif as wv
from hdp_core.design_io import menu_from_json, menu_to_json
from hdp_core.intervals import expected_error_95
from hdp_core.menu import make_menu
from hdp_core.whatif import whatif_along

INF = math.inf
PENGUIN = [0.1] * 151 + [1.0] * 68 + [INF] * 123  # eps by species (issue 21)
SMALL = [0.05] * 6 + [0.3] * 4 + [2.0] * 6 + [INF] * 3 + [0.0]


def _two_point_moved(p: float, d: float) -> tuple[float, float]:
    """Mean and variance of TwoPoint(p) (mass p at +1/2, 1 - p at -1/2) after the what-if's
    move by d (unit scale), by hand: for d < 0 the +1/2 point moves to 1/2 - delta,
    delta = -d / (1/2 + mu); for d > 0 the -1/2 point moves to -1/2 + delta,
    delta = d / (1/2 - mu)."""
    mu = p - 0.5
    if d < 0:
        a, b = -0.5, 0.5 + d / (0.5 + mu)
    else:
        a, b = -0.5 + d / (0.5 - mu), 0.5
    m = (1 - p) * a + p * b
    return m, (1 - p) * (a - m) ** 2 + p * (b - m) ** 2


def _closed_form(w: np.ndarray, eta: float, strict: np.ndarray, p: float, d: float):
    """Bias and RMSE against the table's mean of T = <w, x> + Laplace(eta), independent
    users, strict users' values TwoPoint(p) moved by d: bias = sum (w - 1/n) mu,
    MSE = bias^2 + sum (w - 1/n)^2 V + 2 eta^2."""
    n = w.size
    m0, v0 = p - 0.5, p * (1 - p)
    m1, v1 = _two_point_moved(p, d)
    mu = np.where(strict, m1, m0)
    var = np.where(strict, v1, v0)
    v = w - 1.0 / n
    bias = float(v @ mu)
    return bias, math.sqrt(bias * bias + float(v * v @ var) + 2 * eta * eta)


@pytest.mark.parametrize("p", [0.3, 0.5, 0.8])
def test_curve_matches_closed_form_of_adpm_and_tablemean(p):
    dist = hdp.TwoPoint(p)
    thr = 0.5
    curve = wv.whatif_curve(SMALL, dist, thr, 0.0, 200.0, ["ADPM", "TableMean", "UNI"])
    lo_s, hi_s = wv.shift_limits(dist, 0.0, 200.0)
    assert curve.shifts[0] == pytest.approx(lo_s) and curve.shifts[-1] == pytest.approx(hi_s)
    assert 0.0 in curve.shifts
    strict = np.array(SMALL) < thr
    adpm = hdp.adpm(SMALL)
    tm = hdp.table_mean(SMALL)
    n = len(SMALL)
    for j, d in enumerate(curve.shifts):
        for name, w, eta in (
            ("ADPM", adpm.weights, adpm.noise_scale),
            ("TableMean", tm.weights, tm.noise_scale),
            ("UNI", None, None),
        ):
            if name == "UNI":
                u = hdp.get_method("UNI", SMALL)
                w, eta = u.weights, u.noise_scale
            b, r = _closed_form(np.asarray(w), float(eta), strict, p, d / 200.0)
            assert curve.bias[name][j] == pytest.approx(b * 200.0, abs=1e-9)
            assert curve.rmse[name][j] == pytest.approx(r * 200.0, rel=1e-9)
    assert n == 20


def test_curve_against_simulated_estimates():
    """Monte Carlo: draw the tables (strict users' values moved by hand), answer with each
    method's own estimate, compare with the table's mean."""
    p, d, thr = 0.4, -0.15, 0.5
    rng = np.random.default_rng(7)
    trials = 4_000
    strict = np.array(SMALL) < thr
    hi_strict = 0.5 + d / (0.5 + (p - 0.5))  # where +1/2 moves for d < 0
    up = rng.random((trials, len(SMALL))) < p
    x = np.where(up, np.where(strict, hi_strict, 0.5), -0.5)
    table = x.mean(axis=1)
    curve = wv.whatif_curve(SMALL, hdp.TwoPoint(p), thr, methods=["ADPM", "TableMean"], points=5)
    j = int(np.argmin(np.abs(curve.shifts - d)))
    assert curve.shifts[j] == pytest.approx(d)  # on this 5-point grid: -0.4 to 0.6
    for name in ("ADPM", "TableMean"):
        est = hdp.get_method(name, SMALL)
        t = np.array([est.estimate(row, rng) for row in x])
        err = t - table
        se_b = err.std() / math.sqrt(err.size)
        assert err.mean() == pytest.approx(curve.bias[name][j], abs=4.5 * se_b)
        rmse = math.sqrt(float(np.mean(err**2)))
        assert rmse == pytest.approx(curve.rmse[name][j], rel=0.06)


def test_adpm_drifts_tablemean_stays_within_its_bias_bound():
    """The what-if's lesson: ADPM's bias against the table's mean grows with the shift (it is
    linear in it), TableMean's never exceeds its worst-case bias bound (table_mean)."""
    dist = hdp.Beta(2, 3)
    curve = wv.whatif_curve(PENGUIN, dist, 0.5, 2700.0, 6300.0, ["ADPM", "TableMean"])
    bound = hdp.table_mean(PENGUIN).bias_bound * 3600.0
    assert np.all(np.abs(curve.bias["TableMean"]) <= bound + 1e-9)
    a = curve.bias["ADPM"]
    assert np.abs(a).max() > 5 * bound  # drifts far past what TableMean can be off by
    slope = np.diff(a) / np.diff(curve.shifts)
    assert np.allclose(slope, slope[0], rtol=1e-9)  # linear in the shift
    # the slope by hand: minus ADPM's extra weight on the lenient users, over the strict ones
    w = hdp.adpm(PENGUIN).weights
    strict = np.array(PENGUIN) < 0.5
    assert slope[0] == pytest.approx(float(np.sum((w - 1 / len(PENGUIN))[strict])))


def test_rows_frame_and_methods():
    rows = wv.whatif_rows(PENGUIN, hdp.Beta(2, 3), 0.5, -900.0, 2700, 6300, ["ADPM", "TableMean"])
    df = wv.whatif_frame(rows)
    assert list(df.columns) == ["Method", "Bias (table)", "RMSE (table)", "RMSE (population)"]
    assert list(df["RMSE (table)"]) == [r[wv.RMSE_T] for r in rows]
    assert list(df["Method"]) == [hdp.METHOD_CLASSES[m].label for m in ("ADPM", "TableMean")]
    assert wv.whatif_methods(["UNI"], 10) == ["ADPM", "UNI", "TableMean"]
    assert wv.whatif_methods(hdp.METHODS, 10, ["ADPM-tuned"]) == [
        *hdp.METHODS,
        *[m for m in hdp.METHOD_CLASSES if m not in hdp.METHODS],
    ]
    big = wv.WHATIF_SM_MAX_ENTRIES + 1
    assert "SM" not in wv.whatif_methods(hdp.METHODS, big)
    assert "SM" in wv.curve_methods(["SM", "ADPM"], wv.WHATIF_CURVE_SM_MAX_ENTRIES)
    assert "SM" not in wv.curve_methods(["SM", "ADPM"], wv.WHATIF_CURVE_SM_MAX_ENTRIES + 1)
    assert wv.sm_left_out(["ADPM"], big) == ""
    assert wv.sm_left_out(["SM"], 10) == ""
    assert "left out here" in wv.sm_left_out(["SM"], big)
    assert "not in the chart" in wv.sm_left_out(["SM"], wv.WHATIF_CURVE_SM_MAX_ENTRIES + 1)


def test_shift_limits_and_defaults():
    dist = hdp.Beta(2, 3)  # mean 0.4 - 0.5 = -0.1 on the unit scale
    low, high = wv.shift_limits(dist, 0.0, 100.0)
    assert low == pytest.approx(-40.0) and high == pytest.approx(60.0)
    hdp.whatif(SMALL, dist, 0.5, low / 100.0)  # the limits themselves are allowed
    hdp.whatif(SMALL, dist, 0.5, high / 100.0)
    with pytest.raises(ValueError):
        hdp.whatif(SMALL, dist, 0.5, (high + 1.0) / 100.0)
    assert low <= wv.default_shift(dist, 0.0, 100.0) < 0
    assert (
        wv.default_shift(hdp.TwoPoint(0.02), 0, 100)
        >= wv.shift_limits(hdp.TwoPoint(0.02), 0, 100)[0]
    )


@pytest.mark.parametrize(
    "eps",
    [PENGUIN, SMALL, hdp.paper_profile("high"), [0.1, 0.1001], [0.2, 5.0, INF]],
)
def test_default_threshold_moves_some_but_not_all(eps):
    thr = wv.default_threshold(eps)
    share = wv.strict_share(eps, thr)
    assert 0 < share < 1
    lv = np.asarray(eps if isinstance(eps, list) else eps.levels, dtype=float)
    assert share == pytest.approx(float(np.mean(lv < thr)))


def test_default_threshold_degenerate_profiles():
    assert wv.default_threshold([1.0] * 5) == 1.0  # nobody stricter: the text says so
    assert wv.default_threshold([INF] * 3) == 1.0
    assert "No user is stricter" in wv.whatif_setup_text(0.0, 1.0, -5.0)
    assert "Every user is stricter" in wv.whatif_setup_text(1.0, 1.0, -5.0)
    t = wv.whatif_setup_text(0.25, 0.5, -5.0, "g")
    assert "25.0% of the users" in t and "-5 g" in t


def test_sentence_uses_whatif_why():
    s = wv.whatif_sentence(PENGUIN, hdp.Beta(2, 3), 0.5, -900.0, 2700, 6300, "g")
    assert s.endswith(explain.WHATIF_WHY)


# ---- k releases (issue 22, planning) --------------------------------------------------------
def _by_hand(levels, counts, k):
    """The profile with every level divided by k, built without the code under test."""
    return hdp.EpsilonProfile.from_tiers([e / k for e in levels], counts)


@pytest.mark.parametrize("k", [1, 2, 12, 52])
@pytest.mark.parametrize("sd", [None, 40.0])
def test_release_errors_are_expected_error_at_scaled_levels(k, sd):
    levels, counts = [0.1, 1.0, 5.0, INF, 0.0], [600, 300, 50, 40, 10]
    lo, hi = 0.0, 500.0
    got = wv.release_errors(hdp.EpsilonProfile.from_tiers(levels, counts), lo, hi, k, sd)
    ref = _by_hand(levels, counts, k)
    assert got.population == pytest.approx(
        expected_error_95(ref, "population", None if sd is None else sd / 500.0) * 500.0
    )
    assert got.table == pytest.approx(expected_error_95(ref, "table") * 500.0)


def test_more_releases_cost_accuracy_and_public_users_do_not_split():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 1.0, INF], [600, 300, 100])
    errs = [wv.release_errors(prof, 0, 1, k) for k in (1, 2, 4, 12, 52)]
    for a, b in itertools.pairwise(errs):
        assert b.population >= a.population and b.table >= a.table
    pub = hdp.EpsilonProfile.from_values([INF] * 20)
    assert wv.release_errors(pub, 0, 1, 12) == wv.release_errors(pub, 0, 1, 1)
    with pytest.raises(ValueError, match="between 1 and 52"):
        wv.release_errors(prof, 0, 1, 0)
    with pytest.raises(ValueError, match="between 1 and 52"):
        wv.release_errors(prof, 0, 1, 53)


def test_menu_release_errors_use_the_menus_spread_and_units():
    menu = make_menu(
        ["Strict", "Open", "Public"], [0.1, 1.0, "public"], [50, 40, 10], 5000, 0, 500, "USD", 80.0
    )
    got = wv.menu_release_errors(menu, 12)
    ref = _by_hand([0.1, 1.0, INF], list(menu.counts), 12)
    assert got.population == pytest.approx(expected_error_95(ref, "population", 80 / 500) * 500)
    assert got.table == pytest.approx(expected_error_95(ref, "table") * 500)
    worst = make_menu(["Strict", "Open"], [0.1, 1.0], [50, 50], 5000, 0, 500, "USD")
    w1 = wv.menu_release_errors(worst, 1)
    assert w1.population == pytest.approx(expected_error_95(worst.to_profile(), "population") * 500)


def test_target_metrics_tones():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 1.0, INF], [600, 300, 100])
    one = wv.release_errors(prof, 0, 500, 1)
    cards = wv.target_metrics(one, one, 1, "USD")
    assert [c.label for c in cards] == [wv.TARGET_LABELS["population"], wv.TARGET_LABELS["table"]]
    assert [c.help for c in cards] == [explain.TARGET_POPULATION_TEXT, explain.TARGET_TABLE_TEXT]
    assert all(c.delta is None and c.delta_color == "off" for c in cards)
    assert cards[0].value == f"± {one.population:.4g} USD"
    twelve = wv.release_errors(prof, 0, 500, 12)
    cards = wv.target_metrics(one, twelve, 12, "USD")
    for c, a, b in zip(cards, (one.population, one.table), (twelve.population, twelve.table)):
        assert c.value == f"± {b:.4g} USD"
        assert c.delta_color == "inverse"  # an increase of the error shows red, never green
        assert (f"{b / a:.3g}× one release" if b >= 2 * a else "vs one release") in c.delta
    pub = hdp.EpsilonProfile.from_values([INF] * 20)
    same = wv.release_errors(pub, 0, 500, 12)
    cards = wv.target_metrics(wv.release_errors(pub, 0, 500, 1), same, 12)
    assert cards[0].delta_color == "off" and "≈ 0%" in (cards[0].delta or "")  # no change: grey
    # the table's mean of public users: only the release's rounding (R / 2^31, issue 31), the
    # same for 1 and 12 releases
    assert cards[1].delta_color == "off" and "≈ 0%" in (cards[1].delta or "")
    assert 500 / 2**31 <= same.table < 500 / 2**30


def test_targets_in_the_json_export_and_import_still_reads_it():
    menu = make_menu(["Strict", "Open"], [0.1, 1.0], [50, 50], 5000, 0, 500, "USD")
    one, each = wv.menu_release_errors(menu, 1), wv.menu_release_errors(menu, 12)
    text = menu_to_json(
        menu, hdp.design.evaluate_menu(menu), {"targets": wv.targets_to_dict(one, each, 12)}
    )
    t = json.loads(text)["results"]["targets"]
    assert t["releases"] == 12
    assert t["error_95_each_release"]["table"] == pytest.approx(each.table)
    assert t["error_95_one_release"]["population"] == pytest.approx(one.population)
    assert menu_from_json(text).key == menu.key


def test_releases_caption():
    assert "one release" in wv.releases_caption(1)
    assert "eps / 12" in wv.releases_caption(12)


# ---- the Simulation page's methods and the figure ------------------------------------------
def test_method_options_and_exact_rows_with_tablemean():
    opts = simview.method_options()
    assert opts[:6] == list(hdp.METHODS) and "TableMean" in opts and "ADPM-tuned" not in opts
    rows = simview.exact_rows(SMALL, hdp.Beta(2, 3), ("ADPM", "TableMean"))
    assert [r["method"] for r in rows] == ["ADPM", "TableMean"]
    assert rows[1]["exact"] == pytest.approx(
        hdp.get_method("TableMean", SMALL).exact_mse(hdp.Beta(2, 3))
    )


def test_whatif_figure_colours():
    curve = wv.whatif_curve(SMALL, hdp.Beta(2, 3), 0.5, methods=["ADPM", "TableMean", "SM"])
    fig = whatif_figure(curve, -0.1, "g<b>")
    names = [t.name for t in fig.data]
    assert names == ["ADPM", "SM", "TableMean"]
    for t in fig.data:
        assert t.line.color == METHOD_COLORS[t.name]
    assert METHOD_COLORS["TableMean"] != METHOD_COLORS["ADPM"]
    assert "<b>" not in fig.layout.xaxis.title.text  # the unit is plain text


@pytest.mark.parametrize(
    "eps", [SMALL, PENGUIN, hdp.EpsilonProfile.from_tiers([0.1, 1, INF], [10**12, 10**11, 10**6])]
)
def test_whatif_along_is_whatif_at_each_shift(eps):
    dist = hdp.Beta(2, 3)
    shifts = [-0.4, -0.1, 0.0, 0.25, 0.6]
    along = whatif_along(eps, dist, 0.5, shifts)
    for j, d in enumerate(shifts):
        one = hdp.whatif(eps, dist, 0.5, d)
        for m, r in one.items():
            a = along[m][j]
            assert a.method == r.method
            for f in ("bias_table", "mse_table", "bias_population", "mse_population"):
                assert getattr(a, f) == pytest.approx(getattr(r, f), rel=1e-9, abs=1e-15), (m, f)
