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
import pandas as pd

from hdp_app.views.cards import Metric
from hdp_app.views.formatting import count_noun, plain
from hdp_core.bounds import two_group_threshold
from hdp_core.distributions import Beta, Distribution, TwoPoint, Uniform
from hdp_core.errors import ProfileError
from hdp_core.estimators import METHOD_CLASSES, METHODS, get_method, tuned_spread
from hdp_core.experiments import largest_gap
from hdp_core.profile import as_profile
from hdp_core.simulate import CI_MIN_TRIALS, SimResult, simulated_width
from hdp_core.sweeps import log_grid
from hdp_core.units import range_width, rmse_real

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
    names += [m for m in methods if m not in METHODS]
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


# the page's labels, tables, cards and sentences (issue 20: moved out of pages/simulation.py) -
DIST_KINDS = {"Beta": "beta", "Uniform": "uniform", "Two-point": "twopoint"}
"""Distribution radio options (also their text in the URL) -> :func:`make_distribution` kind."""
SWEEP_DATA = ["As chosen above", "Worst case"]
"""Data of the group sweep: the simulation's distribution, or the worst case (two-point, 1/2)."""
SWEEP_POINTS = 60

# Short labels of the page's switches (whole at a projector's 1024 px, in a third of the
# main column); the long text is in their help.
REAL_UNITS_LABEL = "Real units"
REAL_UNITS_HELP = (
    "Show real units: give the range of your data (e.g. ages 18 to 90) to see the true mean "
    "and the typical error (RMSE) in those units."
)
TUNED_LABEL = "Tuned ADPM"
TUNED_HELP = (
    "Add ADPM tuned to the spread. Beyond the paper: ADPM's weights for data of a known "
    "standard deviation s (Algorithm 1 with 8 replaced by 2/s²). ADPM itself is tuned to the "
    "worst case."
)
TUNED_OWN_LABEL = "Its own spread"
TUNED_OWN_HELP = (
    "Tune to this distribution's own spread. Off: enter the spread it is tuned to (a guess)."
)
SWEEP_PUBLIC_LABEL = "Then public (eps = ∞)"
SWEEP_PUBLIC_HELP = (
    "After the largest finite eps, add the point where the varying group's data are public "
    "(eps = ∞)."
)
"""Finite levels of the varying group on the sweep's x axis."""
DEFAULT_HIST = ["ADPM", "PropDPM", "UNI"]
"""Methods whose estimates the histogram shows first."""


def method_label(m: str) -> str:
    """The method's display label (e.g. 'FME (reconstructed)'); unknown names as they are."""
    return METHOD_CLASSES[m].label if m in METHOD_CLASSES else m


def short_label(m: str) -> str:
    """Short name for selection chips; FME keeps its 'reconstructed' mark."""
    return "FME (reconstructed)" if m == "FME" else m


def dist_spec(kind: str, a: float, b: float, p: float) -> tuple[str, float, float, float]:
    """A hashable description of the distribution, the arguments of :func:`make_distribution`
    (parameters the kind does not use normalised, so equal distributions share a cache key)."""
    if kind == "beta":
        return ("beta", float(a), float(b), 0.5)
    if kind == "twopoint":
        return ("twopoint", 2.0, 3.0, float(p))
    return (kind, 2.0, 3.0, 0.5)


def tuned_to(own: bool, guess: float, dist: Distribution, spread_min: float) -> float:
    """The spread (sd on [-0.5, 0.5]) the tuned ADPM uses: the distribution's own when ``own``,
    else ``guess``; clipped to [spread_min, 0.5]."""
    sd = tuned_spread(None if own else guess, dist)
    return min(max(float(sd or 0.0), spread_min), 0.5)


def results_frame(rows: Sequence[Mapping[str, Any]], real: bool) -> Any:
    """The results table (a pandas DataFrame): simulated MSE and its 95% CI, exact MSE, both
    in ln units and as multiples of ADPM's; with ``real`` the RMSEs in real units too."""
    df = pd.DataFrame(
        {
            "Method": [method_label(r["method"]) for r in rows],
            "Simulated MSE": [r["mse"] for r in rows],
            "95% CI low": [r["ci_low"] for r in rows],
            "95% CI high": [r["ci_high"] for r in rows],
            "Exact MSE": [r["exact"] for r in rows],
            "ln MSE (simulated)": [r["ln_mse"] for r in rows],
            "ln MSE (exact)": [r["ln_exact"] for r in rows],
            "× ADPM (simulated)": [r["ratio"] for r in rows],
            "× ADPM (exact)": [r["ratio_exact"] for r in rows],
        }
    )
    if real:
        df["RMSE (real units)"] = [r["rmse_real"] for r in rows]
        df["RMSE exact (real units)"] = [r["rmse_real_exact"] for r in rows]
    return df


