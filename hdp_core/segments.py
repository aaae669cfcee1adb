"""Means per segment: ADPM (Algorithm 1) solved for many tier profiles at once, and the
planning figures of a grouped release before any data exists.

Each segment is its own heterogeneous profile: its own saturation level tau*, weights and
noise. :func:`adpm_tiers_batch` solves S tier profiles in one vectorised pass (no Python
loop over segments), giving bit for bit the tau* of ``hdp.adpm`` on each profile (the same
sequential prefix sums; the one inner product per profile, ||r||_2^2 of the unsaturated
users, is taken by one batched ``matmul`` per distinct saturation index, which calls the
same BLAS dot as ``np.dot``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def adpm_tiers_batch(
    levels: np.ndarray, counts: np.ndarray, sizes: np.ndarray, has_public: np.ndarray, c: float
) -> np.ndarray:
    """tau* of S tier profiles at once (the saturation lemma, Lemma 3; ``math.inf`` where
    nothing saturates and the profile has no public user).

    ``levels`` (S x K): row s holds profile s's distinct finite positive levels in ascending
    order in its first ``sizes[s]`` entries (>= 1; the rest is padding, ignored); ``counts``
    (S x K) their users; ``has_public`` (S,) whether the profile has users at eps = inf;
    ``c`` the constant of Algorithm 1 (8, or 2/s^2 for a declared spread s). Equal, bit for
    bit, to ``hdp.adpm(EpsilonProfile.from_tiers(...)).saturation_level`` on each row."""
    lv = np.asarray(levels, dtype=np.float64)
    ct = np.asarray(counts, dtype=np.float64)
    size = np.asarray(sizes, dtype=np.int64)
    s_n, k_n = lv.shape
    if s_n == 0:
        return np.empty(0)
    col = np.arange(k_n)
    real = col[None, :] < size[:, None]
    last = lv[np.arange(s_n), size - 1]
    lv = np.where(real, lv, last[:, None])  # padding repeats the last level: G does not move
    w1 = np.where(real, ct * lv, 0.0)
    p1 = np.zeros((s_n, k_n + 1))
    np.cumsum(w1, axis=1, out=p1[:, 1:])
    g = np.zeros((s_n, k_n))
    if k_n > 1:
        np.cumsum(np.diff(lv, axis=1) * p1[:, 1:-1], axis=1, out=g[:, 1:])
    thr = c * (1.0 - 1e-12)  # hdp_core.adpm's saturation test: G >= c less a relative 1e-12
    hit = (g >= thr) & real
    j = np.where(hit.any(axis=1), np.argmax(hit, axis=1), size)
    q2 = np.zeros(s_n)
    for jj in np.unique(j):  # one batched dot per distinct index (at most K), not per segment
        jj = int(jj)
        if jj == 0:
            continue
        rows = np.flatnonzero(j == jj)
        a = np.ascontiguousarray(w1[rows, :jj])[:, None, :]
        b = np.ascontiguousarray(lv[rows, :jj])[:, :, None]
        q2[rows] = np.matmul(a, b)[:, 0, 0]
    tau = (q2 + c) / p1[np.arange(s_n), j]
    sat = j < size
    return np.where(sat | np.asarray(has_public, dtype=bool), tau, math.inf)


def segment_errors_95(
    levels: Any,
    shares: Any,
    sizes: Any,
    lo: float,
    hi: float,
    target: str = "population",
    data_sd: float | None = None,
) -> np.ndarray:
    """The 95% error (data units: the proven interval's half-width of hdp_core.intervals) of
    each segment's mean when a segment of ``sizes[s]`` users splits over the menu's levels in
    ``shares`` (any positive scale; whole users by the Tier designer's apportionment,
    hdp_core.menu.apportion, house monotone). A segment of 0 users gets half the range
    (nothing to say)."""
    from hdp_core.intervals import release_error_95
    from hdp_core.menu import apportion

    lv = np.asarray(levels, dtype=float)
    sh = np.asarray(shares, dtype=float)
    out = []
    for n in np.asarray(sizes, dtype=np.int64):  # planning: a few dozen sizes at most
        counts = apportion(sh.tolist(), int(n))
        if counts.sum() == 0:
            out.append(0.5 * (hi - lo))
            continue
        out.append(float(release_error_95(lv, counts, lo, hi, target=target, data_sd=data_sd)))
    return np.asarray(out)


def smallest_segment(
    levels: Any,
    shares: Any,
    error: float,
    lo: float,
    hi: float,
    target: str = "population",
    data_sd: float | None = None,
    n_max: int = 10**9,
) -> int | None:
    """The smallest number of users a segment needs for its 95% error to be at most ``error``
    (data units), with users split over the menu's levels by ``shares``; None when even
    ``n_max`` users do not reach it. Bisection on n (the apportionment is house
    monotone: one more user never takes a user from a tier); it ends at an n that meets the
    error while n - 1 does not, which is the smallest whenever the error does not grow with
    n (checked on examples in tests/app/test_views_segments.py, not proved)."""
    err = float(error)

    def ok(n: int) -> bool:
        return bool(segment_errors_95(levels, shares, [n], lo, hi, target, data_sd)[0] <= err)

    if not ok(n_max):
        return None
    a, b = 0, n_max  # ok(b) holds, ok(a) does not (0 users say nothing)
    while b - a > 1:
        m = (a + b) // 2
        if ok(m):
            b = m
        else:
            a = m
    return b
