"""The Simulation page's "paper's experiment" (Table 1) as the page shows it (no streamlit):
the table next to the paper's values, its cards, captions and controls."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from hdp_app.views.cards import Metric
from hdp_app.views.fields import NumberField
from hdp_app.views.limits import Limit
from hdp_app.views.simulation import method_label
from hdp_app.views.simulation_controls import DEFAULT_TRIALS, SEED, SIM_HELP
from hdp_core import presets
from hdp_core.experiments import MAX_TABLE1_TRIALS, PAPER_N, largest_gap
from hdp_core.profile import EpsilonProfile
from hdp_core.simulate import CI_MIN_TRIALS

INTRO = (
    "n = 1,000 users with log eps uniform on [−4, 2] (**high** variance of eps) or "
    "[−3, −2] (**low** variance), data Beta(2, 3), every method, 20,000 trials. This runs "
    "both profiles and puts our numbers next to the paper's. **It does not change your "
    "current profile**; load either one afterwards if you want to explore it."
)
TRIALS = NumberField(
    "Trials",
    "sim_paper_trials",
    DEFAULT_TRIALS,
    Limit(CI_MIN_TRIALS, MAX_TABLE1_TRIALS, integer=True),
    step=1_000,
    help=SIM_HELP["sim_paper_trials"],
)
SEED_FIELD = NumberField("Seed", "sim_paper_seed", 0, SEED, step=1, help=SIM_HELP["sim_paper_seed"])
"""The paper experiment's trials (500 to experiments.MAX_TABLE1_TRIALS) and seed."""
PROFILE_SEED = 0
"""The seed both of the paper's profiles are drawn with (as in hdp_core.experiments.table1)."""
KINDS = ("high", "low")
"""The paper's two profiles: high and low variance of log eps."""


def paper_preset(kind: str) -> tuple[str, dict[str, Any]]:
    """(preset name, spec) of the paper's ``kind`` profile as the app's presets name it."""
    name = f"paper_{kind}"
    return name, {"kind": "preset", "name": name, "seed": PROFILE_SEED}


def spinner_text(trials: int) -> str:
    """What the spinner says while Table 1 runs."""
    return f"Running Table 1: 2 profiles × {trials:,} trials…"


TABLE_NUMBER_ENDS = ("paper", "simulated)", "exact")
"""Table 1's numeric columns end with these (shown with 2 decimals)."""


def lowest_exact(rows: Sequence[Mapping[str, Any]], kind: str, rel: float = 1e-9) -> list[str]:
    """The methods of Table 1 ``rows`` (hdp_core.experiments.table1) with the smallest exact
    ln MSE for profile ``kind`` ('high' or 'low'), ties within ``rel`` (ln units) included:
    on a profile where nobody saturates ADPM and PropDPM are the same estimator."""
    key = f"exact_{kind}"
    vals = [(float(r[key]), str(r["method"])) for r in rows]
    best = min(v for v, _ in vals)
    return [m for v, m in vals if abs(v - best) <= rel * max(1.0, abs(best))]


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


def paper_profile(kind: str) -> EpsilonProfile:
    """The paper's ``kind`` profile ('high' or 'low'): PAPER_N users drawn with PROFILE_SEED."""
    return presets.paper_profile(kind, PAPER_N, PROFILE_SEED)
