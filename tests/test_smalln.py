"""The small-n 95% error half-width (hdp_core.smalln) against brute force, and the Tier
designer's proven figure (hdp_core.intervals) against both: every one of the 2^n outcomes of n
users at the two ends of the range, the Laplace noise's distribution function written out here,
and the quantile found by this file's own search; p runs over a grid different from the
module's."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from hdp_core import design as D
from hdp_core.smalln import two_point_half_width
from hdp_core.units import error_half_width


def _laplace_cdf(x: np.ndarray, b: float) -> np.ndarray:
    return np.where(x < 0, 0.5 * np.exp(x / b), 1 - 0.5 * np.exp(-x / b))


def brute_quantile(w_users, p: float, b: float, level: float = 0.95) -> float:
    """Level-quantile of |sum_i w_i (B_i - p) + L| by enumerating all outcomes."""
    w = np.asarray(w_users, dtype=float)
    outs = np.array(list(itertools.product((0.0, 1.0), repeat=w.size)))
    err = outs @ w - p
    pr = np.prod(np.where(outs == 1.0, p, 1 - p), axis=1)
    if b == 0:
        order = np.argsort(np.abs(err))
        cum = np.cumsum(pr[order])
        return float(np.abs(err)[order][np.searchsorted(cum, level - 1e-12)])

    def cdf(h: float) -> float:
        return float(np.sum(pr * (_laplace_cdf(h - err, b) - _laplace_cdf(-h - err, b))))

    lo, hi = 0.0, 2.0 + 40 * b
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if cdf(mid) < level else (lo, mid)
    return hi


def brute_sup(w_users, b: float, grid: int = 1500) -> float:
    ps = np.linspace(1e-4, 0.5, grid)
    return max(brute_quantile(w_users, p, b) for p in ps)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "issue"), [(2, 0.776), (3, 0.632), (10, 0.350)])
def test_public_only_issue_cases(n, issue):
    got = two_point_half_width([1.0 / n], [n])
    assert got == pytest.approx(issue, abs=6e-4)
    ref = brute_sup([1.0 / n] * n, 0.0)
    assert ref - 1e-9 <= got <= ref + 2e-3  # the module's sup is at least the grid's max
    assert got > error_half_width(0.5 / math.sqrt(n), 0.0)  # the normal figure understates


def test_public_only_n2_closed_form_and_n30():
    assert two_point_half_width([0.5], [2]) == pytest.approx(1 - math.sqrt(0.05), abs=1e-6)
    # n = 30 by binomial probabilities (math.comb), p on a fine grid
    n, best = 30, 0.0
    for p in np.linspace(1e-4, 0.5, 4000):
        pr = np.array([math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)])
        a = np.abs(np.arange(n + 1) / n - p)
        o = np.argsort(a)
        best = max(best, a[o][np.searchsorted(np.cumsum(pr[o]), 0.95 - 1e-12)])
    assert two_point_half_width([1 / n], [n]) == pytest.approx(best, abs=2e-3)
    assert best == pytest.approx(0.183, abs=6e-4)


@pytest.mark.parametrize(
    ("weights", "counts", "b"),
    [([0.25, 0.125], [2, 4], 0.1), ([0.3, 0.15, 0.4 / 3], [1, 2, 3], 0.05), ([1 / 7], [7], 0.3)],
)
@pytest.mark.slow
def test_tiers_with_noise_against_brute_force(weights, counts, b):
    w_users = np.repeat(weights, counts)
    assert w_users.sum() == pytest.approx(1.0)
    got = two_point_half_width(weights, counts, b)
    ref = brute_sup(w_users, b, grid=300)
    assert got == pytest.approx(ref, rel=2e-3)


def test_too_many_atoms_and_bad_input():
    assert two_point_half_width([1e-4], [10_000]) is None
    with pytest.raises(ValueError, match="add up to 1"):
        two_point_half_width([0.2], [3])
    with pytest.raises(ValueError):
        two_point_half_width([0.5], [2], level=1.0)


def _menus():
    for n in (1, 2, 3, 4, 6, 10, 25):
        for eps in (0.05, 0.3, 1.0, 3.0):
            for pub in (0, 20, 50, 100):
                yield D.make_menu(
                    ["s", "p"],
                    [eps, math.inf],
                    [100 - pub, pub],
                    n_users=n,
                    low=0,
                    high=500,
                    unit="USD",
                    normalise=True,
                )


@pytest.mark.slow
def test_design_proven_half_width_covers_the_exact_two_point_worst_case():
    """The Tier designer's 95% error is now the proven interval (hdp_core.intervals, issue 21):
    at small n it is at least the exact worst case over data at the two ends of the range
    (this module), which it must cover, and it is what intervals.population_half_width gives."""
    from hdp_core import intervals as I

    for menu in _menus():
        rep = D.evaluate_menu(menu)
        a = rep.errors["ADPM"]
        assert a.half_width_kind == "proven" and a.rmse <= 250.0 + 1e-9
        if a.outputs_zero:
            assert a.half_width == 250.0
            continue
        sol = D.profile_errors(menu.levels, menu.counts, menu)[0]
        proven = I.population_half_width(sol.weights, sol.profile.counts, sol.noise_scale)
        assert a.half_width == pytest.approx(500 * proven, rel=1e-12)
        exact = two_point_half_width(sol.weights, sol.profile.counts, sol.noise_scale)
        if exact is not None:
            assert a.half_width >= 500 * exact * (1 - 1e-9)


def test_issue_unit_range_one_public_user():
    """One public user on [0, 1]: the answer is the user's value, within 1 of any mean in the
    range (the proven figure; the exact worst case is 0.95), and the note says that answering
    the middle of the range would never be off by more than 0.5."""
    from hdp_core.views import design as V

    m = D.make_menu(["p"], [math.inf], [100], n_users=1)
    rep = D.evaluate_menu(m)
    one = rep.errors["ADPM"]
    assert one.half_width == 1.0 and one.half_width_kind == "proven"
    exact = two_point_half_width([1.0], [1])
    assert exact == pytest.approx(0.95, abs=1e-3) and exact <= one.half_width
    assert "±0.5" in V.half_width_note(m, rep)


def test_half_width_notes_say_which_figure_it_is():
    from hdp_core.views import design as V
    from hdp_core.views import explain

    m = D.make_menu(["s", "p"], [0.1, math.inf], [50, 50], n_users=6, low=0, high=500, unit="USD")
    rep = D.evaluate_menu(m)
    a = rep.errors["ADPM"]
    assert a.half_width > 250  # more than half the range: the note compares with the middle
    note = V.half_width_note(m, rep)
    assert "proven" in note and "any data in the range" in note and "±250 USD" in note
    big = D.default_menu()
    note = V.half_width_note(big, D.evaluate_menu(big))
    assert "proven" in note and "±250" not in note and "approximation" not in note.split("(")[0]
    sd = D.make_menu(["s"], [1.0], [100], 1000, 0, 10, "", 1.0)
    assert "standard deviation you gave" in V.half_width_note(sd, D.evaluate_menu(sd))
    tiny = D.evaluate_menu(D.make_menu(["a"], [0.01], [100], 3, 0, 10)).errors["ADPM"]
    assert tiny.outputs_zero and "middle of the range" in explain.half_width_note(tiny)


@pytest.mark.slow
def test_proven_half_width_covers_brute_force_worst_case():
    """Brute force over all 2^5 outcomes of 5 users at the ends of the range: the proven
    figure is at least the worst-case 95% quantile, for two profiles."""
    m = D.make_menu(["a", "b"], [4.0, 6.0], [50, 50], n_users=5)  # 3 users at 4, 2 at 6
    assert list(m.counts) == [3, 2]
    s0, a0 = D.profile_errors(np.array([4.0, 6.0]), m.counts, m)
    s1, a1 = D.profile_errors(np.array([8.0, 6.0]), m.counts, m)  # tier a loosened to 8
    for sol, acc in ((s0, a0), (s1, a1)):
        w_users = np.repeat(sol.weights, m.counts)
        assert acc.half_width >= brute_sup(w_users, sol.noise_scale, 400)
