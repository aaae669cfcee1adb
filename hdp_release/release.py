"""A real private release of a mean under per-user privacy levels (ADPM, Algorithm 1, or the
table's own mean, hdp_core.table_mean), tracked by a privacy ledger when one is given.

API (for pages and scripts; every number in data units unless said):

* ``release_mean(source, *, value, eps, lo, hi, engine="duckdb", data_sd=None, tiers=None,
  target="population", ledger=None, spend=1, dataset=None) -> Release``.
  ``target``: "population" (ADPM; assumes a user's level does not depend on their value) or
  "table" (TableMean: the table's own mean over every row, eps = 0 rows included; no
  assumption). ``ledger``: None (nothing tracked), a ``PrivacyLedger`` or a path; ``spend``
  in (0, 1] (float, 'p/q' text or Fraction; the release runs at levels eps x spend);
  ``dataset``: a name charged besides the keyed level profile (only with a ledger). Raises
  ReleaseError (BadCellError, ColumnNameError) for bad input, BudgetExceeded (fields
  identity, spent, remaining, requested: exact Fractions) when the budget would pass 1,
  LedgerBusy / LedgerUnusable when the ledger cannot be used: all before anything computed
  from the values is used or released (on DuckDB's light path the check's one scan also sums
  the values' grid, kept unused until the charge succeeds), nothing charged. With a ledger
  the order is: parse the spend, open the ledger (a corrupt one refuses here), open the
  source, the ledger's check (the keyed level-profile identity, and counts of rows, bad
  levels, bad values, levels out of range and usable rows, so every refusal the release
  would make from the cells' kinds comes first, decided from these counts alone: on DuckDB
  with few levels one scan, the identity from the level counts, and without an id column
  that scan is the tiers pass itself, its per-level sums of the values' grid held on the
  source until the charge succeeds and dropped with the source if it refuses or fails; many
  levels: two queries, and the release's own passes after the charge), charge, release
  (from those sums, mapped to the run levels, when the check's scan gave them: no second
  scan), record (on failure after charging: record_failure, re-raise; the charge stays). If
  recording the result fails (e.g. LedgerBusy) the charge stays and the release, which was
  paid for, is still returned, with ``recorded=False`` and ``record_failure`` (the error's
  type); :func:`not_recorded_note` says so in words.
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
  ``to_dict()`` (JSON-ready: adds "tracked"; never an identity) and ``text()``.
* ``preview_tiers(levels, counts, lo, hi, data_sd=None, target="population", spend=1)
  -> TierPreview`` (tiers, saturation_level, noise_scale, half_width95, outputs_midrange,
  target, bias_bound): what a release of these level counts would give, before any data.
* ``hdp_core.intervals.release_error_95(levels, counts, lo, hi, target="population",
  data_sd=None, spend=1, k=1)``: the 95% error (data units) of one of k releases that split
  ``spend`` equally (levels eps x spend / k): the Tier designer's "k releases" figure.
* CLI: ``python -m hdp_release PATH --value C --eps C --range LO HI [--target
  population|table] [--ledger PATH --spend F --dataset NAME] [--format json]`` and
  ``python -m hdp_release --list-ledger PATH [--dataset NAME] [--format json]``.

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

How it is computed (the plan; see hdp_release.engines.base for the queries):

* **Fast plan (DuckDB).** The levels of the first 50,000 rows (and, for per-user levels, the
  row count, from Parquet metadata) steer the plan; they never enter the answer. Few distinct
  levels (<= 32): one scan grouped by which of those levels a row has (its position in the
  list of levels, NULL for none of them) gives per level the users and the exact integer sum
  of the clamped values; a row with any other level, a bad level or a missing/NaN/infinite
  value (a NULL grid value, counted in the same scan) sends the release to the general plan
  below. When a Parquet file's own statistics (min and max of the value column per row group,
  from its metadata: a hint, never trusted) put every value in [lo, hi], the scan first forms
  y without the clamp's CASE and counts the rows whose y is in [0, Q] (issue 29); only if
  every row's is (then each y is the clamped one, so the sums are the same) are its sums
  kept, else the scan with the CASE runs. Its sums of y are doubles when every group has at
  most 2^23 rows (each partial sum an integer <= 2^53: exact in any order), else 128-bit
  integers. The grid value rounds half away from zero on every plan and engine (round(); a
  bare CAST of a double rounds ties to even, which gave this plan another y than the general
  plan and Spark on values exactly between two grid points until session 11). With a dataset
  ledger this scan is the ledger check's own (keyed by the level as asked, before the
  charge; its sums mapped to the run levels after it). Many levels: a
  bracket [a, b) for tau* is estimated from the sample (G scaled by rows / sample, slack 5% +
  5/sqrt(sample levels below tau*)); one scan groups the rows into the levels below a (one
  class per 1/8 decade, exact sums of q and q y), 256 equal sub-bins of [a, b) (the same sums,
  min and max level), the finite levels from b (one class, users and sum of y only:
  saturated), public and zero levels (a NaN level shares the public key and is told apart by
  the class's largest level; a NULL or negative level has no key: both send the release to the
  general plan). The exact walk below then runs on these groups; if tau* is not inside the
  bracket (the walk stops inside, or passes, a class) the general plan runs instead, so the
  sample only costs time, never correctness. When tau* falls inside a sub-bin of several
  levels, it is isolated as in the general plan (below). Memory: a few hundred groups (at most
  about 3,000 whatever the levels). Every
  data sum is the same exact integer as in the general plan, the sum of the squared grid
  levels q^2 included (three sums of BIGINT products qh^2, qh ql, ql^2 with q = qh 2^31 + ql,
  combined in Python): tau* = (P2 + c) / P1 is formed from the exact sums below it and
  rounded once, and the sum of squared grants likewise, so tau*, the weights, the noise
  scale and the interval are the same as the general plan's and do not depend on the row
  order or on threads (tests/release/test_release_row_order.py,
  test_release_means_vs_fast_plan.py). Every grant stays min(eps, tau*) <= eps, checked by
  OpenDP's map.
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
plan on the 2^-42 grid, from exact sums of the squared grid levels); the relative difference is of
order 2^-42 / eps_min plus float rounding, and it changes weights, never whether a release is
allowed.

What is released: the noisy estimate, and public things (the range, the levels and their user
counts, tau* or the cap, the noise law, a 95% interval from the noise law and the worst-case
or declared spread, or the bias bound). Nothing else is computed from the data; in particular
not how many values were clamped. eps = 0 users are excluded (the table target counts them
in n with weight 0); eps = inf users are public (used as saturated users).

Intervals (issue 21). The normal approximation of earlier versions under-covers; ci95 now
comes from hdp_core.intervals: population: population_half_width (the least of its proven
bounds (a) to (e), from the sum of squared weights and the largest weight, at the declared
spread or the worst case); table: table_half_width(bias bound, eta). The half-width is
hdp_core.rounding.release_half_width of that (issue 31): times R, plus every rounding the
release makes (the 2^30 grid, up to R / 2^31 times the sum of the weights; reading values as
doubles; the pre-noise value's rounding, OpenDP's rounding of the noisy value and adding
lo), clipped to [lo, hi] (interval_in_range).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from typing import Any

from hdp_core.errors import ReleaseError
from hdp_core.intervals import (
    TARGETS,
)
from hdp_release.checks import (
    check_level_range,
    check_public,
    check_range,
    check_sd,
    check_spend_factor,
    precheck,
    raise_bad_eps,
    raise_bad_value,
)
from hdp_release.engines.base import PUBLIC_BIN, ZERO_BIN
from hdp_release.engines.open import open_source
from hdp_release.finish import all_public, finish
from hdp_release.plan import (
    BracketMissed,
    const,
    fast_histogram,
    plan_bins,
    plan_bins_table,
    plan_tiers,
    plan_tiers_table,
)
from hdp_release.preview import tier_levels
from hdp_release.result import Release

"""At most this many passes over the table isolate tau* (each refinement narrows a bin's level
range 256-fold; a handful suffice for any table of doubles)."""


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
    id: str | None = None,
    dataset_scope: str | None = None,
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

    ``ledger``: None (the default: the ledger at $HDP_LEDGER when that is set, else NOTHING
    IS TRACKED), False (NOT TRACKED even when $HDP_LEDGER is set: releasing the same data
    again spends every user's level again), a
    :class:`hdp_release.ledger.store.PrivacyLedger` or a path to one.
    With a ledger, each user's level is their total budget on the dataset: the release spends
    ``spend`` (in (0, 1]) of it, is charged to the data's keyed level profile (which levels,
    how many users at each: never a value; see hdp_release.ledger.store) and to ``dataset``
    (a name, optional) before anything computed from the values is used or released (on
    DuckDB's light path the check's one scan also sums the values' grid, kept unused until
    the charge succeeds), runs at
    levels eps x spend (OpenDP checks each loss against that), and is recorded; a dataset
    whose budget would pass 1 is refused with BudgetExceeded (``remaining`` in its fields).
    Bad input (columns, cells, levels) is refused before charging. A release that fails
    after charging keeps its charge. A release whose result the ledger cannot record
    afterwards (e.g. LedgerBusy) keeps its charge too and is still returned, with
    ``recorded=False`` and ``record_failure`` set (the result exists only in the returned
    object). Without a ledger ``spend`` still scales the levels (a release at a fraction of
    the budget), ``dataset`` must be None and ``recorded`` is None.

    ``id``: the column naming each row's person (the per-person ledger,
    hdp_release.ledger.people; needs a ledger; DuckDB or Spark): one row per person, ids never
    stored (keyed hashes only); each person is charged what they lose, against their own
    level, across every release of any column, subset or file; ``dataset`` is then a label
    in the history, not a budget.

    Returns a :class:`Release`; raises :class:`ReleaseError` (a ValueError) naming the column,
    row or level for any bad input, and then releases nothing.
    """
    from hdp_release.ledger.store import (
        PrivacyLedger,
        as_spend,
        dataset_identities,
        name_identity,
        spend_factor,
    )

    if target not in TARGETS:
        raise ReleaseError(
            f"target must be one of {', '.join(repr(t) for t in TARGETS)}, got {str(target)[:40]!r}"
        )
    lo_f, hi_f = check_range(lo, hi)
    sd_norm = check_sd(data_sd, lo_f, hi_f)
    c = const(sd_norm)
    frac = as_spend(spend)
    factor = spend_factor(frac)
    check_spend_factor(factor)  # a spend that no level survives: refused before anything
    led = None
    if ledger is None and os.environ.get("HDP_LEDGER"):
        ledger = os.environ["HDP_LEDGER"]  # the shared ledger of this machine or server
    if ledger is not None and ledger is not False:
        led = ledger if isinstance(ledger, PrivacyLedger) else _open_ledger(ledger)
    if dataset is not None:
        name_identity(dataset, dataset_scope)  # validated before anything is read
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
    ticket = people = None
    try:
        if id is not None:
            from hdp_release.ledger.people import attach_id, charge_people

            if led is None:
                raise ReleaseError(
                    "an id column charges each person in a privacy ledger: give ledger=..."
                )
            icol = attach_id(src, id, vcol, ecol)
            # refuses bad input (and a spend too small for the levels): nothing charged
            precheck(src, vcol, ecol, engine, led.secret_key(), factor)
            people = charge_people(
                led, src, vcol, ecol, icol, frac, target=target, sd_norm=sd_norm
            )  # or BudgetExceeded; src now holds the granted level per row
            ticket, factor = people.ticket, 1.0
        elif led is not None:
            # refuses bad input (and a spend too small for the levels): nothing charged. On
            # DuckDB with few levels its one scan is the tiers pass: the sums of the values'
            # grid wait, unused, on the source until the charge succeeds (dropped with it by
            # the finally below if the charge refuses or fails)
            fp = precheck(src, vcol, ecol, engine, led.secret_key(), factor, (lo_f, hi_f))
            ids = dataset_identities(fp, dataset, dataset_scope)
            ticket = led.charge(ids, frac)  # or BudgetExceeded
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
    if people is not None and led is not None:
        rel = replace(
            rel,
            dataset=dataset.strip() if dataset is not None else None,
            ledger_path=led.path,
            id_column=id,
            people=people.receipt,
            # tau* (or the table's cap) of the run levels, which the charge used; the release
            # ran on the levels capped at it (the same tau*, up to the last bits of a float)
            saturation_level=people.cap,
            plan=rel.plan + "; + ledger check pass, keyed-hash pass, per-person charge",
            recorded=True,
        )
    elif ticket is not None and led is not None:
        rel = replace(
            rel,
            dataset=dataset.strip() if dataset is not None else None,
            ledger_path=led.path,
            budget_remaining=float(ticket.remaining),
            plan=rel.plan + _check_note(src),
            recorded=True,
        )
    if ticket is not None and led is not None:
        try:
            led.record(ticket, rel, target=rel.target)
        except Exception as exc:
            # the release happened and was paid for (the charge stands, never undone): the
            # caller still gets it, flagged as not in the history (fail closed is about
            # charging, which came first)
            rel = replace(rel, recorded=False, record_failure=type(exc).__name__)
    return rel


