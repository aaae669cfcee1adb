"""Tier menus for product design: what each privacy tier really gets, and what a target
accuracy takes.

A *menu* is a short list of named tiers (a privacy level eps > 0, or public = +inf, and the
share of users expected to pick it), a total number of users and the data's range in real
units. Everything here is exact and cheap for any number of users: tiers are never expanded.

* :func:`evaluate_menu`: each tier's granted privacy r_j = min(eps_j, tau*) (saturation lemma,
  Lemma 3), tau*, the accuracy of the mean in real units for ADPM and for the UNI and PropDPM
  baselines (exact RMSE and the proven 95% error half-width), and the loosest level worth
  offering.
* Accuracy-first solvers: :func:`min_users`, :func:`strictest_level`, :func:`share_to_move`.
  Each is a monotone search (integer bisection or bisection on log eps) on the exact formulas
  (half-width answers also checked by a local scan below them) and returns a
  :class:`DesignAnswer` that says plainly when the target cannot be met.
* :func:`share_sweep`: the what-if curve when share moves between two tiers.
* Invalid menus raise :class:`hdp_core.errors.MenuError` naming the field. Files and links
  for menus are in :mod:`hdp_core.views.menu_io` and :mod:`hdp_core.views.links`.

Units. hdp_core's data lives in [-0.5, 0.5]; data in [low, high] is mapped there by an affine
map, so errors scale by R = high - low (hdp_core.units). "Worst-case data" is data as spread
out as the range allows (half the users at each end, standard deviation R/2): the RMSE is then
an upper bound for any data in the range (Theorem 2). The 95% error half-width h of every
method is the proven one of :func:`hdp_core.intervals.population_half_width` (the same function
the Tier designer's "which mean" figures and the Release page use): the estimate is within h of
the population mean in at least 95% of releases for every distribution in the range (with a
known data sd: every one with that spread), at every number of users. It is wider than the
normal approximation it replaces (about 1.39 times for worst-case data when the noise is
negligible: Hoeffding's sqrt(ln(40)/2) against 1.96/2), which under-covered with few users
(87.6% with 4 users at eps 100, issue 21).

Why tiers get integer users by Webster's method. Shares become whole numbers of users by
Webster (Sainte-Laguë) apportionment, which is *house monotone*: adding one user to the total
never takes a user away from any tier. Adding a user never makes ADPM's optimum worse (give
them weight 0), in the worst case and, with a known data sd, for ADPM tuned to that spread
(the optimum at that spread), so the RMSE is non-increasing in the total number of users and
the search for the minimum number of users is exact. (Largest-remainder rounding, used for
profiles, can move a user from one tier to another when the total grows: the Alabama paradox.)
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from .adpm import ADPMSolution, adpm
from .errors import MenuError
from .estimators import get_method
from .intervals import population_half_width
from .profile import MAX_TOTAL_USERS, EpsilonProfile
from .units import Accuracy
from .validate import as_float, describe, fmt_number, format_eps, is_real_number, parse_level

__all__ = [
    "EPS_MAX",
    "EPS_MIN",
    "LEVEL",
    "MAX_MENU_TIERS",
    "MAX_NAME_CHARS",
    "MAX_RANGE_END",
    "MAX_TIERS",
    "MAX_USERS",
    "METRICS",
    "QUESTIONS",
    "SHARE_TOLERANCE",
    "TEMPLATES",
    "DesignAnswer",
    "Menu",
    "MenuError",
    "MenuReport",
    "ShareSweep",
    "Tier",
    "apportion",
    "default_menu",
    "evaluate_menu",
    "make_menu",
    "menu_error",
    "min_users",
    "move_share",
    "profile_errors",
    "respread_shares",
    "share_sweep",
    "share_to_move",
    "shares_note",
    "solve",
    "strictest_level",
    "template_menu",
    "tuned_sd",
]

MAX_RANGE_END = 1e15
"""Largest magnitude of a data-range end in real units (errors, widths and the JSON export
of a range stay finite: |low|, |high| <= 10^15)."""

MAX_MENU_TIERS = 10
"""Most tiers a menu may have."""
MAX_TIERS = MAX_MENU_TIERS  # the old name, kept while pages move to MAX_MENU_TIERS
EPS_MIN = 1e-4
"""Strictest finite level a tier may have (also the floor of :func:`strictest_level`)."""
EPS_MAX = 1e4
"""Loosest finite level a tier may have (use public for no privacy)."""
MAX_USERS = MAX_TOTAL_USERS
"""Largest total number of users (10^15)."""
MAX_NAME_CHARS = 40
MAX_UNIT_CHARS = 20
SHARE_TOLERANCE = 0.01
"""Shares in a file must add up to 100 within this many percentage points."""
LEVEL = 0.95
"""Coverage of the error half-width."""
METRICS = ("rmse", "half_width")
"""Accuracy measures a target can be given in: RMSE or the 95% error half-width."""
FORMAT = "hdp-explorer tier menu"
VERSION = 1


# menus --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tier:
    """One offered tier: a name, a privacy level (> 0; inf = public) and the percentage of
    users expected to choose it."""

    name: str
    eps: float
    share_percent: float


@dataclass(frozen=True)
class Menu:
    """A validated menu of tiers (build it with :func:`make_menu` or :func:`menu_from_dict`).

    ``n_users`` users in total; data in [low, high] (real units ``unit``); ``data_sd`` the
    data's standard deviation in real units, or None for the worst case (R/2).
    """

    tiers: tuple[Tier, ...]
    n_users: int
    low: float = 0.0
    high: float = 1.0
    unit: str = ""
    data_sd: float | None = None
    _key: str = field(default="", repr=False, compare=False)

    @property
    def k(self) -> int:
        """Number of tiers."""
        return len(self.tiers)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tiers)

    @property
    def levels(self) -> np.ndarray:
        """Privacy level of each tier (inf = public)."""
        return np.array([t.eps for t in self.tiers], dtype=np.float64)

    @property
    def shares(self) -> np.ndarray:
        """Share of users in each tier as fractions summing to 1."""
        p = np.array([t.share_percent for t in self.tiers], dtype=np.float64)
        return p / p.sum()

    @property
    def width(self) -> float:
        """R = high - low, the width of the data range (real units)."""
        return self.high - self.low

    @property
    def counts(self) -> np.ndarray:
        """Users per tier: Webster apportionment of n_users by the shares (sums to n_users)."""
        return apportion([t.share_percent for t in self.tiers], self.n_users)

    def to_profile(self, counts: Any = None) -> EpsilonProfile:
        """The menu as a tiered EpsilonProfile (``counts`` overrides the apportioned ones)."""
        ct = self.counts if counts is None else counts
        return EpsilonProfile.from_tiers(self.levels, ct, self.names)

    @property
    def key(self) -> str:
        """Hex digest of the menu's canonical JSON (for caches)."""
        if not self._key:
            from .design_io import menu_to_dict  # design_io builds on this module

            text = json.dumps(menu_to_dict(self), sort_keys=True, separators=(",", ":"))
            object.__setattr__(
                self, "_key", hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
            )
        return self._key

    # derived menus ------------------------------------------------------------------------
    def with_n_users(self, n: int) -> Menu:
        """The same menu with ``n`` users in total."""
        return make_menu(
            self.names, self.levels, self._pcts(), n, self.low, self.high, self.unit, self.data_sd
        )

    def with_eps(self, tier: int, eps: float) -> Menu:
        """The same menu with tier ``tier`` (0-based) at level ``eps``."""
        lv = list(self.levels)
        lv[tier] = eps
        return make_menu(
            self.names, lv, self._pcts(), self.n_users, self.low, self.high, self.unit, self.data_sd
        )

    def with_counts(self, counts: Sequence[int] | np.ndarray) -> Menu:
        """The same menu with shares counts/n (whole users; apportioned back exactly)."""
        ct = [int(c) for c in counts]
        n = sum(ct)
        pcts = [100.0 * c / n for c in ct]
        return make_menu(
            self.names,
            self.levels,
            pcts,
            n,
            self.low,
            self.high,
            self.unit,
            self.data_sd,
            normalise=True,
        )

    def add_tier(self, eps: float = 2.0) -> Menu:
        """The menu with one more tier at level ``eps`` and 0% of the users, named
        "Tier j" with the smallest j >= k + 1 no tier already uses. MenuError when the menu
        already has MAX_TIERS tiers."""
        if self.k >= MAX_TIERS:
            raise MenuError(f"a menu has at most {MAX_TIERS} tiers")
        names = set(self.names)
        j = self.k + 1
        while f"Tier {j}" in names:
            j += 1
        return make_menu(
            [*self.names, f"Tier {j}"],
            [*self.levels, eps],
            [*self._pcts(), 0.0],
            self.n_users,
            self.low,
            self.high,
            self.unit,
            self.data_sd,
            normalise=True,
        )

    def remove_tier(self, tier: int) -> Menu:
        """The menu without tier ``tier`` (0-based); the other tiers' shares are re-spread
        to 100% in proportion (equally when they were all 0%). MenuError when it is the only
        tier; IndexError when ``tier`` is not a tier of the menu."""
        if self.k <= 1:
            raise MenuError("a menu needs at least one tier")
        if not 0 <= tier < self.k:
            raise IndexError(f"tier index {tier} is out of range (the menu has {self.k} tiers)")
        keep = [t for j, t in enumerate(self.tiers) if j != tier]
        return make_menu(
            [t.name for t in keep],
            [t.eps for t in keep],
            respread_shares([t.share_percent for t in keep]),
            self.n_users,
            self.low,
            self.high,
            self.unit,
            self.data_sd,
            normalise=True,
        )

    def _pcts(self) -> list[float]:
        return [t.share_percent for t in self.tiers]