def download_frame(
    rows: Sequence[Mapping[str, Any]],
    real: bool,
    profile_label: str,
    dist_label: str,
    trials: int,
    seed: int,
    n_users: int,
) -> Any:
    """The results table with the settings that produced it (the CSV download)."""
    table = results_frame(rows, real)
    table.insert(0, "Profile", profile_label)
    table["Distribution"] = dist_label
    table["Trials"] = trials
    table["Seed"] = seed
    table["Users"] = n_users
    return table


def exact_frame(rows: Sequence[Mapping[str, Any]]) -> Any:
    """The exact-only table (profiles too wide to simulate): exact MSE, ln and x ADPM."""
    return pd.DataFrame(
        {
            "Method": [method_label(r["method"]) for r in rows],
            "Exact MSE": [r["exact"] for r in rows],
            "ln MSE (exact)": [r["ln_exact"] for r in rows],
            "× ADPM (exact)": [r["ratio_exact"] for r in rows],
        }
    )


def too_large_text(plan: TrialPlan) -> str:
    """Why a profile is not simulated (exact MSEs shown instead)."""
    return (
        f"This profile needs {plan.width:,} random values per trial: too many to simulate "
        "here (even a few trials would take minutes). Below are the exact MSEs (closed "
        "forms); the script under 'Reproduce in Python' runs the simulation offline."
    )


def reduced_text(plan: TrialPlan) -> str:
    """The note when the run uses fewer trials than asked (markdown)."""
    return (
        f"This profile needs {plan.width:,} random values per trial, so the run uses "
        f"**{plan.trials:,} trials instead of {plan.requested:,}** (at most "
        f"{MAX_SIM_CELLS:.0e} values in total, to stay quick). Confidence intervals "
        "are wider accordingly."
    )


APPROXIMATE_TEXT = (
    "Tiers with more than 2,000 users are simulated in aggregate: the sum of each "
    "such tier's data is drawn from a normal approximation (central limit theorem) "
    "instead of user by user. Results are marked approximate; with the two-point "
    "distribution the aggregate draw is exact."
)
"""The note when some results are approximate (tiers simulated in aggregate)."""


def run_caption(trials: int, seed: int, dist_label: str, n_users: int) -> str:
    """The caption under the results table: the run's settings and how to read it."""
    return (
        f"{trials:,} trials, seed {seed}, data {dist_label}, "
        f"{count_noun(n_users, 'user')}. MSE for data in [−0.5, 0.5]; × ADPM = the method's "
        "MSE divided by ADPM's (above 1 = worse than ADPM)."
    )


def true_mean_metrics(dist: Distribution, data_range: Any, lo: float, hi: float) -> list[Metric]:
    """Cards: the mean every method estimates on [-0.5, 0.5] and (with a range) in real units."""
    out = [
        Metric(
            "True mean",
            f"{dist.mean:.4f}",
            "What every method tries to estimate, in the [−0.5, 0.5] scale of the data "
            f"({dist.label()}; variance {dist.variance:.4g}).",
        )
    ]
    if data_range is not None:
        out.append(
            Metric(
                "Mean (real units)",
                f"{real_value(dist.mean, lo, hi):.4g}",
                f"The same mean on your data range [{lo:g}, {hi:g}].",
            )
        )
    return out


def headline_metrics(
    adpm_row: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
) -> list[Metric]:
    """Cards: ADPM's simulated MSE and ln MSE, and the shown baseline with the smallest
    EXACT MSE as a multiple of ADPM's exact MSE (the table's exact column; issue 31: a
    headline from the exact figures, never a simulated ratio without its interval), when
    there is one with an exact ratio."""
    out = [
        Metric(
            "ADPM simulated MSE",
            f"{adpm_row['mse']:.3e}",
            f"95% CI {adpm_row['ci_low']:.3e} to {adpm_row['ci_high']:.3e}; exact "
            f"{adpm_row['exact']:.3e}.",
        ),
        Metric(
            "ADPM ln MSE",
            "−∞" if adpm_row["ln_mse"] is None else f"{adpm_row['ln_mse']:.2f}",
            "Natural log of the MSE, the paper's unit (Table 1).",
        ),
    ]
    others = [r for r in rows if r["method"] != "ADPM" and r.get("ratio_exact") is not None]
    if others:
        best = min(others, key=lambda r: r["exact"])
        out.append(
            Metric(
                f"Best other method: {best['method']}",
                f"{best['ratio_exact']:.3g}× ADPM's MSE",
                "Exact MSE (closed form) of the shown baseline with the smallest exact MSE, "
                f"divided by ADPM's exact MSE. Above 1 means ADPM is more accurate. Its "
                f"simulated MSE: {best['mse']:.3e} (95% CI {best['ci_low']:.3e} to "
                f"{best['ci_high']:.3e}).",
            )
        )
    return out


