"""Accuracy-first solvers for tier menus: :func:`min_users`, :func:`strictest_level`,
:func:`share_to_move` (and :func:`solve`). Each is a monotone search (integer bisection or
bisection on log eps) on the exact formulas of hdp_core.design (half-width answers also
checked by a local scan below them) and returns a :class:`DesignAnswer` that says plainly
when the target cannot be met. Why the search over users is exact: see hdp_core.design
(Webster apportionment is house monotone).

The table's own mean's 95% error (TABLE_METRIC) is not monotone: a user joining a strict tier
adds up to 1/(2n) of worst-case bias (every row counts in the table's mean); in a level (up to
0.8% on 300 random menus, at levels under ~1e-3) or in users moved it can rise too (TableMean
minimises B^2 + 2 eta^2, not it). Every number of users or of users moved below an answer is
checked up to CHECK_ALL (hdp_core.table_design); a level by the grid scan below it."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hdp_core.adpm import adpm
from hdp_core.design import profile_errors, tuned_sd
from hdp_core.intervals import release_error_95
from hdp_core.menu import EPS_MAX, EPS_MIN, MAX_USERS, METRICS, Menu
from hdp_core.profile import EpsilonProfile
from hdp_core.table_design import maybe_meeting, webster_counts
from hdp_core.table_mean import table_mean
from hdp_core.validate import format_eps


# accuracy-first solvers ---------------------------------------------------------------------
@dataclass(frozen=True)
class DesignAnswer:
    """Answer of an accuracy-first question.

    ``status``: "ok" (``value`` is the answer: it meets the target and ``below``, one step
    less, does not), "already" (the menu meets the target as it is; ``value`` is the trivial
    answer), "impossible" (no value in the allowed range meets it; ``value`` is None) or
    "trivial" (the target is at least half the data range, met without any data).
    ``error``: the error at ``value`` (or the best reachable one when impossible), real units;
    ``error_below``: the error at ``below``. ``message``: one plain sentence.
    """

    status: str
    value: float | int | None
    below: float | int | None
    error: float
    error_below: float | None
    message: str
    question: str = ""
    """Which solver answered (a key of QUESTIONS; "" when built by hand)."""
    tiers: tuple[int, ...] = ()
    """The tiers the question is about: (tier,) for "level", (source, dest) for "move"."""
    now_error: float | None = None  # the menu's error as it is (data units)
    target: float = math.nan  # the target the answer is for (data units)

    @property
    def possible(self) -> bool:
        return self.status in ("ok", "already", "trivial")

    def apply(self, menu: Menu) -> Menu | None:
        """The menu changed to this answer ("users": n users; "level": the tier at eps =
        value; "move": value users moved from source to dest), or None when there is
        nothing to apply: status not "ok", no value, or a level stricter than EPS_MIN."""
        if self.status != "ok" or self.value is None:
            return None
        if self.question == "users":
            return menu.with_n_users(int(self.value))
        if self.question == "level":
            v = float(self.value)
            return menu.with_eps(self.tiers[0], v) if math.isinf(v) or v >= EPS_MIN else None
        if self.question == "move":
            a, b = self.tiers
            ct = menu.counts.copy()
            ct[a] -= int(self.value)
            ct[b] += int(self.value)
            return menu.with_counts([int(c) for c in ct])
        return None


TABLE_METRIC = "table_half_width"  # the table's mean's 95% error: release_error_95 "table"
CHECK_ALL = 1 << 18  # table: every number below an answer checked up to this; above, the scan

SOLVER_METRICS = (*METRICS, TABLE_METRIC)
HALF_WIDTHS = ("half_width", TABLE_METRIC)  # not proven monotone: answers checked below


def _error(levels: Any, counts: Any, menu: Menu, metric: str) -> float:
    """The menu's error in ``metric`` (data units) for tiers (levels, counts)."""
    if metric == TABLE_METRIC:
        return release_error_95(levels, counts, menu.low, menu.high, "table")
    return profile_errors(levels, counts, menu)[1].get(metric)


