"""A real private release of a mean under per-user privacy levels (ADPM, Algorithm 1, or the
table's own mean, hdp_core.table_mean), tracked by a privacy ledger when one is given.

API (for pages and scripts; every number in data units unless said):

* ``release_mean(source, *, value, eps, lo, hi, engine="duckdb", data_sd=None, tiers=None,
  target="population", ledger=None, spend=1, dataset=None) -> Release``.
  ``target``: "population" (ADPM; assumes a user's level does not depend on their value) or
  "table" (TableMean: the table's own mean over every row, eps = 0 rows included; no
  assumption). ``ledger``: None (nothing tracked), a ``PrivacyLedger`` or a path; ``spend``
  in (0, 1] (float, 'p/q' text or Fraction; the release runs at levels eps x spend);
  ``dataset``: a name charged besides the content fingerprint (only with a ledger). Raises
  ReleaseError (BadCellError, ColumnNameError) for bad input, BudgetExceeded (fields
  identity, spent, remaining, requested: exact Fractions) when the budget would pass 1,
  LedgerBusy / LedgerUnusable when the ledger cannot be used: all before anything is
  computed from the values, nothing charged. With a ledger the order is: parse the spend,
  open the ledger (a corrupt one refuses here), open the source, the ledger's check (two
  queries: the content fingerprint, and counts of rows, bad levels, bad values, levels out
  of range and usable rows, so every refusal the release would make from the cells' kinds
  comes first), charge, release, record (on failure after charging: record_failure,
  re-raise; the charge stays). If recording the result fails (e.g. LedgerBusy) the charge
  stays and the release, which was paid for, is still returned, with ``recorded=False``
  and ``record_failure`` (the error's type); :func:`not_recorded_note` says so in words.
* ``Release`` fields: estimate, ci95 (lo <= a <= b <= hi, proven >= 95% coverage of the
  target, hdp_core.intervals), half_width95 (before clipping), noise_scale, saturation_level
  (tau* for "population", the cap level 1/(n eta) for "table"), n_users (data used),
  n_excluded (eps = 0), n_public, tiers (receipt DataFrame: eps, eps_max (requested),
  run_eps, run_eps_max (the levels the release ran at = eps x level_factor), users,
  granted_eps, granted_eps_max, privacy_loss, privacy_loss_max (OpenDP's map), saturated
  (ADPM: granted tau*; table: granted the cap, weight 1/n)), engine, lo, hi, data_sd,
  outputs_midrange, plan, rounding_bound, noise_inflation, notes, target, bias_bound (table:
  worst-case |E estimate - table mean|; 0 for population), spend (float), level_factor,
  dataset, ledger_path (None: not tracked), budget_remaining (float, after this release),
  recorded (None: no ledger; True: its result is in the ledger's history; False: charged,
  but the result could not be recorded), record_failure (the error's type, or None).
  ``to_dict()`` (JSON-ready: adds "tracked"; never the fingerprint) and ``text()``.
* ``preview_tiers(levels, counts, lo, hi, data_sd=None, target="population", spend=1)
  -> TierPreview`` (tiers, saturation_level, noise_scale, half_width95, outputs_midrange,
  target, bias_bound): what a release of these level counts would give, before any data.
* ``hdp_core.intervals.release_error_95(levels, counts, lo, hi, target="population",
  data_sd=None, spend=1, k=1)``: the 95% error (data units) of one of k releases that split
  ``spend`` equally (levels eps x spend / k): the Tier designer's "k releases" figure.
* CLI: ``python -m hdp_core.release PATH --value C --eps C --range LO HI [--target
  population|table] [--ledger PATH --spend F --dataset NAME] [--format json]`` and
  ``python -m hdp_core.release --list-ledger PATH [--dataset NAME] [--format json]``.

The table target on the plans below: on the tiers plan (exact levels) the weights are
hdp.table_mean's on the run levels, min(1/n, eps eta), each user granted min(eps, cap) with
the cap the largest float <= 1/(n eta); the estimate is mid + sum_j w_j (S_j - c_j mid)
computed exactly like ADPM's (relative to lo, in [0, R]), so the same rounding bound,
inflation kappa and per-row OpenDP check apply with ||r||_1 replaced by 1/eta. On the
level-bins plan (per-user levels) eta is TableMean's on the levels floored to each bin's
smallest level; users of bins wholly below the cap keep their own (2^-42 grid) level, bins
wholly above get the cap, the one straddling bin gets its smallest level; the bias bound
and the interval are those of the weights actually used (B = (1 - sum of weights) / 2).
The DuckDB bracket pass is ADPM's and is not used for the table target (its tiers pass is).

``release_mean(source, value=..., eps=..., lo=..., hi=...)`` reads one row per user (a value
and the privacy level eps that user asked for), clamps the values to the public range
[lo, hi] (by design: the range must be fixed before seeing the data; out-of-range values are
not an error) and releases

    lo + R * sum_i w_i y_i / Q + Laplace(b),   R = hi - lo,

with ADPM's weights w_i = r_i / ||r||_1, r_i = min(eps_i, tau*) (the saturation lemma), and
b = R (1 + kappa) / ||r||_1 (Theorem 2's noise, inflated by a tiny documented kappa, below).
User i's privacy loss is w_i R / b <= r_i <= eps_i (the appendix's Laplace-mechanism lemma).
When ADPM's worst case passes 1/4 of the squared range the answer is the mid-range, which uses
no data (as the paper's ADPM outputs 0 on [-1/2, 1/2]).

How it is computed (the plan; see hdp_core.release_engines for the queries):

* **Fast plan (DuckDB).** The levels of the first 50,000 rows (and the row count, from Parquet
  metadata) steer the plan; they never enter the answer. Few distinct levels (<= 32): one scan
  grouped by which of those levels a row has (a small-integer key, a perfect hash table)
  gives per level the users and the exact integer sum of the clamped values; a row with any
  other level, a bad level or a missing/NaN/infinite value (a NULL grid value, counted in the
  same scan) sends the release to the general plan below. Many levels: a bracket [a, b) for
  tau* is estimated from the sample (G scaled by rows / sample, slack 5% + 5/sqrt(sample
  levels below tau*)); one scan groups the rows into the levels below a (one class, exact
  sums of q and q y), 256 equal sub-bins of [a, b) (the same sums, min and max level), the
  finite levels from b (one class, users and sum of y only: saturated), public and zero
  levels. The exact walk below then runs on these groups; if tau* is not inside the bracket
  (the walk stops inside, or passes, a class) the general plan runs instead, so the sample
  only costs time, never correctness. When tau* falls inside a sub-bin of several levels, it
  is isolated as in the general plan (below). Memory: a few hundred groups. Every data sum is
  the same exact integer as in the general plan, so both plans give the same release.
* General plan (Spark, and DuckDB's fallback): one grouped aggregate in the engine (never
  a Python loop over rows) groups users by their level's bin (bins of relative width
  e^(1/64), about 1.6%) and returns per bin the users, eps sums and exact integer sums of
  the clamped values on a grid of 2^30 steps.
  Its memory is the number of non-empty bins, which does not grow with the rows.
* **Few levels** (every bin holds one distinct level): the bins are the tiers; tau* and the
  weights come from ``hdp.adpm`` on ``EpsilonProfile.from_tiers(levels, counts)``. One pass.
* **Per-user continuous levels**: tau* is found by walking the bins with the exact G function
  of the saturation lemma (G(t) = sum_{eps < t} eps (t - eps) crosses 8 at tau*): a bin whose
  smallest level already has G >= 8 starts the saturated users; the one bin in which G crosses
  8 is isolated: if it holds at most FETCH_USERS (65,536) users, one more query restricted to
  its level range fetches its distinct levels; otherwise one such query splits it into 256
  equal sub-bins with the same sums, and the walk goes on (each split narrows the range
  256-fold, so a few passes suffice; at most MAX_PASSES). Users below it are summed per bin,
  users above it only counted. Levels are taken on a grid of 2^-42 (rounded down, capped at
  2^20 nats) so that sum_i r_i y_i is an exact integer sum; granted privacy only shrinks.
  Memory: the bins plus at most 65,536 fetched levels, whatever the number of rows.

Rounding. Every data-dependent sum is an exact integer sum; the weighted mean *relative to
lo*, m = R sum_i w_i y_i / Q in [0, R], is formed in exact rational arithmetic
(fractions.Fraction) from the engine's integers and the weights' floats, and rounded to a
float once. The noise is added to m and lo is added afterwards (post-processing, no privacy
cost). So the value handed to the noise differs from the exact function of the data by at
most delta = 2^-52 R for *every* data set (a rounding of a number in [0, R]; 2^-53 R would
do), and its sensitivity to user i is at most w_i R + 2 delta. That bound is added to every
level's sensitivity in the privacy check; the noise is inflated by kappa = 2 c / r_min +
2^-40 with c = 2 delta ||r||_1 / R = 2^-51 ||r||_1, so that the check passes with the ADPM
weights (kappa is reported). kappa does not depend on lo: the noise scale is ADPM's
R / ||r||_1 within a relative 2^-49 ||r||_1 / r_min + 2^-40, wherever the range sits.

Noise and privacy check (fail closed). The noise is OpenDP's Laplace measurement (make_laplace
over a float atom domain with absolute distance; its floating-point-safe sampler). For every
row of the receipt OpenDP's privacy map of that measurement at the sensitivity of one user of
that row (w R + 2 delta) must not exceed the row's requested eps; otherwise a ReleaseError names
the level and nothing is released. A receipt row is one level (few levels) or, for per-user
levels, an interval of levels: the unsaturated levels of one 1/8 decade (a row's levels span
at most a factor 10^(1/8) e^(1/64), about 1.35: its entries start in one 1/8 decade and the
last may reach one bin, at most e^(1/64) wide, beyond; the fast plan's classes below its
bracket are 1/8 decades themselves), all saturated finite levels, public users.

Why the check at a row's smallest level covers every level in it. With b = R (1 + kappa) /
||r||_1 a user granted r has loss (r + c) / (1 + kappa); the grant r is min(eps, tau*) on the
tiers plan and on the level-bins plan min(floor_grid(eps), tau*) with tau* never above the
smallest saturated grid level, so r <= eps always. "loss - eps is nonincreasing in eps" is
*not* true as written: levels are floored to a 2^-42 grid, so r (and the loss) is a step
function of eps and loss - eps jumps up at every grid point. What holds instead is that
loss - r = (c - kappa r) / (1 + kappa) is nonincreasing in r and is <= 0 at r = r_min
(kappa >= 2 c / r_min), so loss <= r <= eps for every user whatever their level; the map is
checked at each row's smallest and largest grant (fail closed against OpenDP's own
rounding, which the 2^-40 in kappa absorbs).

Both plans and both engines grant min(eps, tau*) and so can never refuse: the check passes
for any release computed as above, on DuckDB and Spark alike. tau* itself may differ between
the two plans in its last bits (the tiers plan solves on the float levels, the level-bins
plan on the 2^-42 grid, with float sums of squared levels); the relative difference is of
order 2^-42 / eps_min plus float rounding, and it changes weights, never whether a release is
allowed.

What is released: the noisy estimate, and public things (the range, the levels and their user
counts, tau* or the cap, the noise law, a 95% interval from the noise law and the worst-case
or declared spread, or the bias bound). Nothing else is computed from the data; in particular
not how many values were clamped. eps = 0 users are excluded (the table target counts them
in n with weight 0); eps = inf users are public (used as saturated users).

Intervals (issue 21). The normal approximation of earlier versions under-covers; ci95 now
comes from hdp_core.intervals: population: population_half_width (its proven bounds (a),
(b), (c), from the sum of squared weights and the largest weight, at the declared spread or
the worst case); table: table_half_width(bias bound, eta). The half-width is that times R,
plus 2 delta and half an ulp of max(|lo|, |hi|) (the rounding of the pre-noise value and of
adding lo), clipped to [lo, hi] (interval_in_range).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from .adpm import adpm, data_sd_constant
from .errors import BadCellError
from .intervals import (
    TARGETS,
    interval_in_range,
    population_half_width_moments,
    table_half_width,
)
from .profile import EpsilonProfile, out_of_range
from .release_engines import (
    FETCH_USERS,
    MAX_TIERS,
    NUMBER_REASONS,
    PUBLIC_BIN,
    Q_CAP,
    QE,
    RECEIPT_ROWS_PER_DECADE,
    SUB_BINS,
    ZERO_BIN,
    Histogram,
    Q,
    ReleaseError,
    not_finite_words,
    open_source,
)
from .table_mean import table_mean
from .tables import out_of_range_words
from .validate import (
    LEVEL_MAX,
    LEVEL_MIN,
    PUBLIC_WORDS,
    cell_reason,
    parse_level,
    tier_key,
)
from .validate import reason_words as kind_words

__all__ = [
    "Release",
    "ReleaseError",
    "TierPreview",
    "check_values",
    "level_counts",
    "not_recorded_note",
    "preview_tiers",
    "release_mean",
    "tier_levels",
    "tier_names_of",
]

_U = 2.0**-52
_SAT = 1.0 - 1e-12  # as hdp_core.adpm: a level exactly at the threshold counts as saturated
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
        }

    def text(self) -> str:
        """A plain-text report: the estimate, its 95% interval and the receipt."""
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
        else:
            left = "" if self.budget_remaining is None else f"; {self.budget_remaining:.4g} left"
            name = f" of dataset {self.dataset!r}" if self.dataset else ""
            lines.append(
                f"privacy budget: spent {self.spend:.4g} of every user's level{name}{left} "
                f"(run at eps x {self.level_factor:.17g})"
            )
        if self.recorded is False:
            lines.append("WARNING: " + not_recorded_note(self))
        lines += list(self.notes)
        lines.append("privacy receipt (loss = OpenDP's privacy map at one user's sensitivity):")
        with pd.option_context("display.width", 200, "display.max_rows", 60):
            lines.append(self.tiers.to_string(index=False))
        return "\n".join(lines)


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


# ------------------------------------------------------------------------------ checks
def _check_range(lo: Any, hi: Any) -> tuple[float, float]:
    try:
        lo_f, hi_f = float(lo), float(hi)
    except (TypeError, ValueError):
        raise ReleaseError(f"the range needs two numbers lo < hi, got {lo!r}, {hi!r}") from None
    if not (math.isfinite(lo_f) and math.isfinite(hi_f)):
        raise ReleaseError(f"the range [{lo_f:g}, {hi_f:g}] must be finite")
    if not lo_f < hi_f:
        raise ReleaseError(f"the range needs lo < hi, got lo = {lo_f:g}, hi = {hi_f:g}")
    if not math.isfinite(hi_f - lo_f):
        raise ReleaseError("the range is too wide for floating point")
    return lo_f, hi_f


def _check_sd(data_sd: Any, lo: float, hi: float) -> float | None:
    """data_sd in data units -> spread on [-1/2, 1/2] (None: worst case, the paper's ADPM)."""
    if data_sd is None:
        return None
    try:
        s = float(data_sd)
    except (TypeError, ValueError):
        raise ReleaseError(
            f"data_sd must be a number (a standard deviation), got {data_sd!r}"
        ) from None
    if not (math.isfinite(s) and s > 0):
        raise ReleaseError(f"data_sd must be a positive number, got {s:g}")
    sn = s / (hi - lo)
    if sn > 0.5:
        raise ReleaseError(
            f"data_sd = {s:g} exceeds half the range ({(hi - lo) / 2:g}), "
            "the largest spread data in the range can have"
        )
    try:
        data_sd_constant(sn)  # the one rule for a spread (2 / s^2 must be a finite number)
    except ValueError:
        raise ReleaseError(
            f"data_sd = {s:g} is too small for the range [{lo:g}, {hi:g}] (the tuned "
            "constant 2 / s^2 overflows); leave it out for the worst case"
        ) from None
    return sn


def _const(sd_norm: float | None) -> float:
    """The constant of Algorithm 1: 8 (the paper), or 2 / s^2 for a declared spread s."""
    return 8.0 if sd_norm is None else 2.0 / (sd_norm * sd_norm)


def _tiers_solution(levels: np.ndarray, counts: np.ndarray, sd_norm: float | None):
    """r per tier and tau* from hdp_core's ADPM on the tiers profile (the tuned variant
    ``hdp.adpm(prof, data_sd=s)`` when a spread is declared)."""
    sol = adpm(_run_profile(levels, counts), data_sd=sd_norm)
    return np.asarray(sol.r, dtype=float), float(sol.saturation_level)


def _walk(lo_l, hi_l, s1, s2, c: float):
    """First saturated entry of ascending entries (level range [lo_l, hi_l], sums s1, s2 of
    their levels): returns (j, kind, P1, P2) with kind 'at' (entry j's smallest level has
    G >= c: it and everything after saturate), 'inside' (G crosses c inside entry j: fetch
    its levels), or 'none'; P1, P2 the sums over entries before j. G(t) = sum_{eps<t} eps
    (t - eps) is built from nonnegative increments (as in hdp_core.adpm)."""
    g = p1 = p2 = 0.0
    prev = None
    for j in range(len(lo_l)):
        if prev is not None:
            g += (lo_l[j] - prev) * p1
        if g >= c * _SAT:
            return j, "at", p1, p2
        if hi_l[j] > lo_l[j]:
            gh = g + (hi_l[j] - lo_l[j]) * p1 + max(hi_l[j] * s1[j] - s2[j], 0.0)
            if gh >= c * _SAT:
                return j, "inside", p1, p2
            g, prev = gh, hi_l[j]
        else:
            prev = lo_l[j]
        p1 += s1[j]
        p2 += s2[j]
    return len(lo_l), "none", p1, p2


# ------------------------------------------------------------------------------ plans
@dataclass
class _Row:
    eps: float  # smallest requested level in the row
    eps_max: float
    users: int
    r_min: float  # granted level of the row's smallest level
    r_max: float
    w_num: Fraction  # contribution to sum_i r_i y_i
    s1: Fraction  # contribution to ||r||_1
    s2: float  # contribution to ||r||_2^2
    saturated: bool


def _public_row(h: Histogram, i: int, level: float, flevel: Fraction) -> _Row:
    """The receipt row of the public users in histogram group ``i``: granted ``level`` (tau*
    for ADPM, the cap for TableMean; ``flevel`` is it as an exact fraction), saturated."""
    n = int(h.n[i])
    return _Row(
        math.inf,
        math.inf,
        n,
        level,
        level,
        flevel * h.sy[i],
        flevel * n,
        level * level * float(n),
        True,
    )


def _level_rows(
    levels: np.ndarray, counts: np.ndarray, sy: list, r: np.ndarray, cut: float
) -> list[_Row]:
    """One receipt row per distinct level (the few-levels plan): granted level r[j], the exact
    sums of r y and r over its users (from the engine's integer sum sy[j]), and saturated when
    the level is at least ``cut`` (tau* for ADPM, the cap for TableMean)."""
    rows = []
    for j in range(levels.size):  # k <= MAX_TIERS levels, each with exact rational sums
        rj = float(r[j])
        fr = Fraction(rj)
        lv, c = float(levels[j]), int(counts[j])
        rows.append(
            _Row(lv, lv, c, rj, rj, fr * sy[j], fr * c, rj * rj * float(c), bool(lv >= cut))
        )
    return rows


def _plan_tiers(h: Histogram, fin: np.ndarray, pub: np.ndarray, sd_norm):
    levels = np.concatenate([h.emin[fin], np.full(int(pub.sum()), math.inf)])
    counts = np.concatenate([h.n[fin], h.n[pub]])
    sy = [h.sy[i] for i in np.flatnonzero(fin)] + [h.sy[i] for i in np.flatnonzero(pub)]
    r, tau = _tiers_solution(levels, counts, sd_norm)
    return _level_rows(levels, counts, sy, np.asarray(r, dtype=np.float64), tau), tau


def _run_profile(levels: Any, counts: Any) -> EpsilonProfile:
    """A tiers profile of the levels a release runs at. Levels come from the engine (already
    checked against the supported range at the requested levels); at a spend below 1 they
    may lie below LEVEL_MIN, which is a rule for what users ask, not for the mathematics."""
    lv = np.asarray(levels, dtype=np.float64)
    ct = np.asarray(counts, dtype=np.int64)
    return EpsilonProfile._make(lv, ct, True, None, None)


def _cap_below(eta: float, n: int) -> float:
    """The largest float <= 1 / (n eta) (exactly): a user granted it has weight <= 1/n."""
    cap = Fraction(1) / (n * Fraction(eta))
    f = float(cap)
    if Fraction(f) > cap:
        f = math.nextafter(f, 0.0)
    return f


def _plan_tiers_table(h: Histogram, fin: np.ndarray, pub: np.ndarray, n_zero: int):
    """The table target on exact levels: hdp.table_mean on the tiers (eps = 0 users counted
    in n, with weight 0); user j is granted min(eps_j, cap) with cap <= 1/(n eta), so the
    weights r eta never pass 1/n. Returns (rows, cap, norm = 1/eta)."""
    levels = np.concatenate([h.emin[fin], np.full(int(pub.sum()), math.inf)])
    counts = np.concatenate([h.n[fin], h.n[pub]])
    sy = [h.sy[i] for i in np.flatnonzero(fin)] + [h.sy[i] for i in np.flatnonzero(pub)]
    n = int(counts.sum()) + n_zero
    lv = np.append(levels, 0.0) if n_zero else levels
    ct = np.append(counts, n_zero) if n_zero else counts
    eta = float(table_mean(_run_profile(lv, ct)).noise_scale)
    cap = _cap_below(eta, n)
    r = np.minimum(np.asarray(levels, dtype=np.float64), cap)
    return _level_rows(levels, counts, sy, r, cap), cap, 1 / Fraction(eta)


def _plan_bins_table(h: Histogram, fin: np.ndarray, pub: np.ndarray, n_zero: int):
    """The table target on per-user levels known through level bins (relative width
    e^(1/64)). eta is TableMean's on the levels floored to each bin's smallest level (on the
    2^-42 grid); then each user below the cap 1/(n eta) is granted their own level on the
    2^-42 grid (exact sums of q and q y: nothing lost), each user of a bin wholly at or above
    the cap gets the cap (weight 1/n at most), and the one bin that straddles the cap is
    granted its smallest level (a loss of at most 1.6% of those users' levels). Privacy:
    every grant is at most the user's level. The bias bound is that of these weights.
    Returns (rows, cap, norm = 1/eta)."""
    idx = np.flatnonzero(fin)
    qmin = np.array([_qlevel(h.emin[i]) for i in idx])
    qmax = np.array([_qlevel(h.emax[i]) for i in idx])
    n_pub = int(h.n[pub].sum())
    counts = h.n[idx]
    n = int(counts.sum()) + n_pub + n_zero
    lv = np.concatenate([qmin, [math.inf, 0.0]])
    ct = np.concatenate([counts, [n_pub, n_zero]])
    keep = ct > 0
    eta = float(table_mean(_run_profile(lv[keep], ct[keep])).noise_scale)
    cap = _cap_below(eta, n)
    fcap = Fraction(cap)
    rows = []
    for k, i in enumerate(idx):
        users = int(h.n[i])
        if qmax[k] <= cap:  # every user below the cap: their own grid level
            rows.append(
                _Row(
                    float(h.emin[i]),
                    float(h.emax[i]),
                    users,
                    float(qmin[k]),
                    float(qmax[k]),
                    Fraction(h.sqy[i], QE),
                    Fraction(h.sq[i], QE),
                    float(h.q2[i]),
                    False,
                )
            )
        else:
            r = cap if qmin[k] >= cap else float(qmin[k])
            fr = Fraction(r)
            rows.append(
                _Row(
                    float(h.emin[i]),
                    float(h.emax[i]),
                    users,
                    r,
                    r,
                    fr * h.sy[i],
                    fr * users,
                    r * r * users,
                    bool(qmin[k] >= cap),
                )
            )
    rows += [_public_row(h, int(i), cap, fcap) for i in np.flatnonzero(pub)]
    return _merge_rows(rows), cap, 1 / Fraction(eta)


MAX_PASSES = 64
"""At most this many passes over the table isolate tau* (each refinement narrows a bin's level
range 256-fold; a handful suffice for any table of doubles)."""


def _qlevel(e: float) -> float:
    return math.floor(min(e, Q_CAP) * QE) / QE


def _entry(
    emin: Any,
    emax: Any,
    users: Any,
    sq: int,
    sqy: int,
    q2: Any,
    sy: int,
    key: int | None = None,
    q: int | None = None,
) -> list[Any]:
    """One entry of the walk: users with levels in [emin, emax] and their exact sums (``q``:
    the group's one quantized level, when it is a single fetched level; ``key``: its bin)."""
    qmin, qmax = (q / QE, q / QE) if q is not None else (_qlevel(emin), _qlevel(emax))
    return [float(emin), float(emax), int(users), qmin, qmax, sq, sqy, float(q2), sy, key]


def _plan_bins(h: Histogram, src, fin: np.ndarray, pub: np.ndarray, c: float):
    # entries: (eps_min, eps_max, users, qmin, qmax, sq (int), sqy (int), q2, sy, bin or None)
    ent = [
        _entry(h.emin[i], h.emax[i], h.n[i], h.sq[i], h.sqy[i], h.q2[i], h.sy[i], int(h.bin[i]))
        for i in np.flatnonzero(fin)
    ]
    passes = 1
    while True:
        j, kind, p1, p2 = _walk(
            [e[3] for e in ent],
            [e[4] for e in ent],
            [e[5] / QE for e in ent],
            [e[7] for e in ent],
            c,
        )
        if h.coarse and (
            (kind == "inside" and ent[j][9] in h.coarse)
            or (kind == "none" and any(e[9] in h.coarse_above for e in ent))
        ):
            raise _BracketMissed  # tau* is not inside the fast plan's bracket
        if kind != "inside":
            break
        passes += 1
        if passes > MAX_PASSES:
            raise ReleaseError(
                f"tau* could not be isolated in {MAX_PASSES} passes over the table (levels "
                "too close together); round the eps column"
            )
        if ent[j][2] > FETCH_USERS:  # too many users to fetch level by level: refine the bin
            ent[j : j + 1] = [
                _entry(r[6], r[7], r[1], int(r[3]), int(r[4]), r[5], int(r[2] or 0))
                for r in src.refine(ent[j][0], ent[j][1], SUB_BINS)
            ]
            continue
        q, n, sy, emn, emx = src.fetch(ent[j][0], ent[j][1])
        ent[j : j + 1] = [
            _entry(
                emn[k],
                emx[k],
                n[k],
                int(q[k]) * int(n[k]),
                int(q[k]) * sy[k],
                (int(q[k]) / QE) * (int(q[k]) / QE) * float(n[k]),
                sy[k],
                q=int(q[k]),
            )
            for k in range(q.size)
        ]
    has_public = bool(pub.any())
    tau = (p2 + c) / p1 if (kind == "at" or has_public) else math.inf
    if kind == "at":  # granted min(eps, tau*): never above the smallest saturated level
        tau = min(tau, ent[j][3])
    ftau = Fraction(tau) if math.isfinite(tau) else None
    rows = []
    for k, e in enumerate(ent):
        if k < j:
            rows.append(
                _Row(
                    e[0],
                    e[1],
                    e[2],
                    e[3],
                    e[4],
                    Fraction(e[6], QE),
                    Fraction(e[5], QE),
                    e[7],
                    False,
                )
            )
        else:  # saturated entries exist only when tau* is finite
            assert ftau is not None
            rows.append(
                _Row(e[0], e[1], e[2], tau, tau, ftau * e[8], ftau * e[2], tau * tau * e[2], True)
            )
    if pub.any():
        assert ftau is not None  # public users make tau* finite
        rows += [_public_row(h, int(i), tau, ftau) for i in np.flatnonzero(pub)]
    return _merge_rows(rows), tau, passes


def _merge_rows(rows: list[_Row]) -> list[_Row]:
    """The per-user-levels receipt: the unsaturated bins merged into rows of 1/8 decade of
    requested eps, the saturated finite levels into one row (all granted tau*), public users
    into one row. The privacy check at a merged row's smallest level still covers every level
    in it: loss(eps) - eps is nonincreasing in eps over the whole range (module docstring),
    so the smallest level of any interval is its tightest. Fewer rows: a receipt a person can
    read, and one OpenDP map call per row instead of per bin."""

    def group(r: _Row) -> tuple[int, float]:
        if math.isinf(r.eps):
            return (2, 0.0)
        if r.saturated:
            return (1, 0.0)
        return (0, math.floor(math.log10(r.eps) * RECEIPT_ROWS_PER_DECADE))

    out: list[_Row] = []
    last = None
    for r in rows:
        g = group(r)
        if out and g == last:
            m = out[-1]
            out[-1] = _Row(
                min(m.eps, r.eps),
                max(m.eps_max, r.eps_max),
                m.users + r.users,
                min(m.r_min, r.r_min),
                max(m.r_max, r.r_max),
                m.w_num + r.w_num,
                m.s1 + r.s1,
                m.s2 + r.s2,
                m.saturated,
            )
        else:
            out.append(r)
        last = g
    return out


# ------------------------------------------------------------------------------ noise
def _measurement(scale: float):
    """OpenDP's Laplace measurement on one float (absolute distance) at ``scale``."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=scale
    )


def _noise_scale(width: Fraction, s1: Fraction, kappa: float) -> float:
    """Laplace scale in data units, R (1 + kappa) / ||r||_1, rounded up."""
    return math.nextafter(float(width * (1 + Fraction(kappa)) / s1), math.inf)


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


def _receipt(rows: list[_Row], meas, width: Fraction, s1: Fraction, delta: float):
    """Privacy check, failing closed: OpenDP's map at each row's sensitivity must not exceed
    the row's requested eps. Returns the receipt columns; raises ReleaseError naming the row."""
    loss, loss_max = [], []
    for row in rows:
        out = []
        for r in (row.r_min, row.r_max):
            d_in = _up(_up(float(Fraction(r) * width / s1)) + 2.0 * delta)
            out.append(float(meas.map(d_in)))
        if not (out[0] <= row.eps and out[1] <= row.eps_max):
            lvl = "public (inf)" if math.isinf(row.eps) else f"{row.eps:.6g}"
            raise ReleaseError(
                f"privacy check failed for the level eps = {lvl} ({row.users:,} users): "
                f"OpenDP's privacy map gives a loss of {out[0]:.6g} > {lvl}; nothing was "
                "released"
            )
        loss.append(out[0])
        loss_max.append(out[1])
    return loss, loss_max


def _requested(run: float, factor: float) -> float:
    """The requested level behind a run level (run = fl(eps x factor)): run / factor, the
    level itself when factor is 1."""
    return run if factor == 1.0 else run / factor


def _frame(rows: list[_Row], loss, loss_max, factor: float = 1.0):
    """The receipt: per row the requested levels (eps, eps_max), the levels the release ran
    at (run_eps = eps x factor, what OpenDP's check bounds), users, granted levels and
    OpenDP's privacy loss."""
    import pandas as pd

    return pd.DataFrame(
        {
            "eps": [_requested(r.eps, factor) for r in rows],
            "eps_max": [_requested(r.eps_max, factor) for r in rows],
            "run_eps": [r.eps for r in rows],
            "run_eps_max": [r.eps_max for r in rows],
            "users": [r.users for r in rows],
            "granted_eps": [r.r_min for r in rows],
            "granted_eps_max": [r.r_max for r in rows],
            "privacy_loss": loss,
            "privacy_loss_max": loss_max,
            "saturated": [r.saturated for r in rows],
        }
    )


# ------------------------------------------------------------------------------ main entry
def release_mean(
    source: Any,
    *,
    value: str,
    eps: str,
    lo: float,
    hi: float,
    engine: str = "duckdb",
    data_sd: float | None = None,
    tiers: Any = None,
    target: str = "population",
    ledger: Any = None,
    spend: Any = 1,
    dataset: str | None = None,
) -> Release:
    """Release the mean of ``value`` (clamped to [lo, hi]) under each row's privacy level.

    ``source``: a CSV or Parquet path (or a glob of many), a pandas DataFrame, or (with
    ``engine="spark"``) a Spark DataFrame; one row is one user. ``eps`` names the privacy-level
    column (numbers >= 0; 'inf'/'public' for public rows, or the float inf of a numeric column;
    0 = not used; a number too large for a float written in a file or text column, e.g.
    '1e400', is refused, never read as public). Every value must be a finite number (missing,
    NaN, inf and '1e400' are refused); a finite value outside [lo, hi] is clamped to it, by
    design, identically on every engine. Every refusal names the row (0 when the engine cannot
    order rows: a Spark DataFrame, a cluster's file), the column and a ``reason``
    (hdp_core.validate.REASON_WORDS, or 'out_of_range'), never the cell. ``data_sd``: a
    declared, public standard deviation of the data in its units (never estimated from the
    data), tuning ADPM (Algorithm 1 with 8 replaced by 2/s^2 on [-1/2, 1/2]) and the
    population interval; None is the paper's worst case. ``tiers``: a Tier designer menu
    (hdp_core.design.Menu) or a mapping of tier names to levels; an eps cell holding a tier's
    name (case and spaces ignored) then takes that tier's level.

    ``target``: "population" (default; ADPM: the mean of the population the users come from,
    valid when a user's level does not depend on their value) or "table" (TableMean,
    hdp_core.table_mean: the table's own mean over every row, eps = 0 rows included, with no
    assumption; ``data_sd`` is not used). ``ci95`` covers the target with probability >= 95%
    (hdp_core.intervals).

    ``ledger``: None (the default: NOTHING IS TRACKED; releasing the same data again spends
    every user's level again), a :class:`hdp_core.ledger.PrivacyLedger` or a path to one.
    With a ledger, each user's level is their total budget on the dataset: the release spends
    ``spend`` (in (0, 1]) of it, is charged to the data's content fingerprint and to
    ``dataset`` (a name, optional) before anything is computed from the values, runs at
    levels eps x spend (OpenDP checks each loss against that), and is recorded; a dataset
    whose budget would pass 1 is refused with BudgetExceeded (``remaining`` in its fields).
    Bad input (columns, cells, levels) is refused before charging. A release that fails
    after charging keeps its charge. A release whose result the ledger cannot record
    afterwards (e.g. LedgerBusy) keeps its charge too and is still returned, with
    ``recorded=False`` and ``record_failure`` set (the result exists only in the returned
    object). Without a ledger ``spend`` still scales the levels (a release at a fraction of
    the budget), ``dataset`` must be None and ``recorded`` is None.

    Returns a :class:`Release`; raises :class:`ReleaseError` (a ValueError) naming the column,
    row or level for any bad input, and then releases nothing.
    """
    from .ledger import PrivacyLedger, as_spend, dataset_identities, name_identity, spend_factor

    if target not in TARGETS:
        raise ReleaseError(
            f"target must be one of {', '.join(repr(t) for t in TARGETS)}, got {str(target)[:40]!r}"
        )
    lo_f, hi_f = _check_range(lo, hi)
    sd_norm = _check_sd(data_sd, lo_f, hi_f)
    c = _const(sd_norm)
    frac = as_spend(spend)
    factor = spend_factor(frac)
    led = None
    if ledger is not None:
        led = ledger if isinstance(ledger, PrivacyLedger) else _open_ledger(ledger)
    if dataset is not None:
        name_identity(dataset)  # validated before anything is read
        if led is None:
            raise ReleaseError(
                "a dataset name is only used with a ledger (ledger=...): without one nothing "
                "is tracked"
            )
    src, vcol, ecol = open_source(source, value, eps, engine, tier_levels(tiers))
    if vcol == ecol:
        src.close()
        raise ReleaseError(
            f"the value column and the eps column are the same column ({vcol!r}); the "
            "privacy levels must be a column of their own"
        )
    ticket = None
    try:
        if led is not None:
            fp = _precheck(src, vcol, ecol, engine)  # refuses bad input: nothing charged
            ticket = led.charge(dataset_identities(fp, dataset), frac)  # or BudgetExceeded
            factor = ticket.factor
        src.level_factor = factor
        rel = _release(src, vcol, ecol, lo_f, hi_f, sd_norm, data_sd, c, engine, target, factor)
    except BaseException as exc:
        if ticket is not None and led is not None:
            with contextlib.suppress(Exception):
                led.record_failure(ticket, exc)  # the charge stays (never overspend)
        raise
    finally:
        src.close()
    rel = replace(rel, spend=float(frac), level_factor=factor)
    if ticket is not None and led is not None:
        rel = replace(
            rel,
            dataset=dataset.strip() if dataset is not None else None,
            ledger_path=led.path,
            budget_remaining=float(ticket.remaining),
            plan=rel.plan + "; + 2 ledger check passes (fingerprint, cell counts)",
            recorded=True,
        )
        try:
            led.record(ticket, rel, target=rel.target)
        except Exception as exc:
            # the release happened and was paid for (the charge stands, never undone): the
            # caller still gets it, flagged as not in the history (fail closed is about
            # charging, which came first)
            rel = replace(rel, recorded=False, record_failure=type(exc).__name__)
    return rel


def _open_ledger(path: Any) -> Any:
    from .ledger import PrivacyLedger

    if not isinstance(path, (str, os.PathLike)):
        raise ReleaseError(
            f"ledger must be a PrivacyLedger or a path to one, got {type(path).__name__}"
        )
    return PrivacyLedger(path)


def _precheck(src: Any, vcol: str, ecol: str, engine: str) -> str:
    """The ledger's pass (before charging): the content fingerprint, and every refusal the
    release would make from the cells' kinds (empty table, bad level, bad value, level out of
    range, no usable user), with the same messages. Returns the fingerprint."""
    try:
        fp, n_rows, n_bad_eps, n_bad_value, n_range, n_pos, n_pub = src.precheck(vcol, ecol)
    except ReleaseError:
        raise
    except Exception as exc:
        raise ReleaseError(
            f"the {engine} engine could not read the table ({type(exc).__name__}); nothing "
            "was charged or released"
        ) from None
    if n_rows == 0:
        raise ReleaseError("the table is empty: no users, nothing to release")
    if n_bad_eps:
        _raise_bad_eps(src, ecol, n_bad_eps)
    if n_bad_value:
        _raise_bad_value(src, vcol, n_bad_value)
    if n_range:
        row, v = src.first_bad("range")
        _raise_range(row, float(v) if v is not None else math.nan, ecol)
    if n_pub:
        _check_public(src, ecol)
    if n_pos == 0:
        raise ReleaseError(
            f"no usable user: all {n_rows:,} rows have eps = 0 (data not to be used)"
        )
    return str(fp)


def _check_public(src: Any, ecol: str) -> None:
    """A table with public users (eps = +inf): refuse one whose cell is a number too large
    for a float ('1e400' reads as inf) rather than a word for public (once per source)."""
    if not getattr(src, "public_checked", False):
        src.check_public(ecol)
        src.public_checked = True


def _cell_of(src: Any, col: str, row: int, parsed: Any) -> Any:
    """What to classify a bad cell by (validate.cell_reason): its text when the engine parsed
    it to an infinity and the file writes a number too large for a float ('1e400': reason
    'too_large', not 'not_finite'), else the parsed cell (a negative level stays
    'negative')."""
    if not row or parsed is None or not math.isinf(float(parsed)):
        return parsed
    raw = src.raw_cell(col, row)
    return raw if raw is not None and cell_reason(raw) == "too_large" else parsed


def _raise_bad_eps(src: Any, ecol: str, n_bad: int) -> None:
    row, v = src.first_bad("eps")
    cell = _cell_of(src, ecol, row, v)
    kind = cell_reason(cell)  # the words: 'NaN', 'empty', 'not a finite number' (-inf), ...
    reason = {"nan": "empty", "not_finite": "negative"}.get(kind, kind)  # level_counts' codes
    where = f"row {row}" if row else "a row"
    raise BadCellError(
        f"eps column {ecol!r}, {where}: {kind_words(kind)}; privacy levels must be "
        f"numbers >= 0 (inf = public) ({_such_rows(n_bad)})",
        row=row,
        column=ecol,
        reason=reason,
    )


def _raise_bad_value(src: Any, vcol: str, n_bad: int) -> None:
    row, v = src.first_bad("value")
    cell = _cell_of(src, vcol, row, v)
    reason = cell_reason(cell)  # None: a missing cell ('empty')
    if reason not in ("empty", "too_large"):  # as the preview (check_values) says it
        reason = "empty" if reason == "nan" else "not_finite"
    raise BadCellError(
        _bad_value_message(vcol, row, n_bad, reason), row=row, column=vcol, reason=reason
    )


def _release(
    src: Any,
    vcol: str,
    ecol: str,
    lo_f: float,
    hi_f: float,
    sd_norm: float | None,
    data_sd: float | None,
    c: float,
    engine: str,
    target: str,
    factor: float,
) -> Release:
    """The release proper on an open source (levels already scaled by ``factor`` in the
    engine): aggregate, plan, noise, check."""
    try:
        if target == "table":
            h, passes, plan = _fast_histogram(
                src, vcol, ecol, lo_f, hi_f, c, engine, tiers_only=True
            )
        else:
            h, passes, plan = _fast_histogram(src, vcol, ecol, lo_f, hi_f, c, engine)
        if h is None:
            h = src.histogram(vcol, ecol, lo_f, hi_f)
            passes += 1
        if h.n_rows == 0:
            raise ReleaseError("the table is empty: no users, nothing to release")
        if h.n_bad_eps:
            _raise_bad_eps(src, ecol, h.n_bad_eps)
        if h.n_bad_value:
            _raise_bad_value(src, vcol, h.n_bad_value)
        zero = h.bin == ZERO_BIN
        pub = h.bin == PUBLIC_BIN
        fin = ~zero & ~pub
        if bool((h.n[pub] > 0).any()):
            _check_public(src, ecol)
        _check_level_range(h, fin, src, ecol, factor)
        n_excluded = int(h.n[zero].sum())
        n_public = int(h.n[pub].sum())
        n_used = int(h.n[fin].sum()) + n_public
        if n_used == 0:
            raise ReleaseError(
                f"no usable user: all {n_excluded:,} rows have eps = 0 (data not to be used)"
            )
        if n_public == n_used:
            return _all_public(
                h, pub, lo_f, hi_f, engine, n_excluded, target, sd_norm, data_sd, factor
            )
        norm = None
        if target == "table":
            if bool((h.emin[fin] == h.emax[fin]).all()):
                rows, tau, norm = _plan_tiers_table(h, fin, pub, n_excluded)
                kind = "tiers"
            else:
                rows, tau, norm = _plan_bins_table(h, fin, pub, n_excluded)
                kind = "level bins"
        elif bool((h.emin[fin] == h.emax[fin]).all()):
            rows, tau = _plan_tiers(h, fin, pub, sd_norm)
            kind = "tiers"
        else:
            try:
                rows, tau, more = _plan_bins(h, src, fin, pub, c)
            except _BracketMissed:  # the sample misled the bracket: the general plan
                h = src.histogram(vcol, ecol, lo_f, hi_f)
                fin = (h.bin != ZERO_BIN) & (h.bin != PUBLIC_BIN)
                pub = h.bin == PUBLIC_BIN
                rows, tau, more = _plan_bins(h, src, fin, pub, c)
                passes += 1
                plan += ", bracket missed"
            passes += more - 1
            kind = "level bins"
    except ReleaseError:
        raise
    except Exception as exc:  # an engine's own error (Spark, DuckDB): one line, no data
        raise ReleaseError(
            f"the {engine} engine could not compute the release ({type(exc).__name__}); "
            "nothing was released"
        ) from None
    detail = f"{passes} aggregate pass{'es' if passes > 1 else ''}" + (f"; {plan}" if plan else "")
    rel = _finish(
        rows,
        tau,
        lo_f,
        hi_f,
        sd_norm,
        data_sd,
        engine,
        n_used,
        n_excluded,
        n_public,
        f"{kind} ({detail})",
        target=target,
        norm=norm,
        factor=factor,
    )
    if target == "table" and data_sd is not None:
        rel = replace(
            rel,
            notes=(
                *rel.notes,
                "The declared data_sd is not used by the table target (no assumption).",
            ),
        )
    return rel


def _check_level_range(
    h: Histogram, fin: np.ndarray, src: Any, ecol: str, factor: float = 1.0
) -> None:
    """Refuse levels outside [LEVEL_MIN, LEVEL_MAX] (0 and public aside) on every plan and
    engine, as profiles, menus and links do (hdp_core.validate, one rule); names the first
    such row. The histogram holds the run levels fl(eps x factor): the bounds are scaled the
    same way (rounding is monotone, so a level in range stays in the scaled range)."""
    use = fin & (h.n > 0)
    if not use.any():
        return
    low, high = float(h.emin[use].min()), float(h.emax[use].max())
    if low >= LEVEL_MIN * factor and high <= LEVEL_MAX * factor:
        return
    row, v = src.first_bad("range")
    x = float(v) / factor if v is not None else (low if low < LEVEL_MIN * factor else high)
    _raise_range(row, x, ecol)


def _raise_range(row: int, x: float, ecol: str) -> None:
    where = f"row {row}" if row else "a row"
    if x < LEVEL_MIN:
        reason = f"below the smallest supported level, {LEVEL_MIN:g}"
    else:
        reason = f"above the largest supported level, {LEVEL_MAX:g} (use 'public' for no privacy)"
    raise BadCellError(
        f"eps column {ecol!r}, {where}: a level {reason}",
        row=row,
        column=ecol,
        reason="out_of_range",
    )


class _BracketMissed(Exception):
    """The fast plan's bracket does not contain tau* (the general plan is used)."""


def _bracket(sample: np.ndarray, n_rows: int, c: float) -> tuple[float, float] | None:
    """A bracket [a, b) for tau* from a sample of the levels: G estimated by the sample
    (scaled by n_rows / sample size) reaches c (1 - s) at a and c (1 + s) at b, with a slack
    s = 0.05 + 5 / sqrt(sample levels below tau), at most 0.5. Only steers the plan: the
    bracket pass verifies it with the exact G (else the general plan runs)."""
    x = sample[np.isfinite(sample) & (sample > 0)]
    if x.size == 0 or n_rows <= 0:
        return None
    s = np.sort(x)
    f = n_rows / sample.size
    p1, p2 = np.cumsum(s), np.cumsum(s * s)
    nxt = np.append(s[1:], np.inf)

    def t_at(target: float) -> tuple[float, int]:
        t = (p2 + target / f) / p1
        k = int(np.argmax(t <= nxt))
        return float(t[k]), k + 1

    _, k0 = t_at(c)
    slack = min(0.5, 0.05 + 5.0 / math.sqrt(k0))
    a, b = t_at(c * (1 - slack))[0], t_at(c * (1 + slack))[0]
    return (a, b) if 0 < a < b < Q_CAP else None


def _fast_histogram(
    src, vcol: str, ecol: str, lo: float, hi: float, c: float, engine: str, tiers_only=False
):
    """DuckDB's fast plan (see the module docstring): (Histogram or None, full passes made,
    note). None means the general plan must run (bad input, or the sample missed levels).
    ``tiers_only`` (the table target): only the tiers pass (the bracket is ADPM's)."""
    if engine != "duckdb":
        return None, 0, ""
    src._prepare(vcol, ecol, lo, hi)
    sample, n_rows = src.sample_levels()
    if n_rows == 0 or bool((np.isnan(sample) | (sample < 0)).any()):
        return None, 0, ""
    distinct, counts = np.unique(sample, return_counts=True)
    if distinct.size <= MAX_TIERS:
        distinct = distinct[np.argsort(-counts, kind="stable")]  # common levels tested first
        h = src.fast_tiers(distinct)
        return h, 1, ("" if h is not None else "fast tiers pass missed levels")
    if tiers_only:
        return None, 0, ""
    br = _bracket(sample, n_rows, c)
    if br is None:
        return None, 0, ""
    fin = sample[np.isfinite(sample)]
    above_first = bool((fin >= br[1]).sum() > (fin < br[0]).sum())
    h = src.fast_bracket(br[0], br[1], SUB_BINS, above_first)
    return h, 1, ("" if h is not None else "fast bracket pass found bad input")


def _such_rows(n: int) -> str:
    return f"{n:,} such row{'' if n == 1 else 's'}"


def _bad_value_message(value: str, row: int, n_bad: int, reason: str = "not_finite") -> str:
    where = f"row {row}" if row else "a row"
    what = kind_words(reason) if reason == "too_large" else "missing, NaN or infinite"
    return (
        f"value column {value!r}, {where}: {what}; every value must be a finite number "
        f"({_such_rows(n_bad)})"
    )


def _column_floats(
    df: Any, column: str, role: str, names: dict[str, float], numeric_kinds: str
) -> np.ndarray:
    """The cells of a pandas column as floats, read as the engines read them (NaN for an empty
    cell): a column of ``numeric_kinds`` as it is; text trimmed, as a number or, for the eps
    column, a public word (inf) or one of ``names``' tier names. Raises ReleaseError naming the
    row (1-based) of a text cell that is none of these."""
    import pandas as pd

    if column not in df.columns:
        raise ReleaseError(f"the table has no {role} column {column!r}")
    col = df[column]
    if col.dtype.kind in numeric_kinds:
        return col.to_numpy(dtype=float, na_value=np.nan)
    txt = col.astype("string").str.strip()
    low = txt.str.lower()
    x = pd.to_numeric(txt, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    if role == "eps":
        x = np.where(low.isin(sorted(PUBLIC_WORDS)).fillna(False).to_numpy(dtype=bool), np.inf, x)
        named = low.map(names).astype("Float64")
        x = np.where(
            named.notna().to_numpy(dtype=bool), named.to_numpy(dtype=float, na_value=np.nan), x
        )
    # a number too large for a float ('1e400' reads as inf) is refused; an infinity written
    # as a word ('inf', '-inf') is read as one (public for eps; refused by the callers else)
    spelled = low.str.lstrip("+-").isin(["inf", "infinity"]) | low.isin(sorted(PUBLIC_WORDS))
    overflow = np.isinf(x) & ~spelled.fillna(False).to_numpy(dtype=bool)
    if role == "eps":
        overflow &= ~named.notna().to_numpy(dtype=bool)
    bad_txt = (
        (np.isnan(x) | overflow)
        & txt.notna().to_numpy(dtype=bool)
        & (txt != "").fillna(False).to_numpy(dtype=bool)
        & ~low.isin(["nan"]).fillna(False).to_numpy(dtype=bool)
    )
    if bad_txt.any():
        i = int(np.argmax(bad_txt))
        kind = cell_reason(txt.iloc[i])  # '1e400': too_large; '-inf': not_finite
        if kind in NUMBER_REASONS:  # written as a number, but not a finite float
            raise ReleaseError(
                f"{role} column {column!r}, row {i + 1}: {kind_words(kind)}; "
                f"{not_finite_words(role)}",
                row=i + 1,
                column=column,
                reason=kind,
            )
        menu = ""
        if role == "eps" and names:
            shown = ", ".join(repr(k) for k in list(names)[:10])
            menu = f" nor a tier of the menu ({shown}{', ...' if len(names) > 10 else ''})"
        raise ReleaseError(
            f"{role} column {column!r}, row {i + 1}: the cell is {kind_words(kind)}, not a "
            f"number{menu}",
            row=i + 1,
            column=column,
            reason=kind,
        )
    return x


def check_values(df: Any, value: str) -> None:
    """Check column ``value`` of a pandas DataFrame as :func:`release_mean` would (for a
    preview, before anything is released): raises ReleaseError naming the first row (1-based)
    whose cell is text that is not a number, or missing, NaN or infinite."""
    x = _column_floats(df, value, "value", {}, "biuf")
    bad = ~np.isfinite(x)
    if bad.any():
        i = int(np.argmax(bad))
        raise ReleaseError(
            _bad_value_message(value, i + 1, int(bad.sum())),
            row=i + 1,
            column=value,
            reason="empty" if np.isnan(x[i]) else "not_finite",
        )


def _show(v: Any) -> str:
    if v is None:
        return "empty"
    try:
        x = float(v)
    except (TypeError, ValueError):
        return repr(v)
    return "NaN" if math.isnan(x) else f"{x:g}"


def _extra_width(lo: float, hi: float, delta: float) -> float:
    """Added to every half-width (data units): the rounding of the value handed to the noise
    (at most delta) and of adding lo afterwards (half an ulp of the largest |value|)."""
    return 2.0 * delta + math.ulp(max(abs(lo), abs(hi)))


def _finish(
    rows,
    tau,
    lo,
    hi,
    sd_norm,
    data_sd,
    engine,
    n_used,
    n_excluded,
    n_public,
    plan,
    target: str = "population",
    norm: Fraction | None = None,
    factor: float = 1.0,
):
    """Noise, privacy check and interval for the planned rows. ``norm``: the normaliser of
    the granted levels (weight of a user granted r is r / norm): ADPM's ||r||_1 (None) or,
    for the table target, 1 / eta (then the weights sum to S / norm <= 1 and the estimate is
    affine about the middle of the range)."""
    width = Fraction(hi) - Fraction(lo)
    wf = float(width)
    # the noise is added to the mean relative to lo, a number in [0, R]: its one rounding to
    # a float is at most 2^-53 R (2^-52 R below, with room), whatever lo is
    delta = max(_U * wf, 2.0**-1074)
    notes = []
    s1 = sum((r.s1 for r in rows), Fraction(0))
    s2 = float(sum(r.s2 for r in rows))
    if target == "population":
        norm = s1
        fs1 = float(s1)
        var = 0.25 if sd_norm is None else sd_norm * sd_norm
        objective = (var * s2 + 2.0) / (fs1 * fs1)
        if objective > 0.25:  # ADPM answers the mid-range: no data used, nothing to check
            mid = lo + 0.5 * (hi - lo)
            notes.append(
                "ADPM's worst case passes 1/4 of the squared range: the answer is the "
                "mid-range, which uses no data."
            )
            zeros = [0.0] * len(rows)
            return Release(
                mid,
                (lo, hi),
                0.0,
                tau,
                n_used,
                _frame(rows, zeros, zeros, factor),
                engine,
                lo,
                hi,
                data_sd,
                0.5 * (hi - lo),
                n_excluded,
                n_public,
                True,
                plan,
                0.0,
                0.0,
                tuple(notes),
                target=target,
            )
    assert norm is not None
    fnorm = float(norm)
    r_min = min(r.r_min for r in rows if r.users > 0)
    c_r = 2.0 * delta * fnorm / wf
    kappa = 2.0 * c_r / r_min + 2.0**-40
    scale = _noise_scale(width, norm, kappa)
    if not (math.isfinite(scale) and scale > 0):  # fail closed, before OpenDP is asked
        raise ReleaseError("the noise scale is not a finite positive number; nothing was released")
    meas = _measurement(scale)
    loss, loss_max = _receipt(rows, meas, width, norm, delta)  # raises: nothing released
    w_num = sum((r.w_num for r in rows), Fraction(0))
    spare = 1 - s1 / norm  # 1 - sum of the weights: 0 for ADPM, >= 0 for the table target
    # the weighted mean minus lo, exactly, in [0, R]: R (sum_i w_i y_i / Q + (1 - W) / 2)
    relative = width * (w_num / (norm * Q) + spare / 2)
    x = float(relative)
    # fail closed: only a finite number in [0, R] (the clamped, weighted mean relative to lo)
    # ever reaches the noise (rounding is monotone: x <= fl(R))
    if not 0.0 <= x <= wf:
        raise ReleaseError(
            "the value to be noised is not a finite number inside the range; nothing was released"
        )
    estimate = lo + float(meas(x))  # adding lo is post-processing
    eta = scale / wf  # the noise's Laplace scale on the unit scale (as drawn)
    bias = 0.0
    if target == "population":
        r_max = max(r.r_max for r in rows if r.users > 0)
        # s2 is a float sum: a relative 1e-12 more is an upper bound (valid in the bound)
        h_unit = population_half_width_moments(
            s2 / (fnorm * fnorm) * (1 + 1e-12), _up(r_max / fnorm), eta, data_sd=sd_norm
        )
    else:
        bias = _up(float(spare / 2))  # ||w - 1/n||_1 / 2 for the weights used, rounded up
        h_unit = table_half_width(bias, eta)
    h = h_unit * wf + _extra_width(lo, hi, delta)
    return Release(
        estimate,
        interval_in_range(estimate, h, lo, hi),
        scale,
        tau,
        n_used,
        _frame(rows, loss, loss_max, factor),
        engine,
        lo,
        hi,
        data_sd,
        h,
        n_excluded,
        n_public,
        False,
        plan,
        delta,
        kappa,
        tuple(notes),
        target=target,
        bias_bound=bias * wf,
    )


def _all_public(
    h: Histogram, pub, lo, hi, engine, n_excluded, target, sd_norm, data_sd, factor
) -> Release:
    """Every usable user is public (eps = inf): no noise (nobody asked for privacy). The
    population target: the plain mean of the clamped values; the table target: the public
    users' values and the mid-range for the eps = 0 users (their bias, at most n_0 / (2n) of
    the range, is the interval)."""
    import pandas as pd

    n = int(h.n[pub].sum())
    sy = sum(h.sy[i] for i in np.flatnonzero(pub))
    width = Fraction(hi) - Fraction(lo)
    wf = float(width)
    delta = max(_U * wf, 2.0**-1074)
    if target == "population":
        est = float(Fraction(lo) + width * Fraction(sy, n * Q))
        h_unit = population_half_width_moments(_up(1.0 / n), _up(1.0 / n), 0.0, data_sd=sd_norm)
        bias = 0.0
        note = "Every usable user is public (eps = inf): the plain mean, no noise."
    else:
        n_all = n + n_excluded
        spare = Fraction(n_excluded, n_all)
        est = float(Fraction(lo) + width * (Fraction(sy, n_all * Q) + spare / 2))
        bias = _up(float(spare / 2))
        h_unit = bias
        note = (
            "Every usable user is public (eps = inf): their values, and the mid-range for "
            "users with eps = 0, no noise."
        )
    hw = h_unit * wf + _extra_width(lo, hi, delta)
    df = pd.DataFrame(
        {
            "eps": [math.inf],
            "eps_max": [math.inf],
            "run_eps": [math.inf],
            "run_eps_max": [math.inf],
            "users": [n],
            "granted_eps": [math.inf],
            "granted_eps_max": [math.inf],
            "privacy_loss": [math.inf],
            "privacy_loss_max": [math.inf],
            "saturated": [False],
        }
    )
    return Release(
        est,
        interval_in_range(est, hw, lo, hi),
        0.0,
        math.inf,
        n,
        df,
        engine,
        lo,
        hi,
        data_sd,
        hw,
        n_excluded,
        n,
        False,
        "public only (1 aggregate pass)",
        0.0,
        0.0,
        (note,),
        target=target,
        bias_bound=bias * wf,
    )


# ------------------------------------------------------------------------------ preview
@dataclass(frozen=True)
class TierPreview:
    """What each level gets before releasing (public: from the levels and counts only)."""

    tiers: Any  # DataFrame: eps, users, granted_eps, weight_share
    saturation_level: float  # tau* (population) or the cap level 1/(n eta) (table)
    noise_scale: float  # data units
    half_width95: float  # data units
    outputs_midrange: bool
    target: str = "population"
    bias_bound: float = 0.0  # data units (table target)


def preview_tiers(
    levels: Any,
    counts: Any,
    lo: float,
    hi: float,
    data_sd: float | None = None,
    target: str = "population",
    spend: Any = 1,
) -> TierPreview:
    """What each level gets and the expected ±95% (data units) of a release of levels and
    user counts on [lo, hi], before releasing, for ``target`` "population" (hdp.adpm) or
    "table" (hdp.table_mean), at ``spend`` of every level (levels eps x spend, as the
    ledger's releases run). The half-width is the release's proven interval
    (hdp_core.intervals.release_error_95). eps = 0 tiers get 0."""
    import pandas as pd

    from .intervals import release_error_95
    from .ledger import as_spend, spend_levels

    if target not in TARGETS:
        raise ReleaseError(f"target must be one of {', '.join(TARGETS)}, got {str(target)[:40]!r}")
    lo_f, hi_f = _check_range(lo, hi)
    sd_norm = _check_sd(data_sd, lo_f, hi_f)
    lv = np.asarray(levels, dtype=float)
    ct = np.asarray(counts, dtype=np.int64)
    run = spend_levels(lv, as_spend(spend))
    use = lv > 0
    if not (use & (ct > 0)).any():
        raise ReleaseError("no usable user: every level is 0 (data not to be used)")
    R = hi_f - lo_f
    hw = release_error_95(lv, ct, lo_f, hi_f, target, data_sd, spend)
    if target == "table":
        sol = table_mean(_run_profile(run[ct > 0], ct[ct > 0]))
        rr = np.zeros(lv.size)
        rr[ct > 0] = sol.granted_eps
        rr = np.where(use, rr, 0.0)
        w = np.zeros(lv.size)
        w[ct > 0] = sol.weights
        df = pd.DataFrame({"eps": lv, "users": ct, "granted_eps": rr, "weight_share": w * ct})
        return TierPreview(
            df, sol.cap_level, sol.noise_scale * R, hw, False, target, sol.bias_bound * R
        )
    r, tau = _tiers_solution(run[use], ct[use], sd_norm)
    rr = np.zeros(lv.size)
    rr[use] = r
    var = 0.25 if sd_norm is None else sd_norm * sd_norm
    if np.isinf(rr[use]).all():
        s1, b = float(ct[use].sum()), 0.0
        share = np.where(use, ct / s1, 0.0)
        mid = False
    else:
        s1 = float(np.dot(rr, ct))
        ssq = float(np.dot(rr * rr, ct)) / (s1 * s1)
        b = R / s1
        share = rr * ct / s1
        mid = (var * ssq * s1 * s1 + 2.0) / (s1 * s1) > 0.25
        if mid:
            b = 0.0
    df = pd.DataFrame({"eps": lv, "users": ct, "granted_eps": rr, "weight_share": share})
    return TierPreview(df, tau, b, hw, mid, target)


def _tier_pairs(tiers: Any) -> list[tuple[Any, Any]]:
    """(name, level) of each tier of a Tier designer menu or a mapping of names to levels."""
    if hasattr(tiers, "names") and hasattr(tiers, "levels"):
        return list(zip(tiers.names, (float(x) for x in tiers.levels), strict=True))
    if isinstance(tiers, Mapping):
        return list(tiers.items())
    raise ReleaseError(
        f"tiers must be a Tier designer menu or a mapping of names to levels, got "
        f"{type(tiers).__name__}"
    )


def tier_levels(tiers: Any) -> dict[str, float]:
    """Tier names -> privacy levels, from a Tier designer menu (hdp_core.design.Menu) or a
    mapping of names to levels (None: no names). Names are keyed by
    :func:`hdp_core.validate.tier_key` (NFKC, casefold, trimmed), the one form in which the
    release's engines match eps cells too. Raises ReleaseError for a bad level or for two
    names that are the same in that form (e.g. 'Straße' and 'STRASSE')."""
    if tiers is None:
        return {}
    out: dict[str, float] = {}
    first: dict[str, str] = {}
    for name, level in _tier_pairs(tiers):
        if not isinstance(name, str) or not tier_key(name):
            raise ReleaseError(f"a tier name must be non-empty text, got {name!r}")
        key = tier_key(name)
        if key in out:
            raise ReleaseError(
                f"two tiers, {first[key]!r} and {name.strip()!r}, are the same name once case, "
                "width and spaces are ignored; rename one"
            )
        first[key] = name.strip()
        out[key] = parse_level(level, f"the level of tier {name.strip()!r}", error=ReleaseError)
    return out


def tier_names_of(levels: Any, tiers: Any) -> list[str]:
    """For each level, the names of the menu's tiers at that level (joined by ' / '; '' for a
    level not on the menu). ``tiers`` as in :func:`release_mean`."""
    if tiers is None:
        return ["" for _ in np.asarray(levels).ravel()]
    by_key = tier_levels(tiers)  # validated; keyed by tier_key
    pairs = [(name.strip(), by_key[tier_key(name)]) for name, _ in _tier_pairs(tiers)]
    return [
        " / ".join(n for n, level in pairs if level == x)
        for x in np.asarray(levels, dtype=float).ravel()
    ]


def level_counts(df: Any, eps: str, tiers: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct privacy levels of column ``eps`` of a pandas DataFrame and their user counts
    (public, like the levels themselves; for a preview). ``tiers`` as in :func:`release_mean`
    (tier names in the column take their tier's level). Raises ReleaseError naming the row
    (1-based) of the first bad level."""
    x = _column_floats(df, eps, "eps", tier_levels(tiers), "iufc")
    if x.size == 0:
        raise ReleaseError("the table is empty: no users, nothing to release", reason="no_rows")
    lv, first, ct = np.unique(x, return_index=True, return_counts=True)  # NaN sorts last
    bad = np.isnan(lv) | (lv < 0) | out_of_range(lv)
    if bad.any():
        i = int(first[bad].min())  # the first bad row of the table, found in O(n log n)
        v = x[i]
        reason = "empty" if np.isnan(v) else ("negative" if v < 0 else "out_of_range")
        what = {
            "empty": "the cell is empty (or NaN); privacy levels must be numbers >= 0 "
            "(inf = public)",
            "negative": "the level is negative; privacy levels must be numbers >= 0 (inf = public)",
        }.get(reason) or f"the level is {out_of_range_words(v)}"
        raise ReleaseError(
            f"eps column {eps!r}, row {i + 1}: {what}", row=i + 1, column=eps, reason=reason
        )
    return lv, ct


# ------------------------------------------------------------------------------ CLI
def main(argv: list[str] | None = None) -> int:
    """The command line (``python -m hdp_core.release``, ``hdp-release``): see
    hdp_core.release_cli."""
    from .release_cli import main as cli

    return cli(argv)


if __name__ == "__main__":
    raise SystemExit(main())