def tuned_caption(tuned_label: str, own: bool) -> str:
    """Which spread the tuned method uses."""
    return tuned_label + (
        " (this distribution's own spread)." if own else " (the spread you gave)."
    )


def sweep_metrics(sat: float, mse: Mapping[str, np.ndarray], end: str) -> list[Metric]:
    """Cards of the group sweep: the saturation point, ADPM's and PropDPM's exact MSE at the
    last level ``end`` of the axis, and their ratio (when ADPM's is positive)."""
    out = [
        Metric(
            "Saturation point",
            f"{sat:.4g}",
            "From this eps on, ADPM caps the varying group at tau* = eps + 8/(n eps) of the "
            "fixed group: they get this much privacy whatever they asked for, and ADPM's error "
            "stops changing.",
        )
    ]
    if "ADPM" in mse:
        out.append(Metric(f"ADPM MSE at eps = {end}", f"{mse['ADPM'][-1]:.3e}"))
    if "PropDPM" in mse:
        out.append(Metric(f"PropDPM MSE at eps = {end}", f"{mse['PropDPM'][-1]:.3e}"))
        if mse["ADPM"][-1] > 0:
            out.append(
                Metric(
                    f"PropDPM ÷ ADPM at eps = {end}",
                    f"{mse['PropDPM'][-1] / mse['ADPM'][-1]:.3g}×",
                )
            )
    return out


def sweep_beaters(mse: Mapping[str, np.ndarray], shown: Sequence[str]) -> list[str]:
    """Shown methods whose exact MSE is below ADPM's (by more than 1e-9 relative) somewhere
    on the sweep: possible only with data gentler than the worst case."""
    return [m for m in shown if m != "ADPM" and bool((mse[m] < mse["ADPM"] * (1 - 1e-9)).any())]


def beaters_text(beaters: Sequence[str]) -> str:
    """The caption when some method dips below ADPM on the sweep."""
    return (
        f"Here {', '.join(beaters)} dips below ADPM over part of the range. ADPM minimises "
        "the *worst-case* error (data spread as much as possible); with gentler data, "
        "another weighting can do slightly better for some levels. Choose the worst case "
        "above to see the guarantee."
    )


def _fmt_ln(x: float | None) -> str:
    return "−∞" if x is None or not math.isfinite(x) else f"{x:.2f}"


def paper_frame(rows: Sequence[Mapping[str, Any]]) -> Any:
    """Table 1 next to the paper's values: per profile, paper, ours (simulated), its 95% CI
    (text, ln units) and exact."""
    cols: dict[str, list[Any]] = {"Method": [method_label(r["method"]) for r in rows]}
    for k, name in (("high", "High"), ("low", "Low")):
        cols[f"{name}: paper"] = [r[f"paper_{k}"] for r in rows]
        cols[f"{name}: ours (simulated)"] = [r[f"sim_{k}"] for r in rows]
        cols[f"{name}: 95% CI"] = [
            f"{_fmt_ln(r[f'sim_{k}_lo'])} to {_fmt_ln(r[f'sim_{k}_hi'])}" for r in rows
        ]
        cols[f"{name}: exact"] = [r[f"exact_{k}"] for r in rows]
    return pd.DataFrame(cols)


def paper_sim_gap(rows: Sequence[Mapping[str, Any]]) -> float:
    """Largest |simulated - paper| ln MSE over both profiles of Table 1 (finite values only):
    the page's "Largest gap to the paper" (:func:`hdp_core.experiments.largest_gap` on the
    simulated values; the README's block also counts the exact values)."""
    return largest_gap([dict(r) for r in rows], ("sim",))


def method_options() -> list[str]:
    """The methods the Simulation page offers: the paper's six (shown by default, its Table 1),
    then every other registered method but the tuned ones (they have their own control), e.g.
    TableMean (the table's own mean, issue 21)."""
    return [
        *METHODS,
        *(m for m in METHOD_CLASSES if m not in METHODS and not METHOD_CLASSES[m].tuned),
    ]


