"""Issue 23, the teaching path's views (hdp_app.views.tour and the sentences appended to
views.explain). Oracles: exact rational arithmetic on the paper's recursion (Algorithm 1,
Theorem 2), the two-group remark's threshold written out, and the README's ranges; never
numbers copied from the code's output.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.views import explain, tour
from hdp_app.views.saturation import teaching_example
from hdp_core.adpm import adpm_trace
from hdp_core.solvers import DesignAnswer


def _alg1(levels):
    """Algorithm 1 in exact arithmetic on sorted finite levels: granted r_1..r_n and the
    first saturated 1-based step (None if none)."""
    e = sorted(Fraction(x) for x in levels)
    r = [e[0]]
    first = None
    for k in range(1, len(e)):
        cap = (sum(x * x for x in r) + 8) / sum(r)
        if e[k] >= cap and first is None:
            first = k + 1
        r.append(min(e[k], cap))
    return r, first


# walk-through ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "levels",
    [[0.2, 0.3, 0.5, 1.0, 2.0, 4.0, 8.0], [0.1] * 30 + [5.0] * 3, [1.0, 2.0, 3.0], [0.05] * 4],
)
def test_jump_to_saturation_and_step_weights_match_exact_arithmetic(levels):
    tr = adpm_trace(levels)
    r_exact, first = _alg1(levels)
    assert tour.saturation_step(tr) == first
    for k in range(1, len(levels) + 1):
        w = tour.step_weights(tr, k)
        l1 = sum(r_exact[:k])
        l2 = sum(x * x for x in r_exact[:k])
        np.testing.assert_allclose(w.weights, [float(x / l1) for x in r_exact[:k]], rtol=1e-12)
        assert math.isclose(w.weights.sum(), 1.0, rel_tol=1e-12)
        assert math.isclose(w.noise_scale, float(1 / l1), rel_tol=1e-12)
        # Theorem 2: f = (||r||^2 + 8)/(4 ||r||_1^2) = data (1/4)||w||^2 + noise 2 eta^2
        f_exact = (l2 + 8) / (4 * l1 * l1)
        assert math.isclose(w.f, float(f_exact), rel_tol=1e-12)
        assert math.isclose(w.sampling, float(Fraction(1, 4) * l2 / (l1 * l1)), rel_tol=1e-12)
        assert math.isclose(w.noise, float(2 / (l1 * l1)), rel_tol=1e-12)
        # the walk-through's own f column agrees
        assert math.isclose(w.f, float(tr.f[k - 1]), rel_tol=1e-12)


def test_teaching_example_jumps_to_step_25():
    """The example's docstring: users 25..50 saturate (checked here by exact arithmetic)."""
    lv = [float(x) for x in teaching_example().levels if math.isfinite(x)]
    _, first = _alg1(lv)
    assert tour.saturation_step(adpm_trace(teaching_example())) == first == 25


def test_step_weights_refuses_bad_steps():
    tr = adpm_trace([0.5, 1.0])
    for bad in (0, 3):
        with pytest.raises(ValueError):
            tour.step_weights(tr, bad)


def test_why_eight_text_and_numbers():
    assert "2 divided by the data's worst-case variance 1/4" in explain.WHY_EIGHT
    assert "(‖r‖₂² + 8)/(4‖r‖₁²)" in explain.WHY_EIGHT
    tr = adpm_trace([0.5, 1.0, 2.0])
    w = tour.step_weights(tr, 2)
    # r = (0.5, 1.0): l1 = 1.5, l2 = 1.25; data 1.25/(4 * 2.25), noise 2/2.25
    text = explain.why_eight_numbers(w)
    assert "‖r‖₁ = 1.5" in text and "‖r‖₂² = 1.25" in text
    assert f"{1.25 / 9:.4g}" in text and f"{2 / 2.25:.4g}" in text
    assert f"{(1.25 + 8) / 9:.4g}" in text
    assert "w₁ = 0.333, w₂ = 0.667" in explain.step_weights_text(w)
    assert f"η = 1/‖r‖₁ = {1 / 1.5:.4g}" in explain.step_weights_text(w)


def test_tuned_trace_uses_its_constant():
    tr = adpm_trace([0.5, 1.0], data_sd=0.25)  # c = 2/s^2 = 32, data variance 1/16
    w = tour.step_weights(tr, 2)
    assert w.constant == 32.0
    assert math.isclose(w.sampling, (1 / 16) * 1.25 / 2.25, rel_tol=1e-12)
    assert "+ 32" in explain.why_eight_numbers(w)


