"""The table's own mean's 95% error for many tier count vectors at once (beyond the paper), so
that the accuracy-first solvers (hdp_core.solvers) can check EVERY number of users, or of
users moved, below an answer: this error is not monotone.

Vectorised TableMean (hdp_core.table_mean, step 3): on piece K (the K strictest finite
levels held below 1/n) F has the stationary point (S_K/n) E_K / (E_K^2 + 8) (S_K, E_K: their
count and sum of levels); eta* is the clipped stationary point of least F over every piece
(the scalar code looks near the optimum's piece only: equal to rounding, tested)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["maybe_meeting", "table_half_widths", "webster_counts"]


def table_half_widths(levels: Any, counts: Any) -> np.ndarray:
    """hdp_core.intervals.table_half_width (unit scale, 95%) of TableMean for each row of
    ``counts`` (rows x tiers, at least one user a row) over ``levels`` (> 0 or inf)."""
    lv = np.asarray(levels, dtype=np.float64)
    fin = np.isfinite(lv)
    order = np.argsort(lv[fin], kind="stable")
    lf = lv[fin][order]
    ct = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    out = np.empty(ct.shape[0])
    for i in range(0, ct.shape[0], 1 << 14):  # in chunks: (rows, f + 1) arrays
        c = ct[i : i + (1 << 14)]
        cf, nn = c[:, fin][:, order], c.sum(axis=1)[:, None]
        s = np.cumsum(np.pad(cf, ((0, 0), (1, 0))), axis=1)  # S_K, K = 0..f
        e = np.cumsum(np.pad(cf * lf, ((0, 0), (1, 0))), axis=1)  # E_K
        brk = 1.0 / (nn * lf)  # breakpoints, descending
        upper = np.pad(brk, ((0, 0), (1, 0)), constant_values=math.inf)
        lower = np.pad(brk, ((0, 0), (0, 1)))
        cand = np.clip((s / nn) * e / (e * e + 8.0), lower, upper)
        val = (s / nn - cand * e) ** 2 / 4.0 + 2.0 * cand * cand
        eta = cand[np.arange(c.shape[0]), np.argmin(val, axis=1)]
        b = 0.5 * np.sum(cf * np.maximum(1.0 / nn - lf * eta[:, None], 0.0), axis=1)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            tail = math.log(10.0) + np.log1p(np.exp(-2.0 * b / eta))
        out[i : i + c.shape[0]] = np.where(eta > 0, b + eta * tail, b)
    return out


def maybe_meeting(levels: Any, counts: Any, target: float, low: float, high: float) -> np.ndarray:
    """The rows of ``counts`` whose table 95% error (data units, range [low, high]) might be
    at most ``target``, ascending; every other row's is above it: a release's error
    (intervals.release_error_95) is at least the unit half-width times R, and
    :func:`table_half_widths` agrees with the scalar one far within the margin 1e-9 here."""
    h = table_half_widths(levels, counts) * (float(high) - float(low))
    return np.flatnonzero(h <= float(target) * (1.0 + 1e-9))


def webster_counts(shares: Any, n_max: int) -> np.ndarray | None:
    """Users per tier for every total n = 1..``n_max`` (row n - 1) by Webster's method as
    hdp_core.menu.apportion gives them (the n highest priorities s_j / (m + 1/2), ties to the
    earlier tier; house monotone: one ordering serves every n), ordered in floating point;
    every run of neighbours within 1e-12 (an order rounding may have swapped) is sorted again
    by the exact priorities. None when a run reaches the end of the list."""
    sh, k, n_max = [float(x) for x in shares], len(shares), int(n_max)
    seats = [min(n_max, math.ceil(n_max * x / sum(sh)) + k + 2) if x > 0 else 0 for x in sh]
    t_all = np.repeat(np.arange(k), seats)
    m_all = np.concatenate([np.arange(s) for s in seats])
    p_all = np.array(sh)[t_all] / (m_all + 0.5)
    idx = np.lexsort((t_all, -p_all))[: n_max + 1]
    t_s, m_s, p_s = t_all[idx], m_all[idx], p_all[idx]
    near = np.abs(np.diff(p_s)) <= 1e-12 * p_s[1:]
    if near.size and near[-1]:
        return None
    edge = np.diff(np.concatenate(([0], near.astype(np.int8), [0])))
    for a, b in zip(np.flatnonzero(edge == 1).tolist(), np.flatnonzero(edge == -1).tolist()):
        run = sorted(  # entries a..b, by exact priority (higher first), then tier
            range(a, b + 1), key=lambda i: (-Fraction(sh[t_s[i]]) / (2 * int(m_s[i]) + 1), t_s[i])
        )
        t_s[a : b + 1], m_s[a : b + 1] = t_s[run], m_s[run]
    counts = np.zeros((n_max, k), dtype=np.int64)
    counts[np.arange(n_max), t_s[:n_max]] = 1
    np.cumsum(counts, axis=0, out=counts)
    if any(0 < seats[j] < n_max and counts[-1, j] >= seats[j] for j in range(k)):
        return None  # a tier took every seat listed: the list may be too short
    return counts