_WORDS = {"rmse": "RMSE", "half_width": "95% error half-width"}
_WORDS[TABLE_METRIC] = "95% error half-width of the table's own mean"


def _fmt_err(x: float, menu: Menu) -> str:
    u = f" {menu.unit}" if menu.unit else ""
    return f"{x:.4g}{u}"


def _check_target(menu: Menu, target: float, metric: str) -> DesignAnswer | None:
    """Validate the target; the 'trivial' answer when it is at least half the range."""
    if metric not in SOLVER_METRICS:
        raise ValueError(f"metric must be one of {SOLVER_METRICS}, got {str(metric)[:40]!r}")
    t = float(target)
    if not (math.isfinite(t) and t > 0):
        raise ValueError(f"the target error must be a positive number, got {target!r}")
    if t >= menu.width / 2:
        return DesignAnswer(
            "trivial",
            None,
            None,
            menu.width / 2,
            None,
            f"A target of {_fmt_err(t, menu)} is at least half the data range "
            f"({_fmt_err(menu.width / 2, menu)}): reporting the middle of the range meets it "
            "without any data. Choose a smaller target.",
        )
    return None


def _bisect_int(meets: Callable[[int], bool], lo: int, hi: int) -> int:
    """Smallest m in (lo, hi] with meets(m), given not meets(lo) and meets(hi), for a
    monotone predicate (False ... False True ... True)."""
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        if meets(mid):
            hi = mid
        else:
            lo = mid
    return hi


SCAN = 64


def _scan_down(meets: Callable[[int], bool], value: int, floor: int, metric: str) -> int:
    """For the half-width, an m <= ``value`` that meets the target while m - 1 does not (or m
    = ``floor``): the smallest meeting point of [value - SCAN, value], searched again below
    (bisection from ``floor`` - 1, which misses, then the scan) whenever it is the window's
    lowest point. The RMSE is proven monotone (the tuned or worst-case optimum only improves as
    the feasible set grows), so its bisection is exact; the proven half-width
    (intervals.population_half_width) depends on ||w||_2, max w and the noise separately and
    can rise by a hair when ADPM trades one for another (tests/test_design.py), so each
    half-width answer is verified by this local scan."""
    if metric not in HALF_WIDTHS:
        return value
    while True:
        bottom = max(floor, value - SCAN)
        hit = next((m for m in range(bottom, value) if meets(m)), value)
        if hit > bottom or hit == floor:
            return hit
        value = _bisect_int(meets, floor - 1, hit)


