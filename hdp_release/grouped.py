"""A private mean per segment: ``release_means`` (issue 28).

API: ``release_means(source, *, value, eps, by, lo, hi, target="population", keys=None,
id=None, ledger=None, spend=1, dataset=None, tiers=None, engine="duckdb", data_sd=None)
-> GroupedRelease`` (hdp_release.grouped_result).

Privacy model (as the paper's). Who is in the table, each person's privacy level and each
person's segment (the ``by`` columns) are public attributes, declared like eps: they choose
the segment and the weights, never enter a sum. What is protected is the value: neighbouring
tables differ in one person's value (the paper's neighbouring relation). Each segment's
estimate is ``release_mean``'s estimator (ADPM, Algorithm 1, or TableMean) run on that
segment's rows alone, with its own tau* (or cap), weights, OpenDP Laplace noise and proven 95%
interval.

Proof sketch (parallel composition). Fix the public attributes and let two tables differ in
person i's value only. Person i is in exactly one segment s(i); every other segment's
estimate is a function of rows that are the same in both tables, drawn with independent
noise, so its output distribution is identical. Segment s(i)'s estimate is the affine
release <w, x> + Laplace(b) of hdp_release.release, whose loss for person i is w_i R / b <=
r_i <= their run level eps_i x spend (checked by OpenDP's privacy map per receipt row, fail
closed). The joint output's privacy loss for person i is therefore that one segment's r_i:
each person's loss is at most their run level, once, whatever the number of segments. The
set of segments present and their user counts are functions of the public attributes only
(released, as release_mean releases the users per level).

Keys. By default, the segments present in the table (sorted). With ``keys=`` (a list of
values, or of tuples for several ``by`` columns), exactly those segments in that order: a
key given but absent gets the mid-range, computed from no data (ADPM's answer when its worst
case passes 1/4, as it does with no user), and an interval over the whole range; a key
present but not given is left out (its rows are not used) and counted (``n_left_out``,
``users_left_out``). Keys are matched as text (:func:`hdp_release.grouped_result.key_text`:
a key file's '3' matches a column's 3).

Checks. Those of ``release_mean`` (exact column names, every value a finite number, levels 0,
1e-6..1e6 or public, the range, the spread), plus: every ``by`` column exists (exact name),
is not the value or eps column, and no two are the same; a missing segment key (NULL, or NaN
in a float column) is REFUSED with its row and column (never made a segment of its own: a
missing attribute is a data error, as a missing level is); more than MAX_SEGMENTS (10,000)
segments are refused. All of these come before anything is computed from the values (the
segment pass reads the segment columns only) and, with a ledger, before the charge.

Ledger. The dataset ledger charges the dataset once for the whole grouped release (its
content fingerprint and name, as release_mean), ``spend`` of every person's level: each
person's value is used once. With ``id=`` (the per-person ledger, hdp_release.ledger.people;
DuckDB and Spark) each person is charged once, in one check-and-charge transaction before any
value is read: their run level is r_i = min(spend x eps_i, remaining_i) from the ledger, each
segment plans ADPM or TableMean on its own persons' run levels (its tau* or cap from those
alone), and person i is charged the level granted in THEIR segment, min(r_i, tau_{s(i)}).
Why this is a valid individual filter (Feldman and Zrnic 2021, as for release_mean): the run
levels, the segments' caps and so every charge are functions of the levels, the segments and
past charges only, never of the values; by parallel composition (above) person i's loss in
this release is at most their own segment's grant, so the filter's per-step bound is that
grant, and the ledger stops each person's sum at their level. Duplicated ids are refused
(their count, never an id) before anything is charged; persons of segments left out by
``keys=`` are not charged (their values are not used); a segment whose persons have all spent
their level gets the mid-range from no data and says so (refused there), and a release in
which nobody has anything left is refused (BudgetExceeded). The receipt per segment and level
then has asked / run / lost / kept (``GroupedRelease.people``).

Engine. One pass over the segment columns (segments present, missing keys, the limit), then
ONE grouped aggregate pass (GROUP BY segment, level bin; hdp_release.engines.grouped; on
DuckDB, when the levels are a few tiers, grouped by segment and level instead, the same bins).
Per segment planning: the tiers plan of the population target is solved for every segment at
once (hdp_core.segments.adpm_tiers_batch, vectorised, bit for bit hdp.adpm's tau*); per-user
levels on the population target walk to tau* on each segment's bins as arrays
(hdp_release.grouped_bins, bit for bit release_mean's general plan); the second pass (the
fetch of the bin in which tau* falls) is made only for the segments that need one, for all of
them in ONE batched query on either engine (a bin of more than 65,536 users is refined on its
segment's rows first); the table target uses release_mean's plans per segment. Noise, the
privacy check and the interval: hdp_release.finish per segment (OpenDP's measurement, its map
per receipt row and a noise per segment; segments of the same noise scale share the
measurement and its map results, each drawing its own noise; the receipts' DataFrames built
at once).
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from hdp_core.errors import ReleaseError
from hdp_core.intervals import TARGETS
from hdp_release.checks import (
    check_level_range,
    check_public,
    check_range,
    check_sd,
    precheck,
    raise_bad_eps,
    raise_bad_value,
)
from hdp_release.engines.base import (
    PUBLIC_BIN,
    ZERO_BIN,
    check_column_names,
    match_column,
)
from hdp_release.engines.grouped import (
    MAX_SEGMENTS,
    check_segment_limit,
    grouped_histogram,
    segment_counts,
)
from hdp_release.engines.open import open_source
from hdp_release.grouped_plan import plan_segments
from hdp_release.grouped_result import GroupedRelease, key_text, with_people
from hdp_release.plan import const
from hdp_release.preview import tier_levels
from hdp_release.result import Release

MAX_BY = 4
"""At most this many segment columns."""
NOBODY_TOUCHED = (
    "None of the segments asked for is in the table: no person's value was used, so nobody "
    "was charged (per-person ledger) and nothing was recorded."
)


def release_means(
    source: Any,
    *,
    value: str,
    eps: str,
    by: str | list[str] | tuple[str, ...],
    lo: float,
    hi: float,
    target: str = "population",
    keys: Any = None,
    id: str | None = None,
    dataset_scope: str | None = None,
    ledger: Any = None,
    spend: Any = 1,
    dataset: str | None = None,
    tiers: Any = None,
    engine: str = "duckdb",
    data_sd: float | None = None,
) -> GroupedRelease:
    """Release the mean of ``value`` (clamped to [lo, hi]) in every segment of ``by`` (a
    column name or a list of up to four), each person at their own privacy level ``eps``.

    Returns a :class:`GroupedRelease`: per segment its key, users, estimate, 95% interval
    (proven, hdp_core.intervals, for the segment's ``target``: "population", ADPM, or
    "table", TableMean), noise scale, tau* or cap and bias bound, and the receipt per segment
    and level. Each person's privacy loss is their own segment's granted r_i <= their run
    level (parallel composition: see the module docstring for the model and the proof
    sketch). ``keys``, ``ledger``, ``spend``, ``dataset``, ``dataset_scope``, ``tiers``,
    ``engine``, ``data_sd``: as in the module docstring and
    :func:`hdp_release.release.release_mean`. ``id``: the person id column (needs a
    ledger): each person is charged once, the level granted in their own segment (module
    docstring, "Ledger"); ``GroupedRelease.people`` is then the receipt per segment and level
    (asked, run at, lost, kept). Raises ReleaseError (BadCellError with row, column and
    reason) for bad input before anything is computed from the values, never quoting a
    cell; BudgetExceeded when nobody in the release has any budget left (nothing charged)."""
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
    by_cols = _by_list(by)
    lo_f, hi_f = check_range(lo, hi)
    sd_norm = check_sd(data_sd, lo_f, hi_f)
    c = const(sd_norm)
    frac = as_spend(spend)
    factor = spend_factor(frac)
    led = None
    if ledger is None and os.environ.get("HDP_LEDGER"):
        ledger = os.environ["HDP_LEDGER"]  # as release_mean: the machine's shared ledger
    if ledger is not None and ledger is not False:
        if isinstance(ledger, PrivacyLedger):
            led = ledger
        elif isinstance(ledger, (str, bytes)) or hasattr(ledger, "__fspath__"):
            led = PrivacyLedger(ledger)
        else:
            raise ReleaseError(
                f"ledger must be a PrivacyLedger or a path to one, got {type(ledger).__name__}"
            )
    if dataset is not None:
        name_identity(dataset, dataset_scope)
        if led is None:
            raise ReleaseError(
                "a dataset name is only used with a ledger (ledger=...): without one nothing "
                "is tracked"
            )
    if id is not None and led is None:
        raise ReleaseError("an id column charges each person in a privacy ledger: give ledger=...")
    src, vcol, ecol = open_source(source, value, eps, engine, tier_levels(tiers))
    ticket = people = None
    try:
        bcols = _match_by(src, vcol, ecol, by_cols)
        icol = None if id is None else _attach_id(src, id, vcol, ecol, bcols)
        present = segment_counts(src, bcols, engine)  # segment columns only; refuses missing
        check_segment_limit(len(present))
        chosen, n_out, users_out = _choose(present, keys, len(bcols))
        if led is not None and icol is not None:
            people = _charge_persons(
                led, src, (vcol, ecol, icol), bcols, chosen, frac, engine, target, sd_norm, factor
            )
            if people is not None:
                ticket, factor = people.ticket, 1.0
        elif led is not None:
            # refuses bad input (and a spend too small for the levels): nothing charged
            fp = precheck(src, vcol, ecol, engine, led.secret_key(), factor)
            ticket = led.charge(dataset_identities(fp, dataset, dataset_scope), frac)
            factor = ticket.factor
        src.level_factor = factor
        rels, plan = _release_segments(
            src,
            vcol,
            ecol,
            bcols,
            chosen,
            lo_f,
            hi_f,
            sd_norm,
            data_sd,
            c,
            engine,
            target,
            factor,
        )
    except BaseException as exc:
        if ticket is not None and led is not None:
            with contextlib.suppress(Exception):
                led.record_failure(ticket, exc)
        raise
    finally:
        src.close()
    out = GroupedRelease(
        tuple(by_cols),
        tuple(k for k, _, _ in chosen),
        tuple(rels),
        tuple(p for _, p, _ in chosen),
        target,
        lo_f,
        hi_f,
        engine,
        n_out,
        users_out,
        plan,
        spend=float(frac),
        level_factor=factor,
    )
    if people is not None and led is not None:
        out = with_people(out, people, chosen, id or "")
        out = replace(
            out,
            dataset=dataset.strip() if dataset is not None else None,
            ledger_path=led.path,
            recorded=True,
        )
    elif id is not None:  # no segment asked for is in the table: nobody touched
        out = replace(out, notes=(*out.notes, NOBODY_TOUCHED))
    elif ticket is not None and led is not None:
        out = replace(
            out,
            dataset=dataset.strip() if dataset is not None else None,
            ledger_path=led.path,
            budget_remaining=float(ticket.remaining),
            recorded=True,
        )
        try:
            led.record(ticket, out.to_dict(), target=target)
        except Exception as exc:  # paid for: returned, flagged as not in the history
            out = replace(out, recorded=False, record_failure=type(exc).__name__)
    return out


def _attach_id(src: Any, id_col: str, vcol: str, ecol: str, bcols: list[str]) -> str:
    from hdp_release.ledger.people import attach_id

    icol = attach_id(src, id_col, vcol, ecol)
    if icol in bcols:
        raise ReleaseError(
            f"the id column {icol!r} is also a segment column; a segment must group persons"
        )
    return icol


def _charge_persons(
    led: Any,
    src: Any,
    cols: tuple[str, str, str],
    bcols: list[str],
    chosen: list,
    frac: Fraction,
    engine: str,
    target: str,
    sd_norm: float | None,
    factor: float,
) -> Any:
    """The per-person check-and-charge of a release per segment (module docstring): the
    ledger's precheck (every refusal from the cells' kinds first), then the charge; returns
    the PeopleCharge, or None when no released segment is in the table (nobody touched)."""
    from hdp_release.ledger.people import charge_people

    vcol, ecol, icol = cols
    # refuses bad input (and a spend too small for the levels): nothing charged
    precheck(src, vcol, ecol, engine, led.secret_key(), factor)
    keys = [(i, k) for i, (k, here, _) in enumerate(chosen) if here]
    if not keys:
        return None
    return charge_people(
        led, src, vcol, ecol, icol, frac, target=target, sd_norm=sd_norm, by=bcols, keys=keys
    )  # or BudgetExceeded; src now holds the granted level per row


def _by_list(by: Any) -> list[str]:
    cols = [by] if isinstance(by, str) else list(by) if isinstance(by, (list, tuple)) else None
    if not cols or not all(isinstance(b, str) and b for b in cols):
        raise ReleaseError("by must name a segment column (a non-empty string) or a list of them")
    if len(cols) > MAX_BY:
        raise ReleaseError(f"by names {len(cols)} columns; at most {MAX_BY} segment columns")
    if len(set(cols)) != len(cols):
        raise ReleaseError("by names the same column twice")
    return cols


def _match_by(src: Any, vcol: str, ecol: str, by_cols: list[str]) -> list[str]:
    """The by columns as the engine names them (exact names; not the value or eps column)."""
    raw, read = list(src.raw_names), list(src.read_names)
    braw = [match_column(raw, b, "segment") for b in by_cols]
    check_column_names(raw, read, braw)
    out = [read[raw.index(b)] for b in braw]
    for b in out:
        if b in (vcol, ecol):
            role = "value" if b == vcol else "eps"
            raise ReleaseError(
                f"the segment column {b!r} is the {role} column; a segment must be a column "
                "of its own"
            )
    return out


def _choose(present: list, keys: Any, m: int) -> tuple[list, int, int]:
    """[(key, present, rows)] in output order, and the segments / rows left out."""
    if keys is None:
        order = sorted(present, key=lambda kr: tuple(_sort_key(x) for x in kr[0]))
        return [(k, True, n) for k, n in order], 0, 0
    given = list(keys) if not isinstance(keys, (str, bytes)) else None
    if given is None:
        raise ReleaseError("keys must be a list of segment keys")
    if len(given) > MAX_SEGMENTS:
        raise ReleaseError(f"keys lists more than {MAX_SEGMENTS:,} segments")
    by_text = {tuple(key_text(x) for x in k): (k, n) for k, n in present}
    out, seen = [], set()
    for i, g in enumerate(given):
        t = tuple(g) if isinstance(g, (tuple, list)) else (g,)
        if len(t) != m or any(x is None or (isinstance(x, float) and math.isnan(x)) for x in t):
            raise ReleaseError(
                f"keys entry {i + 1}: a key needs {m} value{'s' if m > 1 else ''} (one per "
                "segment column), none missing"
            )
        kt = tuple(key_text(x) for x in t)
        if kt in seen:
            raise ReleaseError(f"keys entry {i + 1} repeats an earlier key")
        seen.add(kt)
        if kt in by_text:
            k, n = by_text[kt]
            out.append((k, True, n))
        else:
            out.append((t, False, 0))
    left = [n for kt, (_, n) in by_text.items() if kt not in seen]
    return out, len(left), int(sum(left))


def _sort_key(x: Any) -> tuple:
    if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool):
        return (0, float(x), "")
    return (1, 0.0, str(x))


def _release_segments(
    src, vcol, ecol, bcols, chosen, lo, hi, sd_norm, data_sd, c, engine, target, factor
) -> tuple[list[Release], str]:
    try:
        hists = grouped_histogram(src, vcol, ecol, bcols, lo, hi, engine)
        every = hists.union()
        if every.n_rows == 0:
            raise ReleaseError("the table is empty: no users, nothing to release")
        if every.n_bad_eps:
            raise_bad_eps(src, ecol, every.n_bad_eps)
        if every.n_bad_value:
            raise_bad_value(src, vcol, every.n_bad_value)
        fin_all = (every.bin != ZERO_BIN) & (every.bin != PUBLIC_BIN)
        if bool((every.n[every.bin == PUBLIC_BIN] > 0).any()):
            check_public(src, ecol)
        check_level_range(every, fin_all, src, ecol, factor)
        passes = [1]
        rels = plan_segments(
            src,
            bcols,
            chosen,
            hists,
            lo,
            hi,
            sd_norm,
            data_sd,
            c,
            engine,
            target,
            factor,
            passes,
        )
    except ReleaseError:
        raise
    except Exception as exc:  # an engine's own error: one line, no data
        raise ReleaseError(
            f"the {engine} engine could not compute the release ({type(exc).__name__}); "
            "nothing was released"
        ) from None
    more = passes[0] - 1
    plan = "1 segment pass + 1 grouped aggregate pass" + (
        f" + {more} pass{'es' if more > 1 else ''} for segments whose tau* falls inside a bin"
        if more
        else ""
    )
    return rels, plan