def test_tau_beside_the_sidebar_says_both_in_one_sentence():
    ex, cur = teaching_example(), hdp.paper_profile("high")
    s = explain.tau_beside_sidebar(ex, cur, "the 50-user teaching example")
    assert s.endswith(".") and ". " not in s  # one sentence
    assert "τ* = 1.325" in s and f"τ* = {hdp.adpm(cur).saturation_level:.4g}" in s
    assert "not the sidebar's" in s
    same = explain.tau_beside_sidebar(cur, cur)
    assert "your current profile" in same and "as in the sidebar" in same


# tones ------------------------------------------------------------------------------------
def _ans(status, value=None):
    return DesignAnswer(status, value, None, 1.0, None, "")


def test_answer_tones():
    assert tour.answer_tone(_ans("already", 10), "users", 100) == "success"
    assert tour.answer_tone(_ans("ok", 5000), "users", 100) == "warning"  # needs more users
    assert tour.answer_tone(_ans("ok", 50), "users", 100) == "success"
    assert tour.answer_tone(_ans("ok", 30), "move") == "warning"
    assert tour.answer_tone(_ans("ok", 0.3), "level") == "info"
    assert tour.answer_tone(_ans("impossible"), "users", 100) == "error"
    assert tour.answer_tone(_ans("trivial"), "level") == "info"


def test_needs_more_users_from_the_solver_is_a_warning():
    from hdp_core.design import menu_error
    from hdp_core.menu import default_menu
    from hdp_core.solvers import min_users

    m = default_menu()
    target = 0.5 * menu_error(m)  # halving the error needs about 4x the users
    ans = min_users(m, target)
    assert ans.status == "ok" and ans.value > m.n_users
    assert tour.answer_tone(ans, "users", m.n_users) == "warning"


def test_change_of_about_zero_is_neutral():
    assert tour.change_tone(1.0 + 1e-12, 1.0) == "neutral"
    assert tour.delta_color(1.0 + 1e-12, 1.0) == "off"
    assert tour.change_tone(1.2, 1.0) == "worse"
    assert tour.change_tone(0.8, 1.0) == "better"
    assert tour.delta_color(1.2, 1.0) == "inverse"
    assert tour.change_tone(1.2, 1.0, lower_is_better=False) == "better"
    assert tour.delta_color(1.2, 1.0, lower_is_better=False) == "normal"
    # UNI equal to ADPM (one level for everyone): no red "≈ 0%"
    prof = hdp.EpsilonProfile.from_values([0.5] * 100)
    from hdp_core.distributions import Beta
    from hdp_core.estimators import exact_mse

    a, u = exact_mse("ADPM", prof, Beta(2, 3)), exact_mse("UNI", prof, Beta(2, 3))
    assert explain.approx_percent(u, a) == "≈ 0%"
    assert tour.delta_color(u, a) == "off"


# phase diagram ----------------------------------------------------------------------------
def test_phase_state_moves_both_levels_and_matches_the_remark():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 5.0], [900, 100])
    st0 = tour.phase_state(prof)
    assert (st0.n, st0.eps1, st0.eps2, st0.from_profile) == (1000, 0.1, 5.0, True)
    assert math.isclose(st0.frac, 0.9)
    thr = 0.1 + 8 / (900 * 0.1)  # the two-group remark, written out
    assert math.isclose(st0.threshold, thr, rel_tol=1e-12) and st0.saturated
    # move eps2 below the threshold: not saturated; above: saturated
    below = tour.phase_state(prof, eps2=0.9 * thr)
    above = tour.phase_state(prof, eps2=1.1 * thr)
    assert not below.saturated and above.saturated and not below.from_profile
    # move eps1: the threshold follows the formula
    moved = tour.phase_state(prof, eps1=0.5)
    assert math.isclose(moved.threshold, 0.5 + 8 / (900 * 0.5), rel_tol=1e-12)
    i = np.searchsorted(moved.boundary_eps1, 0.5)
    e1 = moved.boundary_eps1[i]
    assert math.isclose(moved.boundary_eps2[i], e1 + 8 / (1000 * 0.9 * e1), rel_tol=1e-12)
    assert moved.slider_min == 1e-3 and moved.slider_max == 1e2


