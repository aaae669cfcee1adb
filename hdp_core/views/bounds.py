"""The Bounds page's numbers (no plotting, no streamlit).

* :func:`sweep_points` and :func:`regime_guides`: the x values of a sweep around a profile and
  the two asymptotic regimes of the worst-case MSE along it.
* :func:`affine_error_real` and :func:`method_errors_real`: RMSE and a 95% error half-width in
  the data's own units, built on :mod:`hdp_core.units`.

MSEs are for data in [-0.5, 0.5] unless a data range [lo, hi] is given.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..estimators import METHODS, get_method
from ..profile import MAX_TOTAL_USERS, as_profile
from ..units import Accuracy, affine_error, range_width
from ..validate import LEVEL_MAX, LEVEL_MIN

__all__ = [
    "SWEEP_EXPONENTS",
    "SWEEP_STEP",
    "affine_error_real",
    "method_errors_real",
    "regime_guides",
    "sweep_points",
]


# ------------------------------------------------------------------------------ sweeps
SWEEP_STEP = 0.2
"""Step of the Bounds page's sweeps in log10 units: 31 points over six decades (a factor 1.58
between points). Each point evaluates six methods exactly; for 10^5 distinct levels that is
about 0.1 s a point, so a finer grid would make the first visit of the page much slower."""
SWEEP_EXPONENTS = np.round(np.arange(-15, 16) * SWEEP_STEP, 10)
"""log10 of the sweep factors: -3.0, -2.8, ..., 3.0 (0 is the current profile)."""


def sweep_points(eps: Any, mode: str, exponents: Any = SWEEP_EXPONENTS) -> np.ndarray:
    """x values of a sweep around a profile: scale factors c = 10**e ('scale'), or numbers of
    users round(n * 10**e) clipped to [1, MAX_TOTAL_USERS] ('n'); e = 0 is the profile itself."""
    e = np.asarray(exponents, dtype=np.float64)
    if mode == "scale":
        # only factors that keep every level in the supported range [LEVEL_MIN, LEVEL_MAX]
        lv = as_profile(eps).levels
        fin = lv[np.isfinite(lv) & (lv > 0)]
        c = 10.0**e
        if fin.size:
            c = c[(c * fin.min() >= LEVEL_MIN) & (c * fin.max() <= LEVEL_MAX) | (e == 0)]
        return c
    if mode == "n":
        n = as_profile(eps).n
        return np.clip(np.rint(n * 10.0**e), 1, MAX_TOTAL_USERS).astype(np.int64)
    raise ValueError(f"mode must be 'scale' or 'n', got {mode!r}")


def regime_guides(eps: Any, x: Any, mode: str) -> dict[str, np.ndarray]:
    """Reference lines for a sweep (MSE units, data in [-0.5, 0.5]).

    ``mode`` 'scale' (x = factor c multiplying every eps) or 'n' (x = number of users, same
    shares of each level). 'loose': 1/(4m) with m the users whose data is used, the error of
    the non-private mean (reached when privacy is loose); 'strict': 2/S1^2 with S1 the sum of
    the finite levels, the Laplace-noise term of f that dominates when privacy is strict
    (for n users at eps these are the two terms of f = 1/(4n) + 2/(n eps)^2). 'strict' is NaN
    when there are public users (the error then stays near 1/(4 n_public) instead).
    """
    prof = as_profile(eps)
    x = np.asarray(x, dtype=np.float64)
    lv, ct = prof.grouped()
    cf = ct.astype(np.float64)
    n = float(cf.sum())
    usable = float(cf[lv > 0].sum())
    fin = np.isfinite(lv) & (lv > 0)
    s1 = float(np.dot(cf[fin], lv[fin]))
    public = bool(np.isinf(lv).any())
    if mode == "scale":
        m = np.full(x.shape, usable)
        s = x * s1
    elif mode == "n":
        m = x * usable / n
        s = x * s1 / n
    else:
        raise ValueError(f"mode must be 'scale' or 'n', got {mode!r}")
    with np.errstate(divide="ignore"):
        loose = np.where(m > 0, 0.25 / np.maximum(m, 1e-300), np.nan)
        strict = np.where((s > 0) & (not public), 2.0 / np.maximum(s, 1e-300) ** 2, np.nan)
    return {"loose": loose, "strict": strict}


# ------------------------------------------------------------------------------ real units
def affine_error_real(
    weights: Any,
    noise_scale: float,
    lo: float,
    hi: float,
    counts: Any = None,
    variance: float = 0.25,
    level: float = 0.95,
    outputs_zero: bool = False,
) -> Accuracy:
    """RMSE and ``level`` error half-width, in data units, of sum_i w_i x_i + Laplace(b).

    ``weights[j]`` is the weight of one user of entry j (``counts[j]`` users, default 1) and
    ``noise_scale`` is b, both for data mapped to [-0.5, 0.5]; ``variance`` is the data
    variance V there (1/4, the worst case, by default). The error is N(0, V ||w||_2^2) (the
    data part, normal by the central limit theorem) plus Laplace(b): MSE V ||w||_2^2 + 2 b^2
    (the appendix's Laplace-mechanism lemma; for ADPM with V = 1/4 this is f(r), Theorem 2),
    and the half-width is the exact normal-Laplace quantile (units.error_half_width). Both
    scale by R = hi - lo. When the estimator outputs the constant 0 (mid-range, e.g. ADPM when
    f(r) > 1/4) the error is the distance from the mean to mid-range: at most R/2, which is
    reported for both numbers (the worst case).
    """
    w = np.asarray(weights, dtype=np.float64)
    c = np.ones(w.size) if counts is None else np.asarray(counts, dtype=np.float64)
    return affine_error(float(np.dot(c, w * w)), noise_scale, lo, hi, variance, level, outputs_zero)


def method_errors_real(
    eps: Any, lo: float, hi: float, level: float = 0.95, methods: Any = METHODS
) -> dict[str, Accuracy]:
    """Worst-case error of each method in data units for data in [lo, hi].

    Affine methods (ADPM, PropDPM, UNI, FME) get :func:`affine_error_real` with V = 1/4; LDPE
    and SM get their worst-case RMSE (sqrt(worst_case_mse) R) and a NaN half-width (their error
    is not one normal plus one Laplace).
    """
    prof = as_profile(eps)
    width = range_width(lo, hi)
    out: dict[str, Accuracy] = {}
    for m in methods:
        est = get_method(m, prof)
        if est.affine and est.weights is not None and est.noise_scale is not None:
            out[m] = affine_error_real(
                est.weights,
                est.noise_scale,
                lo,
                hi,
                prof.counts,
                0.25,
                level,
                bool(getattr(est, "outputs_zero", False)),
            )
        else:
            mse = est.worst_case_mse
            out[m] = Accuracy(mse, math.sqrt(mse) * width, math.nan, math.nan, math.nan, level)
    return out
