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
|w_i (x_i - mu)| <= w_i, E Z = 0. Five proven bounds, each giving a half-width h with
P(|Z + L| > h) <= alpha; the smallest is returned (each is valid, so their minimum is):

(a) Deterministic: |Z| <= sum_i w_i = 1, so as for the table target with B = 1 (n = 1 and
    all-public tables are covered with probability 1; the true worst case for one public
    user is 0.95 of the range).
(b) Union bound with an optimised split alpha = a1 + a2: P(|Z| > z) <= a1 by Hoeffding,
    2 exp(-2 z^2 / sum_i w_i^2), and, with a declared spread s (sd of one value, so
    v = Var Z <= s^2 ||w||^2), also by Bennett, 2 exp(-(v/M^2) h(M z / v)),
    h(u) = (1 + u) ln(1 + u) - u, M = max w_i (each term w_i (x_i - mu) <= M); P(|L| > t) =
    e^{-t/eta} = a2 exactly; h = z + t, minimised over a grid of splits (any split is valid).
    Bennett's z solves h(M z / v) = (M^2 / v) ln(2/a1), h increasing and convex: one Newton
    step from a table, then a check in floating point that proves the z returned is at or
    above the exact root (:func:`_bennett_z`): rounding can only widen the interval. Any z
    above the root is valid (the tail bound at a larger z is smaller). With v >= ||w||^2 / 4
    (s = 1/2, the worst case) Bennett's z is never below Hoeffding's (h(u) <= u^2 / 2 makes
    its exponent at most 2 z^2 / ||w||^2), so it is not computed.