def test_phase_state_for_a_profile_that_is_not_two_groups():
    st_ = tour.phase_state(hdp.paper_profile("high"))
    assert st_.n == 1000 and 0 < st_.frac < 1 and st_.eps1 < st_.eps2
    assert not st_.from_profile
    assert tour.phase_state(hdp.paper_profile("high"), eps1=0.2, eps2=math.inf).saturated


# the tour ---------------------------------------------------------------------------------
def test_tour_has_five_steps_with_titles_controls_and_numbers():
    titles = [tour.tour_step(i).title for i in range(1, 6)]
    assert titles == [
        "1. Who saturates",
        "2. Privacy for free",
        "3. The bound gap",
        "4. The simulation",
        "5. A tier menu",
    ]
    for i in range(1, 6):
        s = tour.tour_step(i)
        assert s.sentences and s.controls and s.numbers
        for c in s.controls:
            assert c.lo <= c.default <= c.hi and c.help
    with pytest.raises(ValueError):
        tour.tour_step(6)


def test_tour_numbers_are_the_paper_two_group_example():
    """1000 users, 90% at 0.1 and 10% at 5 (defaults): tau* = (900 * 0.01 + 8)/(900 * 0.1)."""
    tau = Fraction(900 * Fraction(1, 100) + 8) / (900 * Fraction(1, 10))
    s1 = tour.tour_step(1)
    assert math.isclose(s1.numbers["tau*"], float(tau), rel_tol=1e-12)
    assert s1.numbers["users capped"] == 100
    s2 = tour.tour_step(2)
    assert math.isclose(s2.numbers["times more privacy"], float(5 / tau), rel_tol=1e-12)
    # ADPM's worst case from Theorem 2 in exact arithmetic: r = 0.1 x900, tau x100
    l1 = 900 * Fraction(1, 10) + 100 * tau
    l2 = 900 * Fraction(1, 100) + 100 * tau * tau
    assert math.isclose(s2.numbers["ADPM worst-case MSE"], float((l2 + 8) / (4 * l1 * l1)))
    # PropDPM: w = eps/||eps||_1, eta = 1/||eps||_1
    e1 = 900 * Fraction(1, 10) + 100 * 5
    e2 = 900 * Fraction(1, 100) + 100 * 25
    prop = e2 / (4 * e1 * e1) + 2 / (e1 * e1)
    assert math.isclose(s2.numbers["PropDPM worst-case MSE"], float(prop), rel_tol=1e-9)
    assert s2.numbers["PropDPM worst-case MSE"] > s2.numbers["ADPM worst-case MSE"]
    # moving a control carries: eps2 below the threshold, nobody is capped
    s1b = tour.tour_step(1, {"tour_eps2": 0.15})
    assert s1b.numbers["users capped"] == 0 and "Nobody is capped" in s1b.sentences[0]


def test_tour_numbers_come_from_the_chart_functions():
    from hdp_core.design import evaluate_menu

    s3 = tour.tour_step(3)
    p = s3.profile
    assert s3.numbers["f/H"] == hdp.optimality_ratio(p)
    assert s3.numbers["lower bound (H ∧ 1/4)/512"] == hdp.lower_bound(p)
    s4 = tour.tour_step(4)
    assert s4.numbers["ADPM exact MSE"] == hdp.exact_mse("ADPM", p, hdp.Beta(2, 3))
    s5 = tour.tour_step(5)
    rep = evaluate_menu(tour._tour_menu(1000, 0.9, 0.1, 5.0))
    assert s5.numbers[tour.RMSE_LABELS["ADPM"]] == rep.errors["ADPM"].rmse
    assert f"{rep.errors['ADPM'].rmse:.4g} USD" in s5.sentences[-1]
    assert "between 0 and 500 USD" in s5.sentences[-1]  # with the range it is for


def test_the_walk_through_step_names_the_sidebar_tau_in_the_same_sentence():
    ex, cur = teaching_example(), hdp.paper_profile("high")
    tr = adpm_trace(ex)
    k = tour.saturation_step(tr)
    s = explain.trace_step_beside_sidebar(tr, k, ex, cur)
    t_cur = f"{hdp.adpm(cur).saturation_level:.4g}"
    assert "τ* = 1.325" in s and f"not the sidebar's τ* = {t_cur}" in s
    assert s.endswith(".") and ". " not in s.split("saturation!")[1]  # one sentence
    # steps before saturation quote no τ*; the current profile itself needs no remark
    assert explain.trace_step_beside_sidebar(tr, 3, ex, cur) == explain.trace_step_beside_sidebar(
        tr, 3, ex, ex
    )
    assert "sidebar" not in explain.trace_step_beside_sidebar(tr, k, ex, ex)