def respread_shares(shares_percent: Sequence[float]) -> list[float]:
    """Shares (percent) re-spread to add up to 100: equal shares when they add up to 0, else
    each scaled by 100 / total (left as they are when the total is within SHARE_TOLERANCE
    of 100, as :func:`make_menu` does)."""
    sh = [float(s) for s in shares_percent]
    total = sum(sh)
    if total <= 0:
        return [100.0 / len(sh)] * len(sh)
    if abs(total - 100.0) <= SHARE_TOLERANCE:
        return sh
    return [100.0 * s / total for s in sh]


def apportion(shares: Sequence[float], n: int) -> np.ndarray:
    """Whole users per tier summing to ``n``, by Webster's (Sainte-Laguë) divisor method.

    Tier j's m-th user has priority s_j / (m + 1/2); the n users go to the n highest priorities
    (ties to the earlier tier). Exact rational arithmetic, so the result is house monotone:
    raising n never lowers any tier's count. Returns int64 counts.
    """
    n = int(n)
    if n < 0:
        raise MenuError(f"the number of users must be ≥ 0, got {n}")
    fr = [Fraction(float(s)) for s in shares]
    if any(f < 0 for f in fr):
        raise MenuError("shares must be ≥ 0")
    total = sum(fr)
    if total <= 0:
        raise MenuError("all shares are 0: at least one tier needs users")
    q = [f / total * n for f in fr]  # exact quotas
    # users whose priority s_j/(m+1/2) exceeds 1/n, i.e. m < q_j - 1/2
    c = [max(0, math.ceil(x - Fraction(1, 2))) if x > 0 else 0 for x in q]

    def pri(j: int, m: int) -> Fraction:
        return fr[j] / (m + Fraction(1, 2))

    s = sum(c)
    while s < n:  # add the highest remaining priorities (earlier tier first at ties)
        j = max(range(len(c)), key=lambda i: (pri(i, c[i]), -i))
        c[j] += 1
        s += 1
    while s > n:  # drop the lowest included priorities (later tier first at ties)
        j = min((i for i in range(len(c)) if c[i] > 0), key=lambda i: (pri(i, c[i] - 1), -i))
        c[j] -= 1
        s -= 1
    return np.array(c, dtype=np.int64)


