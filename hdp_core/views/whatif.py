"""Page-shaped numbers and sentences for issue 21 (no streamlit, no plotly): the what-if
"values differ by privacy level" (Simulation page) and the 95% error under each target (Tier
designer and Release page).

Every number comes from :func:`hdp_core.whatif.whatif` or
:func:`hdp_core.intervals.expected_error_95`, scaled to data units by R = hi - lo.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..distributions import Distribution
from ..estimators import METHOD_CLASSES, METHODS
from ..intervals import TARGETS, expected_error_95
from ..units import range_width
from ..whatif import whatif
from .explain import WHATIF_WHY
from .formatting import plain

__all__ = ["TargetErrors", "target_errors", "whatif_rows", "whatif_sentence"]


def _order(methods: Sequence[str] | None) -> list[str]:
    names = [m for m in METHODS] + [m for m in METHOD_CLASSES if m not in METHODS]
    return names if methods is None else [m for m in names if m in methods]


def whatif_rows(
    eps: Any,
    dist: Distribution,
    threshold: float,
    shift: float,
    lo: float = -0.5,
    hi: float = 0.5,
    methods: Sequence[str] | None = None,
    data_sd: float | None = None,
) -> list[dict[str, Any]]:
    """One row per method (the paper's six, then the others in registration order): its bias
    and RMSE against the table's own mean and its RMSE against the population mean, in data
    units (``shift`` is in data units too); None for a method of a kind whatif cannot compute."""
    width = range_width(lo, hi)
    res = whatif(eps, dist, threshold, shift / width, _order(methods), data_sd)
    rows = []
    for m in _order(methods):
        r = res[m]
        rows.append(
            {
                "method": m,
                "Method": METHOD_CLASSES[m].label,
                "Bias vs the table's mean": None if r.bias_table is None else r.bias_table * width,
                "RMSE vs the table's mean": None if r.rmse_table is None else r.rmse_table * width,
                "RMSE vs the population mean": (
                    None if r.rmse_population is None else r.rmse_population * width
                ),
            }
        )
    return rows


def whatif_sentence(
    eps: Any,
    dist: Distribution,
    threshold: float,
    shift: float,
    lo: float = -0.5,
    hi: float = 0.5,
    unit: str = "",
) -> str:
    """The what-if in one paragraph: ADPM's and TableMean's bias against the table's mean
    (data units) and why (explain.WHATIF_WHY)."""
    width = range_width(lo, hi)
    res = whatif(eps, dist, threshold, shift / width, ["ADPM", "TableMean"])
    u = f" {plain(unit)}" if unit else ""
    a = res["ADPM"].bias_table
    t = res["TableMean"].bias_table
    assert a is not None and t is not None  # both are weighted means
    return (
        f"When users below eps = {threshold:g} have values {shift:+.4g}{u} away from the others, "
        f"ADPM is off the table's mean by {a * width:+.3g}{u} on average and TableMean by "
        f"{t * width:+.3g}{u}. {WHATIF_WHY}"
    )


@dataclass(frozen=True)
class TargetErrors:
    """The 95% error (half-width of the interval that covers) of a release under each target,
    in data units: ``population`` (ADPM) and ``table`` (TableMean)."""

    population: float
    table: float

    def get(self, target: str) -> float:
        """The figure for ``target`` ("population" or "table")."""
        if target not in TARGETS:
            raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
        return float(getattr(self, target))


def target_errors(
    eps: Any, lo: float, hi: float, data_sd: float | None = None, level: float = 0.95
) -> TargetErrors:
    """Both targets' 95% errors for profile ``eps`` and data range [lo, hi] (``data_sd`` in
    data units: a declared spread for the population target), from
    :func:`hdp_core.intervals.expected_error_95` (the same function the Tier designer and
    the Release page use)."""
    width = range_width(lo, hi)
    sd = None if data_sd is None else float(data_sd) / width
    return TargetErrors(
        expected_error_95(eps, "population", sd, level) * width,
        expected_error_95(eps, "table", None, level) * width,
    )
