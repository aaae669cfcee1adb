"""The worst-case 95% error half-width of an affine estimator when there are few users.

units.error_half_width treats the data part of the error as normal (central limit theorem).
With few users that is not a worst case: for skewed two-point data the error's 95% quantile is
larger (public users only: n = 2 gives 0.776 of the range, not 0.693). This module computes it
exactly for data at the two ends of the range.

Setting (data rescaled to [-0.5, 0.5], R = 1): tier j has n_j users, each with weight w_j
(sum_j n_j w_j = 1: the estimator is unbiased); every user's value is +1/2 with probability p
and -1/2 otherwise. With K_j ~ Binomial(n_j, p) users of tier j at the top, the error is
E = sum_j w_j K_j - p + L, L ~ Laplace(b). The law of sum_j w_j K_j has at most prod_j (n_j + 1)
atoms, atom k with probability prod_j C(n_j, k_j) p^K (1 - p)^(N - K) (K = sum k_j,
N = sum n_j), and P(|E| <= h) = sum_atoms P(atom) P(|atom - p + L| <= h) in closed form.
:func:`two_point_half_width` returns sup_p of the level-quantile of |E| (the distribution of
|E| is the same for p and 1 - p, so p runs over (0, 1/2]); the sup is found on a grid of p and
refined twice around the best points (tests: brute force over all 2^n outcomes).

Two-point data include the data of largest variance (p = 1/2), the worst case for the RMSE;
whether some other data in the range have a larger 95% quantile is not proven here, so the
pages call this figure "the worst case over data at the two ends of the range".
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MAX_ATOMS", "MAX_ATOMS_NOISY", "two_point_half_width"]

MAX_ATOMS = 1_000
"""Largest number of atoms (prod_j (n_j + 1)) computed exactly without noise; beyond, None."""
MAX_ATOMS_NOISY = 400
"""The same with Laplace noise (each quantile is then a bisection over all atoms)."""
_GRID = {False: (801, 201, 2), True: (41, 21, 3)}  # (grid, refinement points, rounds)


def _atoms(weights: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(value sum_j w_j k_j, K = sum_j k_j, log prod_j C(n_j, k_j)) for every tuple k."""
    vals, ks, logc = np.zeros(1), np.zeros(1, dtype=np.int64), np.zeros(1)
    for w, n in zip(weights, counts, strict=True):
        k = np.arange(int(n) + 1)
        lc = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in k])
        vals = (vals[:, None] + w * k[None, :]).ravel()
        ks = (ks[:, None] + k[None, :]).ravel()
        logc = (logc[:, None] + lc[None, :]).ravel()
    return vals, ks, logc


def _probs(p: np.ndarray, ks: np.ndarray, logc: np.ndarray, n_total: int) -> np.ndarray:
    """Matrix [len(p), atoms] of atom probabilities."""
    lp = np.log(p)[:, None]
    lq = np.log1p(-p)[:, None]
    return np.exp(logc[None, :] + ks[None, :] * lp + (n_total - ks[None, :]) * lq)


def _quantiles(
    p: np.ndarray, vals: np.ndarray, prob: np.ndarray, b: float, level: float
) -> np.ndarray:
    """Level-quantile of |E| for each p (rows of prob)."""
    c = vals[None, :] - p[:, None]  # error atoms
    if b <= 0:
        a = np.abs(c)
        order = np.argsort(a, axis=1, kind="stable")
        a_s = np.take_along_axis(a, order, axis=1)
        cum = np.cumsum(np.take_along_axis(prob, order, axis=1), axis=1)
        idx = np.argmax(cum >= level * (1 - 1e-12), axis=1)
        return a_s[np.arange(p.size), idx]

    def cdf(h: np.ndarray) -> np.ndarray:
        hi = h[:, None] - c
        lo = -h[:, None] - c
        f_hi = np.where(hi >= 0, 1 - 0.5 * np.exp(-np.abs(hi) / b), 0.5 * np.exp(-np.abs(hi) / b))
        f_lo = np.where(lo >= 0, 1 - 0.5 * np.exp(-np.abs(lo) / b), 0.5 * np.exp(-np.abs(lo) / b))
        return np.sum(prob * (f_hi - f_lo), axis=1)

    lo_h = np.zeros(p.size)
    hi_h = np.full(p.size, float(np.max(np.abs(c))) + b * math.log(1 / (1 - level)) + 1e-12)
    for _ in range(42):  # relative precision ~ 2^-42 of the bracket
        mid = 0.5 * (lo_h + hi_h)
        below = cdf(mid) < level
        lo_h = np.where(below, mid, lo_h)
        hi_h = np.where(below, hi_h, mid)
    return hi_h


def two_point_half_width(
    weights, counts, noise_scale: float = 0.0, level: float = 0.95
) -> float | None:
    """sup over p of the ``level``-quantile of |error| for data at the two ends of [-0.5, 0.5]
    (fraction p at the top), for the estimator sum_i w_i x_i + Laplace(``noise_scale``) with
    ``counts[j]`` users of weight ``weights[j]`` (sum counts * weights = 1). Units: the data
    range (multiply by R = hi - lo). None when the law has more than MAX_ATOMS atoms
    (MAX_ATOMS_NOISY with noise): then use the normal approximation, units.error_half_width,
    and say it is one.
    """
    w = np.asarray(weights, dtype=np.float64).ravel()
    n = np.asarray(counts, dtype=np.int64).ravel()
    if w.shape != n.shape or np.any(n < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights and counts must have the same shape, counts >= 0, finite")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    b = float(noise_scale)
    if not (math.isfinite(b) and b >= 0):
        raise ValueError(f"noise scale must be finite and >= 0, got {noise_scale}")
    keep = (n > 0) & (w != 0)
    w, n = w[keep], n[keep]
    if n.size == 0 or abs(float(np.dot(w, n)) - 1.0) > 1e-9:
        raise ValueError("the weights of all users must add up to 1 (an unbiased estimator)")
    if math.prod(int(x) + 1 for x in n) > (MAX_ATOMS_NOISY if b > 0 else MAX_ATOMS):
        return None
    vals, ks, logc = _atoms(w, n)
    total = int(n.sum())

    def q(p: np.ndarray) -> np.ndarray:
        return _quantiles(p, vals, _probs(p, ks, logc, total), b, level)

    points, refine, rounds = _GRID[b > 0]
    grid = np.linspace(0.5 / points, 0.5, points)
    best_p, best = grid, q(grid)
    step = grid[1] - grid[0]
    for _ in range(rounds):
        top = best_p[np.argsort(best)[-3:]]
        cand = np.unique(
            np.concatenate(
                [np.linspace(max(t - step, 1e-12), min(t + step, 0.5), refine) for t in top]
            )
        )
        vals_c = q(cand)
        best_p, best = np.concatenate([best_p, cand]), np.concatenate([best, vals_c])
        step = 2 * step / (refine - 1)
    return float(best.max())