def min_users(menu: Menu, target: float, metric: str = "rmse") -> DesignAnswer:
    """The smallest total number of users for which ``menu`` (same shares) meets ``target``.

    Integer bisection on n: users are apportioned by Webster's method (house monotone) and
    adding a user never raises ADPM's worst-case MSE (Theorem 2: ADPM is the optimal affine
    estimator, and the new user can get weight 0), nor, with a known data sd, the MSE of ADPM
    tuned to it (optimal at that spread), so the RMSE is non-increasing in n. Half-width
    answers are also checked by a local scan (:func:`_scan_down`), never above the menu's own
    n when it meets the target; table answers by :func:`_first_users` (not monotone).
    Impossible when even MAX_USERS users do not meet the target.
    """
    triv = _check_target(menu, target, metric)
    if triv is not None:
        return triv
    t, cur, words, cache = float(target), menu.n_users, _WORDS[metric], {}

    def meets(n: int) -> bool:
        if n not in cache:
            m = menu.with_n_users(n)
            cache[n] = _error(m.levels, m.counts, m, metric)
        return cache[n] <= t

    meets(cur)
    goal, now = f"a {words} of {_fmt_err(t, menu)}", cache[cur]
    if meets(1):
        msg = f"Even 1 user meets {goal}." + _now_words(menu, now, t, metric)
        return DesignAnswer("ok", 1, None, cache[1], None, msg, now_error=now, target=t)
    lo, hi = 1, 2
    while not meets(hi):
        if hi >= MAX_USERS:
            msg = f"Even {MAX_USERS:.0e} users give a {words} of {_fmt_err(cache[hi], menu)}, "
            msg += f"above the target {_fmt_err(t, menu)}."
            return DesignAnswer("impossible", None, None, cache[hi], None, msg, now_error=now)
        lo, hi = hi, min(hi * 2, MAX_USERS)
    n = _scan_down(meets, _bisect_int(meets, lo, hi), 1, metric)
    if now <= t and cur < n:  # never "needs more" than a menu that meets it already has
        n = _scan_down(meets, cur, 1, "half_width")
    n, every = _first_users(menu, meets, n, t) if metric == TABLE_METRIC else (n, True)
    meets(n - 1)
    msg = f"This menu needs at least {n:,} users for {goal} (one user fewer misses it)."
    if not every:
        msg = f"{n:,} users meet {goal}, {n - 1:,} do not. This error does not always fall as "
        msg += f"users join: every number up to {CHECK_ALL:,} and the {SCAN} below {n:,} miss "
        msg += "the target; those between were not all checked."
    msg += _now_words(menu, now, t, metric, n)
    return DesignAnswer("ok", n, n - 1, cache[n], cache[n - 1], msg, now_error=now, target=t)


def _first_users(menu: Menu, meets: Callable[[int], bool], n: int, t: float) -> tuple[int, bool]:
    """(the least number of users <= ``n`` meeting ``t``, whether every smaller one was checked:
    up to CHECK_ALL at once by table_design; only the scan if Webster's order is uncertain)."""
    if n <= 1:
        return n, True
    counts = webster_counts([x.share_percent for x in menu.tiers], min(n - 1, CHECK_ALL))
    if counts is None:
        return n, n - 1 <= SCAN
    may = maybe_meeting(menu.levels, counts, t, menu.low, menu.high)
    return next((int(r) + 1 for r in may if meets(int(r) + 1)), n), n - 1 <= CHECK_ALL


def _now_words(menu: Menu, now: float, target: float, metric: str, needed: int = 1) -> str:
    """The sentence about the menu as it is (it meets the target, needs more users, or misses
    it with more users than fewer that meet it: not monotone)."""
    cur, why = menu.n_users, " (a strict user adds bias: every row counts)"
    if now <= target or cur < needed:
        verb = "already meets" if now <= target else "needs more users to meet"
        return f" With {cur:,} users it {verb} the target."
    why = why if metric == TABLE_METRIC else ""
    return f" With {cur:,} users it misses it ({_fmt_err(now, menu)}): this error does not " + (
        f"always fall as users join{why}."
    )


_REL_TOL = 1e-6


