"""What a release returns: :class:`Release` (the estimate, its 95% interval, the receipt per
level, the ledger's answer) and :func:`not_recorded_note`. Numbers in data units unless said."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

UNIT_ROUNDOFF = 2.0**-52  # the unit roundoff of a float64 sum, used in the rounding allowance


SATURATED_AT = 1.0 - 1e-12  # as hdp_core.adpm: a level exactly at the threshold counts as saturated


LEVEL = 0.95


_TARGET_WORDS = {
    "population": "the population mean (ADPM; assumes a user's level does not depend on "
    "their value)",
    "table": "the table's own mean (TableMean; no assumption on levels and values)",
}


@dataclass(frozen=True)
class Release:
    """One private release of a mean and its privacy receipt.

    ``estimate`` and ``ci95`` are in the data's units; ``noise_scale`` is the Laplace scale in
    the data's units; ``saturation_level`` is tau* (math.inf if nothing saturates) for the
    population target and the cap level 1/(n eta) for the table target (users asking for at
    least it get the uniform weight 1/n); ``tiers`` is the receipt (a pandas DataFrame, one
    row per level or level bin: requested eps, the level the release ran at (``run_eps``:
    eps x level_factor), users, granted eps, OpenDP's privacy loss); ``n_users`` counts the
    users whose data is used. ``target``: "population" (ADPM) or "table" (TableMean);
    ``bias_bound`` (data units): the table target's worst-case bias (0 for the population
    target). ``ci95`` is proven to cover the target with probability >= 95%
    (hdp_core.intervals), clipped to [lo, hi]; ``half_width95`` is its half-width before
    clipping. ``spend``: the fraction of every user's level this release spent (1 without a
    ledger); ``dataset``: the name it was charged to; ``ledger_path`` (None: not tracked) and
    ``budget_remaining``: what remains of the dataset's budget after it. ``recorded``: None
    without a ledger, True when the ledger's history holds this release's result, False when
    the release was charged (the charge stands) but its result could not be recorded
    (``record_failure``: the error's type, e.g. "LedgerBusy"): keep this object's numbers.
    """

    estimate: float
    ci95: tuple[float, float]
    noise_scale: float
    saturation_level: float
    n_users: int
    tiers: Any
    engine: str
    lo: float
    hi: float
    data_sd: float | None
    half_width95: float
    n_excluded: int
    n_public: int
    outputs_midrange: bool
    plan: str
    rounding_bound: float
    noise_inflation: float
    notes: tuple[str, ...] = field(default=())
    target: str = "population"
    bias_bound: float = 0.0
    spend: float = 1.0
    level_factor: float = 1.0
    dataset: str | None = None
    ledger_path: str | None = None
    budget_remaining: float | None = None
    recorded: bool | None = None
    record_failure: str | None = None
    id_column: str | None = None
    people: Any = None
    """With an id (the per-person ledger): the receipt per level (DataFrame: eps, eps_max,
    asked, persons, run_min/max, lost_min/max, kept_min/max, saturated, exhausted; nats)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (inf as the string 'inf')."""

        def num(x):
            if isinstance(x, (float, np.floating)) and not math.isfinite(x):
                return "inf" if x > 0 else "-inf"
            if isinstance(x, np.integer):
                return int(x)
            if isinstance(x, np.floating):
                return float(x)
            return x

        rows = [{k: num(v) for k, v in r.items()} for r in self.tiers.to_dict("records")]
        return {
            "estimate": self.estimate,
            "ci95": list(self.ci95),
            "half_width95": self.half_width95,
            "noise_scale": self.noise_scale,
            "saturation_level": num(self.saturation_level),
            "n_users": self.n_users,
            "n_excluded": self.n_excluded,
            "n_public": self.n_public,
            "engine": self.engine,
            "range": [self.lo, self.hi],
            "data_sd": self.data_sd,
            "outputs_midrange": self.outputs_midrange,
            "plan": self.plan,
            "rounding_bound": self.rounding_bound,
            "noise_inflation": self.noise_inflation,
            "tiers": rows,
            "notes": list(self.notes),
            "target": self.target,
            "bias_bound": self.bias_bound,
            "spend": self.spend,
            "level_factor": self.level_factor,
            "dataset": self.dataset,
            "tracked": self.ledger_path is not None,
            "budget_remaining": self.budget_remaining,
            "recorded": self.recorded,
            "record_failure": self.record_failure,
            "tracking": tracking_note(self),
            "id_column": self.id_column,
            "people": None
            if self.people is None
            else [{k: num(v) for k, v in r.items()} for r in self.people.to_dict("records")],
        }

    def text(self, tier_names: Any = None) -> str:
        """A plain-text report: the estimate, its 95% interval and the receipt; with
        ``tier_names`` (one per receipt row, e.g. hdp_release.preview.tier_names_of of its
        eps column and the menu), the receipt's first column names each row's tiers."""
        import pandas as pd

        tau = "none" if math.isinf(self.saturation_level) else f"{self.saturation_level:.6g}"
        lines = [
            f"private mean: {self.estimate:.6g}   95% interval: [{self.ci95[0]:.6g}, "
            f"{self.ci95[1]:.6g}] (±{self.half_width95:.4g})",
            f"users used: {self.n_users:,} (public {self.n_public:,}; excluded eps=0: "
            f"{self.n_excluded:,})   range: [{self.lo:g}, {self.hi:g}]   engine: {self.engine}",
            f"Laplace noise scale: {self.noise_scale:.6g} (data units)   "
            f"{'tau*' if self.target == 'population' else 'cap level'}: {tau}   "
            f"plan: {self.plan}",
            f"target: {_TARGET_WORDS[self.target]}"
            + (f"   worst-case bias: ±{self.bias_bound:.4g}" if self.target == "table" else ""),
        ]
        if self.ledger_path is None:
            lines.append("privacy budget: not tracked (no ledger)")
        elif self.people is not None:
            lines.append(
                f"privacy budget: per person (id column {self.id_column!r}): each asked "
                f"{self.spend:.4g} of their level; receipt per level (nats):"
            )
            with pd.option_context("display.width", 200, "display.max_rows", 60):
                lines.append(self.people.to_string(index=False))
        else:
            left = "" if self.budget_remaining is None else f"; {self.budget_remaining:.4g} left"
            name = f" of dataset {self.dataset!r}" if self.dataset else ""
            lines.append(
                f"privacy budget: spent {self.spend:.4g} of every user's level{name}{left} "
                f"(run at eps x {self.level_factor:.15g})"
            )
            lines.append(DATASET_LEDGER_NOTE)
        if self.recorded is False:
            lines.append("WARNING: " + not_recorded_note(self))
        lines += list(self.notes)
        lines.append("privacy receipt (loss = OpenDP's privacy map at one user's sensitivity):")
        receipt = self.tiers
        if tier_names is not None:
            receipt = receipt.copy()
            receipt.insert(0, "tier", [str(n) or "-" for n in tier_names])
        with pd.option_context("display.width", 200, "display.max_rows", 60):
            lines.append(receipt.to_string(index=False))
        return "\n".join(lines)


NOT_TRACKED_NOTE = (
    "NOT TRACKED: no privacy ledger was used, so this release is charged nowhere and releasing "
    "the same people again spends their levels again."
)
DATASET_LEDGER_NOTE = (
    "Tracked per dataset (no id column): a subset, an edit or another column of the same "
    "people is new data to the ledger and starts a fresh budget; name an id column to charge "
    "each person what they lose."
)


def tracking_note(rel: Release) -> str | None:
    """The warning about how a release was tracked: NOT_TRACKED_NOTE without a ledger,
    DATASET_LEDGER_NOTE with a ledger but no id column, None with the per-person ledger."""
    if rel.ledger_path is None:
        return NOT_TRACKED_NOTE
    if rel.people is None:
        return DATASET_LEDGER_NOTE
    return None


_RECORD_FAILURE_WORDS = {
    "LedgerBusy": "the ledger was busy",
    "LedgerUnusable": "the ledger could not be used",
}


def not_recorded_note(rel: Release) -> str:
    """The sentence for a release whose result the ledger could not record
    (``rel.recorded is False``): what happened to the charge and what to keep. One source
    for the CLI's warning, Release.text() and the Release page's warning."""
    why = _RECORD_FAILURE_WORDS.get(rel.record_failure or "", "an error while writing it")
    return (
        f"the privacy ledger could not record this release's result in its history ({why}). "
        "The release was charged: its spend counts against the dataset's budget, and the "
        "ledger lists it as charged with no result. This is the only copy of the result: "
        "keep it (releasing again would spend more of the budget)."
    )


def _show(v: Any) -> str:
    if v is None:
        return "empty"
    try:
        x = float(v)
    except (TypeError, ValueError):
        return repr(v)
    return "NaN" if math.isnan(x) else f"{x:g}"
