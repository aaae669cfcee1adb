"""Sweeps: how the bounds and every method's error move as a profile is stretched or grown.

* ``scale_sweep``: multiply every eps by a factor (privacy looser or stricter, same shape);
* ``n_sweep``: change the number of users keeping each level's share;
* ``group_sweep``: one group's eps grows from strict to public while the rest stays fixed.

Each point is exact (closed forms, no simulation). Profiles are grouped into distinct levels
first, so a point costs O(#distinct levels), not O(n). MSEs are for data in [-0.5, 0.5].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from hdp_core.adpm import adpm
from hdp_core.bounds import h_of_tiers, lower_bound_from_H
from hdp_core.distributions import Distribution
from hdp_core.estimators import METHODS, get_method, tuned_spread
from hdp_core.profile import EpsilonProfile, as_profile

__all__ = ["Sweep", "group_sweep", "log_grid", "n_sweep", "scale_sweep"]


@dataclass
class Sweep:
    """Results along a sweep; every array has one entry per point of ``x``.

    ``upper``: ADPM's worst case min(f, 1/4); ``lower``: (H ∧ 1/4)/512; ``f``, ``H``: the
    uncapped quantities of Theorems 2 and 3; ``tau``: tau* (inf when nothing saturates);
    ``mse[m]``: method m's worst-case MSE (or its exact MSE under ``dist`` when one was given).
    "ADPM-tuned" is tuned to the sweep's ``data_sd``, by default to the sd of ``dist``.
    """

    x: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    f: np.ndarray
    H: np.ndarray
    tau: np.ndarray
    mse: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def ratio(self) -> np.ndarray:
        """f/H at each point (Theorem 4 proves it is at most 443; NaN where both are
        infinite, i.e. every user has eps = 0)."""
        with np.errstate(invalid="ignore"):
            return cast(np.ndarray, self.f / self.H)


def _grouped(prof: EpsilonProfile) -> EpsilonProfile:
    lv, ct = prof.grouped()
    return EpsilonProfile.from_tiers(lv, ct)


def _evaluate(
    profiles: Sequence[EpsilonProfile],
    x: np.ndarray,
    methods: Sequence[str],
    dist: Distribution | None,
    data_sd: float | None = None,
) -> Sweep:
    k = len(profiles)
    up, f, h, tau = (np.empty(k) for _ in range(4))
    mse = {m: np.empty(k) for m in methods}
    sd = tuned_spread(data_sd, dist) if "ADPM-tuned" in methods else None
    for i, p in enumerate(profiles):  # one loop per sweep point; each point is vectorised
        sol = adpm(p)
        lv, ct = p.grouped()
        h[i] = h_of_tiers(lv, ct.astype(np.float64))
        f[i] = sol.objective
        up[i] = sol.worst_case_mse
        tau[i] = sol.saturation_level
        for m in methods:
            est = get_method(m, p, sd)
            mse[m][i] = est.worst_case_mse if dist is None else est.exact_mse(dist)
    lo = lower_bound_from_H(h)
    return Sweep(np.asarray(x, dtype=np.float64), up, lo, f, h, tau, mse)


def scale_sweep(
    eps: Any,
    factors: Sequence[float] | np.ndarray,
    methods: Sequence[str] = METHODS,
    dist: Distribution | None = None,
    data_sd: float | None = None,
) -> Sweep:
    """Bounds and each method's MSE with every level multiplied by each factor (> 0)."""
    base = _grouped(as_profile(eps))
    profs = [base.scaled(float(c)) for c in factors]
    return _evaluate(profs, np.asarray(factors), methods, dist, data_sd)


def n_sweep(
    eps: Any,
    ns: Sequence[int] | np.ndarray,
    methods: Sequence[str] = METHODS,
    dist: Distribution | None = None,
    data_sd: float | None = None,
) -> Sweep:
    """Bounds and each method's MSE for n users keeping the profile's share of each level."""
    base = as_profile(eps)
    profs = [base.with_n(int(n)) for n in ns]
    return _evaluate(profs, np.asarray(ns, dtype=np.float64), methods, dist, data_sd)


def group_sweep(
    n_fixed: int,
    eps_fixed: float,
    n_var: int,
    eps_values: Sequence[float],
    methods: Sequence[str] = METHODS,
    dist: Distribution | None = None,
    data_sd: float | None = None,
) -> Sweep:
    """Two groups: n_fixed users at eps_fixed, n_var users whose eps runs over eps_values
    (inf allowed). Returns each method's MSE (worst case, or exact under ``dist``) per value."""
    profs = [EpsilonProfile.from_tiers([eps_fixed, float(e)], [n_fixed, n_var]) for e in eps_values]
    x = np.array([float(e) for e in eps_values])
    return _evaluate(profs, x, methods, dist, data_sd)


def log_grid(lo: float, hi: float, points: int) -> np.ndarray:
    """``points`` values evenly spaced on a log scale from lo to hi (both > 0)."""
    if not (0 < lo < hi and math.isfinite(hi)) or points < 2:
        raise ValueError("need 0 < lo < hi < inf and at least 2 points")
    return np.exp(np.linspace(math.log(lo), math.log(hi), int(points)))