def strictest_level(menu: Menu, tier: int, target: float, metric: str = "rmse") -> DesignAnswer:
    """The smallest eps (most privacy) tier ``tier`` can have while the menu meets ``target``.

    Loosening one tier's level never raises ADPM's worst-case (or tuned) MSE (the affine estimator's
    constraint w_i <= eta eps_i only relaxes), and beyond the level where the tier saturates
    nothing changes at all (Lemma 3). Bisection on log eps in [EPS_MIN, public] to relative
    precision 1e-6; ``below`` = value / (1 + 1e-6) misses the target. "already" when even
    EPS_MIN meets it; "impossible" when even a public tier does not.
    """
    triv = _check_target(menu, target, metric)
    if triv is not None:
        return triv
    if not 0 <= tier < menu.k:
        raise ValueError(f"tier index {tier} is out of range (the menu has {menu.k} tiers)")
    t = float(target)
    counts = menu.counts
    name = menu.tiers[tier].name
    words = _WORDS[metric]

    def err(e: float) -> float:
        lv = menu.levels
        lv[tier] = e
        return _error(lv, counts, menu, metric)

    e_pub = err(math.inf)
    if e_pub > t:
        return DesignAnswer(
            "impossible",
            None,
            None,
            e_pub,
            None,
            f"Even with {name} public (no privacy) the {words} is {_fmt_err(e_pub, menu)}, "
            f"above the target {_fmt_err(t, menu)}: change another tier or add users.",
        )
    e_min = err(EPS_MIN)
    if e_min <= t:
        return DesignAnswer(
            "already",
            EPS_MIN,
            None,
            e_min,
            None,
            f"{name} can be as strict as eps = {EPS_MIN:g} (the strictest level offered "
            f"here) and the {words} is still {_fmt_err(e_min, menu)}.",
        )
    # upper end of the bracket: where the tier would saturate, else grow (TableMean: at its
    # cap level 1/(n eta) with the tier public that eta stays optimal, F strictly convex)
    lv = menu.levels
    lv[tier] = math.inf
    prof = EpsilonProfile.from_tiers(lv, counts)
    tab = metric == TABLE_METRIC
    cap = table_mean(prof).cap_level if tab else adpm(prof, tuned_sd(menu)).saturation_level
    hi = cap if math.isfinite(cap) and cap <= EPS_MAX else None
    if hi is None or err(hi) > t:
        hi = 1.0
        while err(hi) > t:
            if hi >= EPS_MAX:
                return DesignAnswer(
                    "ok",
                    math.inf,
                    EPS_MAX,
                    e_pub,
                    err(EPS_MAX),
                    f"Only a public {name} tier meets a {words} of {_fmt_err(t, menu)} "
                    f"(eps = {EPS_MAX:g} still gives {_fmt_err(err(EPS_MAX), menu)}).",
                )
            hi = min(hi * 4.0, EPS_MAX)
    lo = EPS_MIN
    llo, lhi = math.log(lo), math.log(hi)
    for _ in range(4):  # the half-width answer is re-searched below any stricter level that
        while lhi - llo > _REL_TOL / 2:  # a local scan finds meeting the target
            mid = 0.5 * (llo + lhi)
            if err(math.exp(mid)) <= t:
                lhi = mid
            else:
                llo = mid
        if metric not in HALF_WIDTHS:
            break
        grid = np.geomspace(max(EPS_MIN, math.exp(lhi) / 4.0), math.exp(lhi), SCAN)[:-1]
        hit = next((float(g) for g in grid if err(float(g)) <= t), None)
        if hit is None:
            break
        llo, lhi = math.log(EPS_MIN), math.log(hit)
    value = math.exp(lhi)
    below = value / (1.0 + _REL_TOL)
    ev, eb = err(value), err(below)
    if ev > t:  # guard against rounding at the bracket's end
        value = hi
        ev = err(value)
    return DesignAnswer(
        "ok",
        value,
        below,
        ev,
        eb,
        f"{name} can be as strict as eps = {value:.4g} for a {words} of {_fmt_err(t, menu)} "
        f"(it is {_fmt_err(ev, menu)} there; any stricter level misses the target).",
    )


