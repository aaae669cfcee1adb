"""Page-shaped numbers and sentences for issue 21 (no streamlit, no plotly): the what-if
"values differ by privacy level" (Simulation page) and the 95% error under each target (Tier
designer and Release page).

Every number comes from :func:`hdp_core.whatif.whatif` or
:func:`hdp_core.intervals.expected_error_95`, scaled to data units by R = hi - lo.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hdp_app.views.cards import Metric
from hdp_app.views.explain import (
    TARGET_POPULATION_TEXT,
    TARGET_TABLE_TEXT,
    WHATIF_WHY,
    approx_percent,
)
from hdp_app.views.fields import NumberField
from hdp_app.views.formatting import plain
from hdp_app.views.limits import Limit
from hdp_app.views.tour import delta_color
from hdp_core.design import tuned_sd
from hdp_core.distributions import Distribution
from hdp_core.estimators import METHOD_CLASSES, METHODS
from hdp_core.intervals import TARGETS, expected_error_95, release_error_95
from hdp_core.menu import Menu
from hdp_core.profile import as_profile
from hdp_core.units import range_width
from hdp_core.whatif import whatif, whatif_along

__all__ = [
    "MAX_RELEASES",
    "RELEASES",
    "WHATIF_COLUMNS",
    "TargetErrors",
    "WhatIfCurve",
    "curve_methods",
    "default_shift",
    "default_threshold",
    "menu_release_errors",
    "release_errors",
    "releases_caption",
    "shift_limits",
    "sm_left_out",
    "strict_share",
    "target_errors",
    "target_metrics",
    "targets_to_dict",
    "whatif_curve",
    "whatif_frame",
    "whatif_methods",
    "whatif_rows",
    "whatif_sentence",
]


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


# ---- the Simulation page's what-if section and the Tier designer's planning (issues 21, 22) --
WHATIF_SM_MAX_ENTRIES = 2_000
"""Largest number of profile entries (users, or tiers) for which the what-if includes SM: its
exact moments cost an array of entries x 800 points of a Laplace transform (about 0.1 s at
2,000 entries, 1.8 s at 20,000); every other method is a closed form in O(entries)."""

WHATIF_CURVE_POINTS = 25
"""Shifts on the x axis of the what-if chart (from the largest move down to the largest up)."""

BIAS, RMSE_T, RMSE_P = (
    "Bias vs the table's mean",
    "RMSE vs the table's mean",
    "RMSE vs the population mean",
)


def whatif_methods(shown: Sequence[str], entries: int, extra: Sequence[str] = ()) -> list[str]:
    """The methods the what-if reports, in registry order: ADPM and TableMean always, the
    ``shown`` ones and ``extra`` (e.g. "ADPM-tuned"); SM is left out when the profile has more
    than WHATIF_SM_MAX_ENTRIES entries (:func:`sm_left_out`)."""
    want = {"ADPM", "TableMean", *shown, *extra}
    if entries > WHATIF_SM_MAX_ENTRIES:
        want.discard("SM")
    return _order(sorted(want))


WHATIF_CURVE_SM_MAX_ENTRIES = 200
"""Largest number of profile entries for which the what-if chart (one what-if per shift)
includes SM (about 0.1 s for the whole chart at 200 entries)."""


def curve_methods(methods: Sequence[str], entries: int) -> list[str]:
    """The methods of the what-if chart: ``methods`` without SM when the profile has more than
    WHATIF_CURVE_SM_MAX_ENTRIES entries."""
    if entries <= WHATIF_CURVE_SM_MAX_ENTRIES:
        return list(methods)
    return [m for m in methods if m != "SM"]


def sm_left_out(shown: Sequence[str], entries: int) -> str:
    """The caption when SM is shown above but left out of the what-if's table or chart ('' when
    it is in both, or not shown)."""
    if "SM" not in shown or entries <= WHATIF_CURVE_SM_MAX_ENTRIES:
        return ""
    if entries > WHATIF_SM_MAX_ENTRIES:
        return (
            f"SM is left out here: this profile has {entries:,} entries (users or tiers) and "
            f"SM's exact error under the what-if is computed only up to "
            f"{WHATIF_SM_MAX_ENTRIES:,} (it costs seconds beyond)."
        )
    return (
        f"SM is in the table but not in the chart: this profile has {entries:,} entries "
        f"(users or tiers) and the chart includes SM only up to "
        f"{WHATIF_CURVE_SM_MAX_ENTRIES:,} (its exact error costs a little at every shift)."
    )


def shift_limits(dist: Distribution, lo: float = -0.5, hi: float = 0.5) -> tuple[float, float]:
    """(lowest, highest) shift in data units that keeps the moved users' mean in [lo, hi]:
    (-1/2 - mu) R and (1/2 - mu) R, mu the distribution's mean on the unit scale."""
    width = range_width(lo, hi)
    mu = float(dist.mean)
    return (-0.5 - mu) * width, (0.5 - mu) * width


