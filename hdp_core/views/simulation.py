"""What the Simulation page reports: trial budgets, result rows and sweep grids.

Pure functions around :func:`hdp_core.simulate.simulate_mse` and
:func:`hdp_core.sweeps.group_sweep` (no streamlit). MSEs are for data in [-0.5, 0.5] unless a
data range [lo, hi] is given, in which case errors are also reported in the data's own units
(an error scales by hi - lo, an MSE by (hi - lo)^2; see :mod:`hdp_core.units`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bounds import two_group_threshold
from ..distributions import Beta, Distribution, TwoPoint, Uniform
from ..errors import ProfileError
from ..estimators import METHODS, get_method
from ..profile import as_profile
from ..simulate import CI_MIN_TRIALS, SimResult, simulated_width
from ..sweeps import log_grid
from ..units import range_width, rmse_real

__all__ = [
    "MAX_SIM_CELLS",
    "MIN_TRIALS",
    "TrialPlan",
    "exact_rows",
    "lowest_exact",
    "make_distribution",
    "plan_trials",
    "real_value",
    "saturation_point",
    "simulated_width",
    "simulation_rows",
    "sweep_eps_values",
]

MAX_SIM_CELLS = 50_000_000
"""Largest trials x simulated-values-per-trial the page runs (a few seconds of numpy work)."""

MIN_TRIALS = CI_MIN_TRIALS
"""Fewest trials a run keeps (500): from there the 95% intervals hold (simulate.mse_interval;
tests/test_simulate_coverage.py); the page allows no fewer."""


# distributions -----------------------------------------------------------------------------
def make_distribution(kind: str, a: float = 2.0, b: float = 3.0, p: float = 0.5) -> Distribution:
    """The data distribution on [-0.5, 0.5] called ``kind``: 'beta' (Beta(a, b) shifted by
    -1/2, the paper uses Beta(2, 3)), 'uniform' or 'twopoint' (mass p at +0.5).

    Raises ValueError with a readable message for an unknown kind or bad parameters.
    """
    if kind == "beta":
        return Beta(float(a), float(b))
    if kind == "uniform":
        return Uniform()
    if kind == "twopoint":
        return TwoPoint(float(p))
    raise ValueError(f"unknown distribution {kind!r}; choose beta, uniform or twopoint")


def real_value(x: float, lo: float, hi: float) -> float:
    """A value x in [-0.5, 0.5] mapped to the data range [lo, hi]: lo + (x + 1/2)(hi - lo)."""
    return float(lo) + (float(x) + 0.5) * range_width(lo, hi)


# trial budget ----------------------------------------------------------------------------
@dataclass(frozen=True)
class TrialPlan:
    """How many trials a run uses: ``trials`` <= ``requested``; ``reduced`` when capped."""

    requested: int
    trials: int
    width: int
    budget: int

    @property
    def reduced(self) -> bool:
        return self.trials < self.requested

    @property
    def cells(self) -> int:
        """Simulated data values in the run (trials x width)."""
        return self.trials * self.width

    @property
    def too_large(self) -> bool:
        """Even MIN_TRIALS trials would exceed twice the budget: do not simulate."""
        return self.width * min(self.requested, MIN_TRIALS) > 2 * self.budget


def plan_trials(eps: Any, dist: Distribution, trials: int, budget: int | None = None) -> TrialPlan:
    """Cap ``trials`` so that trials x simulated_width <= budget (default MAX_SIM_CELLS; never
    below MIN_TRIALS, never above the request). Returns a :class:`TrialPlan`."""
    if budget is None:
        budget = MAX_SIM_CELLS
    trials = int(trials)
    if trials < 2:
        raise ProfileError(f"need at least 2 trials, got {trials}")
    width = max(simulated_width(eps, dist), 1)
    cap = max(MIN_TRIALS, budget // width)
    return TrialPlan(trials, min(trials, cap), width, int(budget))


# result rows -------------------------------------------------------------------------------
def _ln(x: float) -> float | None:
    return math.log(x) if x > 0 and math.isfinite(x) else None


def _ratio(x: float, ref: float | None) -> float | None:
    if ref is None or not ref > 0 or not math.isfinite(ref):
        return None
    return x / ref


def simulation_rows(
    results: Mapping[str, SimResult],
    methods: Sequence[str] | None = None,
    reference: str = "ADPM",
    data_range: tuple[float, float] | None = None,
) -> list[dict[str, Any]]:
    """One row per method (in METHODS order, restricted to ``methods``) for the results table.

    Keys: method; mse, ci_low, ci_high (95% CI), std_err, exact (closed form), all MSEs on
    [-0.5, 0.5]; ln_mse, ln_ci_low, ln_ci_high, ln_exact (natural log, the unit of the paper's
    Table 1; None where the MSE is 0); ratio (simulated MSE / the reference method's simulated
    MSE, common random numbers) and ratio_exact (same with exact MSEs), None without a
    positive reference; trials; approximate. With ``data_range`` = (lo, hi) also rmse_real and
    rmse_real_exact, the root-mean-squared error in the data's units (sqrt(MSE) (hi - lo)).
    """
    names = [m for m in METHODS if m in results and (methods is None or m in methods)]
    names += [m for m in results if m not in METHODS and (methods is None or m in methods)]
    ref = results.get(reference)
    ref_sim = ref.mse if ref is not None else None
    ref_exact = ref.exact if ref is not None else None
    rows = []
    for m in names:
        r = results[m]
        row: dict[str, Any] = {
            "method": m,
            "mse": r.mse,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "std_err": r.std_err,
            "exact": r.exact,
            "ln_mse": _ln(r.mse),
            "ln_ci_low": _ln(r.ci_low),
            "ln_ci_high": _ln(r.ci_high),
            "ln_exact": _ln(r.exact),
            "ratio": _ratio(r.mse, ref_sim),
            "ratio_exact": _ratio(r.exact, ref_exact),
            "trials": r.trials,
            "approximate": r.approximate,
        }
        if data_range is not None:
            lo, hi = data_range
            row["rmse_real"] = rmse_real(r.mse, lo, hi)
            row["rmse_real_exact"] = rmse_real(r.exact, lo, hi)
        rows.append(row)
    return rows


def exact_rows(
    eps: Any, dist: Distribution, methods: Sequence[str] = METHODS, reference: str = "ADPM"
) -> list[dict[str, Any]]:
    """Exact MSE only (closed forms, no simulation), one row per method in METHODS order:
    method, exact, ln_exact (None at 0) and ratio_exact (to the reference method's exact MSE;
    None when that is 0). For profiles too large to simulate."""
    prof = as_profile(eps)
    names = [m for m in METHODS if m in methods or m == reference]
    exact = {m: get_method(m, prof).exact_mse(dist) for m in names}
    ref = exact.get(reference)
    return [
        {
            "method": m,
            "exact": exact[m],
            "ln_exact": _ln(exact[m]),
            "ratio_exact": _ratio(exact[m], ref),
        }
        for m in names
        if m in methods
    ]


# the group sweep ---------------------------------------------------------------------------
def saturation_point(n_fixed: int, eps_fixed: float) -> float:
    """Level from which the varying group of a group sweep is capped by ADPM (saturates):
    eps_fixed + 8/(n_fixed eps_fixed), the two-group Remark (its tau*). Inf if n_fixed = 0."""
    if n_fixed <= 0:
        return math.inf
    if not (eps_fixed > 0 and math.isfinite(eps_fixed)):
        raise ValueError(f"the fixed group's eps must be a positive number, got {eps_fixed}")
    return two_group_threshold(n_fixed, 1.0, eps_fixed)


def sweep_eps_values(
    lo: float,
    hi: float,
    points: int = 60,
    public: bool = True,
    include: Sequence[float] = (),
) -> np.ndarray:
    """Levels for the varying group: ``points`` log-spaced values from lo to hi, plus the
    finite values of ``include`` that fall inside [lo, hi] (e.g. the saturation point, so the
    kink is drawn exactly), sorted, then +inf (public) when ``public``."""
    if not (lo > 0 and math.isfinite(hi) and hi > lo):
        raise ValueError(f"the eps range needs 0 < from < to < inf, got from {lo:g} to {hi:g}")
    grid = log_grid(lo, hi, points)
    extra = [float(x) for x in include if math.isfinite(x) and lo < x < hi]
    vals = np.unique(np.concatenate([grid, extra]))
    if public:
        vals = np.append(vals, math.inf)
    return vals


def lowest_exact(rows: Sequence[Mapping[str, Any]], kind: str, rel: float = 1e-9) -> list[str]:
    """The methods of Table 1 ``rows`` (hdp_core.experiments.table1) with the smallest exact
    ln MSE for profile ``kind`` ('high' or 'low'), ties within ``rel`` (ln units) included:
    on a profile where nobody saturates ADPM and PropDPM are the same estimator."""
    key = f"exact_{kind}"
    vals = [(float(r[key]), str(r["method"])) for r in rows]
    best = min(v for v, _ in vals)
    return [m for v, m in vals if abs(v - best) <= rel * max(1.0, abs(best))]
