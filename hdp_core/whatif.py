"""The what-if "values differ by privacy level": exact bias and MSE of every method against the
table's own mean and against the population mean (beyond the paper).

Model. Users' values are independent. A user whose level is below ``threshold`` (strict users,
eps < threshold, including eps = 0 rows) draws from ``dist`` moved by ``shift`` (unit scale,
data on [-1/2, 1/2]); everyone else draws from ``dist``. The move keeps values in range: for
shift d > 0 each value x becomes x + delta (1/2 - x) with delta = d / (1/2 - mu), for d < 0
x - delta (x + 1/2) with delta = -d / (1/2 + mu) (delta in [0, 1]); the moved group's mean is
mu + d exactly and its variance (1 - delta)^2 V.

Targets. The table's mean m = (1/n) sum_i x_i (every row); the population mean
mu_bar = (1/n) sum_i mu_i = E[m] (the mean of the population the table is drawn from, with the
profile's shares of strict and other users). Since E[m] = mu_bar a method's bias is the same
against both; the MSEs differ by the table's own spread around mu_bar.

Exact formulas for an estimator T = sum_i w_i x_i + N, N independent of the data with mean 0
and variance nu (every weighted mean in the registry: ADPM, ADPM-tuned, TableMean, UNI,
PropDPM, FME, and LDPE whose N is the weighted sum of local noises):
  against m:      bias = sum_i (w_i - 1/n) mu_i,  MSE = bias^2 + sum_i (w_i - 1/n)^2 V_i + nu;
  against mu_bar: bias = sum_i w_i mu_i - mu_bar, MSE = bias^2 + sum_i w_i^2 V_i + nu.
nu is read through the registry's own interface: the method's exact_mse under the point mass
at 0 (mean 0, variance 0) is exactly nu. A method answering the constant 0 has bias -mu_bar
and MSE mu_bar^2 + sum_i V_i / n^2 (against m) or mu_bar^2 (against mu_bar). SM (the sampling
mechanism) keeps user i with probability p_i (independent K_i), N = sum K_i, and answers
A/N + Laplace(1/(N t)) (A = sum K_i x_i), 0 when N = 0. Exactly, with q_i = E[K_i/N] =
p_i E[1/(1 + N_-i)] and s_i = E[K_i/N^2] = p_i E[1/(1 + N_-i)^2]:
  E[T] = sum_i mu_i q_i,
  E[T^2] = sum_i (V_i + mu_i^2) s_i + sum_{i != l} mu_i mu_l p_i p_l E[1/(2 + N_-il)^2]
           + (2/t^2) E[1/N^2; N >= 1],
  E[T m] = (1/n) (sum_i V_i q_i + (sum_i mu_i q_i)(sum_l mu_l)),
and the expectations of 1/(a + M)^k come from the Laplace transform of the counts,
1/(a + M) = int_0^inf e^{-(a+M)u} du and 1/(a + M)^2 = int_0^inf u e^{-(a+M)u} du, with
E e^{-uN} = prod_j (1 - p_j + p_j e^{-u})^{c_j} (trapezoid rule in log u, as
baselines.count_moments; tested against enumeration of every kept set).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from hdp_core.distributions import Distribution
from hdp_core.estimators import METHOD_CLASSES, Estimator, get_method, tuned_spread
from hdp_core.profile import EpsilonProfile, as_profile

__all__ = [
    "PointMass",
    "Shifted",
    "WhatIf",
    "group_moments",
    "shift_factor",
    "table_mse",
    "whatif",
    "whatif_along",
]


class PointMass(Distribution):
    """All mass at ``value`` (mean value, variance 0)."""

    name = "point mass"

    def __init__(self, value: float = 0.0):
        self.value = float(value)

    @property
    def mean(self) -> float:
        return self.value

    @property
    def variance(self) -> float:
        return 0.0

    def sample(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return np.full(size, self.value)


def shift_factor(mean: float, shift: float) -> float:
    """delta in [0, 1] that moves a distribution of mean ``mean`` by ``shift`` towards an end
    of the range (module docstring); raises ValueError when mean + shift leaves [-1/2, 1/2]."""
    mu, d = float(mean), float(shift)
    if not (math.isfinite(d) and -0.5 <= mu + d <= 0.5):
        raise ValueError(
            f"a shift of {d:g} moves the mean {mu:g} outside the range [-1/2, 1/2]; "
            f"choose a shift between {-0.5 - mu:g} and {0.5 - mu:g}"
        )
    if d == 0:
        return 0.0
    room = 0.5 - mu if d > 0 else 0.5 + mu
    return min(abs(d) / room, 1.0)


class Shifted(Distribution):
    """``base`` moved by ``shift`` towards an end of the range (module docstring)."""

    name = "shifted"

    def __init__(self, base: Distribution, shift: float):
        self.base = base
        self.shift = float(shift)
        self.delta = shift_factor(base.mean, self.shift)

    @property
    def mean(self) -> float:
        return self.base.mean + self.shift

    @property
    def variance(self) -> float:
        return (1.0 - self.delta) ** 2 * self.base.variance

    def sample(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        x = self.base.sample(rng, size)
        end = 0.5 if self.shift > 0 else -0.5
        return x + self.delta * (end - x)


def group_moments(
    eps: Any, dist: Distribution, threshold: float, shift: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(strict, means, variances) per profile entry: strict users (eps < threshold) draw from
    ``Shifted(dist, shift)``, the others from ``dist``."""
    prof = as_profile(eps)
    strict = prof.levels < float(threshold)
    moved = Shifted(dist, shift)
    mu = np.where(strict, moved.mean, dist.mean)
    var = np.where(strict, moved.variance, dist.variance)
    return strict, mu, var


