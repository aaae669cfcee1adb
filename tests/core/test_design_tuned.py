"""Tier designer with a known data sd (issue 14): the menu's numbers come from ADPM tuned to
s = sd / (hi - lo), and every accuracy-first solver is exact, checked against brute-force scans
in both modes (worst case, known sd), including the cases that failed with worst-case weights.

Oracles: full scans of n, of m (users moved) and dense geometric grids of eps, evaluated through
``profile_errors`` one point at a time; a grid minimisation of the two-tier tuned MSE written
here from the formula s^2 ||r||_2^2/||r||_1^2 + 2/||r||_1^2.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_core import design as D
from hdp_core import menu as M
from hdp_core import solvers as S

INF = math.inf
MODES = [None, "sd"]


def issue_menu_sp(sd=5.0) -> M.Menu:
    return M.make_menu(["S", "P"], [0.1, INF], [10, 90], 100, 0, 500, "", sd)


def issue_menu_sr(sd=20.0) -> M.Menu:
    return M.make_menu(["Strict", "Relaxed"], [0.1, 1.0], [80, 20], 5000, 0, 500, "", sd)


def scan_n(menu: M.Menu, metric: str, top: int) -> np.ndarray:
    return np.array([D.menu_error(menu.with_n_users(n), metric) for n in range(1, top + 1)])


def test_tuned_weights_used_when_sd_known():
    m = issue_menu_sp()
    sol, err = D.profile_errors(m.levels, m.counts, m)
    assert D.tuned_sd(m) == pytest.approx(5.0 / 500)
    assert sol.data_sd == pytest.approx(0.01) and sol.constant == pytest.approx(2 / 0.01**2)
    # independent two-tier oracle: r = (x, y) for 10 strict users at 0.1 and 90 public users;
    # scaling r does not change the MSE, so fix the public level y and scan the strict one
    x = np.linspace(0.0, 0.1, 200_001)
    for y in [1e3, 1e4, 1e5, 1e6, 1e7]:
        s1, s2 = 10 * x + 90 * y, 10 * x**2 + 90 * y**2
        best = float(((0.01**2 * s2 + 2.0) / s1**2).min())
        assert err.mse <= best * (1 + 1e-9)
    assert D.tuned_sd(issue_menu_sp(None)) is None
    assert D.tuned_sd(issue_menu_sp(0.0)) == D.SD_FLOOR


@pytest.mark.parametrize("sd", [None, 1.0, 20.0, 100.0])
def test_loosest_level_worth_offering_uses_the_tuned_constant(sd):
    """Saturation lemma (B) with constant c: a new tier at any level >= worth is granted
    exactly worth, however many users pick it (checked with adpm on the extended profile)."""
    m = M.make_menu(["a", "b"], [0.05, 0.2], [70, 30], 2000, 0, 500, "", sd)
    rep = D.evaluate_menu(m)
    s = D.tuned_sd(m)
    top = min(1e3, 0.999 * hdp.LEVEL_MAX / rep.worth_offering)  # inside the supported range
    for extra, users in [(1.01, 1), (3.0, 500), (top, 10_000)]:
        lv = np.append(m.levels, rep.worth_offering * extra)
        ct = np.append(m.counts, users)
        sol = hdp.adpm(hdp.EpsilonProfile.from_tiers(lv, ct), data_sd=s)
        assert sol.r[-1] == pytest.approx(rep.worth_offering, rel=1e-9)


# min_users ----------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("metric", M.METRICS)
def test_min_users_issue_menu_brute_force(mode, metric):
    m = issue_menu_sp(5.0 if mode else None)
    errs = scan_n(m, metric, 400)
    for target in [1.2544, 2.233, 3.0, 10.0, 40.0, float(errs[-1]) * 1.001]:
        first = next((i + 1 for i, e in enumerate(errs) if e <= target), None)
        if first is None:
            continue
        ans = S.min_users(m, target, metric)
        assert ans.status == "ok" and ans.value == first, (target, ans.message)
        if first > 1:
            assert ans.error_below > target


def test_min_users_issue_cases():
    """Issue 14: RMSE 1.2544 (worst-case weights said 57 while 34 already met it) and a
    half-width target. With the tuned weights the RMSE scan is non-increasing and the solver's
    answer is the scan's first n (the half-width's too, although it may rise by a hair)."""
    m = issue_menu_sp()
    for metric, target in [("rmse", 1.2544), ("half_width", None)]:
        errs = scan_n(m, metric, 200)
        if target is None:  # the proven 95% error at 120 users (2.233 needs more than 200)
            target = float(errs[119])
        if metric == "rmse":  # proven monotone (the half-width may rise by a hair: test_design)
            assert np.all(np.diff(errs) <= 1e-9 * errs[1:])
        first = int(np.argmax(errs <= target)) + 1
        assert errs[first - 1] <= target < errs[first - 2]
        assert S.min_users(m, target, metric).value == first
    # tuned weights need fewer users than the worst-case weights evaluated at sd 5 did (the
    # issue's RMSE case; the 95% error is now the proven interval, not the normal figure)
    assert int(np.argmax(scan_n(m, "rmse", 200) <= 1.2544)) + 1 < 34


# strictest_level ----------------------------------------------------------------------------
def check_strictest(m: M.Menu, tier: int, target: float, metric: str) -> S.DesignAnswer:
    ans = S.strictest_level(m, tier, target, metric)
    grid = np.geomspace(M.EPS_MIN, 1e3, 400)
    errs = np.array([D.menu_error(m.with_eps(tier, float(e)), metric) for e in grid])
    if ans.status == "already":
        assert errs[0] <= target
    elif ans.status == "ok" and math.isfinite(ans.value):
        assert D.menu_error(m.with_eps(tier, ans.value), metric) <= target
        assert D.menu_error(m.with_eps(tier, ans.below), metric) > target
        # no level on the grid stricter than the answer meets the target
        assert not np.any(errs[grid < ans.below] <= target)
    elif ans.status == "impossible":
        assert not np.any(errs <= target)
    return ans


@pytest.mark.slow
def test_strictest_level_issue_case():
    """Issue 14: Strict 0.1 (80%), Relaxed 1.0 (20%), 5000 users, range 0-500, sd 20, RMSE
    0.9482 for tier 0: the worst-case weights said 0.1537 though 0.001 met it; the tuned
    optimum's answer is checked against a grid from EPS_MIN up."""
    m = issue_menu_sr()
    ans = check_strictest(m, 0, 0.9482, "rmse")
    assert ans.status == "ok" and ans.value < 0.001
    check_strictest(m, 0, 2.5, "half_width")


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("metric", M.METRICS)
def test_strictest_level_brute_force(mode, metric):
    m = M.make_menu(
        ["S", "B", "P"], [0.05, 0.5, INF], [50, 40, 10], 3000, 0, 100, "", 8.0 if mode else None
    )
    for tier in range(3):
        for target in [0.5, 1.0, 2.0, 4.0]:
            check_strictest(m, tier, target, metric)


