"""The Tier designer's "k releases" with the per-person ledger (issue 30): saturated users lose
only the saturation level (tau*, or the table's cap) in each release, so after the k releases of
the equal split they still hold budget; how many more releases that affords, and at what error.
A plan from the levels and user counts only (per tier, in floats; the ledger itself is exact).
No Streamlit."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdp_app.views.formatting import plain
from hdp_core.intervals import release_error_95
from hdp_core.table_mean import table_mean
from hdp_core.validate import LEVEL_MIN
from hdp_release.plan import run_profile, tiers_solution

__all__ = ["MAX_EXTRA", "SlackPlan", "menu_slack", "slack_caption", "slack_plan"]

MAX_EXTRA = 200
"""The plan stops counting extra releases here (public users never run out)."""


@dataclass(frozen=True)
class SlackPlan:
    """k releases at eps / k each (the equal split), charged per person: ``kept``: the share of
    all users' levels still unspent after them; ``extra``: how many more releases at eps / k
    (capped by what each user has left) the kept budget affords (MAX_EXTRA: at least that);
    ``extra_error``: the 95% error (data units) of the first of them (None if none)."""

    k: int
    kept: float
    extra: int
    extra_error: float | None


def _granted(run: np.ndarray, ct: np.ndarray, target: str, sd_norm: float | None) -> np.ndarray:
    """Per tier, the level a release at ``run`` grants (min(run, tau*) or min(run, cap))."""
    use = (run > 0) & (ct > 0)
    if not use.any():
        return np.zeros_like(run)
    if target == "table":
        cap = float(table_mean(run_profile(run[ct > 0], ct[ct > 0])).cap_level)
    else:
        cap = float(tiers_solution(run[use], ct[use], sd_norm)[1])
    return np.where(run > 0, np.minimum(run, cap), 0.0)


def slack_plan(
    levels: Any,
    counts: Any,
    lo: float,
    hi: float,
    k: int,
    target: str = "population",
    data_sd: float | None = None,
) -> SlackPlan:
    """Replay k releases of the whole table at eps / k with per-person charges, then count the
    releases the kept budget affords (each asking eps / k, run at what remains; a user with
    less than LEVEL_MIN left sits out) until nobody has budget left."""
    lv = np.asarray(levels, dtype=float)
    ct = np.asarray(counts, dtype=np.int64)
    sd_norm = None if data_sd is None else float(data_sd) / (hi - lo)
    fin = np.isfinite(lv) & (lv > 0)
    rem = np.where(fin, lv, np.where(np.isinf(lv), math.inf, 0.0))
    ask = np.where(np.isinf(lv), math.inf, lv / k)
    total = float(np.dot(np.where(fin, lv, 0.0), ct))

    def step() -> tuple[np.ndarray, np.ndarray]:
        run = np.minimum(ask, rem)
        run = np.where(run < LEVEL_MIN, 0.0, run)
        return run, _granted(run, ct, target, sd_norm)

    def spend(rem: np.ndarray, g: np.ndarray) -> np.ndarray:  # public users keep inf
        with np.errstate(invalid="ignore"):  # inf - inf where rem is inf: discarded
            return np.where(np.isinf(rem), rem, np.maximum(rem - g, 0.0))

    for _ in range(k):
        run, g = step()
        rem = spend(rem, g)
    kept = float(np.dot(np.where(fin, rem, 0.0), ct)) / total if total else 0.0
    extra, err = 0, None
    while extra < MAX_EXTRA:
        run, g = step()
        if not (run[fin] > 0).any():
            break
        if err is None:
            err = float(release_error_95(run, ct, lo, hi, target, data_sd))
        rem = spend(rem, g)
        extra += 1
    return SlackPlan(int(k), kept, extra, err)


def menu_slack(menu: Any, k: int, target: str) -> SlackPlan:
    """:func:`slack_plan` of a Tier designer menu (its tiers, counts, range; the population
    target tuned to the menu's spread, as views.whatif.menu_release_errors)."""
    from hdp_core.design import tuned_sd

    prof = menu.to_profile()
    sd = tuned_sd(menu) if target == "population" else None
    return slack_plan(
        prof.levels,
        prof.counts,
        menu.low,
        menu.high,
        k,
        target,
        None if sd is None else sd * menu.width,
    )


def slack_caption(plan: SlackPlan, unit: str = "") -> str:
    """One sentence under a target's card: what the per-person ledger keeps after the k
    releases and how many more releases that affords."""
    u = f" {plain(unit)}" if unit else ""  # a unit is typed by the user: shown as text
    head = (
        f"With the per-person ledger (an id column), users whose weight is capped keep "
        f"{plan.kept:.0%} of all levels after these {plan.k} release{'s' if plan.k > 1 else ''}"
    )
    if plan.extra == 0 or plan.extra_error is None:
        return head + ": no more releases."
    more = f"{MAX_EXTRA:,}+" if plan.extra >= MAX_EXTRA else f"{plan.extra:,}"
    return (
        head + f": enough for {more} more (the first at ±{plan.extra_error:.3g}{u}, from the "
        "users with budget left), beside the equal split's "
        f"{plan.k}."
    )
