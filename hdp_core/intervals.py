"""95% intervals that cover at every n, for both targets (beyond the paper).

Unit scale: data on [-1/2, 1/2]; multiply every half-width by the range width R = hi - lo. The
estimate is T = <w, x> + L, L ~ Laplace(eta). ``level`` must be in [1/2, 1); alpha = 1 - level.

Table target (:func:`table_half_width`). Against the table's own mean m(x), T - m = b + L with a
fixed bias |b| <= B (the worst-case bias bound, e.g. ``TableMeanSolution.bias_bound``). For a
fixed b, P(|b + L| > h) = e^{-h/eta} cosh(b/eta) when h >= |b| (Laplace tails), increasing in
|b|, so for every table P(|T - m| > h) <= e^{-h/eta} cosh(B/eta) = alpha at
h = B + eta (ln(1/(2 alpha)) + log1p(e^{-2B/eta})). That is at most B + eta ln(1/alpha) (the
bias bound plus the Laplace quantile, eta ln 20 at 95%), equals eta ln 20 when B = 0 and is
exact (coverage exactly ``level``) for the table that attains the bias bound. With eta = 0 it
is B: the answer is never further than B from the table's mean.

Population target (:func:`population_half_width`). Users' values i.i.d. from ANY distribution
on the range with mean mu (the paper's assumption: levels do not depend on values), weights
summing to 1 (ADPM's), so T - mu = Z + L with Z = sum_i w_i (x_i - mu), independent terms,
|w_i (x_i - mu)| <= w_i, E Z = 0. Three proven bounds, each giving a half-width h with
P(|Z + L| > h) <= alpha; the smallest is returned (each is valid, so their minimum is):

(a) Deterministic: |Z| <= sum_i w_i = 1, so as for the table target with B = 1 (n = 1 and
    all-public tables are covered with probability 1; the true worst case for one public
    user is 0.95 of the range).
(b) Union bound with an optimised split alpha = a1 + a2: P(|Z| > z) <= a1 by Hoeffding,
    2 exp(-2 z^2 / sum_i w_i^2), and, with a declared spread s (sd of one value, so
    v = Var Z <= s^2 ||w||^2), also by Bennett, 2 exp(-(v/M^2) h(M z / v)),
    h(u) = (1 + u) ln(1 + u) - u, M = max w_i (each term w_i (x_i - mu) <= M); P(|L| > t) =
    e^{-t/eta} = a2 exactly; h = z + t, minimised over a grid of splits (any split is valid).
(c) Chernoff on the sum: for 0 < lam < 1/eta, E e^{lam (Z + L)} <= e^{psi(lam)} / (1 - lam^2
    eta^2) with psi = lam^2 ||w||^2 / 8 (Hoeffding's lemma) or, with a spread s,
    psi = (v/M^2)(e^{lam M} - 1 - lam M) (Bennett's moment bound); the same for -Z, so
    P(|Z + L| > h) <= 2 e^{psi - lam h} / (1 - lam^2 eta^2) = alpha at
    h(lam) = (psi + ln(2/alpha) - ln(1 - lam^2 eta^2)) / lam, minimised over a grid of lam.

Hoeffding (1963); Bennett (1962); Boucheron, Lugosi, Massart, "Concentration Inequalities"
(2013), Thm 2.8 (Hoeffding), Thm 2.9 and its proof (Bennett's moment bound and tail). The
population mean lies in the range, so an interval may also be clipped to it. ADPM answering 0
(f(r) > 1/4) is at most 1/2 from any mean in range: half-width 1/2.

:func:`expected_error_95` is the one figure the Tier designer and the Release page show for
either target ("95% error"): the half-width of that target's interval for a profile.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .adpm import adpm
from .table_mean import table_mean

__all__ = [
    "TARGETS",
    "expected_error_95",
    "interval_in_range",
    "population_half_width",
    "population_half_width_for",
    "population_half_width_moments",
    "release_error_95",
    "table_half_width",
]

TARGETS = ("population", "table")
"""The two means a release can estimate: the population mean (ADPM; assumes levels do not
depend on values) and the table's own mean (TableMean; no assumption)."""

_GRID = 256


def _alpha(level: float) -> float:
    level = float(level)
    if not 0.5 <= level < 1.0:
        raise ValueError(f"level must be in [1/2, 1), got {level}")
    return 1.0 - level


def table_half_width(bias_bound: float, noise_scale: float, level: float = 0.95) -> float:
    """Half-width h (unit scale) such that T +- h covers the table's mean with probability at
    least ``level`` for EVERY table, when |E T - mean| <= ``bias_bound`` and the noise is
    Laplace(``noise_scale``): h = B + eta (ln(1/(2 alpha)) + log1p(e^{-2B/eta})) (module
    docstring: proof)."""
    a = _alpha(level)
    b, eta = float(bias_bound), float(noise_scale)
    if not (b >= 0 and eta >= 0 and math.isfinite(b) and math.isfinite(eta)):
        raise ValueError(f"bias bound and noise scale must be finite and >= 0, got {b}, {eta}")
    if eta == 0:
        return b
    return b + eta * (math.log(1.0 / (2.0 * a)) + math.log1p(math.exp(-2.0 * b / eta)))