@dataclass(frozen=True)
class WhatIf:
    """One method's exact errors under the what-if (unit scale; times R in data units, MSE
    times R^2). None-valued fields: a method that is neither a weighted mean nor SM."""

    method: str
    bias_table: float | None
    mse_table: float | None
    bias_population: float | None
    mse_population: float | None

    @property
    def rmse_table(self) -> float | None:
        """sqrt(mse_table)."""
        return None if self.mse_table is None else math.sqrt(max(self.mse_table, 0.0))

    @property
    def rmse_population(self) -> float | None:
        """sqrt(mse_population)."""
        return None if self.mse_population is None else math.sqrt(max(self.mse_population, 0.0))


_STEP = 0.05  # trapezoid step in log u


def _sm(est: Any, c: np.ndarray, mu: np.ndarray, var: np.ndarray, n: float) -> WhatIf:
    """SM's exact bias and MSE under per-entry means and variances (module docstring)."""
    p = np.asarray(est.p, dtype=np.float64)
    live = (c > 0) & (p > 0)
    mbar = float(np.dot(c, mu)) / n
    v_m = float(np.dot(c, var)) / (n * n)
    if not live.any():
        return WhatIf(est.name, -mbar, mbar * mbar + v_m, -mbar, mbar * mbar)
    pl, cl, ml, vl = p[live], c[live], mu[live], var[live]
    x = np.arange(math.log(1e-14 / n), math.log(45.0) + _STEP, _STEP)
    u = np.exp(x)
    with np.errstate(divide="ignore"):  # log(1 - p + p e^{-u}) per [entry, u]; -u when p = 1
        logf = np.where(
            (pl >= 1.0)[:, None], -u[None, :], np.log1p(pl[:, None] * np.expm1(-u)[None, :])
        )
    log_l = cl @ logf
    r = np.exp(log_l[None, :] - logf)  # E e^{-u N_-i} for one user of each entry
    jac = u  # du = u dx

    def integ(g: np.ndarray) -> np.ndarray:
        return cast(np.ndarray, np.trapezoid(g * jac, x, axis=-1))

    q = pl * integ(np.exp(-u)[None, :] * r)
    s_ = pl * integ((u * np.exp(-u))[None, :] * r)
    a = (cl * ml * pl) @ np.exp(-logf)  # sum_j c_j mu_j p_j / f_j(u)
    b = (cl * (ml * pl) ** 2) @ np.exp(-2.0 * logf)
    pairs = float(integ(u * np.exp(-2.0 * u + log_l) * (a * a - b)))
    e_t = float(np.dot(cl * ml, q))
    e_t2 = float(np.dot(cl * (vl + ml * ml), s_)) + pairs + est._noise_coef() * est.moments[2]
    e_tm = (float(np.dot(cl * vl, q)) + e_t * float(np.dot(c, mu))) / n
    e_m2 = mbar * mbar + v_m
    bias = e_t - mbar
    return WhatIf(
        est.name, bias, e_t2 - 2.0 * e_tm + e_m2, bias, e_t2 - 2.0 * mbar * e_t + mbar * mbar
    )