# sliders, links and cards of the teaching path ------------------------------------------------
def test_log_grid_is_log_spaced_with_two_digits_and_its_ends():
    g = tour.log_grid(1e-3, 1e2, 0.05, (0.137,))
    assert g[0] == 1e-3 and g[-1] == 100.0 and 0.137 in g
    assert list(g) == sorted(set(g))
    fin = np.log10([x for x in g if x != 0.137])
    steps = np.diff(fin)
    assert steps.max() < 0.05 + 0.03 and steps.min() > 0.05 - 0.03  # about 1/20 decade
    assert all(float(f"{x:.2g}") == x for x in g if x != 0.137)  # 2 significant digits
    assert {0.1, 1.0, 5.0, 10.0} <= set(g)
    with pytest.raises(ValueError):
        tour.log_grid(1.0, 0.5, 0.1)


def test_nearest_on_a_log_scale():
    g = (0.1, 1.0, 10.0)
    assert tour.nearest(g, 0.3) == 0.1 and tour.nearest(g, 0.35) == 1.0  # sqrt(0.1) = 0.316
    assert tour.nearest((*g, math.inf), math.inf) == math.inf
    assert tour.nearest(g, 0.0) == 0.1


def test_every_control_default_is_on_its_grid_and_round_trips_through_the_link():
    for c in {c.key: c for _, _, cs, _ in tour.TOUR for c in cs}.values():
        g = tour.control_grid(c)
        assert c.default in g and g[0] == c.lo and g[-1] == c.hi
        for x in g:
            assert tour.parse_control(c, tour.control_text(c, x)) == pytest.approx(x)
    assert tour.control_text(tour.N_USERS, 5000.0) == "5,000"
    assert tour.control_text(tour.SHARE, 90.0) == "90%"
    for bad in (None, "lots", "nan", "1e9", "-3", "inf"):
        assert tour.parse_control(tour.N_USERS, bad) is None


def test_number_text():
    assert tour.number_text("users capped", 1234.0) == "1,234"
    assert tour.number_text("tau*", math.inf) == "none"
    assert tour.number_text("times more privacy", math.inf) == "∞"
    assert tour.number_text("ADPM worst-case MSE", 0.000123456) == "1.235e-04"
    assert tour.number_text("ADPM RMSE (USD)", 10.4123) == "10.41"
    assert tour.number_text("f/H", 0.28812) == "0.2881"
    assert tour.number_text("tau*", math.nan) == "—"


def test_weights_column_follows_the_table_order():
    tr = adpm_trace([0.5, 1.0, 2.0])
    w = tour.weights_column(tr, 2)  # latest first: r = (0.5, 1.0), l1 = 1.5
    np.testing.assert_allclose(w, [1.0 / 1.5, 0.5 / 1.5], rtol=1e-12)


def test_phase_state_with_n_and_share_moved_and_its_point():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 5.0], [900, 100])
    s = tour.phase_state(prof, n=5000, frac=0.25, eps1=0.02, eps2=math.inf)
    assert s.n == 5000 and s.frac == 0.25 and not s.from_profile
    assert math.isclose(s.threshold, 0.02 + 8 / (1250 * 0.02), rel_tol=1e-12) and s.saturated
    pt = tour.phase_point(s)
    assert (pt.n, pt.eps1, pt.eps2, pt.saturated) == (5000, 0.02, math.inf, True)
    # the same values as the profile's own: still the profile
    assert tour.phase_state(prof, eps1=0.1, eps2=5.0, n=1000, frac=0.9).from_profile
    text = explain.phase_origin_text(s, two_levels=True)
    assert "what-if" in text and "eps2 = public" in text and "unchanged" in text
    own = explain.phase_origin_text(tour.phase_state(prof), two_levels=True)
    assert own.startswith("The star is your current profile: 90% of 1,000 users at eps1 = 0.1")
    other = tour.phase_state(hdp.paper_profile("high"))
    t = explain.phase_origin_text(other, two_levels=False)
    assert f"({other.start_eps1:.4g} and {other.start_eps2:.4g})" in t
    assert "smaller eps = more privacy" in explain.phase_level_help("looser").lower()