def _deterministic(zmax: float, eta: float, a: float) -> float:
    return table_half_width(zmax, eta, 1.0 - a)


def _bennett_z(ln2: np.ndarray, m: float, var: float) -> np.ndarray:
    """z with exp(-(var/m^2) h(m z / var)) = a1 (ln2 = ln(2/a1)), h(u) = (1+u) ln(1+u) - u:
    Bennett's tail inverted by bisection; bracketed by Bernstein's z (Bennett's is smaller)."""
    y = ln2 * m * m / var
    hi = y / 3.0 + np.sqrt(y * y / 9.0 + 2.0 * y)  # Bernstein's u: h(u) >= u^2/(2(1+u/3))
    lo = np.zeros_like(hi)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = (1.0 + mid) * np.log1p(mid) - mid < y
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return hi * var / m


def _union(s2w: float, m: float, eta: float, a: float, var: float | None) -> float:
    """(b): min over splits a1 + a2 = a of z(a1) + eta ln(1/a2)."""
    if eta == 0:
        a1 = np.array([a])
    else:
        a1 = a * np.linspace(1.0 / _GRID, 1.0 - 1.0 / _GRID, _GRID - 1)
    ln2 = np.log(2.0 / a1)
    z = np.sqrt(0.5 * s2w * ln2)  # Hoeffding
    if var is not None and var > 0 and m > 0:
        z = np.minimum(z, _bennett_z(ln2, m, var))
    t = eta * np.log(1.0 / (a - a1)) if eta > 0 else 0.0
    return float(np.min(z + t))


def _chernoff(s2w: float, m: float, eta: float, a: float, var: float | None) -> float:
    """(c): min over 0 < lam < 1/eta of (psi(lam) + ln(2/a) - ln(1 - lam^2 eta^2)) / lam."""
    if eta == 0:  # no noise: (b) with a2 = 0 is this bound at its best lam
        return math.inf
    lam = (
        np.concatenate(
            (
                np.linspace(1.0 / _GRID, 1.0 - 1.0 / _GRID, _GRID - 1),
                1.0 - np.logspace(-6, -2.5, 16),
            )
        )
        / eta
    )
    noise = -np.log1p(-((lam * eta) ** 2))
    psi = lam * lam * s2w / 8.0  # Hoeffding's lemma
    if var is not None and var > 0 and m > 0:
        with np.errstate(over="ignore"):
            psi = np.minimum(psi, var * (np.expm1(lam * m) - lam * m) / (m * m))  # Bennett
    h = (psi + math.log(2.0 / a) + noise) / lam
    return float(np.min(h))


def population_half_width(
    weights: Any,
    counts: Any,
    noise_scale: float,
    data_sd: float | None = None,
    level: float = 0.95,
) -> float:
    """Half-width h (unit scale) such that T +- h covers the population mean with probability
    at least ``level`` for every distribution on the range (with ``data_sd`` = s: every one
    whose standard deviation is at most s), at every n, for T = sum_i w_i x_i +
    Laplace(``noise_scale``) with ``counts[j]`` users of weight ``weights[j]`` summing to 1
    (module docstring: the three proven bounds (a), (b), (c); the least is returned)."""
    _alpha(level)
    w = np.asarray(weights, dtype=np.float64).ravel()
    c = np.asarray(counts, dtype=np.float64).ravel()
    eta = float(noise_scale)
    if w.shape != c.shape or not (np.isfinite(w).all() and (w >= 0).all() and (c >= 0).all()):
        raise ValueError("weights and counts must have the same shape, be finite and >= 0")
    if not (math.isfinite(eta) and eta >= 0):
        raise ValueError(f"noise scale must be finite and >= 0, got {noise_scale}")
    total = float(np.dot(c, w))
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"the weights of all users must add up to 1, got {total:.12g}")
    if data_sd is not None:
        s = float(data_sd)
        if not (0.0 < s <= 0.5):
            raise ValueError(f"data_sd must be in (0, 1/2] on the unit scale, got {data_sd}")
    live = (c > 0) & (w > 0)
    s2w = float(np.dot(c[live], w[live] ** 2))
    m = float(w[live].max()) if live.any() else 0.0
    return population_half_width_moments(s2w, m, eta, data_sd=data_sd, level=level)