(c) Chernoff on the sum: for 0 < lam < 1/eta, E e^{lam (Z + L)} <= e^{psi(lam)} / (1 - lam^2
    eta^2) with psi = lam^2 ||w||^2 / 8 (Hoeffding's lemma) or, with a spread s,
    psi = (v/M^2)(e^{lam M} - 1 - lam M) (Bennett's moment bound); the same for -Z, so
    P(|Z + L| > h) <= 2 e^{psi - lam h} / (1 - lam^2 eta^2) = alpha at
    h(lam) = (psi + ln(2/alpha) - ln(1 - lam^2 eta^2)) / lam, minimised over a FIXED set of
    lam (any lam is valid): the lattice 2^(k/512), k integer, and psi's noise-free minimiser,
    for Hoeffding's psi and (where it can be less, v < ||w||^2 / 4) Bennett's, each on its
    own (:func:`_chernoff`, :func:`_lambdas`: only the lattice points that can be the least).

(d) Chebyshev: Z and L are independent with mean 0, Var Z = sum_i w_i^2 Var x_i <= s^2
    ||w||^2 (independent users; s = 1/2 without a declared spread, the largest sd on the
    range) and Var L = 2 eta^2, so P(|Z + L| >= h) <= (s^2 ||w||^2 + 2 eta^2) / h^2 = alpha
    at h = sqrt((s^2 ||w||^2 + 2 eta^2) / alpha). The least when a few large weights and a
    small declared spread make the sum far from normal (one user at eps 100, s = 0.01).
(e) Fourth moment (Markov on (Z + L)^4): with Y_i = w_i (x_i - mu) independent, mean 0,
    E Z^4 = sum_i E Y_i^4 + 3 sum_{i != j} E Y_i^2 E Y_j^2 <= sum_i E Y_i^4 + 3 (Var Z)^2,
    and E Y_i^4 <= w_i^2 E Y_i^2 (|x_i - mu| <= 1), so E Z^4 <= M^2 s^2 ||w||^2 +
    3 s^4 ||w||^4; the odd moments of L vanish and E L^2 = 2 eta^2, E L^4 = 24 eta^4, so
    E (Z + L)^4 = E Z^4 + 12 eta^2 Var Z + 24 eta^4 <= m4, and P(|Z + L| >= h) <= m4 / h^4
    = alpha at h = (m4 / alpha)^(1/4): about 2.78 sqrt(Var) for many small weights (a
    near-normal sum, E Z^4 ~ 3 Var^2), where Chebyshev gives 4.47 sqrt(Var).
Both grow with eta and with s; each is computed with a relative 1e-12 added (upwards).

Monotone in the noise scale: the set of lam (c) searches and the splits (b) searches do not
depend on eta, and each h(lam) and each z + eta ln(1/a2) grows with eta (lam's set below
1/eta shrinks), as do (a), (d) and (e); so the returned minimum never decreases as eta grows,
everything else fixed (up to rounding), and it is continuous: as eta -> 0, (c) tends to its value at
eta = 0, the noise-free optimum (the Chernoff bound at the noise-free minimiser is
Hoeffding's, or Bennett's, tail inverted: (b) with a2 = 0). A bound proven for one noise
scale is never reused for another: each eta gets its own five proven bounds.
(Before, (c)'s grid was lam = (0..1) / eta, too coarse when eta is tiny: 0.6791, 0.6837,
0.6791 USD at eta = 0, 1e-6, 5e-6 on the Tier designer's default menu.)

Hoeffding (1963); Bennett (1962); Boucheron, Lugosi, Massart, "Concentration Inequalities"
(2013), Thm 2.8 (Hoeffding), Thm 2.9 and its proof (Bennett's moment bound and tail). The
population mean lies in the range, so an interval may also be clipped to it. ADPM answering 0
(f(r) > 1/4) is at most 1/2 from any mean in range: half-width 1/2.

:func:`expected_error_95` is the one figure the Tier designer and the Release page show for
either target ("95% error"): the half-width of that target's interval for a profile.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, cast

import numpy as np

from hdp_core.adpm import adpm
from hdp_core.rounding import release_half_width
from hdp_core.table_mean import table_mean

__all__ = [
    "TARGETS",
    "expected_error_95",
    "interval_in_range",
    "population_bounds",
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


_SPLITS = np.linspace(1.0 / _GRID, 1.0 - 1.0 / _GRID, _GRID - 1)
"""(b)'s grid of splits: a1 = a x these (255 points in (0, 1))."""

_STEPS_PER_OCTAVE = 512
"""(c)'s lattice of lam: 2^(k/512) for integers k (ratio 2^(1/512), about 1.00136)."""

_OCTAVE = 2.0 ** (np.arange(_STEPS_PER_OCTAVE) / _STEPS_PER_OCTAVE)
"""2^(j/512), j = 0..511: lam_k = ldexp(_OCTAVE[k mod 512], k div 512), the same double for
the same k in every call (the lattice does not depend on the noise scale)."""

_LN_STEP = math.log(2.0) / _STEPS_PER_OCTAVE

_SERIES_BELOW = 1e-3
"""Below this u, h(u) is summed as a series (the closed form loses digits there)."""

_SERIES = (1.0 / 2.0, -1.0 / 6.0, 1.0 / 12.0, -1.0 / 20.0)
"""h(u) / u^2 = sum_j (-u)^j / ((j + 1)(j + 2)), its first four terms."""

_RHO = 1e-11
"""The margin (relative, in h) by which a returned Bennett u must pass the check h(u) >= y."""

_NEWTON_STEPS = 60
"""Most Newton steps of the fallback (from Bernstein's u; about 7 for y = 1e20)."""

for _a in (_SPLITS, _OCTAVE):
    _a.setflags(write=False)


def _bennett_h(u: np.ndarray, log1p_u: np.ndarray, small: np.ndarray | bool | None) -> np.ndarray:
    """h(u) = (1 + u) ln(1 + u) - u for u >= 0 (``log1p_u`` = ln(1 + u)) to a relative error
    below 2e-12: the closed form for u >= 1e-3 (its cancellation costs at most ~5000 eps
    there, eps = 2^-52), the alternating series u^2 (1/2 - u/6 + u^2/12 - u^3/20) below (the
    first term left out, u^4 / 30, is under 7e-14 of the sum, about 1/2). ``small`` (from
    :func:`_small`): where u < 1e-3, True if everywhere, None if nowhere; near 1e-3 either
    way is that accurate."""
    if small is None:
        return cast(np.ndarray, (1.0 + u) * log1p_u - u)
    c0, c1, c2, c3 = _SERIES
    series: np.ndarray = u * u * (c0 + u * (c1 + u * (c2 + u * c3)))
    if small is True:
        return series
    return np.where(small, series, (1.0 + u) * log1p_u - u)


def _small(u: np.ndarray) -> np.ndarray | bool | None:
    """Where u < 1e-3 (:func:`_bennett_h`'s series): None if nowhere, True if everywhere."""
    small = u < _SERIES_BELOW
    if not small.any():
        return None
    return True if small.all() else small


def _h_table() -> tuple[np.ndarray, np.ndarray]:
    """(ln h(u), ln u) at ln u = -40, -39.99, ..., 52 (9,201 points): read backwards by
    np.interp it gives u(y) to 1.2e-6 (relative) for y in [1.1e-35, 1.7e24] (tests), the
    start of the Newton step."""
    lu = np.linspace(-40.0, 52.0, 9201)
    u = np.exp(lu)
    ly = np.log(_bennett_h(u, np.log1p(u), _small(u)))
    for x in (ly, lu):
        x.setflags(write=False)
    return ly, lu


_H_TABLE = _h_table()


@lru_cache(maxsize=16)
def _split_logs(a: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ln(2/a1), ln(1/(a - a1)) and ln ln(2/a1) on (b)'s grid of splits a1 = a x _SPLITS
    (read-only)."""
    a1 = a * _SPLITS
    ln2 = np.log(2.0 / a1)
    out = (ln2, np.log(1.0 / (a - a1)), np.log(ln2))
    for x in out:
        x.setflags(write=False)
    return out


def _newton(u: np.ndarray, y: np.ndarray, steps: int) -> np.ndarray:
    """``steps`` Newton steps for h(u) = y from u: u - (h(u) - y) / ln(1 + u), which is
    (u + y) / ln(1 + u) - 1 (to ~1000 eps relative) when every u >= 1e-3, else with h from
    :func:`_bennett_h`."""
    for _ in range(steps):
        small = _small(u)
        if small is None:
            u = (u + y) / np.log1p(u) - 1.0
        else:
            lg = np.log1p(u)
            u = u - (_bennett_h(u, lg, small) - y) / lg
    return u


def _certified(u: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """u raised by 2e-11 (relative), and whether h of it is at least y (1 + 1e-11), h to
    2e-12 (the series wherever the raised u is below 1e-3)."""
    u = u * (1.0 + 2.0 * _RHO)
    return u, _bennett_h(u, np.log1p(u), _small(u)) >= y * (1.0 + _RHO)


def _bennett_z(
    ln2: np.ndarray, m: float, var: float, lnln2: np.ndarray | None = None
) -> np.ndarray:
    """z with exp(-(var/m^2) h(m z / var)) = a1 (ln2 = ln(2/a1); ``lnln2`` = ln ln2 if known),
    h(u) = (1+u) ln(1+u) - u: Bennett's tail inverted, returned at or ABOVE the exact root (a
    wider interval, still proven), about 2e-11 (relative) above it; inf (so Hoeffding's
    z is used) where that cannot be certified.

    Solves h(u) = y, y = ln2 m^2 / var, then z = u var / m. h is increasing and convex on
    u >= 0 (h' = ln(1 + u) > 0, h'' = 1/(1 + u) > 0), so Newton's step from any u > 0 lands
    at or above the root (the tangent lies below a convex curve) and, from above, closer: the
    relative error after a step is at most about half the square of the one before
    (h''/(2 h') <= 1/(2u)). The start, u read from a table of h (:func:`_h_table`, 1.2e-6
    off), needs one step (to 7e-13), all grid points at once (numpy). Then u is raised by
    2e-11 and checked, h(u) >= y (1 + 1e-11), with h to 2e-12 (:func:`_bennett_h`): a pass
    proves h(u) > y in exact arithmetic, so u is above the exact root, by at least ~4e-12 of
    it (h(c u) <= c^2 h(u) for c >= 1, as ln(1 + u) >= 2u/(2 + u)): more than the rounding
    of ln2, y and z. If any point fails (a y off the table starts at nan, and fails), all
    restart from Bernstein's u (h(u) >= u^2/(2(1 + u/3)), so above the root), whose Newton
    steps decrease to the root, until every step moves u by at most 1e-9 of itself (the next
    error is below 1e-18); a point that still fails the check gets inf. This replaced a
    60-step bisection of Bernstein's bracket, ten times slower (same numbers to 2e-11; exact
    arithmetic and the old code as oracles: tests/test_intervals_bennett.py and
    benchmarks/bench_intervals.py).
    """
    c = m * m / var
    if not 1e-300 < c < 1e290:  # then h(u) for u up to 3 y (y = c ln2, ln2 in [ln 4, 745])
        return np.full(ln2.shape, np.inf)  # is a positive double; else Hoeffding's z alone
    y = ln2 * c
    ln_y = (np.log(ln2) if lnln2 is None else lnln2) + math.log(c)
    start = np.exp(np.interp(ln_y, *_H_TABLE, left=np.nan, right=np.nan))  # nan: off the table
    u, ok = _certified(_newton(start, y, 1), y)
    if not ok.all():
        u = y / 3.0 + np.sqrt(y) * np.sqrt(y / 9.0 + 2.0)  # Bernstein's u: above the root
        for _ in range(_NEWTON_STEPS):
            lg = np.log1p(u)
            step = (_bennett_h(u, lg, _small(u)) - y) / lg
            u = u - step
            if (step <= 1e-9 * u).all():
                break
        u, ok = _certified(u, y)
        return np.where(ok, u * (var / m), np.inf)
    return u * (var / m)


def _union(s2w: float, m: float, eta: float, a: float, var: float | None) -> float:
    """(b): min over splits a1 + a2 = a of z(a1) + eta ln(1/a2)."""
    lnln2: np.ndarray | None = None
    if eta == 0:
        ln2 = np.log(2.0 / np.array([a]))
        t: np.ndarray | float = 0.0
    else:
        ln2, log_a2, lnln2 = _split_logs(a)
        t = eta * log_a2
    z = np.sqrt(0.5 * s2w * ln2)  # Hoeffding
    if var is not None and 0 < var < 0.25 * s2w and m > 0:  # with v >= sum w^2 / 4 (s = 1/2)
        z = np.minimum(z, _bennett_z(ln2, m, var, lnln2))  # Bennett's z is Hoeffding's or more
    return float((z + t).min())


def _lattice(low: float, high: float) -> np.ndarray:
    """The points 2^(k/512) of (c)'s lattice from at most ``low`` / r^2 to at least
    ``high`` r^2 (r = 2^(1/512); 0 < low <= high, both finite)."""
    k = np.arange(
        math.floor(math.log(low) / _LN_STEP) - 2, math.ceil(math.log(high) / _LN_STEP) + 3
    )
    return np.ldexp(_OCTAVE[k % _STEPS_PER_OCTAVE], k // _STEPS_PER_OCTAVE)


def _lambdas(lam0: float, eta: float, ln2a: float) -> np.ndarray:
    """(c)'s lam for one psi whose noise-free minimiser is at most ``lam0`` (up to rounding):
    the lattice points that can be the least on the whole lattice, and ``lam0`` itself.

    h(lam) = (phi(lam) + C) / lam, phi = psi - ln(1 - lam^2 eta^2) convex with phi(0) = 0,
    C = ln(2/a), is unimodal on (0, 1/eta): h' has the sign of N = lam phi' - phi - C, which
    increases (N' = lam phi'' >= 0). So its least value on the lattice is at one of the two
    lattice points around its minimiser lam*, and lam* lies in [L, U] with
    U = min(lam0, 1/eta) and L = min(lam0 / sqrt 2, x0 / eta), x0 = sqrt(C / (4 + C)):
    N = N_psi + N_noise - C with both parts increasing from 0; N_noise(lam) = 2y/(1 - y) +
    ln(1 - y) (y = lam^2 eta^2) is at most 2y/(1 - y), so at most C/2 at lam = x0 / eta;
    N_psi at lam0 / sqrt 2 is at most half of N_psi at lam0 (Hoeffding: N_psi = lam^2 sum
    w^2 / 8; Bennett: N_psi = (v/M^2) f(lam M), f(x) = 1 + (x - 1) e^x, f(x) / x^2
    increasing), which is C at the noise-free minimiser. The points returned run from L / r^2
    to U r^2 (r = 2^(1/512)): the least over them is the least over the whole lattice below
    1/eta, plus ``lam0``. Points at or above 1/eta are left to the caller (h = inf there)."""
    if eta == 0:
        low, high = lam0 / math.sqrt(2.0), lam0
    else:
        x0 = math.sqrt(ln2a / (4.0 + ln2a))
        low, high = min(lam0 / math.sqrt(2.0), x0 / eta), min(lam0, 1.0 / eta)
    return np.append(_lattice(low, high), lam0)


def _chernoff_h(lam: np.ndarray, psi: np.ndarray, eta: float, ln2a: float) -> float:
    """min over ``lam`` of (psi + ln(2/a) - ln(1 - lam^2 eta^2)) / lam (inf where lam eta >= 1)."""
    if eta == 0:
        return float(((psi + ln2a) / lam).min())
    le = lam * eta
    ok = le < 1.0
    noise = -np.log1p(-(np.where(ok, le, 0.0) ** 2))
    return float(np.where(ok, (psi + ln2a + noise) / lam, np.inf).min())


def _chernoff(s2w: float, m: float, eta: float, a: float, var: float | None) -> float:
    """(c): min over lam in a FIXED set (not depending on the noise scale eta), below 1/eta,
    of (psi(lam) + ln(2/a) - ln(1 - lam^2 eta^2)) / lam, for psi Hoeffding's and, where it
    can be smaller (v < sum w^2 / 4), Bennett's, each on its own set: the lattice 2^(k/512)
    (k integer) and the psi's noise-free minimiser lam0 (:func:`_lambdas` evaluates only the
    lattice points that can be the least). Each term grows with eta and the set below 1/eta
    shrinks, so the result never decreases as eta grows; it is continuous in eta (a point
    leaves the set where its term is already infinite) and at eta = 0 it is the noise-free
    optimum, (b) with a2 = 0 (the Chernoff bound at lam0 is Hoeffding's, or Bennett's, tail
    inverted). The same set for every profile: a profile whose psi and eta are both at most
    another's (pointwise) gets at most its bound, up to the two lam0 points."""
    ln2a = math.log(2.0 / a)
    best = math.inf
    if s2w > 0:
        lam = _lambdas(math.sqrt(8.0 * ln2a / s2w), eta, ln2a)
        best = _chernoff_h(lam, lam * lam * s2w / 8.0, eta, ln2a)  # Hoeffding's lemma
    elif eta > 0:  # no data part: the noise alone
        lam = _lattice(math.sqrt(ln2a / (4.0 + ln2a)) / eta, 1.0 / eta)
        best = _chernoff_h(lam, np.zeros_like(lam), eta, ln2a)
    if var is not None and 0 < var < 0.25 * s2w and m > 0:  # else Bennett's psi is the larger
        z = float(_bennett_z(np.array([ln2a]), m, var)[0])
        if math.isfinite(z):
            lam = _lambdas(math.log1p(z * m / var) / m, eta, ln2a)  # Bennett's lam at a1 = a
            lm = lam * m
            with np.errstate(over="ignore"):
                psi = var * (np.expm1(lm) - lm) / (m * m)  # Bennett's moment bound
            best = min(best, _chernoff_h(lam, psi, eta, ln2a))
    return best


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
    (module docstring: the five proven bounds (a) to (e); the least is returned)."""
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
    known only through these sums (hdp_release.release). Unit scale. The least of
    :func:`population_bounds`."""
    bounds = population_bounds(sum_w2, max_w, noise_scale, data_sd=data_sd, level=level)
    return min(bounds.values())


def _moments(s2w: float, m: float, eta: float, a: float, var: float | None) -> tuple[float, float]:
    """(d) Chebyshev's and (e) the fourth moment's half-widths (module docstring)."""
    v = 0.25 * s2w if var is None else var  # s = 1/2: the largest variance on the range
    e2 = 2.0 * eta * eta
    up = 1.0 + 1e-12
    cheb = math.sqrt((v + e2) / a * up)
    m4 = m * m * v + 3.0 * v * v + 6.0 * v * e2 + 6.0 * e2 * e2  # 24 eta^4 = 6 (2 eta^2)^2
    return cheb, math.sqrt(math.sqrt(m4 / a * up))


def population_bounds(
    sum_w2: float,
    max_w: float,
    noise_scale: float,
    data_sd: float | None = None,
    level: float = 0.95,
) -> dict[str, float]:
    """Each proven population half-width (unit scale) of the module docstring, by name:
    "deterministic" (a), "union" (b), "chernoff" (c), "chebyshev" (d), "fourth_moment" (e);
    :func:`population_half_width_moments` is their least. Arguments as there."""
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
    cheb, fourth = _moments(s2w, m, eta, a, var)
    return {
        "deterministic": _deterministic(1.0, eta, a),
        "union": _union(s2w, m, eta, a, var),
        "chernoff": _chernoff(s2w, m, eta, a, var),
        "chebyshev": cheb,
        "fourth_moment": fourth,
    }


def population_half_width_for(eps: Any, data_sd: float | None = None, level: float = 0.95) -> float:
    """:func:`population_half_width` of ADPM's weights and noise for profile ``eps`` (tuned to
    ``data_sd`` when given, as ``adpm(eps, data_sd)``); 1/2 when ADPM answers 0 (f(r) > 1/4)
    or no user's data may be used."""
    return _population_for(eps, data_sd, level)[0]


def _population_for(eps: Any, data_sd: float | None, level: float) -> tuple[float, bool]:
    """(:func:`population_half_width_for`, whether ADPM answers the mid-range)."""
    sol = adpm(eps, data_sd=data_sd)
    if sol.outputs_zero or not math.isfinite(sol.noise_scale):
        return 0.5, True
    h = population_half_width(
        sol.weights, sol.profile.counts, sol.noise_scale, data_sd=data_sd, level=level
    )
    return h, False


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
    ``k`` equal releases (each runs at levels eps x spend / k, as hdp_release.ledger.store's
    spend_levels does: the k releases together spend ``spend``). ``data_sd`` in data units
    (population target only; None: worst case). This is :func:`expected_error_95` on the
    scaled levels, times R = hi - lo, plus every rounding the release makes
    (:func:`hdp_core.rounding.release_half_width` at weight sum 1: the release's grid of
    2^30 steps moves its estimate by up to R / 2^31, about 4.7e-10 R; the release itself
    uses the sum of the weights it used, at most 1, so it states at most this)."""
    from fractions import Fraction

    from hdp_core.profile import EpsilonProfile
    from hdp_core.spend import as_spend, spend_levels

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
    if target == "population":
        h_unit, midrange = _population_for(prof, sd, level)
        if midrange:  # the release answers the mid-range and states R / 2 (exact)
            return 0.5 * width
    else:
        h_unit = expected_error_95(prof, target=target, data_sd=sd, level=level)
    return release_half_width(h_unit, 1.0, lo_f, hi_f)


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
