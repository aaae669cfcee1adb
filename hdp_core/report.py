"""What the Simulation page reports: trial budgets, result rows, sweep grids, reproducible code.

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

from .bounds import two_group_threshold
from .distributions import Beta, Distribution, TwoPoint, Uniform
from .profile import EpsilonProfile, ProfileError, as_profile
from .simulate import METHODS, SimResult, get_method, simulated_width
from .sweeps import log_grid
from .units import range_width, rmse_real

__all__ = [
    "MAX_SIM_CELLS",
    "MIN_TRIALS",
    "TrialPlan",
    "distribution_code",
    "exact_rows",
    "make_distribution",
    "plan_trials",
    "profile_code",
    "real_value",
    "reproduce_code",
    "saturation_point",
    "simulated_width",
    "simulation_rows",
    "sweep_eps_values",
]

MAX_SIM_CELLS = 50_000_000
"""Largest trials x simulated-values-per-trial the page runs (a few seconds of numpy work)."""

MIN_TRIALS = 20
"""Fewest trials a reduced run keeps (below this the confidence interval says little)."""

INLINE_MAX_ENTRIES = 50
"""Profiles with at most this many entries are written out in full in reproducible code."""


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


def distribution_code(dist: Distribution) -> str:
    """Python expression (using ``hdp``) that rebuilds ``dist``."""
    if isinstance(dist, Beta):
        return f"hdp.Beta({dist.a!r}, {dist.b!r})"
    if isinstance(dist, Uniform):
        return "hdp.Uniform()"
    if isinstance(dist, TwoPoint):
        return f"hdp.TwoPoint({dist.p!r})"
    raise ValueError(f"no code for distribution {dist!r}")


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


def plan_trials(
    eps: Any, dist: Distribution, trials: int, budget: int | None = None
) -> TrialPlan:
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
        {"method": m, "exact": exact[m], "ln_exact": _ln(exact[m]),
         "ratio_exact": _ratio(exact[m], ref)}
        for m in names if m in methods
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


# reproducible code -------------------------------------------------------------------------
def _num(x: float) -> str:
    x = float(x)
    if math.isinf(x):
        return "math.inf"
    return repr(x)


def _spec_call(spec: Mapping[str, Any]) -> str | None:
    """The generator call behind a shareable spec (hdp_core.share), or None."""
    from . import share

    try:
        s = share.normalize_spec(spec)
    except ValueError:
        return None
    k = s["kind"]
    if k == "preset":
        return f"hdp.preset({s['name']!r}, seed={s['seed']})"
    if k == "log_uniform":
        return (
            f"hdp.presets.log_uniform({s['n']}, {_num(s['lo'])}, {_num(s['hi'])}, "
            f"seed={s['seed']})"
        )
    if k == "two_groups":
        return (
            f"hdp.presets.two_groups({s['n']}, {_num(s['frac'])}, {_num(s['eps1'])}, "
            f"{_num(s['eps2'])})"
        )
    if k == "mixture":
        return (
            f"hdp.presets.mixture({s['n']}, {_num(s['lo'])}, {_num(s['hi'])}, "
            f"{_num(s['public'])}, seed={s['seed']})"
        )
    return None


def _spec_profile(spec: Mapping[str, Any]) -> EpsilonProfile | None:
    from . import share

    try:
        return share.profile_from_spec(spec)
    except ValueError:
        return None


def profile_code(profile: EpsilonProfile, spec: Mapping[str, Any] | None = None) -> str:
    """Python statement ``prof = ...`` (using ``hdp``) that rebuilds ``profile`` exactly.

    A preset or generator spec (hdp_core.share: preset, log_uniform, two_groups, mixture) is
    rebuilt by its call when that gives the same profile (same key); a small profile is
    written out in full; anything else is read back from ``profile.csv`` (the page offers it
    for download; ``EpsilonProfile.to_csv`` writes it).
    """
    if isinstance(spec, Mapping):
        call = _spec_call(spec)
        if call is not None:
            built = _spec_profile(spec)
            if built is not None and built.key == profile.key:
                return f"prof = {call}"
    if profile.k <= INLINE_MAX_ENTRIES and profile.data is None:
        lv = ", ".join(_num(v) for v in profile.levels)
        if profile.is_tiered:
            ct = ", ".join(str(int(c)) for c in profile.counts)
            names = f", names={list(profile.names)!r}" if profile.names else ""
            return f"prof = hdp.EpsilonProfile.from_tiers([{lv}], [{ct}]{names})"
        return f"prof = hdp.EpsilonProfile.from_values([{lv}])"
    return 'prof = hdp.EpsilonProfile.from_csv(open("profile.csv", "rb").read())'


def reproduce_code(
    profile: EpsilonProfile,
    spec: Mapping[str, Any] | None,
    dist: Distribution,
    methods: Sequence[str],
    trials: int,
    seed: int,
    sweep: Mapping[str, Any] | None = None,
) -> str:
    """A self-contained Python script with the hdp_core calls behind the page's numbers.

    ``sweep`` (optional) holds n_fixed, eps_fixed, n_var, lo, hi, points, public for the
    group-sweep chart. Running the script prints the same table the page shows.
    """
    meth = ", ".join(repr(m) for m in METHODS if m in methods)
    lines = [
        "import math",
        "",
        "import hdp_core as hdp",
        "import hdp_core.presets",
        "",
        profile_code(profile, spec),
        f"dist = {distribution_code(dist)}",
        "# all six methods are simulated together (common random numbers: every method sees the",
        "# same data in each trial), as on the page; the selected ones are printed",
        f"res = hdp.simulate_mse(hdp.METHODS, prof, dist, trials={int(trials)}, seed={int(seed)},",
        "                       return_estimates=True)",
        f"for name in [{meth}]:",
        "    r = res[name]",
        '    print(f"{name:8s} MSE {r.mse:.4e} (95% CI {r.ci_low:.4e} to {r.ci_high:.4e}) "',
        '          f"exact {r.exact:.4e} ln MSE {r.log_mse:.2f} "',
        '          f"ratio to ADPM {r.mse / res[\'ADPM\'].mse:.3g}")',
    ]
    if sweep is not None:
        lines += [
            "",
            "# the group sweep (exact MSE, no simulation)",
            "from hdp_core.report import saturation_point, sweep_eps_values",
            "from hdp_core.sweeps import group_sweep",
            "",
            f"sat = saturation_point({int(sweep['n_fixed'])}, {_num(sweep['eps_fixed'])})",
            f"values = sweep_eps_values({_num(sweep['lo'])}, {_num(sweep['hi'])}, "
            f"{int(sweep['points'])}, public={bool(sweep['public'])}, include=[sat])",
            f"sw = group_sweep({int(sweep['n_fixed'])}, {_num(sweep['eps_fixed'])}, "
            f"{int(sweep['n_var'])}, values, hdp.METHODS, dist)",
            "print('saturation point', sat)",
            f"for name in [{meth}]:",
            "    print(name, 'MSE at the last point', sw.mse[name][-1])",
        ]
    return "\n".join(lines) + "\n"
