"""hdp_app.views.bounds, the Bounds page's numbers as shown, cards and sentences (issue 20:
moved out of pages/bounds.py and tested here without Streamlit).

Oracles: hand-picked bound values whose ratios are known, and the paper's constants
(Theorem 4: f/H <= 443, so upper/lower <= 443 x 512 = 226,816).
"""

from __future__ import annotations

import math

from hdp_app.views import bounds as bv


def test_bound_and_units_text():
    assert bv.bound_text(math.inf) == "∞" and bv.bound_text(0.0) == "0"
    assert bv.bound_text(0.0123456) == "0.0123" and bv.bound_text(1.5e-5) == "1.50e-05"
    assert bv.bound_text(12345.0) == "1.23e+04"
    assert bv.units_text(math.nan) == "—" and bv.units_text(12.3456) == "12.35"
    assert bv.units_text(123456.7) == "123,457" and "e" in bv.units_text(3e13).lower()


def test_headline_cards():
    b = {"upper": 0.002, "lower": 1e-5, "f": 0.002, "H": 0.001}
    cards = bv.headline_metrics(b)
    assert [c.value for c in cards] == ["0.002", "1.00e-05", "200", "2"]
    assert "226,816" in cards[2].help and "443" in cards[3].help
    none = bv.headline_metrics({"upper": 0.25, "lower": 0.0, "f": math.inf, "H": 0.0})
    assert none[2].value == "∞" and none[3].value == "—"


def test_marker_cards_and_sentence():
    assert bv.marker_place(2.0, "scale") == "c = 2 (every eps × 2)"
    assert bv.marker_place(1500.0, "n") == "n = 1,500 users"
    cards = bv.marker_metrics("c = 2 (every eps × 2)", 0.01, 1e-4, math.inf)
    assert [c.value for c in cards] == ["c = 2", "0.01", "1.00e-04", "none"]
    s = bv.marker_sentence(0.01, 0.01, {"UNI": 0.05, "PropDPM": 0.02})
    assert s == "At the marker the best baseline is PropDPM with 0.02, 2× ADPM's worst case."
    strict = bv.marker_sentence(0.3, 0.25, {"UNI": 0.5, "PropDPM": 0.4})
    assert strict.endswith("PropDPM, has 0.4: worse than not using the data at all.")
    assert bv.marker_sentence(0.3, 0.25, {"UNI": 0.2}).endswith("The best baseline, UNI, has 0.2.")


def test_sweep_index_marks_the_factor_the_slider_names():
    import numpy as np

    import hdp_core as hdp
    from hdp_core.validate import LEVEL_MIN

    # levels down to 100 x LEVEL_MIN: factors below 0.01 would leave the supported range, so
    # the scale sweep starts at c = 0.01 and position k of SWEEP_EXPONENTS is not position k
    prof = hdp.EpsilonProfile.from_values([100 * LEVEL_MIN, 0.5, 2.0])
    x = bv.sweep_points(prof, "scale")
    assert x.size < bv.SWEEP_EXPONENTS.size and x.min() >= 0.01 * (1 - 1e-9)
    for e in (-2.0, -1.0, 0.0, 0.4, 3.0):
        i = bv.sweep_index(x, e, "scale")
        best = min(range(x.size), key=lambda j: abs(math.log10(x[j]) - e))  # brute force
        assert i == best and math.isclose(x[i], 10**e, rel_tol=1e-9)
    assert bv.sweep_index(x, -3.0, "scale") == 0  # below the sweep: its first point
    # every point of an n sweep is kept: the slider's position is the sweep's position
    xn = bv.sweep_points(prof, "n")
    assert [bv.sweep_index(xn, e, "n") for e in (-3.0, 0.0, 0.2, 3.0)] == [0, 15, 16, 30]
    assert xn[bv.sweep_index(xn, 0.0, "n")] == prof.n
    assert bv.sweep_index(np.array([5.0]), 1.0, "n") == 0


def test_units_table_rows_as_shown():
    from hdp_core.units import Accuracy

    errs = {
        "ADPM": Accuracy(0.01, 1234.4, 2500.6, 1100.0, 12.345),
        "LDPE": Accuracy(0.04, 3e13, math.nan, math.nan, math.nan),
    }
    t = bv.units_table(errs)
    assert tuple(t) == bv.UNITS_COLUMNS
    assert t["method"] == ["ADPM", "LDPE"]
    assert t["worst-case RMSE"] == ["1,234", "3.000e+13"]
    assert t["95% error ±"] == ["2,501", "—"]
    assert t["about ± (normal approximation)"] == ["2,501", "—"]
    assert t["data part sd"] == ["1,100", "—"]
    assert t["Laplace noise scale"] == ["12.35", "—"]


