"""The Simulation page's group sweep ("when one group relaxes its privacy") as the page shows
it (no streamlit): its options, number inputs, cards and captions. The sweep's levels and
saturation point are hdp_app.views.simulation's (saturation_point, sweep_eps_values: the
"Reproduce in Python" script imports them from there)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hdp_app.views.cards import Metric
from hdp_app.views.fields import NumberField
from hdp_app.views.limits import Limit
from hdp_app.views.simulation import dist_spec
from hdp_app.views.simulation_controls import SIM_HELP
from hdp_core.distributions import Distribution
from hdp_core.estimators import METHODS

SWEEP_DATA = ["As chosen above", "Worst case"]
"""Data of the group sweep: the simulation's distribution, or the worst case (two-point, 1/2)."""
SWEEP_DATA_HELP = SIM_HELP["sim_sw_data"]
"""The help of the sweep's data radio (SWEEP_DATA)."""
WORST_CASE = dist_spec("twopoint", 2.0, 3.0, 0.5)
"""The worst-case data (two-point with p = 1/2: every value ±0.5), as a distribution spec."""
BOX_LABEL = "The sweep: its settings and chart"
"""The expander that holds the sweep (closed at first: a step of the live controls above does
not redraw it while it is closed; issue 29)."""
SWEEP_POINTS = 60
"""Finite levels of the varying group on the sweep's x axis."""
SWEEP_PUBLIC_LABEL = "Then public (eps = ∞)"
SWEEP_PUBLIC_HELP = (
    "After the largest finite eps, add the point where the varying group's data are public "
    "(eps = ∞)."
)
INTRO = (
    "A fixed group keeps its privacy level while a second group asks for less and less "
    "privacy, all the way to public data. ADPM's error **stops changing once the second "
    "group saturates** (it is granted tau* and weighted as such), while proportional "
    "weighting (PropDPM) puts more and more weight on fewer users and gets worse."
)
USERS = Limit(1, 10**9, integer=True)
N_FIXED = NumberField(
    "Fixed group: users", "sim_sw_n1", 900, USERS, step=100, help=SIM_HELP["sim_sw_n1"]
)
EPS_FIXED = NumberField(
    "Fixed group: eps",
    "sim_sw_e1",
    0.1,
    Limit(1e-4, 1e3),
    step=0.05,
    format="%.4g",
    help=SIM_HELP["sim_sw_e1"],
)
N_VAR = NumberField(
    "Varying group: users", "sim_sw_n2", 100, USERS, step=10, help=SIM_HELP["sim_sw_n2"]
)
LO = NumberField(
    "Their eps from",
    "sim_sw_lo",
    0.1,
    Limit(1e-4, 1e4),
    step=0.05,
    format="%.4g",
    help="Start of the x axis.",
)
HI = NumberField(
    "to",
    "sim_sw_hi",
    100.0,
    Limit(1e-4, 1e6),
    step=10.0,
    format="%.4g",
    help=SIM_HELP["sim_sw_hi"],
)
FIELDS = (N_FIXED, EPS_FIXED, N_VAR, LO, HI)
"""The sweep's number inputs, in the page's order."""


def axis_end(public: bool, hi: float) -> str:
    """The last level of the sweep's axis as the cards name it: '∞' or the largest eps."""
    return "∞" if public else f"{hi:g}"


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


def sweep_caption(dist: Distribution) -> str:
    """The caption under the "one group relaxes" sweep: exact, and which data."""
    return f"Exact MSE (closed forms, no simulation), so it is instant; data {dist.label()}."


def sweep_settings(
    n_fixed: float, eps_fixed: float, n_var: float, lo: float, hi: float, public: bool
) -> dict[str, Any]:
    """The group sweep's settings as the "Reproduce in Python" script takes them (codegen's
    ``sweep``: whole numbers of users, the axis and its SWEEP_POINTS points)."""
    return {
        "n_fixed": int(n_fixed),
        "eps_fixed": float(eps_fixed),
        "n_var": int(n_var),
        "lo": float(lo),
        "hi": float(hi),
        "points": SWEEP_POINTS,
        "public": bool(public),
    }


def shown(methods: Sequence[str]) -> list[str]:
    """The sweep's methods: the chosen ones of the paper's six, in their order, else all six."""
    return [m for m in METHODS if m in methods] or list(METHODS)