def population_half_width_moments(
    sum_w2: float,
    max_w: float,
    noise_scale: float,
    data_sd: float | None = None,
    level: float = 0.95,
) -> float:
    """:func:`population_half_width` from the two numbers it depends on: ``sum_w2`` =
    sum_i w_i^2 (an upper bound is valid) and ``max_w`` = max_i w_i (an upper bound is
    valid) of weights summing to 1, for the release's level bins whose users' weights are
    known only through these sums (hdp_core.release). Unit scale."""
    a = _alpha(level)
    s2w, m, eta = float(sum_w2), float(max_w), float(noise_scale)
    if not (math.isfinite(s2w) and s2w >= 0 and math.isfinite(m) and m >= 0):
        raise ValueError(f"sum_w2 and max_w must be finite and >= 0, got {sum_w2}, {max_w}")
    if not (math.isfinite(eta) and eta >= 0):
        raise ValueError(f"noise scale must be finite and >= 0, got {noise_scale}")
    var = None
    if data_sd is not None:
        s = float(data_sd)
        if not (0.0 < s <= 0.5):
            raise ValueError(f"data_sd must be in (0, 1/2] on the unit scale, got {data_sd}")
        var = s * s * s2w
    return min(
        _deterministic(1.0, eta, a),
        _union(s2w, m, eta, a, var),
        _chernoff(s2w, m, eta, a, var),
    )


def population_half_width_for(eps: Any, data_sd: float | None = None, level: float = 0.95) -> float:
    """:func:`population_half_width` of ADPM's weights and noise for profile ``eps`` (tuned to
    ``data_sd`` when given, as ``adpm(eps, data_sd)``); 1/2 when ADPM answers 0 (f(r) > 1/4)
    or no user's data may be used."""
    sol = adpm(eps, data_sd=data_sd)
    if sol.outputs_zero or not math.isfinite(sol.noise_scale):
        return 0.5
    return population_half_width(
        sol.weights, sol.profile.counts, sol.noise_scale, data_sd=data_sd, level=level
    )


def expected_error_95(
    eps: Any, target: str = "population", data_sd: float | None = None, level: float = 0.95
) -> float:
    """The "95% error" of a release for profile ``eps`` (unit scale; times R in data units):
    the half-width of the interval that covers the target with probability >= ``level``.
    ``target`` "population": ADPM and :func:`population_half_width_for` (``data_sd`` declared
    spread or None); "table": TableMean and :func:`table_half_width` (``data_sd`` is not used:
    the table's mean needs no assumption on the data)."""
    if target == "population":
        return population_half_width_for(eps, data_sd=data_sd, level=level)
    if target == "table":
        sol = table_mean(eps)
        return table_half_width(sol.bias_bound, sol.noise_scale, level)
    raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {str(target)[:40]!r}")


def release_error_95(
    levels: Any,
    counts: Any,
    lo: float,
    hi: float,
    target: str = "population",
    data_sd: float | None = None,
    spend: Any = 1,
    k: int = 1,
    level: float = 0.95,
) -> float:
    """The 95% error in DATA units (half-width of the interval a release reports, before it
    is clipped to the range) of one release of a table with ``counts[j]`` users asking for
    ``levels[j]`` (0 and inf allowed), range [lo, hi], for ``target`` "population" or
    "table", when it spends ``spend`` of every user's level and that spend is split into
    ``k`` equal releases (each runs at levels eps x spend / k, as hdp_core.ledger's
    spend_levels does: the k releases together spend ``spend``). ``data_sd`` in data units
    (population target only; None: worst case). This is :func:`expected_error_95` on the
    scaled levels, times R = hi - lo (the release adds at most ~1e-15 R for rounding)."""
    from fractions import Fraction

    from .ledger import as_spend, spend_levels
    from .profile import EpsilonProfile

    lo_f, hi_f = float(lo), float(hi)
    width = hi_f - lo_f
    if not (math.isfinite(width) and width > 0):
        raise ValueError(f"the range needs finite lo < hi, got {lo}, {hi}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k (the number of releases) must be an integer >= 1, got {k!r}")
    each = as_spend(spend) / Fraction(int(k))
    asked = EpsilonProfile.from_tiers(levels, counts)  # validates the requested levels
    # the run levels may lie below LEVEL_MIN (a rule for what users ask, not for the maths)
    lv = spend_levels(asked.levels, each)
    prof = EpsilonProfile._make(lv, asked.counts, True, None, None)
    sd = None if data_sd is None else float(data_sd) / width
    return expected_error_95(prof, target=target, data_sd=sd, level=level) * width


def interval_in_range(
    estimate: float, half_width: float, lo: float = -0.5, hi: float = 0.5
) -> tuple[float, float]:
    """estimate +- half_width intersected with the range [lo, hi] (same units). Both targets
    lie in the range, so the intersection covers exactly when the interval does; if the two
    do not meet, the range end nearest the estimate (a point) is returned."""
    a = min(max(estimate - half_width, lo), hi)
    b = max(min(estimate + half_width, hi), lo)
    if a > b:
        a = b = min(max(estimate, lo), hi)
    return float(a), float(b)
