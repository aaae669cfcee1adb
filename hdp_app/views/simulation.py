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
from hdp_core.profile import as_profile
from hdp_core.simulate import CHUNK_CELLS, CI_MIN_TRIALS, SimResult, simulated_width
from hdp_core.sweeps import log_grid
from hdp_core.units import range_width, rmse_real

__all__ = [
    "MAX_SIM_CELLS",
    "MIN_TRIALS",
    "TrialPlan",
    "early_trials",
    "exact_rows",
    "make_distribution",
    "plan_trials",
    "quick_trials",
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


EARLY_TRIALS = 1_000
"""About how many trials a long run draws first, to show at once (issue 29: a slider step
within reach of a one-chart app); the whole run replaces them when it is done."""


EARLY_MIN_CELLS = 30_000_000
"""Simulated values (trials x values per trial) from which a run is drawn early first. Below,
the whole run is drawn at once: measured side by side (bench_first_load.py, load ~3, browser
and server on one 2-core machine) the default run of 20,000 trials x 1,000 users (2.1e7
values, 0.33 s of simulation) showed its whole result at 0.75 s without an early draw and
1.5-1.7 s with one (first result 0.45-0.6 s): drawing twice costs more than it saves there."""


def early_trials(plan: TrialPlan) -> int | None:
    """Trials of an early draw of the run ``plan``: the fewest whole chunks of simulate_mse
    (CHUNK_CELLS values each; the run's own chunk size) reaching EARLY_TRIALS, or None when
    the run is under EARLY_MIN_CELLS values or under twice that many trials (it is quick
    enough whole).

    Its estimates are exactly the first trials of the run: simulate_mse draws chunk c of a run
    from its own streams (seed, stream, c), so a run of this many trials with the same seed
    draws the run's first chunks, whatever the run's length
    (tests/app/test_views_simulation.py checks it)."""
    return _first_chunks(plan, EARLY_MIN_CELLS, EARLY_TRIALS)


def _first_chunks(plan: TrialPlan, min_cells: int, trials: int) -> int | None:
    """The fewest whole chunks of simulate_mse reaching ``trials`` (at least MIN_TRIALS) for
    the run ``plan``, or None when the run is under ``min_cells`` values or under twice that
    many trials."""
    if plan.cells < min_cells:
        return None
    step = max(1, min(plan.trials, CHUNK_CELLS // max(1, plan.width)))
    first = step * math.ceil(max(trials, MIN_TRIALS) / step)
    return first if 2 * first <= plan.trials else None


EARLY_LABEL = "Early result"
"""How the note over an early draw starts (a browser test checks none is left on a page)."""


def early_text(first: int, trials: int) -> str:
    """The note over an early draw's results: what they are and that they will be replaced."""
    return (
        f"{EARLY_LABEL}: the first {first:,} of the {trials:,} trials (same seed), shown while "
        "the rest run; the whole run replaces it in a moment. Its simulated MSEs and 95% "
        "intervals are those of these trials; the exact MSEs are exact."
    )


# a quick result on a step, the whole run on request (issue 29) ------------------------------
QUICK_TRIALS = 2_000
"""About how many trials a step of the page's live controls simulates when the whole run is
long (QUICK_MIN_CELLS): measured in the browser (bench_first_load.py's step, load 3-8), a
step of the default profile took 1.16 s with 20,000 trials (0.61 s of the server's CPU), 0.63
s with 2,000 (0.12 s) and 0.56 s with 500; the rest is the browser drawing the page."""

QUICK_MIN_CELLS = 5_000_000
"""Simulated values (trials x values per trial) from which a step shows a quick result: a
shorter run takes under ~0.1 s of simulation and is shown whole."""


def quick_trials(plan: TrialPlan) -> int | None:
    """Trials of a step's quick result for the run ``plan``: the fewest whole chunks of
    simulate_mse reaching QUICK_TRIALS, so that they are exactly the run's first trials (as
    :func:`early_trials`), or None when the run is under QUICK_MIN_CELLS values or under
    twice that many trials (it is shown whole)."""
    return _first_chunks(plan, QUICK_MIN_CELLS, QUICK_TRIALS)


def shown_trials(plan: TrialPlan, page_run: bool, whole_asked: bool, whole_ready: bool) -> int:
    """How many trials the results show: the whole run (``plan.trials``) when the page was
    opened or fully rerun (``page_run``), when the whole run was asked for or is at hand
    (cached); on a step of the page's live controls, the quick result's
    :func:`quick_trials` when the run is long."""
    if page_run or whole_asked or whole_ready:
        return plan.trials
    return quick_trials(plan) or plan.trials


def builds_closed(full_run: bool, is_open: bool | None) -> bool:
    """Whether a section folded in a closed expander is built in this run: on a full run of
    the page (``full_run``: opened, or rerun as a whole; every section is built, as a reader
    of the page's elements sees them) and whenever it is open; on a step of the live
    controls (a fragment rerun) a closed one is left empty, so that a step redraws only what
    is in view (issue 29). Opening it reruns the part that holds it."""
    return bool(full_run or is_open)


QUICK_LABEL = "Quick result"
"""How the note over a quick result starts."""


def quick_text(first: int, trials: int) -> str:
    """The note over a step's quick result: what it is and how to get the whole run."""
    return (
        f"{QUICK_LABEL}: the first {first:,} of the {trials:,} trials (same seed), so that "
        "moving a control answers at once. Its simulated MSEs and 95% intervals are those of "
        "these trials (so are the download and the script below); the exact MSEs are exact."
    )


def whole_run_label(trials: int) -> str:
    """The button that runs and shows the whole run after a quick result."""
    return f"Run all {trials:,} trials"


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


# the page's labels, tables, cards and sentences (issue 20: moved out of pages/simulation.py) -
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


TABLE_FORMATS = {
    "Simulated MSE": "%.3e",
    "95% CI low": "%.3e",
    "95% CI high": "%.3e",
    "Exact MSE": "%.3e",
    "ln MSE (simulated)": "%.2f",
    "ln MSE (exact)": "%.2f",
    "× ADPM (simulated)": "%.3g×",
    "× ADPM (exact)": "%.3g×",
    "RMSE (real units)": "%.4g",
    "RMSE exact (real units)": "%.4g",
}
"""Number formats of the results tables' columns (results_frame, exact_frame)."""


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


def method_options() -> list[str]:
    """The methods the Simulation page offers: the paper's six (shown by default, its Table 1),
    then every other registered method but the tuned ones (they have their own control), e.g.
    TableMean (the table's own mean, issue 21)."""
    return [
        *METHODS,
        *(m for m in METHOD_CLASSES if m not in METHODS and not METHOD_CLASSES[m].tuned),
    ]


def current_profile_caption(label: str, n: int, n_public: int) -> str:
    """The line under the page's introduction naming the current profile (label as plain
    text)."""
    return f"Current profile: {plain(label)} ({count_noun(n, 'user')}, {n_public:,} public)."


def histogram_data(
    results: Mapping[str, SimResult], shown: Sequence[str], dist: Distribution, data_range: Any
) -> tuple[dict[str, np.ndarray], float, str]:
    """(estimates by method, true mean, unit) for the histogram of the ``shown`` methods:
    on [-0.5, 0.5], or mapped onto ``data_range`` (lo, hi) in real units when given."""
    ests = {m: np.asarray(results[m].estimates) for m in shown}
    if data_range is None:
        return ests, float(dist.mean), "data in [−0.5, 0.5]"
    lo, hi = float(data_range[0]), float(data_range[1])
    real = {m: lo + (v + 0.5) * (hi - lo) for m, v in ests.items()}
    return real, real_value(dist.mean, lo, hi), "real units"