# share_to_move ------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("metric", M.METRICS)
def test_share_to_move_brute_force(mode, metric):
    m = M.make_menu(
        ["S", "B", "P"], [0.05, 0.5, INF], [85, 10, 5], 400, 0, 1, "", 0.05 if mode else None
    )
    ct = m.counts
    errs = []
    for k in range(int(ct[0]) + 1):
        c = ct.copy()
        c[0] -= k
        c[1] += k
        errs.append(D.profile_errors(m.levels, c, m)[1].get(metric))
    errs = np.array(errs)
    assert np.all(np.diff(errs) <= 1e-9 * errs[1:])
    for target in np.linspace(errs[-1], errs[0], 9)[1:-1]:
        ans = S.share_to_move(m, 0, 1, float(target), metric)
        assert ans.status == "ok" and ans.value == int(np.argmax(errs <= target))
        assert ans.error <= target < ans.error_below
    assert S.share_to_move(m, 0, 1, float(errs[0]) * 1.01, metric).status == "already"
    ans = S.share_to_move(m, 0, 1, float(errs[-1]) * 0.99, metric)
    assert ans.status == "impossible" and "Even moving all" in ans.message


# the half-width: not monotone (proven interval), so the solver is checked against full scans ---
@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.001, 20), min_size=1, max_size=3), st.data())
def test_half_width_min_users_is_the_first_n_of_a_scan(eps, data):
    """The proven half-width (intervals.population_half_width) is not what the tuned weights
    minimise and can rise by a hair as n grows; for random menus, spreads and ranges the
    half-width answer of min_users is still the first n of a full scan up to 150 that meets
    the target, and one user fewer misses it."""
    k = len(eps)
    eps = sorted(eps)
    if data.draw(st.booleans()):
        eps[-1] = INF
    w = data.draw(st.lists(st.floats(0.05, 1), min_size=k, max_size=k))
    sd = data.draw(st.one_of(st.none(), st.floats(1e-4, 0.5)))
    m = M.make_menu(
        [f"t{i}" for i in range(k)],
        eps,
        list(100 * np.asarray(w) / sum(w)),
        150,
        0,
        10,
        "",
        None if sd is None else 10 * sd,
        normalise=True,
    )
    hw = scan_n(m, "half_width", 150)
    met = hw[hw < 5.0]  # targets below half the range (the rest are "trivial")
    for target in np.unique(np.quantile(met, [0.2, 0.6, 1.0])) if met.size else []:
        first = int(np.argmax(hw <= target)) + 1
        ans = S.min_users(m, float(target), "half_width")
        assert ans.value == first
        if first > 1:
            assert ans.error_below > target


def test_half_width_solver_checks_below_its_answer(monkeypatch):
    """The local scan catches a non-monotone error: with a fake error that dips below the
    target just under the bisection's answer, min_users returns the dip."""
    m = issue_menu_sp()
    real = D.profile_errors

    def fake(levels, counts, menu):
        sol, acc = real(levels, counts, menu)
        n = int(np.sum(counts))
        if n == 10:  # a dip the bisection (which never evaluates n = 10 here) misses
            acc = D.Accuracy(acc.mse, acc.rmse, 1e-3, acc.data_sd, acc.noise_scale)
        return sol, acc

    monkeypatch.setattr(D, "profile_errors", fake)
    monkeypatch.setattr(S, "profile_errors", fake)  # the solvers call it by name too
    target = D.menu_error(m.with_n_users(30), "half_width")
    assert S.min_users(m, target, "half_width").value == 10
    assert S.min_users(m, D.menu_error(m.with_n_users(30), "rmse"), "rmse").value == 30