def _check_note(src: Any) -> str:
    """The dataset ledger's check passes, for the plan (DuckDB's light check: one pass, the
    release's own tiers pass when it used that scan's sums)."""
    if getattr(src, "tiers_from_check", False):
        return (
            "; no pass of its own for the ledger's check (that pass, before the charge: rows "
            "and good values per level, from which every refusal is decided, and the sums of "
            "the values' grid, unused until the charge succeeded; the keyed level profile "
            "from the level counts)"
        )
    if getattr(src, "check_passes", 2) == 1:
        return (
            "; + 1 ledger check pass (rows per level and whether every value is finite; the "
            "keyed level profile from the level counts)"
        )
    return "; + 2 ledger check passes (keyed level profile, cell counts)"


def _open_ledger(path: Any) -> Any:
    from hdp_release.ledger.store import PrivacyLedger

    if not isinstance(path, (str, os.PathLike)):
        raise ReleaseError(
            f"ledger must be a PrivacyLedger or a path to one, got {type(path).__name__}"
        )
    return PrivacyLedger(path)


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
            h, passes, plan = fast_histogram(
                src, vcol, ecol, lo_f, hi_f, c, engine, tiers_only=True
            )
        else:
            h, passes, plan = fast_histogram(src, vcol, ecol, lo_f, hi_f, c, engine)
        if h is None:
            h = src.histogram(vcol, ecol, lo_f, hi_f)
            passes += 1
        if h.n_rows == 0:
            raise ReleaseError("the table is empty: no users, nothing to release")
        if h.n_bad_eps:
            raise_bad_eps(src, ecol, h.n_bad_eps)
        if h.n_bad_value:
            raise_bad_value(src, vcol, h.n_bad_value)
        zero = h.bin == ZERO_BIN
        pub = h.bin == PUBLIC_BIN
        fin = ~zero & ~pub
        if bool((h.n[pub] > 0).any()):
            check_public(src, ecol)
        check_level_range(h, fin, src, ecol, factor)
        n_excluded = int(h.n[zero].sum())
        n_public = int(h.n[pub].sum())
        n_used = int(h.n[fin].sum()) + n_public
        if n_used == 0:
            raise ReleaseError(
                f"no usable user: all {n_excluded:,} rows have eps = 0 (data not to be used)"
            )
        if n_public == n_used:
            return all_public(
                h, pub, lo_f, hi_f, engine, n_excluded, target, sd_norm, data_sd, factor
            )
        norm = None
        if target == "table":
            if bool((h.emin[fin] == h.emax[fin]).all()):
                rows, tau, norm = plan_tiers_table(h, fin, pub, n_excluded)
                kind = "tiers"
            else:
                rows, tau, norm = plan_bins_table(h, fin, pub, n_excluded)
                kind = "level bins"
        elif bool((h.emin[fin] == h.emax[fin]).all()):
            rows, tau = plan_tiers(h, fin, pub, sd_norm)
            kind = "tiers"
        else:
            try:
                rows, tau, more = plan_bins(h, src, fin, pub, c)
            except BracketMissed:  # the sample misled the bracket: the general plan
                h = src.histogram(vcol, ecol, lo_f, hi_f)
                fin = (h.bin != ZERO_BIN) & (h.bin != PUBLIC_BIN)
                pub = h.bin == PUBLIC_BIN
                rows, tau, more = plan_bins(h, src, fin, pub, c)
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
    rel = finish(
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
