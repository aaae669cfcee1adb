"""Tier menus: the menu type (named tiers with a privacy level eps > 0 or public, and the share
of users expected to pick each; a total number of users; the data's range in real units),
its checks (MenuError naming the field), templates, Webster apportionment of users to tiers,
and the menu as JSON-ready data. The errors of a menu are in hdp_core.design, the
accuracy-first solvers in hdp_core.solvers."""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, cast

import numpy as np

from hdp_core.errors import MenuError
from hdp_core.profile import MAX_TOTAL_USERS, EpsilonProfile
from hdp_core.validate import (
    as_float,
    describe,
    fmt_number,
    is_real_number,
    parse_level,
)

MAX_RANGE_END = 1e15


MAX_MENU_TIERS = 10


EPS_MIN = 1e-4


EPS_MAX = 1e4


MAX_USERS = MAX_TOTAL_USERS


MAX_NAME_CHARS = 40


MAX_UNIT_CHARS = 20


SHARE_TOLERANCE = 0.01


LEVEL = 0.95


METRICS = ("rmse", "half_width")


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
        return cast(np.ndarray, p / p.sum())

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
        already has MAX_MENU_TIERS tiers."""
        if self.k >= MAX_MENU_TIERS:
            raise MenuError(f"a menu has at most {MAX_MENU_TIERS} tiers")
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
        from hdp_core.presets import product_menu

        p = product_menu(1_000_000)
        pct = [100.0 * c / p.n for c in p.counts]
        return make_menu(p.names, p.levels, pct, n_users, low, high, unit)
    raise MenuError(f"unknown template {name!r}; one of {', '.join(TEMPLATES)}")


def default_menu() -> Menu:
    """The menu the page starts from: three tiers with public, 1,000,000 users, $0-500."""
    return template_menu("three_public")


# the menu as data ---------------------------------------------------------------------------
def eps_json(x: float) -> float | str:
    return "public" if math.isinf(x) else float(x)


def menu_to_dict(menu: Menu) -> dict[str, Any]:
    """The menu as a JSON-ready dict (public tiers as "public")."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "n_users": int(menu.n_users),
        "data_range": {"low": menu.low, "high": menu.high, "unit": menu.unit},
        "data_sd": menu.data_sd,
        "tiers": [
            {"name": t.name, "eps": eps_json(t.eps), "share_percent": t.share_percent}
            for t in menu.tiers
        ],
    }
