"""Errors in real units: RMSE and a 95% error half-width for data in [lo, hi].

hdp_core works on data in [-0.5, 0.5]. Data in [lo, hi] is mapped there by x -> (x - lo)/R - 1/2
with R = hi - lo, so an estimate's error scales by R and its MSE by R^2.

For an affine estimator sum_i w_i x_i + Laplace(b) the error is (data part) + (noise): the data
part has variance V ||w||_2^2 and is close to normal for many users (central limit theorem); the
noise is exactly Laplace(b). The half-width h solves P(|Z + L| <= h) = level for Z ~ N(0, s^2),
L ~ Laplace(b), using the closed-form normal-Laplace distribution function
P(|Z + L| <= h) = (2 Phi(h/s) - 1) - phi(h/s) [R(s/b - h/s) - R(s/b + h/s)],
R the Mills ratio (1 - Phi(t))/phi(t) (Reed's normal-Laplace law).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Accuracy",
    "abs_error_cdf",
    "affine_error",
    "error_half_width",
    "range_width",
    "rmse_real",
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def range_width(lo: float, hi: float) -> float:
    """R = hi - lo, the width of the data range; raises ValueError unless lo < hi, finite."""
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)) or not hi > lo:
        raise ValueError(f"the data range needs finite low < high, got [{lo:g}, {hi:g}]")
    return hi - lo


def rmse_real(mse: float, lo: float, hi: float) -> float:
    """Root-mean-squared error in the data's own units: sqrt(mse) * (hi - lo)."""
    return math.sqrt(max(float(mse), 0.0)) * range_width(lo, hi)


def _log_phi_times_mills(x: float, lam: float, sign: float) -> float:
    """log(phi(x) * R(t)) for t = lam + sign * x, R(t) = (1 - Phi(t))/phi(t), without
    under/overflow. (t^2 - x^2)/2 is evaluated as lam (lam/2 + sign x): t*t - x*x cancels
    catastrophically when x is huge (data_sd << noise_scale)."""
    t = lam + sign * x
    if t < 5.0:
        tail = 0.5 * math.erfc(t / math.sqrt(2.0))  # 1 - Phi(t), > 1e-7 here
        return lam * (0.5 * lam + sign * x) + math.log(tail)
    # continued fraction R(t) = 1/(t + 1/(t + 2/(t + 3/(t + ...)))), fast for t >= 5
    acc = t
    for k in range(40, 0, -1):
        acc = t + k / acc
    return -0.5 * x * x - _LOG_SQRT_2PI - math.log(acc)


def abs_error_cdf(h: float, data_sd: float, noise_scale: float) -> float:
    """P(|Z + L| <= h) for Z ~ N(0, data_sd^2) and L ~ Laplace(noise_scale), h >= 0."""
    s, b = float(data_sd), float(noise_scale)
    if h <= 0:
        return 0.0
    if b <= 0 and s <= 0:
        return 1.0
    if b <= 0:
        return math.erf(h / (s * math.sqrt(2.0)))
    if s <= 0 or s / b < 1e-8:
        return -math.expm1(-h / b)
    x = h / s
    lam_s = s / b
    normal_part = math.erf(x / math.sqrt(2.0))
    t1 = math.exp(_log_phi_times_mills(x, lam_s, -1.0))
    t2 = math.exp(_log_phi_times_mills(x, lam_s, 1.0))
    return min(max(normal_part - (t1 - t2), 0.0), 1.0)


def error_half_width(data_sd: float, noise_scale: float, level: float = 0.95) -> float:
    """Half-width h with P(|error| <= h) = level for error = N(0, data_sd^2) + Laplace(b).

    Units are those of data_sd and noise_scale. Found by bisection on the exact
    normal-Laplace distribution function (abs_error_cdf) to relative precision 1e-10.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    s, b = max(float(data_sd), 0.0), max(float(noise_scale), 0.0)
    if s == 0 and b == 0:
        return 0.0
    if not (math.isfinite(s) and math.isfinite(b)):
        return math.inf
    lo, hi = 0.0, 4.0 * s + b * math.log(1.0 / (1.0 - level)) + 1e-300
    while abs_error_cdf(hi, s, b) < level:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if abs_error_cdf(mid, s, b) < level:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-10 * hi:
            break
    return 0.5 * (lo + hi)


error_half_width_vec = np.vectorize(error_half_width, otypes=[float])
"""error_half_width over arrays (for sweeps of a few hundred points)."""


@dataclass(frozen=True)
class Accuracy:
    """How far one estimate of the mean can be off, in the data's own units (range [lo, hi]).

    ``mse``: on data rescaled to [-0.5, 0.5]; ``rmse``: root-mean-squared error; ``half_width``:
    h with P(|error| <= h) = ``level`` (NaN when the error is not one normal plus one Laplace,
    e.g. for LDPE and SM); ``data_sd``: sd of the data part; ``noise_scale``: Laplace scale of
    the noise; ``outputs_zero``: the method answers the middle of the range (ADPM when
    f(r) > 1/4), so it is off by at most half the range. ``half_width_kind`` says how
    ``half_width`` was found: "normal" (the data part taken as normal: an approximation) or
    "proven" (hdp_core.intervals.population_half_width: covers the population mean with
    probability >= ``level`` for every distribution in the range, at every n; the Tier
    designer's figures, hdp_core.design.method_errors); ``half_width_own``: the method's own
    half-width (equal to ``half_width`` for "proven").
    """

    mse: float
    rmse: float
    half_width: float
    data_sd: float
    noise_scale: float
    level: float = 0.95
    outputs_zero: bool = False
    half_width_kind: str = "normal"
    half_width_own: float = math.nan

    def get(self, metric: str) -> float:
        """The RMSE (``metric`` 'rmse') or the error half-width ('half_width')."""
        if metric == "rmse":
            return self.rmse
        if metric == "half_width":
            return self.half_width
        raise ValueError(f"metric must be 'rmse' or 'half_width', got {metric!r}")


def affine_error(
    sum_sq_weights: float,
    noise_scale: float,
    lo: float,
    hi: float,
    variance: float = 0.25,
    level: float = 0.95,
    outputs_zero: bool = False,
) -> Accuracy:
    """Errors of sum_i w_i x_i + Laplace(b) with ||w||_2^2 = ``sum_sq_weights`` and b =
    ``noise_scale`` (both for data in [-0.5, 0.5]) when the data lie in [lo, hi].

    MSE = V ||w||_2^2 + 2 b^2 (unbiased weights; the appendix's Laplace-mechanism lemma; for
    ADPM with V = 1/4 this is f(r), Theorem 2), V the data variance on [-0.5, 0.5] (1/4 is the
    worst case). The data part is taken as normal (central limit theorem) and the half-width is
    the exact normal-Laplace quantile; everything but the MSE scales by R = hi - lo. A method
    that outputs the constant mid-range (ADPM when f(r) > 1/4) is off by at most R/2, reported
    for both RMSE and half-width (the worst case).
    """
    width = range_width(lo, hi)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if outputs_zero:
        return Accuracy(0.25, 0.5 * width, 0.5 * width, 0.0, 0.0, level, True)
    b = float(noise_scale)
    if not (math.isfinite(b) and b >= 0):
        raise ValueError(f"noise scale must be finite and >= 0, got {noise_scale}")
    mse = variance * float(sum_sq_weights) + 2.0 * b * b
    sd = math.sqrt(variance * float(sum_sq_weights)) * width
    return Accuracy(
        mse,
        math.sqrt(mse) * width,
        error_half_width(sd, b * width, level),
        sd,
        b * width,
        level,
        False,
    )