def default_shift(dist: Distribution, lo: float = -0.5, hi: float = 0.5) -> float:
    """The shift offered first (data units): strict users 20% of the range lower, or as low
    as the range allows, rounded to 2 significant digits."""
    low, _ = shift_limits(dist, lo, hi)
    d = max(-0.2 * range_width(lo, hi), 0.9 * low)
    return float(f"{d:.2g}")


def default_threshold(eps: Any) -> float:
    """The level offered first as "stricter than": the users' median finite level (weighted
    by counts) when some users are below it, else the second smallest distinct level, else
    the only level (nobody is stricter, nothing moves); 1 when no finite positive level."""
    prof = as_profile(eps)
    lv, ct = prof.grouped()
    keep = np.isfinite(lv) & (lv > 0)
    lv, ct = lv[keep], ct[keep]
    if lv.size == 0:
        return 1.0
    order = np.argsort(lv)
    lv, ct = lv[order], ct[order].astype(np.float64)
    cum = np.cumsum(ct)
    med = float(lv[int(np.searchsorted(cum, cum[-1] / 2.0))])
    thr = med if med > lv[0] else (float(lv[1]) if lv.size > 1 else float(lv[0]))
    nice = _round_up(thr)  # 0.44, not 0.435916: the same users unless one sits in between
    return nice if nice < lv[-1] or lv.size == 1 else thr


def _round_up(x: float) -> float:
    """x rounded up to 2 significant digits."""
    e = math.floor(math.log10(x)) - 1
    return float(f"{math.ceil(x / 10.0**e) * 10.0**e:.2g}")


def strict_share(eps: Any, threshold: float) -> float:
    """Share of all users (0..1) stricter than ``threshold`` (eps < threshold): those moved."""
    prof = as_profile(eps)
    c = prof.counts.astype(np.float64)
    return float(c[prof.levels < float(threshold)].sum() / c.sum())


WHATIF_COLUMNS = {
    BIAS: ("Bias (table)", "Average of estimate minus the table's own mean, in the data's units."),
    RMSE_T: ("RMSE (table)", "Typical distance from the table's own mean, in the data's units."),
    RMSE_P: (
        "RMSE (population)",
        "Typical distance from the mean of the population the table is drawn from.",
    ),
}
"""The what-if table's short column headers (they fit at 1024 px) and their help."""


def whatif_frame(rows: Sequence[dict[str, Any]]) -> Any:
    """:func:`whatif_rows` as the displayed table (a pandas DataFrame, one row per method),
    under the short headers of WHATIF_COLUMNS."""
    return pd.DataFrame(
        {"Method": [r["Method"] for r in rows]}
        | {short: [r[key] for r in rows] for key, (short, _) in WHATIF_COLUMNS.items()}
    )


@dataclass(frozen=True)
class WhatIfCurve:
    """Each method's bias and RMSE against the table's mean (data units) along ``shifts``
    (data units): arrays of the same length as ``shifts``, NaN where a method is not
    computed."""

    shifts: Any
    bias: dict[str, Any]
    rmse: dict[str, Any]


