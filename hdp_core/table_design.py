"""The table's own mean's 95% error for tier menus, one menu or many at once (beyond the paper).

:func:`menu_table_error` is the figure of one menu: TableMean (hdp_core.table_mean) on its
tiers, its proven 95% half-width (hdp_core.intervals.table_half_width) times the range R,
plus every rounding of a release (hdp_core.rounding.release_half_width at weight sum 1): the
number hdp_core.intervals.release_error_95 gives for target "table" and one release.

:func:`table_half_widths` is the same half-width (unit scale, before the roundings) for many
count vectors over the same levels at once, vectorised (no Python loop over rows), and
:func:`webster_counts` the Webster apportionment of every total 1..n at once. Together they
let the accuracy-first solvers (hdp_core.solvers) check EVERY number of users below an answer
(or every number of users moved), which they must: this half-width is not monotone (a user
joining a strict tier adds worst-case bias, since every row counts in the table's mean).

Vectorised TableMean (the derivation of hdp_core.table_mean, step 3). For one row: finite
levels l_1 < ... < l_f with counts c_j, n rows in all (public rows add nothing to
D(eta) = sum_j c_j (1/n - l_j eta)_+). On piece K (the K strictest levels held below the
uniform weight, eta in [1/(n l_{K+1}), 1/(n l_K)]) F = D^2/4 + 2 eta^2 is a convex quadratic
with stationary point (S_K/n) E_K / (E_K^2 + 8), S_K = c_1 + ... + c_K and
E_K = c_1 l_1 + ... + c_K l_K; F's minimum is the least of the f + 1 clipped stationary
points' values. Every piece is evaluated for every row ((rows, f + 1) arrays, in chunks).
The scalar code evaluates only the pieces next to the optimum's; both are the same formulas,
so they agree to rounding (tests/core/test_table_design.py: within 1e-12 relative).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hdp_core.intervals import table_half_width
from hdp_core.menu import Menu
from hdp_core.profile import EpsilonProfile
from hdp_core.rounding import release_half_width
from hdp_core.table_mean import table_mean

__all__ = ["maybe_meeting", "menu_table_error", "table_half_widths", "webster_counts"]

_LN10 = math.log(10.0)  # ln(1 / (2 alpha)) at 95%
_CHUNK = 1 << 14
_EXACT_MAX = 1 << 19  # most near-ties :func:`webster_counts` compares exactly


def menu_table_error(levels: Any, counts: Any, menu: Menu) -> float:
    """The 95% error (data units) of the table's own mean for tiers (levels, counts) on
    ``menu``'s range: TableMean's proven half-width (hdp_core.intervals.table_half_width of
    its worst-case bias and noise) times R, plus every rounding of a release
    (hdp_core.rounding.release_half_width at weight sum 1): the same number as
    hdp_core.intervals.release_error_95(levels, counts, low, high, "table") for one release.
    The data's spread is not used (the table's mean needs no assumption on the data)."""
    sol = table_mean(EpsilonProfile.from_tiers(levels, counts))
    h = table_half_width(sol.bias_bound, sol.noise_scale)
    return release_half_width(h, 1.0, menu.low, menu.high)


def table_half_widths(levels: Any, counts: Any) -> np.ndarray:
    """The 95% half-width (unit scale, hdp_core.intervals.table_half_width of TableMean's
    bias bound and noise; no roundings) for each row of ``counts`` (rows x tiers, users per
    tier, each row at least one user) over the tiers' ``levels`` (> 0 or inf), vectorised
    (module docstring). Returns one half-width per row."""
    lv = np.asarray(levels, dtype=np.float64)
    ct = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    fin = np.isfinite(lv)
    order = np.argsort(lv[fin], kind="stable")
    lf = lv[fin][order]  # ascending finite levels
    out = np.empty(ct.shape[0])
    for start in range(0, ct.shape[0], _CHUNK):
        c = ct[start : start + _CHUNK]
        out[start : start + c.shape[0]] = _chunk(lf, c[:, fin][:, order], c.sum(axis=1))
    return out


def _chunk(lf: np.ndarray, cf: np.ndarray, n: np.ndarray) -> np.ndarray:
    """:func:`table_half_widths` of rows with finite counts ``cf`` (ascending levels ``lf``)
    and ``n`` rows in all."""
    rows, f = cf.shape
    s = np.zeros((rows, f + 1))
    e = np.zeros((rows, f + 1))
    np.cumsum(cf, axis=1, out=s[:, 1:])  # S_K
    np.cumsum(cf * lf, axis=1, out=e[:, 1:])  # E_K
    nn = n[:, None]
    inv = 1.0 / (nn * lf)  # breakpoints 1/(n l_j), descending in j
    upper = np.concatenate((np.full((rows, 1), math.inf), inv), axis=1)
    lower = np.concatenate((inv, np.zeros((rows, 1))), axis=1)
    stat = (s / nn) * e / (e * e + 8.0)
    cand = np.clip(stat, lower, upper)
    d = s / nn - cand * e
    val = 0.25 * d * d + 2.0 * cand * cand
    eta = cand[np.arange(rows), np.argmin(val, axis=1)]
    held = np.maximum(1.0 / nn - lf * eta[:, None], 0.0)
    b = 0.5 * np.maximum(np.sum(cf * held, axis=1), 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        tail = _LN10 + np.log1p(np.exp(-2.0 * b / eta))
    return np.where(eta > 0, b + eta * tail, b)


def webster_counts(shares: Any, n_max: int) -> np.ndarray | None:
    """Users per tier for every total n = 1..``n_max`` (rows n - 1) by Webster's method as
    hdp_core.menu.apportion does it (the n highest priorities s_j / (m + 1/2), ties to the
    earlier tier; house monotone, so one ordering of the priorities serves every n). The
    priorities are ordered in floating point; every pair of neighbours closer than 1e-12
    apart is compared again exactly, and None is returned when one is out of order (the
    caller then uses hdp_core.menu.apportion for each n)."""
    sh = [float(x) for x in shares]
    total = sum(sh)
    k = len(sh)
    n_max = int(n_max)
    seats = [0] * k
    tier, prio = [], []
    for j, x in enumerate(sh):
        if x > 0:  # more seats than Webster can give (quota + 1/2 + k) to be safe
            seats[j] = min(n_max, math.ceil(n_max * x / total) + k + 2)
            tier.append(np.full(seats[j], j))
            prio.append(x / (np.arange(seats[j]) + 0.5))
    t_all, p_all = np.concatenate(tier), np.concatenate(prio)
    idx = np.lexsort((t_all, -p_all))[: n_max + 1]
    t_s, p_s = t_all[idx], p_all[idx]
    close = np.flatnonzero((np.abs(np.diff(p_s)) <= 1e-12 * p_s[1:]) & (np.diff(t_s) != 0))
    if close.size > _EXACT_MAX:
        return None
    if close.size:  # neighbours from two tiers that floating point may have ordered wrongly
        seat = np.zeros(t_s.size, dtype=np.int64)
        for j in range(k):  # the seat number m of each entry in its tier
            mask = t_s == j
            seat[mask] = np.arange(int(mask.sum()))
        ratio = [x.as_integer_ratio() for x in sh]  # exact: s_j = p_j / q_j
        for a, b, ma, mb in zip(
            t_s[close].tolist(),
            t_s[close + 1].tolist(),
            seat[close].tolist(),
            seat[close + 1].tolist(),
        ):  # s_a / (m_a + 1/2) against s_b / (m_b + 1/2), in integers
            left = ratio[a][0] * ratio[b][1] * (2 * mb + 1)
            right = ratio[b][0] * ratio[a][1] * (2 * ma + 1)
            if left < right or (left == right and a > b):
                return None
    counts = np.zeros((n_max, k), dtype=np.int64)
    counts[np.arange(n_max), t_s[:n_max]] = 1
    np.cumsum(counts, axis=0, out=counts)
    if any(seats[j] < n_max and int(counts[-1, j]) >= seats[j] for j in range(k)):
        return None  # a tier used every seat listed: the list may be too short
    return counts


def maybe_meeting(levels: Any, counts: Any, target: float, low: float, high: float) -> np.ndarray:
    """The rows of ``counts`` (as in :func:`table_half_widths`) whose table 95% error might
    be at most ``target`` (data units, range [low, high]), ascending: every other row's
    error is above it. A release's error (:func:`menu_table_error`) is at least the unit
    half-width times R (the roundings only add), and the vectorised half-width agrees with
    the scalar one to far better than the margin 1e-9 relative allowed here."""
    h = table_half_widths(levels, counts) * (float(high) - float(low))
    return np.flatnonzero(h <= float(target) * (1.0 + 1e-9))
