"""The accuracy-first solvers for the table's own mean (metric "table_half_width") against an
independent oracle, written here from first principles:

* Webster's apportionment by the sequential rule (the next user to the tier with the highest
  s_j / (c_j + 1/2), ties to the earlier tier), in exact fractions: not hdp_core.menu's
  quota-then-adjust code;
* TableMean's noise by bisection on the sign of F's right derivative,
  F(eta) = D(eta)^2 / 4 + 2 eta^2, D(eta) = sum_j c_j (1/n - eps_j eta)_+ (convex: the optimum
  is where the right derivative turns >= 0), not the closed form over pieces the code uses;
* the interval from the Laplace tail: P(|B + L| > h) = e^{-h/eta} cosh(B/eta) = 5%, solved as
  h = eta (ln cosh(B/eta) + ln 20), then hdp_core.rounding's allowance for the release;
* the answers by brute force: every number of users, of users moved, a grid of levels.

The table's error is not monotone (a strict user joining adds bias), so these scans are the
point: "needs at least N users" must mean that no smaller number meets the target.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hdp_core import menu as M
from hdp_core import solvers as S
from hdp_core.intervals import release_error_95, table_half_width
from hdp_core.profile import EpsilonProfile
from hdp_core.rounding import release_half_width
from hdp_core.table_design import table_half_widths, webster_counts
from hdp_core.table_mean import table_mean

T = S.TABLE_METRIC
LEVELS = [0.01, 0.1, 0.5, 2.0, math.inf]


def webster(shares: list[float], n: int) -> list[list[int]]:
    """Sequential Webster for every total 1..n: each next user goes to the tier with the
    highest s_j / (c_j + 1/2), the earlier tier on ties (exact fractions)."""
    s = [Fraction(x) for x in shares]
    c, out = [0] * len(s), []
    for _ in range(n):
        best = max(range(len(s)), key=lambda j: (s[j] / (c[j] + Fraction(1, 2)), -j))
        c[best] += 1
        out.append(list(c))
    return out


def unit_half_width(levels, counts) -> float:
    """TableMean's 95% half-width (unit scale) by bisection on F's right derivative."""
    n = float(sum(counts))
    pairs = [(float(e), float(c)) for e, c in zip(levels, counts) if c > 0 and math.isfinite(e)]

    def d(eta: float) -> float:
        return sum(c * max(1.0 / n - e * eta, 0.0) for e, c in pairs)

    def slope(eta: float) -> float:  # right derivative of D^2/4 + 2 eta^2
        dd = -sum(c * e for e, c in pairs if e * eta < 1.0 / n)
        return 0.5 * d(eta) * dd + 4.0 * eta

    if not pairs:
        eta = 0.0
    else:
        lo, hi = 0.0, 1.0 / (n * min(e for e, _ in pairs))
        for _ in range(90):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if slope(mid) < 0 else (lo, mid)
        eta = hi
    b = d(eta) / 2.0
    if eta == 0:
        return b
    x = b / eta  # ln cosh x = x + log1p(e^{-2x}) - ln 2
    return eta * (x + math.log1p(math.exp(-2.0 * x)) - math.log(2.0) + math.log(20.0))


def error(levels, counts, lo: float, hi: float) -> float:
    """The release's 95% error of the table's mean in data units (the oracle's)."""
    return release_half_width(unit_half_width(levels, counts), 1.0, lo, hi)


def targets_between(values: np.ndarray, k: int) -> list[float]:
    """Up to k targets half-way between neighbouring distinct values (not within 1e-6)."""
    v = np.unique(values)
    if v.size < 2:
        return []
    mids = [(a + b) / 2 for a, b in pairwise(v) if b - a > 1e-6 * b]
    if not mids:
        return []
    return [float(x) for x in np.asarray(mids)[np.linspace(0, len(mids) - 1, k).astype(int)]]


def make(levels, shares, n, width) -> M.Menu:
    names = [f"t{i}" for i in range(len(levels))]
    return M.make_menu(names, levels, shares, n, 0, width, "", None, normalise=True)


menus = st.builds(
    lambda lv, sh, cur: (lv, sh, cur),
    st.lists(st.sampled_from(LEVELS), min_size=1, max_size=3, unique=True),
    st.lists(st.integers(1, 12), min_size=3, max_size=3),
    st.integers(1, 60),
)


@settings(max_examples=8, deadline=None)
@given(menus)
def test_min_users_is_the_first_number_of_users_that_meets_the_target(spec):
    levels, shares, cur = spec
    shares = shares[: len(levels)]
    menu = make(levels, shares, cur, 10)
    counts = webster([t.share_percent for t in menu.tiers], 60)
    errs = np.array([error(levels, c, 0.0, 10.0) for c in counts])
    for t in targets_between(errs[errs < 5.0], 3):
        ans = S.solve(menu, "users", t, T)
        first = int(np.argmax(errs <= t)) + 1
        assert ans.value == first, (levels, shares, t, ans.message)
        assert ans.now_error == pytest.approx(errs[cur - 1], rel=1e-9)
        assert (ans.now_error <= t) == (errs[cur - 1] <= t)
        assert "already meets" in ans.message if errs[cur - 1] <= t else "misses" in ans.message
        assert ("needs at least" in ans.message) or first == 1


def test_a_public_tier_makes_the_error_jump_and_the_answer_says_so():
    """95% public, 5% at eps 0.001: up to 9 users all public (the mean is exact), the 10th is
    strict and brings a bias of about R / 20. A target between: 1 user meets it, 1,000 do not,
    and the message says why."""
    menu = M.make_menu(["Open", "Strict"], [math.inf, 0.001], [95, 5], 1000, 0, 500, "USD", None)
    ws = webster([95, 5], 1000)
    assert ws[9] == [10, 0] and ws[10] == [10, 1]  # the 11th user is the first strict one
    now = error([math.inf, 0.001], ws[-1], 0, 500)
    ans = S.solve(menu, "users", now / 2, T)
    assert ans.value == 1 and ans.now_error > now / 2
    assert "misses it" in ans.message and "strict user adds bias" in ans.message
    assert ans.apply(menu).n_users == 1


@settings(max_examples=10, deadline=None)
@given(menus, st.integers(0, 2))
def test_users_to_move_is_the_first_count_that_meets_the_target(spec, pick):
    levels, shares, n = spec
    levels = sorted(levels)
    if len(levels) < 2:
        levels = [0.01, math.inf]
    shares = shares[: len(levels)]
    menu = make(levels, shares, n, 1)
    src, dst = 0, min(len(levels) - 1, 1 + pick)
    base = menu.counts
    moved = []
    for m in range(int(base[src]) + 1):
        c = base.copy()
        c[src] -= m
        c[dst] += m
        moved.append(error(levels, c, 0.0, 1.0))
    errs = np.array(moved)
    for t in targets_between(errs[(errs > errs.min()) & (errs < 0.5)], 3):
        ans = S.solve(menu, "move", t, T, src, dst)
        want = int(np.argmax(errs <= t))
        assert ans.value == want, (levels, shares, n, t, ans.message)
        assert ans.status == ("already" if want == 0 else "ok")


def test_strictest_level_against_a_grid_of_levels():
    """Tier Strict of a three-tier menu at 2,000 users: on a grid of 200 levels the oracle's
    error at every level stricter than the answer (by more than the solver's precision) is
    above the target, and at the answer it meets it."""
    menu = M.make_menu(["A", "B", "C"], [0.1, 1.0, math.inf], [60, 30, 10], 2000, 0, 100, "", None)
    counts = list(menu.counts)
    grid = np.geomspace(M.EPS_MIN, 10.0, 200)
    errs = np.array([error([g, 1.0, math.inf], counts, 0, 100) for g in grid])
    for t in targets_between(errs, 5):
        ans = S.solve(menu, "level", t, T, 0)
        if ans.status == "already":
            assert errs[0] <= t
            continue
        assert ans.status == "ok"
        assert error([ans.value, 1.0, math.inf], counts, 0, 100) <= t * (1 + 1e-9)
        assert error([ans.below, 1.0, math.inf], counts, 0, 100) > t * (1 - 1e-9)
        assert (errs[grid < ans.value * (1 - 1e-5)] > t).all()
        assert ans.apply(menu).levels[0] == pytest.approx(ans.value)


def test_impossible_trivial_and_the_figure_of_section_5():
    """A target below what a public tier gives: impossible; at least half the range: trivial;
    now_error is exactly the release's planning figure (release_error_95, target 'table')."""
    menu = M.default_menu()
    prof = menu.to_profile()
    fig = release_error_95(prof.levels, prof.counts, menu.low, menu.high, "table")
    ans = S.solve(menu, "level", 1e-9, T, 0)
    assert ans.status == "impossible" and ans.now_error == fig
    assert S.solve(menu, "users", 250.0, T).status == "trivial"
    with pytest.raises(ValueError, match="metric"):
        S.solve(menu, "users", 1.0, "table")


@pytest.mark.parametrize(
    "shares",
    [[60, 30, 10], [100 / 3] * 3, [100 / 7, 200 / 7, 400 / 7], [50, 50], [1, 1e-3, 99], [7, 1, 1]],
)
def test_vectorised_webster_and_half_widths_agree_with_the_oracle(shares):
    """webster_counts against the sequential rule (exact) for every n up to 300 (shares as a
    menu stores them: [7, 1, 1] has near ties between unequal floats), and the vectorised
    half-widths against the bisection oracle and the scalar TableMean."""
    shares = [t.share_percent for t in make([1.0] * len(shares), shares, 10, 1).tiers]
    levels = [0.05, 1.0, math.inf, 0.3][: len(shares)]
    counts = webster_counts(shares, 300)
    assert counts is not None
    assert counts.tolist() == webster(shares, 300)
    vec = table_half_widths(levels, counts)
    for n in (1, 2, 7, 50, 299, 300):
        sol = table_mean(EpsilonProfile.from_tiers(levels, counts[n - 1]))
        assert vec[n - 1] == pytest.approx(table_half_width(sol.bias_bound, sol.noise_scale), 1e-12)
        assert vec[n - 1] == pytest.approx(unit_half_width(levels, counts[n - 1]), rel=1e-9)