def whatif_curve(
    eps: Any,
    dist: Distribution,
    threshold: float,
    lo: float = -0.5,
    hi: float = 0.5,
    methods: Sequence[str] | None = None,
    data_sd: float | None = None,
    points: int = WHATIF_CURVE_POINTS,
) -> WhatIfCurve:
    """:func:`hdp_core.whatif.whatif` along ``points`` shifts from the lowest to the highest
    :func:`shift_limits` allow (0 included), for the chart: bias and RMSE against the table's
    mean in data units."""
    width = range_width(lo, hi)
    a, b = shift_limits(dist, lo, hi)
    shifts = np.unique(np.concatenate([np.linspace(a, b, int(points)), [0.0]]))
    names = _order(methods)
    mu = float(dist.mean)
    unit = np.clip(shifts / width, -0.5 - mu, 0.5 - mu)  # no rounding past the range's end
    along = whatif_along(eps, dist, threshold, unit, names, data_sd)
    bias = {m: np.full(shifts.size, np.nan) for m in names}
    rmse = {m: np.full(shifts.size, np.nan) for m in names}
    for m in names:
        for j, r in enumerate(along[m]):
            if r.bias_table is not None and r.rmse_table is not None:
                bias[m][j] = r.bias_table * width
                rmse[m][j] = r.rmse_table * width
    return WhatIfCurve(shifts, bias, rmse)


MAX_RELEASES = 52
"""Most releases the Tier designer plans (a weekly report over a year)."""

RELEASES = Limit(1, MAX_RELEASES, integer=True)
"""What the Tier designer's "Releases (k)" input (and its link value td_releases) accepts."""


def release_errors(
    eps: Any, lo: float, hi: float, releases: int = 1, data_sd: float | None = None
) -> TargetErrors:
    """Both targets' 95% errors (data units) of EACH of ``releases`` releases when every
    user's budget is split into that many equal parts: each release runs at levels
    eps / releases (public users stay public, eps = 0 users stay out), so by sequential
    composition a user's total loss over all of them is their eps. The release's own
    planning function, :func:`hdp_core.intervals.release_error_95` (the levels scaled as
    the ledger scales them), for each target."""
    k = int(releases)
    if not 1 <= k <= MAX_RELEASES:
        raise ValueError(f"the number of releases must be between 1 and {MAX_RELEASES}, got {k}")
    prof = as_profile(eps)
    lv, ct = prof.levels, prof.counts
    return TargetErrors(
        release_error_95(lv, ct, lo, hi, "population", data_sd, k=k),
        release_error_95(lv, ct, lo, hi, "table", None, k=k),
    )


RELEASES_HELP = (
    "How many times you will publish this mean from the same users, e.g. 12 for a monthly "
    "report over a year. Each user's eps is their total budget: it is split into equal "
    "parts, so each release runs at eps / k (smaller, so more noise)."
)
"""The help of the Tier designer's "k releases" input."""


def menu_release_errors(menu: Menu, releases: int = 1) -> TargetErrors:
    """:func:`release_errors` of a Tier designer menu: its tiers and numbers of users, its
    range, and for the population target the spread ADPM is tuned to (design.tuned_sd: the
    menu's standard deviation, or the worst case when it has none)."""
    sd = tuned_sd(menu)
    return release_errors(
        menu.to_profile(), menu.low, menu.high, releases, None if sd is None else sd * menu.width
    )


TARGET_LABELS = {"population": "Population mean (ADPM)", "table": "Table's own mean (TableMean)"}
"""The Tier designer's card label of each target."""

TARGET_TEXTS = {"population": TARGET_POPULATION_TEXT, "table": TARGET_TABLE_TEXT}
"""What each target estimates and assumes (one sentence each, from views.explain)."""


def releases_caption(releases: int) -> str:
    """What the two cards show for ``releases`` releases."""
    if releases == 1:
        return "95% error of one release that spends every user's whole budget."
    return (
        f"95% error of each of {releases} releases: every user's eps is split into "
        f"{releases} equal parts, so each release runs at eps / {releases} and the "
        f"{releases} together spend exactly each user's eps."
    )


def target_metrics(
    single: TargetErrors, each: TargetErrors, releases: int, unit: str = ""
) -> list[Metric]:
    """Cards, population target then table target: the 95% error (data units) of each of
    ``releases`` releases, with (for more than one) its change against a single release (an
    increase is bad news: red; about 0% grey)."""
    u = f" {plain(unit)}" if unit else ""
    out = []
    for target in TARGETS:
        one, k = single.get(target), each.get(target)
        delta, color = None, "off"
        if releases > 1 and one > 0:
            delta = (
                f"{k / one:.3g}× one release"  # not "+1.1e+03%"
                if k >= 2 * one
                else f"{approx_percent(k, one)} vs one release"
            )
            color = delta_color(k, one)
        out.append(
            Metric(TARGET_LABELS[target], f"± {k:.4g}{u}", TARGET_TEXTS[target], delta, color)
        )
    return out


