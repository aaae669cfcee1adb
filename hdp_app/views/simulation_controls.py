"""The Simulation page's controls (no streamlit): options, short labels, help texts and the
number inputs with their defaults and bounds (one object each, hdp_app.views.fields), so that
the page types no default or limit and the link's values are checked against the same
bounds. Moved out of hdp_app.views.simulation (issue 27), which keeps the numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hdp_app.views.fields import NumberField
from hdp_app.views.limits import SPREAD, SPREAD_START, Limit
from hdp_app.views.tuned import TUNED
from hdp_core.estimators import METHODS
from hdp_core.simulate import CI_MIN_TRIALS

SEED = Limit(0, 2**31 - 1, integer=True)
"""A simulation seed: any 31-bit whole number (numpy's SeedSequence takes more; a link
keeps this)."""

TRIALS = Limit(CI_MIN_TRIALS, 200_000, integer=True)
"""Trials of one run: from 500 (where the 95% intervals hold, hdp_app.views.simulation.
MIN_TRIALS) to 200,000."""

DEFAULT_TRIALS = 20_000
"""The paper's trials per profile (Table 1), the page's default."""

DIST_KINDS = {"Beta": "beta", "Uniform": "uniform", "Two-point": "twopoint"}
"""Distribution radio options (also their text in the URL) -> :func:`make_distribution` kind."""

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
DEFAULT_HIST = ["ADPM", "PropDPM", "UNI"]
"""Methods whose estimates the histogram shows first."""
HIST_LABEL = "What the noise does to one answer: where the estimates land"
"""The expander that holds the spread of the estimates (closed at first: a step of the live
controls does not redraw it while it is closed; issue 29)."""


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


A = NumberField("a", "sim_a", 2.0, Limit(0.05, 1000.0), step=0.5, help=SIM_HELP["sim_a"])
B = NumberField("b", "sim_b", 3.0, Limit(0.05, 1000.0), step=0.5, help=SIM_HELP["sim_b"])
P_LIMIT = Limit(0.0, 1.0)
P = NumberField(
    "p: share of users at +0.5 (the rest at −0.5)",
    "sim_p",
    0.5,
    P_LIMIT,
    step=0.01,
    help=SIM_HELP["sim_p"],
)
"""The distribution's parameters (Beta(a, b); the two-point mass p at +0.5): their defaults
are the paper's Beta(2, 3) and the worst case p = 1/2."""
TRIALS_FIELD = NumberField(
    "Trials", "sim_trials", DEFAULT_TRIALS, TRIALS, step=1_000, help=SIM_HELP["sim_trials"]
)
SEED_FIELD = NumberField("Seed", "sim_seed", 0, SEED, step=1, help=SIM_HELP["sim_seed"])
LO = NumberField("Data from", "sim_lo", 0.0, Limit(), help=SIM_HELP["sim_lo"])
HI = NumberField("to", "sim_hi", 100.0, Limit(), help=SIM_HELP["sim_hi"])
TUNED_SD = NumberField(
    "Tuned to standard deviation s",
    "sim_tuned_sd",
    SPREAD_START,
    SPREAD,
    step=0.01,
    format="%.3f",
    help=SIM_HELP["sim_tuned_sd"],
)
"""The simulation's number inputs (run, real units, the tuned method's guessed spread)."""

SPREAD_CAPTION = (
    "Exact MSE when the data's true standard deviation is on the x axis (same mean). The "
    "tuned weights are the best at the spread they are tuned to (dotted line); ADPM is the "
    "best for the worst case (0.5)."
)
"""The caption under "If the spread is guessed wrong"."""

NO_METHOD = "Choose at least one method to see results."


def spinner_text(trials: int, n_users: int, n_methods: int) -> str:
    """What the spinner says while a simulation runs."""
    return f"Simulating {trials:,} trials × {n_users:,} users for {n_methods} methods…"


@dataclass
class SimSettings:
    """What the simulation controls say (data distribution spec, methods, run, units, tuning)."""

    spec: tuple[str, float, float, float]
    methods: list[str]
    trials: int
    seed: int
    real: bool
    lo: float
    hi: float
    tuned_on: bool
    own: bool
    tuned_in: float


# what runs and what is shown, from the controls (issue 27: moved out of the page) ----------
def extra_methods(methods: Sequence[str]) -> tuple[str, ...]:
    """The chosen methods beyond the paper's six (e.g. TableMean), simulated with them."""
    return tuple(m for m in methods if m not in METHODS)


def methods_run(methods: Sequence[str], tuned: bool) -> int:
    """How many methods one run simulates: the paper's six (always, on the same data), the
    chosen extra ones and the tuned ADPM when it is on."""
    return len(METHODS) + len(extra_methods(methods)) + int(tuned)


def shown_methods(methods: Sequence[str], tuned_sd: float | None) -> list[str]:
    """The methods of the results table: the chosen ones, then the tuned ADPM when it is on."""
    return list(methods) + ([TUNED] if tuned_sd is not None else [])


def methods_or_all(methods: Sequence[str]) -> list[str]:
    """The chosen methods, or the paper's six when none is chosen."""
    return list(methods) or list(METHODS)


def exact_by_method(rows: Sequence[Mapping[str, Any]], adpm_row: Mapping[str, Any]) -> dict:
    """Each shown method's exact MSE, with ADPM's (always simulated) included."""
    return {**{r["method"]: r["exact"] for r in rows}, "ADPM": adpm_row["exact"]}


def repro(
    profile: Any, spec: Any, dist: Any, methods: Sequence[str], trials: int, seed: int
) -> dict[str, Any]:
    """The settings the "Reproduce in Python" script is written for."""
    return {
        "profile": profile,
        "spec": spec,
        "dist": dist,
        "methods": list(methods),
        "trials": int(trials),
        "seed": int(seed),
    }