def _one(est: Estimator, c: np.ndarray, mu: np.ndarray, var: np.ndarray, n: float) -> WhatIf:
    mbar = float(np.dot(c, mu)) / n
    if est.outputs_zero:
        v_m = float(np.dot(c, var)) / (n * n)
        return WhatIf(est.name, -mbar, mbar * mbar + v_m, -mbar, mbar * mbar)
    if est.weights is None:
        if hasattr(est, "p") and hasattr(est, "moments"):  # the sampling mechanism
            return _sm(est, c, mu, var, n)
        return WhatIf(est.name, None, None, None, None)
    w = est.weights
    nu = est.exact_mse(PointMass(0.0))
    d = w - 1.0 / n
    b_t = float(np.dot(c, d * mu))
    b_p = float(np.dot(c, w * mu)) - mbar
    mse_t = b_t * b_t + float(np.dot(c, d * d * var)) + nu
    mse_p = b_p * b_p + float(np.dot(c, w * w * var)) + nu
    return WhatIf(est.name, b_t, mse_t, b_p, mse_p)


def whatif(
    eps: Any,
    dist: Distribution,
    threshold: float,
    shift: float,
    methods: Sequence[str] | None = None,
    data_sd: float | None = None,
) -> dict[str, WhatIf]:
    """Exact bias and MSE of each method (default: every registered one) against the table's
    mean and the population mean when users below ``threshold`` have values moved by ``shift``
    (module docstring). ``data_sd``: the spread "ADPM-tuned" is tuned to (default: ``dist``'s
    sd). Unit scale."""
    prof: EpsilonProfile = as_profile(eps)
    _, mu, var = group_moments(prof, dist, threshold, shift)
    c = prof.counts.astype(np.float64)
    n = float(prof.n)
    names = list(METHOD_CLASSES) if methods is None else list(methods)
    sd = tuned_spread(data_sd, dist)
    return {m: _one(get_method(m, prof, sd), c, mu, var, n) for m in names}


def table_mse(
    method: str, eps: Any, dist: Distribution, data_sd: float | None = None
) -> float | None:
    """Exact E[(T - table mean)^2] of ``method`` when every user's value is drawn i.i.d. from
    ``dist`` (the what-if with nothing moved; unit scale). ``data_sd`` as in :func:`whatif`."""
    return whatif(eps, dist, 0.0, 0.0, [method], data_sd)[method].mse_table


def whatif_along(
    eps: Any,
    dist: Distribution,
    threshold: float,
    shifts: Sequence[float] | np.ndarray,
    methods: Sequence[str] | None = None,
    data_sd: float | None = None,
) -> dict[str, list[WhatIf]]:
    """:func:`whatif` at each of ``shifts`` (unit scale): {method: [WhatIf at shifts[0], ...]},
    the same numbers (to rounding) for a chart against the shift. Each estimator is built
    once. For a weighted mean every term of the module docstring's formulas is a sum over the
    strict users or over the others, of c_i v_i, c_i v_i^2 (v = w - 1/n against the table's
    mean, v = w against the population mean) times that group's mean or variance, so those
    eight sums are taken once and each shift costs O(1); SM and a method answering 0 go
    through :func:`whatif` 's own per-entry formulas at every shift."""
    prof: EpsilonProfile = as_profile(eps)
    c = prof.counts.astype(np.float64)
    n = float(prof.n)
    names = list(METHOD_CLASSES) if methods is None else list(methods)
    sd = tuned_spread(data_sd, dist)
    strict = prof.levels < float(threshold)
    m0, v0 = float(dist.mean), float(dist.variance)
    n_s = float(c[strict].sum())
    moved = [Shifted(dist, float(d)) for d in shifts]
    out: dict[str, list[WhatIf]] = {}
    for m in names:
        est = get_method(m, prof, sd)
        if est.outputs_zero or est.weights is None:
            res = []
            for mv in moved:
                mu = np.where(strict, mv.mean, m0)
                var = np.where(strict, mv.variance, v0)
                res.append(_one(est, c, mu, var, n))
            out[m] = res
            continue
        w = np.asarray(est.weights, dtype=np.float64)
        nu = est.exact_mse(PointMass(0.0))
        sums = []
        for v in (w - 1.0 / n, w):  # table target, population target
            cv, cv2 = c * v, c * v * v
            sums.append(
                (
                    float(cv[~strict].sum()),
                    float(cv[strict].sum()),
                    float(cv2[~strict].sum()),
                    float(cv2[strict].sum()),
                )
            )
        (a_o, a_s, q_o, q_s), (b_o, b_s, r_o, r_s) = sums
        res = []
        for mv in moved:
            m1, v1 = mv.mean, mv.variance
            mbar = (m0 * (n - n_s) + m1 * n_s) / n
            b_t = m0 * a_o + m1 * a_s
            b_p = m0 * b_o + m1 * b_s - mbar
            res.append(
                WhatIf(
                    m,
                    b_t,
                    b_t * b_t + v0 * q_o + v1 * q_s + nu,
                    b_p,
                    b_p * b_p + v0 * r_o + v1 * r_s + nu,
                )
            )
        out[m] = res
    return out