def targets_to_dict(single: TargetErrors, each: TargetErrors, releases: int) -> dict[str, Any]:
    """The JSON export's "targets" block: both targets' 95% errors (data units) for one
    release and for each of ``releases`` releases at eps / releases."""
    return {
        "error_95_one_release": {"population": single.population, "table": single.table},
        "releases": int(releases),
        "error_95_each_release": {"population": each.population, "table": each.table},
        "each_release_runs_at": f"eps / {int(releases)}",
    }


WHATIF_TOGGLE_HELP = (
    "Beyond the paper, which assumes a user's privacy level is unrelated to their value. "
    "Users stricter than the level you choose have their values shifted by the amount you "
    "choose; the others keep the distribution above. Shows each method's bias against the "
    "table's own mean (computed from formulas, no simulation)."
)
THRESHOLD_HELP = (
    "Users who asked for more privacy than this (smaller eps) are the ones whose values "
    "differ: users stricter than this level have values shifted by the amount on the right."
)
SHIFT_HELP = (
    "How far the strict users' values move on average, in the data's units (negative: "
    "lower). Values stay in the range: they are pulled towards its end, so the largest move "
    "is limited by the distribution's mean."
)


def whatif_setup_text(share: float, threshold: float, shift: float, unit: str = "") -> str:
    """What the what-if does to the profile: the share of users moved (0..1), or why nothing
    leans (nobody, or everybody, is stricter than ``threshold``)."""
    u = f" {plain(unit)}" if unit else ""
    if share <= 0:
        return (
            f"No user is stricter than eps = {threshold:g}: nobody's values move. Choose a "
            "larger level."
        )
    if share >= 1:
        return (
            f"Every user is stricter than eps = {threshold:g}: all values move together, so "
            "the table's mean moves with them and no method leans. Choose a smaller level."
        )
    return (
        f"{share:.1%} of the users are stricter than eps = {threshold:g}; their values are "
        f"{shift:+.4g}{u} away from the others' on average."
    )


__all__ += ["SHIFT_HELP", "THRESHOLD_HELP", "WHATIF_TOGGLE_HELP", "whatif_setup_text"]


# the Simulation page's what-if controls (issue 27: moved out of pages/simulation.py) ------
THRESHOLD = NumberField(
    "Stricter than eps", "sim_wi_eps", limit=Limit(1e-6, 1e6), format="%.4g", help=THRESHOLD_HELP
)
"""The "stricter than" level: seeded by the page (default_threshold), bounded here."""

SHIFT_STEPS = 100
"""The shift input moves in steps of 1/SHIFT_STEPS of its allowed span."""


@dataclass(frozen=True)
class ShiftControl:
    """The shift input for one data range: ``rng`` (lo, hi) of the data, the allowed shifts
    [``low``, ``high``] (:func:`shift_limits`), its ``step`` and its widget ``key`` (one key
    on [-0.5, 0.5], another in real units, so the two never mix)."""

    rng: tuple[float, float]
    low: float
    high: float
    step: float
    key: str

    def value(self, current: Any, dist: Distribution) -> float:
        """What the input shows: ``current`` (a float the visitor chose) clipped into
        [low, high], or :func:`default_shift` when there is none yet."""
        v = current if isinstance(current, float) else default_shift(dist, *self.rng)
        return min(max(v, self.low), self.high)


def shift_control(dist: Distribution, data_range: Any) -> ShiftControl:
    """The :class:`ShiftControl` for ``dist`` on ``data_range`` ((lo, hi), or None for the
    unit scale [-0.5, 0.5])."""
    rng = (-0.5, 0.5) if data_range is None else (float(data_range[0]), float(data_range[1]))
    low, high = shift_limits(dist, *rng)
    key = "sim_wi_shift" if data_range is None else "sim_wi_shift_real"
    return ShiftControl(rng, low, high, (high - low) / SHIFT_STEPS, key)


WHATIF_FORMATS = {short: "%.4g" for short, _ in WHATIF_COLUMNS.values()}
WHATIF_HELPS = {short: text for short, text in WHATIF_COLUMNS.values()}
"""The what-if table's number format and help per column (its short header)."""

__all__ += ["THRESHOLD", "WHATIF_FORMATS", "WHATIF_HELPS", "ShiftControl", "shift_control"]