def test_bounds_95_error_is_the_proven_interval_and_the_normal_one_has_its_own_name():
    """Issue 31: one meaning for "95% error". The Bounds page's figure for each affine method
    is the proven population half-width (the Tier designer's: hdp_core.intervals, times R);
    the normal approximation, smaller, is shown only under its own name."""
    import hdp_core as hdp
    from hdp_core.estimators import get_method
    from hdp_core.intervals import population_half_width, population_half_width_for
    from hdp_core.units import Accuracy

    prof = hdp.EpsilonProfile.from_tiers([0.1, 1.0, math.inf], [600, 300, 100])
    errs = bv.method_errors_real(prof, 0.0, 500.0)
    assert errs["ADPM"].half_width == population_half_width_for(prof) * 500.0
    for m in ("ADPM", "UNI", "PropDPM"):
        est = get_method(m, prof)
        want = population_half_width(est.weights, prof.counts, est.noise_scale) * 500.0
        a = errs[m]
        assert a.half_width_kind == "proven" and a.half_width == want
        assert a.half_width_own < a.half_width  # the normal approximation
    t = bv.units_table(errs)
    assert t["95% error ±"][0] == bv.units_text(errs["ADPM"].half_width)
    assert t["about ± (normal approximation)"][0] == bv.units_text(errs["ADPM"].half_width_own)
    card = bv.units_metrics("1", "2", "3")[1]
    assert card.label == "ADPM 95% error: ±" and "Proven" in card.help
    normal = Accuracy(0.01, 1.0, 2.0, 1.0, 1.0)  # a normal-kind half-width stays in its column
    assert bv.units_table({"X": normal})["about ± (normal approximation)"] == ["2"]


def _h_brute(levels: list[float]) -> float:
    """H(eps) = max over i = 0..n of 1 / (||eps_1^i||_1² + n - i), eps ascending, by exact
    fractions (Theorem 3's definition, written out independently of hdp_core.bounds)."""
    from fractions import Fraction

    e = sorted(Fraction(x) for x in levels)
    n = len(e)
    return float(max(1 / (sum(e[:i], Fraction(0)) ** 2 + n - i) for i in range(n + 1)))


def test_summary_brackets_with_theorem_3_from_a_brute_force_h():
    levels = [0.05, 0.2, 0.2, 0.7, 1.5, 3.0, 9.0]
    s = bv.summary(levels)
    h = _h_brute(levels)
    assert math.isclose(s.H, h, rel_tol=1e-12)
    assert math.isclose(s.lower, min(h, 0.25) / 512, rel_tol=1e-12)
    assert s.upper == min(s.f, 0.25) and s.f / s.H <= 443  # Theorems 2 and 4
    assert set(s.worst) == {"PropDPM", "UNI", "FME", "LDPE", "SM"}
    assert all(w >= s.lower for w in s.worst.values())  # no method beats the lower bound
    assert s.capped_H == min(h, 0.25)
    assert s.scatter_point == (math.log(s.f), math.log(h))
    assert s.fh_text == bv.bound_text(s.f / h)
    assert s.as_dict() == {"upper": s.upper, "lower": s.lower, "f": s.f, "H": s.H}


def test_summary_of_a_profile_that_uses_no_data():
    s = bv.summary([0.0, 0.0, 0.0])  # D(3) = 0² + 3 - 3 = 0: H infinite, capped at 1/4
    assert s.upper == 0.25 and math.isclose(s.lower, 0.25 / 512)
    assert s.scatter_point is None and s.fh_text == "—"


def test_data_range_of_a_profile():
    from hdp_core.profile import EpsilonProfile

    assert bv.data_range_of([0.1, 0.2]) is None  # no data
    prof = EpsilonProfile.from_values([0.1, 0.2, 0.3], data=[4.0, -2.5, 7.0])
    assert bv.data_range_of(prof) == (-2.5, 7.0)
    assert bv.data_range_of(EpsilonProfile.from_values([0.1, 0.2], data=[1.0, 1.0])) is None
