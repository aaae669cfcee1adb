"""Upper and lower bounds on the minimax MSE L(eps) of mean estimation (paper, Sections 3-5).

* Upper bound (Theorem 2): L(eps) <= f(r) ∧ 1/4 with r from ADPM.
* Lower bound (Theorem 3): L(eps) >= (H(eps) ∧ 1/4) / 512 with
  H(eps) = max_{i=0..n} 1 / (||eps_1^i||_1^2 + n - i), eps sorted ascending.
* Optimality (Theorem 4): f(r) / H(eps) <= 443.

All MSEs are for data in [-0.5, 0.5] (multiply by range^2 for other units).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hdp_core.adpm import adpm, data_sd_constant
from hdp_core.profile import as_profile

__all__ = [
    "LOWER_BOUND_CONSTANT",
    "OPTIMALITY_CONSTANT",
    "lower_bound",
    "lower_bound_H",
    "lower_bound_from_H",
    "optimality_ratio",
    "two_group_threshold",
    "upper_bound",
]

LOWER_BOUND_CONSTANT = 512.0
"""The 1/512 in Theorem 3."""
OPTIMALITY_CONSTANT = 443.0
"""Theorem 4: f(r) <= 443 H(eps)."""


def upper_bound(eps: Any) -> float:
    """ADPM's worst-case MSE min(f(r), 1/4) (Theorem 2); an upper bound on L(eps)."""
    return adpm(eps).worst_case_mse


def h_of_tiers(lv: np.ndarray, ct: np.ndarray) -> float:
    """H for ascending distinct levels ``lv`` with user counts ``ct`` (float64), in O(k).

    D(i) = ||eps_1^i||_1^2 + n - i has increments eps_i(2||eps_1^{i-1}||_1 + eps_i) - 1 that
    never decrease, so D is discretely convex in i and its minimum inside a tier (u of its c
    users included) is at u = floor((1/e - 2S + e) / (2e)) clipped to [0, c]; the maximum of
    1/D over i can therefore fall inside a tier and is found without expanding counts.
    """
    n = float(ct.sum())
    finite = np.isfinite(lv)
    w = np.where(finite, ct * np.where(finite, lv, 0.0), math.inf)
    s_before = np.concatenate(([0.0], np.cumsum(w)))[:-1]  # ||eps||_1 of earlier tiers
    i_before = np.concatenate(([0.0], np.cumsum(ct)))[:-1]
    e = np.where(finite, lv, 1.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        uc = np.where(lv > 0, (1.0 / e - 2.0 * s_before + e) / (2.0 * e), ct)
    uc = np.where(finite & np.isfinite(s_before), uc, 0.0)
    best = np.inf
    base = np.clip(np.floor(uc), 0.0, ct)
    for du in (-1.0, 0.0, 1.0):
        u = np.clip(base + du, 0.0, ct)
        u = np.where(finite & np.isfinite(s_before), u, 0.0)
        with np.errstate(invalid="ignore"):
            s = s_before + u * e
            d = s * s + (n - i_before - u)
        d = np.where(np.isnan(d), math.inf, d)
        best = min(best, float(d.min()))
    return math.inf if best <= 0 else 1.0 / best


def lower_bound_H(eps: Any) -> float:
    """H(eps) = max_i 1/(||eps_1^i||_1^2 + n - i), uncapped (Theorem 3; eps sorted ascending).

    O(n) after sorting for per-user profiles, O(k) after sorting k tiers. Public users add
    nothing to ||eps||_1 prefixes they are not part of; eps = 0 users count in n.
    """
    prof = as_profile(eps)
    if not prof.is_tiered:  # one level per user: D(i) for every i from one sorted cumsum
        e = np.sort(prof.levels)
        n = e.size
        s = np.cumsum(e)  # inf from the first public user on: D = inf there
        d = s * s + (n - np.arange(1.0, n + 1.0))  # D(1..n); D(0) = n
        best = min(float(n), float(d.min()))
        return math.inf if best <= 0 else 1.0 / best
    lv, ct = prof.grouped()
    return h_of_tiers(lv, ct.astype(np.float64))


def lower_bound_from_H(h: Any) -> Any:
    """(H ∧ 1/4) / 512, Theorem 3's lower bound in MSE units, from H (a number or an array)."""
    return np.minimum(h, 0.25) / LOWER_BOUND_CONSTANT


def lower_bound(eps: Any) -> float:
    """The minimax lower bound (H(eps) ∧ 1/4) / 512 of Theorem 3, in MSE units."""
    return float(lower_bound_from_H(lower_bound_H(eps)))


def optimality_ratio(eps: Any) -> float:
    """f(r) / H(eps): ADPM's uncapped worst case over H; Theorem 4 proves it is <= 443."""
    return adpm(eps).objective / lower_bound_H(eps)


def two_group_threshold(n: float, frac: float, eps1: Any, data_sd: float | None = None) -> Any:
    """The level eps2 at which the looser of two groups saturates: eps1 + 8/(n f eps1).

    Remark (two groups): with a fraction ``frac`` of ``n`` users at eps1 and the rest at
    eps2 >= eps1, the looser group is capped (saturates) iff eps2 >= eps1 + 8/(n frac eps1).
    ``eps1`` may be an array (the boundary of the phase diagram). With ``data_sd`` = s (ADPM
    tuned to a known spread, see :func:`adpm`) the 8 is c = 2/s^2.
    """
    c = data_sd_constant(data_sd)[1]
    if not (n > 0 and 0 < frac <= 1 and np.all(np.asarray(eps1) > 0)):
        raise ValueError("need n > 0, 0 < frac <= 1 and eps1 > 0")
    return eps1 + c / (n * frac * eps1)
