"""The population half-width's union and Chernoff bounds (hdp_core.intervals (b) and (c)) as
they were before the Bennett inversion was rewritten (commit c5584c8: a 60-step bisection on
the whole 255-point grid, the grids rebuilt on every call), copied verbatim as the oracle of
tests/test_intervals_bennett.py and benchmarks/bench_intervals.py. Not production code."""

from __future__ import annotations

import math

import numpy as np

_GRID = 256


def table_half_width(bias_bound: float, noise_scale: float, level: float = 0.95) -> float:
    a = 1.0 - level
    b, eta = float(bias_bound), float(noise_scale)
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


def population_half_width_moments(
    sum_w2: float,
    max_w: float,
    noise_scale: float,
    data_sd: float | None = None,
    level: float = 0.95,
) -> float:
    """The old hdp_core.intervals.population_half_width_moments (validation left out)."""
    a = 1.0 - float(level)
    s2w, m, eta = float(sum_w2), float(max_w), float(noise_scale)
    var = None
    if data_sd is not None:
        s = float(data_sd)
        var = s * s * s2w
    return min(
        _deterministic(1.0, eta, a),
        _union(s2w, m, eta, a, var),
        _chernoff(s2w, m, eta, a, var),
    )
