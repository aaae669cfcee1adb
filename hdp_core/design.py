"""Tier menus for product design: what each privacy tier really gets, and what a target
accuracy takes.

A *menu* is a short list of named tiers (a privacy level eps > 0, or public = +inf, and the
share of users expected to pick it), a total number of users and the data's range in real
units. Everything here is exact and cheap for any number of users: tiers are never expanded.

* :func:`evaluate_menu`: each tier's granted privacy r_j = min(eps_j, tau*) (saturation lemma,
  Lemma 3), tau*, the accuracy of the mean in real units for ADPM and for the UNI and PropDPM
  baselines (exact RMSE and the proven 95% error half-width), and the loosest level worth
  offering.
* Accuracy-first solvers (what a target error takes): hdp_core.solvers.
* :func:`share_sweep`: the what-if curve when share moves between two tiers.
* Invalid menus raise :class:`hdp_core.errors.MenuError` naming the field. Files and links
  for menus are in :mod:`hdp_app.views.menu_io` and :mod:`hdp_app.views.links`.

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

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdp_core.adpm import ADPMSolution, adpm
from hdp_core.estimators import get_method
from hdp_core.intervals import population_half_width
from hdp_core.menu import LEVEL, METRICS, Menu, make_menu
from hdp_core.profile import EpsilonProfile
from hdp_core.rounding import release_half_width
from hdp_core.units import Accuracy


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
    probability >= 95% at every n (kind "proven"), plus every rounding a release makes
    (:func:`hdp_core.rounding.release_half_width`: the Release page's figure). A method that
    answers the middle of the range (``outputs_zero``) is off by at most R/2: RMSE and
    half-width R/2.
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
    h_unit = population_half_width(w, c, b, data_sd=tuned_sd(menu), level=level)
    hw = release_half_width(h_unit, 1.0, menu.low, menu.high)  # + the release's roundings
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
    check_metric(metric)
    return profile_errors(menu.levels, menu.counts, menu)[1].get(metric)


def check_metric(metric: str) -> None:
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