SIM_HELP = {
    "sim_dist": (
        "Where the users' values come from (scaled to [−0.5, 0.5]). The "
        "paper uses Beta(2, 3) (Beta(a, b) shifted to [−0.5, 0.5]). Two-"
        "point: every value is −0.5 or +0.5; with p = 0.5 it is the worst"
        " case, the largest spread possible."
    ),
    "sim_hist": (
        "Each simulated trial gives one answer per method; the histogram "
        "shows where they land around the true mean (black line). Narrow "
        "= reliable."
    ),
    "sim_csv": "The table above with the settings that produced it.",
    "sim_sw_n1": "How many users keep a fixed privacy level.",
    "sim_sw_e1": "Their privacy level (smaller = more privacy).",
    "sim_sw_n2": "How many users relax their privacy along the x axis.",
    "sim_sw_hi": "Largest finite eps on the x axis.",
    "sim_sw_data": (
        "'Worst case' uses two-point data with p = 0.5 (every value ±0.5,"
        " the largest spread possible), the case ADPM is built for. With "
        "gentler data another weighting can be slightly better over some "
        "range."
    ),
    "sim_paper_trials": "The paper used 20,000 per profile.",
    "sim_paper_seed": ("Seed of the simulation (the two profiles are always drawn with seed 0)."),
    "sim_paper_run": "Simulates both profiles of Table 1 with all six methods.",
    "largest_gap_to_the_paper": (
        "Largest |ours − paper| over both columns. The paper prints one "
        "decimal, and its profiles were drawn with an unknown seed, so "
        "gaps of about 0.1 are expected."
    ),
    "lowest_exact_mse_high_low": (
        "The method(s) with the smallest exact MSE for each profile; '=' "
        "joins methods whose exact MSE is the same (with the low-variance"
        " levels nobody is capped, so ADPM's weights are PropDPM's). "
        "Simulated values differ from the exact ones by noise."
    ),
    "sim_a": "Beta shape a: larger a pushes values up (mean a/(a+b) − 0.5).",
    "sim_b": "Beta shape b: larger b pushes values down. a = b = 1 is uniform.",
    "sim_methods": (
        "Which methods to show. The paper's six are always simulated "
        "together on the same data (common random numbers), so the "
        "comparison is fair. TableMean (beyond the paper) estimates the "
        "table's own mean; add it to compare."
    ),
    "sim_trials": (
        "How many times the experiment is repeated. More trials = "
        "narrower confidence intervals but a slower run (the paper used "
        "20,000)."
    ),
    "sim_seed": ("Fixes the random numbers, so the same settings give the same results."),
    "sim_p": ("Every value is either −0.5 or +0.5. p = 0.5 gives the largest variance (1/4)."),
    "sim_lo": "Smallest possible value of the data.",
    "sim_hi": "Largest possible value of the data.",
    "sim_profile_csv": "The current profile, read by the script above.",
    "sim_tuned_sd": (
        "Standard deviation of one value on the [−0.5, 0.5] scale (0.5 = "
        "the worst case, ADPM itself)."
    ),
}
"""The help text beside each control of the page, keyed by the widget's key (or its
label): plain language, smaller eps = more privacy (moved out of the page, issue 20)."""


def sweep_caption(dist: Distribution) -> str:
    """The caption under the "one group relaxes" sweep: exact, and which data."""
    return f"Exact MSE (closed forms, no simulation), so it is instant; data {dist.label()}."


def paper_metrics(rows: Sequence[Mapping[str, Any]]) -> list[Metric]:
    """The two cards under the paper's Table 1: the largest gap to the paper (simulated, in ln
    units) and the method(s) with the lowest exact MSE per profile."""
    best = [lowest_exact(rows, k) for k in ("high", "low")]
    return [
        Metric(
            "Largest gap to the paper",
            f"{paper_sim_gap(rows):.2f} ln units",
            SIM_HELP["largest_gap_to_the_paper"],
        ),
        Metric(
            "Lowest exact MSE (high / low)",
            f"{' = '.join(best[0])} / {' = '.join(best[1])}",
            SIM_HELP["lowest_exact_mse_high_low"],
        ),
    ]


def paper_caption(trials: int, seed: int) -> str:
    """The caption under Table 1: the units, the trials and seed, the profiles' recipe."""
    return (
        f"Natural log of the MSE (data in [−0.5, 0.5]); {int(trials):,} trials, seed "
        f"{int(seed)}; profiles hdp.paper_profile('high'/'low', 1000, seed=0)."
    )


def paper_profile_texts(kind: str) -> tuple[str, str, str]:
    """(already current, button label, note after loading) for one of the paper's profiles."""
    return (
        f"The {kind}-variance profile is your current profile.",
        f"Make the {kind}-variance profile current",
        f"Loaded the paper's {kind}-variance profile.",
    )


LOAD_PAPER_HELP = "Replaces your current profile (every page will use it)."
"""The help of the buttons that make one of the paper's profiles current."""


def current_profile_caption(label: str, n: int, n_public: int) -> str:
    """The line under the page's introduction naming the current profile (label as plain
    text)."""
    return f"Current profile: {plain(label)} ({count_noun(n, 'user')}, {n_public:,} public)."