def share_to_move(
    menu: Menu, source: int, dest: int, target: float, metric: str = "rmse"
) -> DesignAnswer:
    """The fewest users who must move from tier ``source`` to the looser tier ``dest``.

    ``value`` is a number of users m (0 <= m <= users of ``source``); as a share of all users
    it is m / n. Moving a user to a looser level never raises ADPM's worst-case (or tuned)
    MSE, so the error is non-increasing in m: integer bisection; half-width answers checked
    below (:func:`_scan_down`; the table: every smaller m). "already" when m = 0 meets the
    target, "impossible" when moving every user of the source tier does not.
    """
    triv = _check_target(menu, target, metric)
    if triv is not None:
        return triv
    if not (0 <= source < menu.k and 0 <= dest < menu.k):
        raise ValueError("tier index out of range")
    lv = menu.levels
    if source == dest or not lv[dest] > lv[source]:
        raise ValueError(
            f"users must move to a looser tier: {menu.tiers[dest].name} "
            f"(eps {format_eps(lv[dest])}) is not looser than {menu.tiers[source].name} "
            f"(eps {format_eps(lv[source])})"
        )
    t = float(target)
    base = menu.counts
    words = _WORDS[metric]
    src, dst = menu.tiers[source].name, menu.tiers[dest].name
    cache: dict[int, float] = {}

    def err(m: int) -> float:
        if m not in cache:
            ct = base.copy()
            ct[source] -= m
            ct[dest] += m
            cache[m] = _error(lv, ct, menu, metric)
        return cache[m]

    total = int(base[source])
    if err(0) <= t:
        return DesignAnswer(
            "already",
            0,
            None,
            err(0),
            None,
            f"The menu already meets a {words} of {_fmt_err(t, menu)} "
            f"({_fmt_err(err(0), menu)}): nobody needs to move.",
        )
    if total == 0 or err(total) > t:
        return DesignAnswer(
            "impossible",
            None,
            None,
            err(total),
            None,
            f"Even moving all {total:,} users of {src} to {dst} gives a {words} of "
            f"{_fmt_err(err(total), menu)}, above the target {_fmt_err(t, menu)}.",
        )
    m = _scan_down(lambda x: err(x) <= t, _bisect_int(lambda x: err(x) <= t, 0, total), 1, metric)
    every = metric != TABLE_METRIC or m - 1 <= SCAN
    if not every and m - 1 <= CHECK_ALL:  # the table's mean: check every smaller m at once
        step = np.eye(menu.k, dtype=np.int64)[dest] - np.eye(menu.k, dtype=np.int64)[source]
        rows = base + np.outer(np.arange(m), step)
        hits = maybe_meeting(lv, rows, t, menu.low, menu.high)
        m, every = next((int(r) for r in hits if err(int(r)) <= t), m), True
    share = f"{m:,} users ({100.0 * m / menu.n_users:.4g}% of all users, "
    share, goal = share + f"{100.0 * m / total:.4g}% of {src})", f"a {words} of {_fmt_err(t, menu)}"
    msg = f"{share} must move from {src} to {dst} for {goal} (one fewer misses it)."
    if not every:
        msg = f"Moving {share} from {src} to {dst} meets {goal}, one fewer does not; this error "
        msg += f"does not always fall as users move and only the {SCAN} numbers below were checked."
    return DesignAnswer("ok", m, m - 1, err(m), err(m - 1), msg)


QUESTIONS = ("users", "level", "move")


def solve(
    menu: Menu, question: str, target: float, metric: str = "rmse", a: int = 0, b: int = 0
) -> DesignAnswer:
    """The answer to ``question`` (one of QUESTIONS) for ``target`` (data units): min_users,
    strictest_level of tier ``a``, or share_to_move from tier ``a`` to tier ``b``, in
    ``metric`` (one of SOLVER_METRICS: TABLE_METRIC for the table's own mean); the answer
    records the question, its tiers, the target and the menu's error as it is
    (``now_error``), so that :meth:`DesignAnswer.apply` can apply it."""
    if question == "users":
        ans = min_users(menu, target, metric)
    elif question == "level":
        ans = replace(strictest_level(menu, a, target, metric), tiers=(a,))
    elif question == "move":
        ans = replace(share_to_move(menu, a, b, target, metric), tiers=(a, b))
    else:
        raise ValueError(f"the question must be one of {QUESTIONS}, got {question!r}")
    now = _error(menu.levels, menu.counts, menu, metric) if ans.now_error is None else ans.now_error
    return replace(ans, question=question, now_error=now, target=float(target))