def _check_name(x: Any, where: str) -> str:
    if not isinstance(x, str):
        raise MenuError(f"{where}: the name must be text, got {describe(x)}")
    s = x.strip()
    if not s:
        raise MenuError(f"{where} has no name")
    if len(s) > MAX_NAME_CHARS:
        raise MenuError(f"{where}: the name {s[:20]!r}… is longer than {MAX_NAME_CHARS} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in s):
        raise MenuError(f"{where}: the name contains control characters")
    if any("\ud800" <= ch <= "\udfff" for ch in s):
        raise MenuError(
            f"{where}: the name contains an invalid character (a lone UTF-16 surrogate)"
        )
    return s


def _check_eps(x: Any, where: str) -> float:
    """A tier level: a number in [EPS_MIN, EPS_MAX], or public (hdp_core.validate's words)."""
    return parse_level(
        x, f"{where}: eps", error=MenuError, allow_zero=False, lo=EPS_MIN, hi=EPS_MAX
    )


def _check_share(x: Any, where: str) -> float:
    if not is_real_number(x):
        raise MenuError(f"{where}: the share is {describe(x)}, not a number (percent of users)")
    v = as_float(x)
    if not math.isfinite(v):
        raise MenuError(f"{where}: the share must be a finite number of percent")
    if v < 0:
        raise MenuError(f"{where}: the share {v:g}% is negative")
    if v > 100 + SHARE_TOLERANCE:
        raise MenuError(f"{where}: the share {v:g}% is above 100%")
    return v


def _check_n(x: Any) -> int:
    if not is_real_number(x):
        raise MenuError(f"the number of users is {describe(x)}, not a whole number")
    v = as_float(x)
    exact = isinstance(x, numbers.Integral) and abs(int(x)) < 10**30
    shown = f"{int(x):,}" if exact else fmt_number(v)  # exact: 1e15 + 1 is not "1e+15"
    if v > MAX_USERS:
        raise MenuError(f"{shown} users is too many; at most {int(MAX_USERS):,}")
    if not math.isfinite(v) or v != math.floor(v):
        raise MenuError(f"the number of users must be a whole number, got {shown}")
    if v < 1:
        raise MenuError(f"the number of users must be at least 1, got {shown}")
    return int(x) if isinstance(x, numbers.Integral) else int(v)


def _check_range(low: Any, high: Any, unit: Any) -> tuple[float, float, str]:
    for name, v in (("low", low), ("high", high)):
        if not is_real_number(v) or not math.isfinite(as_float(v)):
            raise MenuError(f"the data range's {name} end is {describe(v)}; give a finite number")
    lo, hi = float(low), float(high)
    for name, v in (("low", lo), ("high", hi)):
        if abs(v) > MAX_RANGE_END:
            raise MenuError(
                f"the data range's {name} end is {v:.6g}; each end must be between "
                f"-{MAX_RANGE_END:g} and {MAX_RANGE_END:g}"
            )
    if not hi > lo:
        raise MenuError(f"the data range needs low < high, got low = {lo:g}, high = {hi:g}")
    if not math.isfinite(hi - lo):
        raise MenuError("the data range is too wide")
    if not isinstance(unit, str):
        raise MenuError(f"the unit must be text, got {describe(unit)}")
    u = unit.strip()
    if len(u) > MAX_UNIT_CHARS:
        raise MenuError(f"the unit {u[:10]!r}… is longer than {MAX_UNIT_CHARS} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in u):
        raise MenuError("the unit contains control characters")
    if any("\ud800" <= ch <= "\udfff" for ch in u):
        raise MenuError("the unit contains an invalid character (a lone UTF-16 surrogate)")
    return lo, hi, u


def _check_sd(x: Any, lo: float, hi: float) -> float | None:
    if x is None:
        return None
    if not is_real_number(x) or not math.isfinite(as_float(x)):
        raise MenuError(
            f"the data's standard deviation is {describe(x)}; give a number or null "
            "(null = worst case)"
        )
    v = float(x)
    if v < 0:
        raise MenuError(f"the data's standard deviation {v:g} is negative")
    if v > (hi - lo) / 2 * (1 + 1e-12):
        raise MenuError(
            f"the data's standard deviation {v:g} exceeds half the range ({(hi - lo) / 2:g}), "
            "the largest any data in the range can have"
        )
    return min(v, (hi - lo) / 2)


def shares_note(shares_percent: Sequence[float]) -> str | None:
    """A note when shares do not add up to 100% (they will be scaled), else None."""
    tot = float(sum(float(s) for s in shares_percent))
    if abs(tot - 100.0) <= SHARE_TOLERANCE:
        return None
    if tot <= 0:
        return "all shares are 0: at least one tier needs users"
    return f"The shares add up to {tot:.4g}%, not 100%: each is scaled by 100/{tot:.4g}."


def make_menu(
    names: Sequence[Any] | None,
    eps: Sequence[Any] | np.ndarray,
    shares_percent: Sequence[Any] | np.ndarray,
    n_users: Any,
    low: Any = 0.0,
    high: Any = 1.0,
    unit: Any = "",
    data_sd: Any = None,
    normalise: bool = False,
) -> Menu:
    """A validated :class:`Menu`; raises :class:`MenuError` naming the bad field.

    Shares are percentages and must add up to 100 (within SHARE_TOLERANCE) unless
    ``normalise`` is True, when they are scaled to 100.
    """
    eps, shares_percent = list(eps), list(shares_percent)
    names = [f"Tier {i + 1}" for i in range(len(eps))] if names is None else list(names)
    k = len(names)
    if k == 0:
        raise MenuError("the menu has no tiers: add at least one")
    if k > MAX_MENU_TIERS:
        raise MenuError(f"the menu has {k} tiers; at most {MAX_MENU_TIERS}")
    if len(eps) != k or len(shares_percent) != k:
        raise MenuError(f"{k} names but {len(eps)} levels and {len(shares_percent)} shares")
    nm = [_check_name(x, f"tier {i + 1}") for i, x in enumerate(names)]
    seen: dict[str, int] = {}
    for i, s in enumerate(nm):
        if s.casefold() in seen:
            raise MenuError(
                f"tiers {seen[s.casefold()] + 1} and {i + 1} are both called {s!r}; "
                "give each tier its own name"
            )
        seen[s.casefold()] = i
    lv = [_check_eps(x, f"tier {i + 1} ({nm[i]})") for i, x in enumerate(eps)]
    sh = [_check_share(x, f"tier {i + 1} ({nm[i]})") for i, x in enumerate(shares_percent)]
    tot = sum(sh)
    if tot <= 0:
        raise MenuError("all shares are 0%: at least one tier needs users")
    if abs(tot - 100.0) > SHARE_TOLERANCE:
        if not normalise:
            raise MenuError(
                f"the shares add up to {tot:.6g}%, not 100% (each tier's "
                "share_percent is the percent of users choosing it)"
            )
        sh = [100.0 * s / tot for s in sh]
    n = _check_n(n_users)
    lo, hi, u = _check_range(low, high, unit)
    sd = _check_sd(data_sd, lo, hi)
    tiers = tuple(Tier(a, b, c) for a, b, c in zip(nm, lv, sh))
    return Menu(tiers, n, lo, hi, u, sd)


# templates ----------------------------------------------------------------------------------
TEMPLATES: dict[str, str] = {
    "three_public": "Three tiers with public: Strict 0.1, Balanced 1, Open (public)",
    "two": "Two tiers: Strict 0.1 and Relaxed 1",
    "product_menu": "Product menu: Strict 0.1, Balanced 0.5, Relaxed 2, Public",
}
"""Ready-made menus (key: description), the first is the default."""


def template_menu(
    name: str, n_users: int = 1_000_000, low: float = 0.0, high: float = 500.0, unit: str = "USD"
) -> Menu:
    """The template menu ``name`` (a key of TEMPLATES) for ``n_users`` users."""
    if name == "three_public":
        return make_menu(
            ["Strict", "Balanced", "Open"],
            [0.1, 1.0, math.inf],
            [60, 30, 10],
            n_users,
            low,
            high,
            unit,
        )
    if name == "two":
        return make_menu(["Strict", "Relaxed"], [0.1, 1.0], [80, 20], n_users, low, high, unit)
    if name == "product_menu":
        from .presets import product_menu

        p = product_menu(1_000_000)
        pct = [100.0 * c / p.n for c in p.counts]
        return make_menu(p.names, p.levels, pct, n_users, low, high, unit)
    raise MenuError(f"unknown template {name!r}; one of {', '.join(TEMPLATES)}")


def default_menu() -> Menu:
    """The menu the page starts from: three tiers with public, 1,000,000 users, $0-500."""
    return template_menu("three_public")


# errors in real units -----------------------------------------------------------------------
def _variance(menu: Menu) -> float:
    """Data variance on the [-0.5, 0.5] scale: 1/4 (worst case) or (data_sd / R)^2."""
    if menu.data_sd is None:
        return 0.25
    return (menu.data_sd / menu.width) ** 2


SD_FLOOR = 1e-9
"""Smallest spread (sd / R) ADPM is tuned to: a menu with data_sd = 0 (all values equal) gets
weights tuned to 1e-9 of the range (2/s^2 stays finite; the weights are PropDPM's to ~1e-18)."""


def tuned_sd(menu: Menu) -> float | None:
    """The spread s = data_sd / R (on the [-1/2, 1/2] scale) ADPM is tuned to for ``menu``,
    floored at SD_FLOOR; None (the paper's worst case, s = 1/2) when the sd is not known."""
    if menu.data_sd is None:
        return None
    return min(max(menu.data_sd / menu.width, SD_FLOOR), 0.5)


def method_errors(
    weights: Any,
    counts: Any,
    noise_scale: float,
    outputs_zero: bool,
    menu: Menu,
    level: float = LEVEL,
) -> Accuracy:
    """Errors in real units of the unbiased affine estimator sum_i w_i x_i + Laplace(b) with
    ``counts[j]`` users of weight ``weights[j]`` (summing to 1) and b = ``noise_scale`` (data
    in [-0.5, 0.5]), for ``menu``'s range and spread.

    RMSE: exact, R sqrt(V ||w||_2^2 + 2 b^2) (V = 1/4 worst case, else (data_sd / R)^2; for
    ADPM this is f(r), Theorem 2). 95% half-width: R times
    :func:`hdp_core.intervals.population_half_width` with the declared spread
    (:func:`tuned_sd`; None = any data in the range), proven to cover the population mean with
    probability >= 95% at every n (kind "proven"). A method that answers the middle of the
    range (``outputs_zero``) is off by at most R/2: RMSE and half-width R/2.
    """
    width = menu.width
    if outputs_zero:
        return Accuracy(
            0.25, 0.5 * width, 0.5 * width, 0.0, 0.0, level, True, "proven", 0.5 * width
        )
    w = np.asarray(weights, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    b = float(noise_scale)
    var = _variance(menu)
    ssq = float(np.dot(c, w * w))
    mse = var * ssq + 2.0 * b * b
    hw = population_half_width(w, c, b, data_sd=tuned_sd(menu), level=level) * width
    return Accuracy(
        mse,
        math.sqrt(mse) * width,
        hw,
        math.sqrt(var * ssq) * width,
        b * width,
        level,
        False,
        "proven",
        hw,
    )


def profile_errors(levels: Any, counts: Any, menu: Menu) -> tuple[ADPMSolution, Accuracy]:
    """ADPM on tiers (levels, counts) and its errors for ``menu``'s data range and spread
    (:func:`method_errors`: exact RMSE, proven 95% half-width).

    With a known data sd the weights are ADPM tuned to s = sd / R (Algorithm 1 with 8 replaced
    by 2/s^2, :func:`hdp_core.adpm.adpm`): the optimal unbiased affine estimator for that
    spread, so the RMSE never rises when a user is added or a level loosened (the feasible set
    only grows). Without it, the paper's ADPM (worst case, s = 1/2). The half-width is
    :func:`hdp_core.intervals.population_half_width_for` of the same profile and spread.
    """
    sol = adpm(EpsilonProfile.from_tiers(levels, counts), data_sd=tuned_sd(menu))
    zero = sol.outputs_zero or not math.isfinite(sol.noise_scale)  # also: no usable user
    return sol, method_errors(sol.weights, sol.profile.counts, sol.noise_scale, zero, menu)


def menu_error(menu: Menu, metric: str = "rmse") -> float:
    """ADPM's error for ``menu`` in real units: RMSE or 95% half-width (``metric``)."""
    _check_metric(metric)
    return profile_errors(menu.levels, menu.counts, menu)[1].get(metric)


def _check_metric(metric: str) -> None:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")


@dataclass(frozen=True)
class MenuReport:
    """What a menu really gives (see :func:`evaluate_menu`); arrays are per tier.

    ``granted``: privacy each tier's users get, min(eps, cap) with cap = ``worth_offering``;
    ``saturated``: the tier asked for eps >= tau* and gets tau* instead; ``weight``: weight
    of one user of the tier in the estimate; ``weight_share``: the tier's share of the
    estimate (count * weight); ``errors``: ADPM, UNI and PropDPM in real units.
    """

    menu: Menu
    counts: np.ndarray
    granted: np.ndarray
    saturated: np.ndarray
    weight: np.ndarray
    weight_share: np.ndarray
    tau_star: float
    worth_offering: float
    errors: dict[str, Accuracy]
    all_public: Accuracy

    @property
    def n_saturated(self) -> int:
        """Users granted tau* instead of their looser level."""
        return int(self.counts[self.saturated].sum())

    def rows(self) -> list[dict[str, Any]]:
        """One dict per tier for a table: asked and granted eps, users, weights."""
        out = []
        for j, t in enumerate(self.menu.tiers):
            out.append(
                {
                    "tier": t.name,
                    "eps asked": t.eps,
                    "share %": 100.0 * float(self.menu.shares[j]),
                    "users": int(self.counts[j]),
                    "eps granted": float(self.granted[j]),
                    "saturated": bool(self.saturated[j]),
                    "weight of one user": float(self.weight[j]),
                    "share of the estimate %": 100.0 * float(self.weight_share[j]),
                }
            )
        return out


def evaluate_menu(menu: Menu) -> MenuReport:
    """Granted privacy per tier, tau*, the loosest level worth offering and the errors.

    ADPM (Algorithm 1) on the tiers gives r_j = min(eps_j, tau*) (Lemma 3). The loosest level
    worth offering is (||r||_2^2 + c)/||r||_1 with Algorithm 1's constant c (8 in the worst
    case, 2/s^2 when ADPM is tuned to a known spread s = data_sd / R): by Lemma 3
    (B) a new tier at any level at or above it is granted exactly that, however many users pick
    it, and it equals tau* when some tier saturates. Errors: ADPM, UNI (everyone at the
    strictest level) and PropDPM (weights proportional to eps), plus the reference of all users
    public (V / n), each by :func:`method_errors` (exact RMSE, proven 95% half-width).
    """
    counts = menu.counts
    prof = menu.to_profile(counts)
    sol, err = profile_errors(menu.levels, counts, menu)
    lv = menu.levels
    cf = counts.astype(np.float64)
    r = sol.r
    finite = np.isfinite(r) & (cf > 0)
    if math.isfinite(sol.saturation_level):  # the same number ADPM capped with
        worth = float(sol.saturation_level)
    elif finite.any():
        s1 = float(np.dot(cf[finite], r[finite]))
        s2 = float(np.dot(cf[finite], r[finite] ** 2))
        worth = (s2 + sol.constant) / s1
    else:  # every user public: no privacy to grant, nothing is capped
        worth = math.inf
    granted = np.minimum(lv, worth)
    saturated = (lv >= worth) & math.isfinite(worth)
    weight = np.asarray(sol.weights, dtype=np.float64)
    errors = {"ADPM": err}
    for name in ("UNI", "PropDPM"):
        est = get_method(name, prof)
        zero = bool(getattr(est, "outputs_zero", False))
        b = float(est.noise_scale or 0.0)  # UNI and PropDPM are affine: a number
        errors[name] = method_errors(est.weights, counts, b, zero, menu)
    pub = method_errors([1.0 / menu.n_users], [menu.n_users], 0.0, False, menu)
    return MenuReport(
        menu,
        counts,
        granted,
        saturated,
        weight,
        cf * weight,
        sol.saturation_level,
        worth,
        errors,
        pub,
    )


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


def _metric_words(metric: str) -> str:
    return "RMSE" if metric == "rmse" else "95% error half-width"


def _fmt_err(x: float, menu: Menu) -> str:
    u = f" {menu.unit}" if menu.unit else ""
    return f"{x:.4g}{u}"


def _check_target(menu: Menu, target: float, metric: str) -> DesignAnswer | None:
    """Validate the target; the 'trivial' answer when it is at least half the range."""
    _check_metric(metric)
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


def _bisect_int(meets, lo: int, hi: int) -> int:
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
"""Points below a half-width answer each solver checks (see :func:`_scan_down`)."""


def _scan_down(meets, value: int, floor: int, metric: str) -> int:
    """For the half-width, an m <= ``value`` that meets the target while m - 1 does not (or m
    = ``floor``): the smallest meeting point of [value - SCAN, value], searched again below
    (bisection from ``floor`` - 1, which misses, then the scan) whenever it is the window's
    lowest point. The RMSE is proven monotone (the tuned or worst-case optimum only improves as
    the feasible set grows), so its bisection is exact; the proven half-width
    (intervals.population_half_width) depends on ||w||_2, max w and the noise separately and
    can rise by a hair when ADPM trades one for another (tests/test_design.py), so each
    half-width answer is verified by this local scan."""
    if metric != "half_width":
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
    answers are also checked by a local scan (:func:`_scan_down`).
    Impossible when even MAX_USERS users do not meet the target.
    """
    triv = _check_target(menu, target, metric)
    if triv is not None:
        return triv
    t = float(target)

    def err(n: int) -> float:
        m = menu.with_n_users(n)
        return profile_errors(m.levels, m.counts, m)[1].get(metric)

    cache: dict[int, float] = {}

    def meets(n: int) -> bool:
        if n not in cache:
            cache[n] = err(n)
        return cache[n] <= t

    words = _metric_words(metric)
    if meets(1):
        return DesignAnswer(
            "ok", 1, None, cache[1], None, f"Even 1 user meets a {words} of {_fmt_err(t, menu)}."
        )
    lo, hi = 1, 2
    while not meets(hi):
        if hi >= MAX_USERS:
            return DesignAnswer(
                "impossible",
                None,
                None,
                cache[hi],
                None,
                f"Even {MAX_USERS:.0e} users give a {words} of {_fmt_err(cache[hi], menu)}, "
                f"above the target {_fmt_err(t, menu)}.",
            )
        lo, hi = hi, min(hi * 2, MAX_USERS)
    n = _scan_down(meets, _bisect_int(meets, lo, hi), 1, metric)
    below = n - 1
    if below not in cache:
        meets(below)
    now = "already meets" if n <= menu.n_users else "needs more users to meet"
    return DesignAnswer(
        "ok",
        n,
        below,
        cache[n],
        cache[below],
        f"This menu needs at least {n:,} users for a {words} of {_fmt_err(t, menu)} "
        f"(one user fewer misses it). With {menu.n_users:,} users it {now} the target.",
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
    words = _metric_words(metric)

    def err(e: float) -> float:
        lv = menu.levels
        lv[tier] = e
        return profile_errors(lv, counts, menu)[1].get(metric)

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
    # upper end of the bracket: the level at which the tier would saturate, else grow
    lv = menu.levels
    lv[tier] = math.inf
    cap = adpm(EpsilonProfile.from_tiers(lv, counts), data_sd=tuned_sd(menu)).saturation_level
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
        if metric != "half_width":
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
    MSE, so the error is non-increasing in m: integer bisection. "already" when m = 0 meets the
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
    words = _metric_words(metric)
    src, dst = menu.tiers[source].name, menu.tiers[dest].name
    cache: dict[int, float] = {}

    def err(m: int) -> float:
        if m not in cache:
            ct = base.copy()
            ct[source] -= m
            ct[dest] += m
            cache[m] = profile_errors(lv, ct, menu)[1].get(metric)
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
    pct = 100.0 * m / menu.n_users
    return DesignAnswer(
        "ok",
        m,
        m - 1,
        err(m),
        err(m - 1),
        f"{m:,} users ({pct:.4g}% of all users, {100.0 * m / total:.4g}% of {src}) must move "
        f"from {src} to {dst} for a {words} of {_fmt_err(t, menu)} (one fewer misses it).",
    )


QUESTIONS = ("users", "level", "move")
"""The accuracy-first questions: minimum users, strictest level of a tier, users to move."""


def solve(
    menu: Menu, question: str, target: float, metric: str = "rmse", a: int = 0, b: int = 0
) -> DesignAnswer:
    """The answer to ``question`` (one of QUESTIONS) for ``target`` (data units): min_users,
    strictest_level of tier ``a``, or share_to_move from tier ``a`` to tier ``b``; the answer
    records the question and its tiers, so that :meth:`DesignAnswer.apply` can apply it."""
    if question == "users":
        return replace(min_users(menu, target, metric), question=question)
    if question == "level":
        return replace(strictest_level(menu, a, target, metric), question=question, tiers=(a,))
    if question == "move":
        ans = share_to_move(menu, a, b, target, metric)
        return replace(ans, question=question, tiers=(a, b))
    raise ValueError(f"the question must be one of {QUESTIONS}, got {question!r}")


# what-if ------------------------------------------------------------------------------------
def move_share(menu: Menu, a: int, b: int, share_a_percent: float) -> Menu:
    """The menu with tier ``a`` at ``share_a_percent`` and tier ``b`` taking the difference
    (their combined share stays the same); other tiers unchanged."""
    if not (0 <= a < menu.k and 0 <= b < menu.k) or a == b:
        raise ValueError("choose two different tiers")
    p = menu._pcts()
    both = p[a] + p[b]
    x = min(max(float(share_a_percent), 0.0), both)
    p[a], p[b] = x, both - x
    return make_menu(
        menu.names,
        menu.levels,
        p,
        menu.n_users,
        menu.low,
        menu.high,
        menu.unit,
        menu.data_sd,
        normalise=True,
    )


@dataclass(frozen=True)
class ShareSweep:
    """Errors and tau* as tier ``a``'s share runs from 0 to the share of a and b together.

    ``share_a``: percent of all users in tier a at each point; ``errors[m]``: RMSE and
    ``half_widths[m]``: 95% half-width (real units) of method m; ``tau``: tau* (inf = none);
    ``worth``: the loosest level worth offering.
    """

    a: int
    b: int
    share_a: np.ndarray
    errors: dict[str, np.ndarray]
    half_widths: dict[str, np.ndarray]
    tau: np.ndarray
    worth: np.ndarray

    def values(self, metric: str) -> dict[str, np.ndarray]:
        return self.errors if metric == "rmse" else self.half_widths


def share_sweep(menu: Menu, a: int, b: int, points: int = 41) -> ShareSweep:
    """Evaluate the menu at ``points`` shares of tier ``a`` (b takes the rest), exactly."""
    p = menu._pcts()
    both = p[a] + p[b]
    xs = np.linspace(0.0, both, int(points))
    meths = ("ADPM", "UNI", "PropDPM")
    errs = {m: np.empty(xs.size) for m in meths}
    hws = {m: np.empty(xs.size) for m in meths}
    tau, worth = np.empty(xs.size), np.empty(xs.size)
    for i, x in enumerate(xs):  # one loop per grid point; each point is O(k log k)
        rep = evaluate_menu(move_share(menu, a, b, float(x)))
        for m in meths:
            errs[m][i] = rep.errors[m].rmse
            hws[m][i] = rep.errors[m].half_width
        tau[i], worth[i] = rep.tau_star, rep.worth_offering
    return ShareSweep(a, b, xs, errs, hws, tau, worth)


def __getattr__(name: str) -> Any:
    """``menu_to_dict`` moved to hdp_core.design_io; the old import keeps working."""
    if name == "menu_to_dict":
        from .design_io import menu_to_dict

        return menu_to_dict
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
