"""The population interval with a PRIVATELY estimated spread (issue 31; beyond the paper).

Unit scale (:mod:`hdp_core.intervals`): values i.i.d. on [-1/2, 1/2], mean mu, sd sigma unknown;
T = <w, x> + Laplace(eta), weights summing to 1; alpha = 1 - level.
1. :func:`spread_ucb`. On m users chosen from levels alone (e.g. the saturated ones, who keep
   eps_i - tau*), V = sum_{i<j} (x_i - x_j)^2 / (m (m - 1)) has E V = sigma^2 and moves by at
   most 1/m when one value moves: V + Laplace(b), b = 1/(m eps2), is eps2-DP for each. A pair's
   D = (x - x')^2 / 2 in [0, 1/2] has E D = sigma^2, E D^2 <= sigma^2 / 2, e^{-lD} <= 1 - lD +
   l^2 D^2 / 2, so k = floor(m/2) disjoint pairs' mean has P(sigma^2 - mean >= t) <= e^{-k t^2 /
   sigma^2}, and so has V, that mean averaged over all orderings (Hoeffding 1963, sec. 5; Jensen).
   So sigma < (c + sqrt(c^2 + 4 V)) / 2, c = sqrt(ln(1/beta1) / k), but with chance beta1, and
   V <= V + L + b ln(1/(2 beta2)) but with chance beta2; beta1 = beta2 = beta/2 (beta1 = beta if
   b = 0): P(sigma > S) <= beta for every law on the range (Maurer and Pontil 2009, Thm 10, the
   looser S = sqrt(V) + sqrt(2 ln(1/beta) / (m - 1))).
2. :func:`population_half_width_private_spread`. h(s) = the least of :func:`population_bounds`
   at spread s, level 1 - (alpha - beta); stated: g(S) = min {h(s_j) : s_j >= S} on a FIXED grid
   s_j = 2^(-1 - j/32), j = 0..448. g is non-decreasing; j*, where h is least over s_j >= sigma,
   is fixed by the law, h(s_{j*}) misses with chance <= alpha - beta, and S >= sigma gives g(S)
   >= g(sigma) = h(s_{j*}): P(miss) <= P(sigma > S) + alpha - beta <= alpha, though T and S read
   the same values (the grid spares a proof that each bound is monotone in s).
Costs: beta of alpha (sigma near 1/2: ~1% WIDER than with no spread); a second release charging
eps2 to each of the m users (budget they would keep); c + the noise term (few users: S near 1/2).
S is raised by 1e-12 (relative); the caller adds the released statistic's own rounding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hdp_core.intervals import population_bounds

SPREAD_FAILURE = 0.0025  # the default share beta of alpha = 0.05 given to the spread bound
SPREAD_GRID = 0.5 * 2.0 ** (-np.arange(449) / 32.0)  # s_j = 2^(-1 - j/32): 1/2 down to 2^-15
SPREAD_GRID.setflags(write=False)


def spread_noise_scale(n_users: int, eps2: float) -> float:
    """Laplace scale b (unit scale) making the sample variance of ``n_users`` values (its
    sensitivity 1/n_users) ``eps2``-DP: 1 / (n_users eps2); 0 for eps2 = inf (public)."""
    return 0.0 if math.isinf(eps2) else 1.0 / (n_users * eps2)


def spread_ucb(released_variance: float, n_users: int, noise_scale: float, failure: float) -> float:
    """S in [0, 1/2] (unit scale) with P(sigma > S) <= ``failure`` for every law on the range,
    from the sample variance of ``n_users`` values plus Laplace(``noise_scale``) (docstring,
    part 1); 1/2 with fewer than 2 users."""
    v, b, beta, k = float(released_variance), float(noise_scale), float(failure), n_users // 2
    if not (math.isfinite(v) and math.isfinite(b) and b >= 0 and 0 < beta < 0.5):
        raise ValueError("need a finite variance and noise scale >= 0, failure in (0, 1/2)")
    if k < 1:
        return 0.5
    c = math.sqrt(math.log(1.0 / (beta if b == 0 else 0.5 * beta)) / k)
    v_up = max(0.0, v + b * math.log(1.0 / beta))  # ln(1/(2 beta2)) = ln(1/beta)
    return min(0.5, 0.5 * (c + math.sqrt(c * c + 4.0 * v_up)) * (1.0 + 1e-12))


def population_bounds_private_spread(
    sum_w2: float, max_w: float, noise_scale: float, spread: float,
    spread_failure: float = SPREAD_FAILURE, level: float = 0.95,
) -> dict[str, float]:  # fmt: skip
    """Each bound of :func:`hdp_core.intervals.population_bounds` (unit scale) at level
    1 - (alpha - ``spread_failure``) at the grid spread s_j >= ``spread`` where their least is
    least, and that s_j as "spread_grid" (docstring, part 2)."""
    alpha, beta, s = 1.0 - float(level), float(spread_failure), float(spread)
    if not (0.0 < beta < alpha <= 0.5 and math.isfinite(s) and s >= 0):
        raise ValueError("need 0 < spread_failure < 1 - level <= 1/2 and a spread >= 0")
    best: dict[str, float] = {}
    for sj in SPREAD_GRID[SPREAD_GRID >= s] if s <= SPREAD_GRID[0] else SPREAD_GRID[:1]:
        b = population_bounds(sum_w2, max_w, noise_scale, float(sj), 1.0 - (alpha - beta))
        if not best or min(b.values()) < min(v for k, v in best.items() if k != "spread_grid"):
            best = {**b, "spread_grid": float(sj)}
    return best


def population_half_width_private_spread(
    sum_w2: float, max_w: float, noise_scale: float, spread: float,
    spread_failure: float = SPREAD_FAILURE, level: float = 0.95,
) -> float:  # fmt: skip
    """Half-width (unit scale) covering the population mean with chance >= ``level`` for every
    law when ``spread`` bounds sigma but with chance ``spread_failure``: g(S) (part 2)."""
    b = population_bounds_private_spread(sum_w2, max_w, noise_scale, spread, spread_failure, level)
    return min(v for k, v in b.items() if k != "spread_grid")


def choose_spread_users(
    left: Any, counts: Any, failure: float = SPREAD_FAILURE, cap: float = math.inf
) -> tuple[np.ndarray, int, float]:
    """(mask of level groups, users m, eps2) for the spread's release, from what each group has
    left (``left[j]``, inf if public; at most ``cap`` is used) for ``counts[j]`` users, never
    from values: groups with at least e left, e minimising :func:`spread_ucb` at V = 1/64."""
    lf, ct = np.minimum(np.asarray(left, dtype=np.float64), cap), np.asarray(counts, np.int64)
    best: tuple[float, np.ndarray, int, float] = (math.inf, np.zeros(lf.shape, bool), 0, 0.0)
    for e in np.unique(lf[(lf > 0) & (ct > 0)]):
        mask = (lf >= e) & (ct > 0)
        m = int(ct[mask].sum())
        if m >= 2 and (u := spread_ucb(1 / 64, m, spread_noise_scale(m, e), failure)) < best[0]:
            best = (u, mask, m, float(e))
    return best[1:]  # (no group, 0, 0.0) when no two users have anything left
