"""The person is the privacy unit: a per-person ledger (issue 30).

**Semantics.** A release with ``id="user_id"`` charges every person (row) it touches, whatever
the column, subset, file or target. A person's budget is their *current* level eps_i (the
level in the table being released: a person who tightened their setting may already be
exhausted). The ledger keeps, per person, the exact total loss spent so far, S_i. A release
at ``spend`` s runs person i at

    r_i = min(s x eps_i, eps_i - S_i)   (0 when nothing is left, or below LEVEL_MIN),

ADPM (population) or TableMean (table) then runs on the levels r_i; person i is charged the
level they are *granted*, g_i = min(r_i, tau) (tau: ADPM's saturation level tau*, or the
table's cap 1/(n eta), both computed from the run levels alone), which is what OpenDP's
privacy map checks their loss against. The release itself runs on the levels g_i (the
saturation lemma: capping at tau* leaves G(t) = sum_{eps < t} eps (t - eps) unchanged below
tau*, so ADPM's tau* and weights are the same), and OpenDP's map checks every receipt row's
loss <= its level g_i, so a person is never granted more than they were charged (fail
closed). A saturated person (eps_i > tau) loses only tau and *keeps* the rest for later
releases. Persons with nothing left take part with weight 0 (as eps = 0 users).

**Why this is private (the individual privacy filter).** Feldman and Zrnic, "Individual
Privacy Accounting via a Rényi Filter" (NeurIPS 2021), prove that an adaptive sequence of
mechanisms in which person i's loss in step t is a *predictable* bound rho_i^(t) (chosen from
the outputs of steps < t and public information only) and whose sum is stopped at a fixed
budget B_i composes to B_i-DP for person i. Sketch for pure eps (Laplace): the privacy loss
random variable of the whole transcript is the sum of the steps' losses, each at most
rho_i^(t) in absolute value whatever the neighbouring data; the filter's stopping rule
sum_t rho_i^(t) <= B_i depends only on the rho's, which depend only on the levels (public, in
the table), the ledger (past charges, themselves functions of levels) and past outputs, never
on person i's value; so on every transcript the sum of losses is <= B_i and the density ratio
of neighbouring datasets is bounded by exp(B_i). Here rho_i = g_i: r_i, tau and g_i are
functions of the levels and S_i only; the values enter only the release (after the charge),
and a person with S_i = eps_i gets weight 0 (loss 0). A person whose level changes between
releases is held to the level in force, against everything already spent.

**A release per segment** (hdp_release.grouped.release_means with ``id=``). Each person's
run level r_i is as above (it does not depend on the segments); each segment g plans ADPM or
TableMean on its own persons' run levels, so its cap tau_g comes from those alone, and person
i is charged g_i = min(r_i, tau_{g(i)}), the level granted in their OWN segment, once for the
whole release, in the same single transaction. Why this is private: by parallel composition
under the paper's neighbouring relation (a person's level and segment are public, their value
is protected), changing person i's value changes only segment g(i)'s estimate (the others are
functions of other persons' values with independent noise), whose loss for i is at most g_i;
so the release is one step of the filter with rho_i = g_i. g_i is again a function of levels,
segments and past charges only (never of values), so the filter argument above holds as is:
the sum over steps is stopped at eps_i. Persons of a segment left out by ``keys=`` are not
touched (their values are not used) and are not charged.

**Exact arithmetic.** Integers on a fixed grid of 2^-42 nats (HUGEINT in DuckDB): a budget is
floor(eps x 2^42) (rounded DOWN), the run level floor(budget x s) (s an exact fraction) capped
by what remains, a charge ceil(g x 2^42) (rounded UP) of a granted level g that is at most the
run level's float (itself rounded down from the grid), so S_i + charge <= budget exactly. A
fine grid (not exact fractions) keeps the per-person state a fixed-width integer the engine
adds in SQL; the rounding only ever charges more (at most 2^-42 nats per release) or runs
less. A public person (eps = inf) is charged their grant tau (or 2^42 x LEVEL_MAX when
nothing caps them): should they later set a finite level, it is held against that.

**Identity.** An id is stored only as a keyed hash: the first 128 bits of
SHA-256(secret || '|' || id as text) with the ledger's own 32-byte secret (hex), computed in
the engine (one SQL pass, never a Python loop); truncation defeats length extension. On
Spark the secret never enters a query plan (no literal): it reaches the executors as the one
row of a DataFrame built from an RDD, cross-joined, so ``explain()`` and the
query-execution text name only its column (tested). Ids are
text or integers (a CSV's id column is read as text, trimmed: '007' is not '7'); float ids
are refused. Null and duplicated ids are refused before anything is charged (row and
column; the count, never an id).

**Storage.** The check-and-charge SQL lives in hdp_release.ledger.person_charge
(engine-free), the Spark side in hdp_release.ledger.people_spark. Table ``hdp_people`` (h
UHUGEINT: the hash's 16 bytes as one big-endian integer; a ledger that stored them as a BLOB
is converted in its next per-person charge's transaction, person_charge.migrate_people;
level: the last level seen; spent: HUGEINT grid units; releases;
last_release) in the ledger's DuckDB file; a release with an id
is a row of ``releases`` (history, record / record_failure as usual) with no dataset charge:
its persons are its budget. The check-and-charge of every person is one transaction, under
the ledger's exclusive lock, before anything is computed from the values.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from hdp_core.errors import ReleaseError
from hdp_release.engines.base import check_column_names, match_column
from hdp_release.engines.duckdb_sql import type_text
from hdp_release.ledger.modes import has_people_table
from hdp_release.ledger.people_spark import attach_spark, charge_spark, is_spark
from hdp_release.ledger.person_charge import (
    GRID_BITS,
    H0,
    PERSONS,
    SEG,
    UNIT,
    E,
    H,
    PeopleCharge,
    V,
    as_hash_bytes,
    check_reserved,
    duck_id_text,
    null_id_row,
    people_charge,
    refuse_ids,
    run_charge,
    spend_fraction,
    to_units,
)
from hdp_release.ledger.store import PrivacyLedger

__all__ = [
    "GRID_BITS",
    "PERSONS",
    "PeopleCharge",
    "attach_id",
    "charge_people",
    "person_summary",
    "to_units",
]

_INT_TYPES: tuple[str, ...] = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT")
_INT_TYPES += ("UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT")


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# ------------------------------------------------------------------------------ the id column
def attach_id(src: Any, id_col: str, vcol: str, ecol: str) -> str:
    """Match the id column on an open DuckDB source (exactly, as the value and eps columns):
    distinct from both, of integer or text type; a CSV's id column is re-read as text. Returns
    the column's name as the engine reads it."""
    raw, read = list(src.raw_names), list(src.read_names)
    iraw = match_column(raw, id_col, "id")
    check_column_names(raw, read, [iraw])
    icol = read[raw.index(iraw)]
    if icol in (vcol, ecol):
        raise ReleaseError(
            f"the id column {icol!r} is also the {'value' if icol == vcol else 'eps'} column; "
            "ids must be a column of their own"
        )
    if is_spark(src):
        return attach_spark(src, icol)
    if src.kind == "csv" and not src.all_varchar and src.rel.endswith(")"):
        src.rel = src.rel[:-1] + f", types = {{'{icol.replace(chr(39), chr(39) * 2)}': 'VARCHAR'}})"
        desc = src.con.execute(f"DESCRIBE SELECT * FROM {src.rel}").fetchall()
        src.types = {str(r[0]): str(r[1]).upper() for r in desc}
    t = src.types.get(icol, "")
    if not (t in _INT_TYPES or t in ("VARCHAR", "STRING", "TEXT") or t.endswith(",0)")):
        raise ReleaseError(
            f"id column {icol!r} has type {type_text(t)}; ids must be integers or text (a float "
            "id can print differently in another engine)"
        )
    return icol


# ------------------------------------------------------------------------------ the charge
def charge_people(
    led: PrivacyLedger,
    src: Any,
    vcol: str,
    ecol: str,
    icol: str,
    spend: Fraction,
    *,
    target: str,
    sd_norm: float | None,
    by: list[str] | None = None,
    keys: list[tuple[int, tuple]] | None = None,
) -> PeopleCharge:
    """Check and charge every person of the open source (DuckDB or Spark) in one ledger
    transaction (module docstring), before anything is computed from the values; then point
    the source at the levels granted (the value column, the granted level per row under the
    eps column's name, and the ``by`` columns), so the release runs at them with level
    factor 1. With ``by`` (a release per segment): ``keys`` lists (segment index, key) of
    the segments released; each person is charged the level granted in their segment (the
    receipt gets a ``segment`` column: that index); rows of other segments are not charged
    and are dropped. Raises BadCellError (null id: row, column), ReleaseError (duplicated
    ids: their count), BudgetExceeded (no person has any budget left; nothing charged)."""
    s = spend_fraction(spend)
    key = led.secret_key().hex() + "|"
    extra = list(by or [])
    check_reserved([vcol, *extra])
    if is_spark(src):
        out = charge_spark(led, src, vcol, ecol, icol, s, key, target, sd_norm, extra, keys)
        return people_charge(out, spend, led, by is not None)
    join, gsel = "", "0"
    if by is not None:
        _keys_table(src, extra, keys or [])
        on = " AND ".join(f"t.{_q(c)} = k.hdp_k{i}__" for i, c in enumerate(extra))
        join, gsel = f" LEFT JOIN hdp_keys k ON {on}", f"k.{SEG}"
    carry = [V] + [f"hdp_b{i}__" for i in range(len(extra))]  # ride beside each person
    bsel = "".join(f", t.{_q(c)} AS hdp_b{i}__" for i, c in enumerate(extra))
    # the keyed hashes (in parallel in the engine) go to the ledger as one Arrow table, the
    # value beside them, and come back with the granted level: no copy, no join by hash.
    # Each 128-bit hash travels as two unsigned 64-bit halves (Arrow has no 128-bit integer)
    # and becomes one UHUGEINT in the ledger: fixed-width keys join, count and store about
    # three times cheaper than 16-byte BLOBs (issue 30)
    sha = f"sha256($k || {duck_id_text(src, icol)})"
    held = [  # held only until the ledger's working table holds the persons
        src.con.sql(
            f"SELECT CAST('0x' || substr(s, 1, 16) AS UBIGINT) AS {H}, "
            f"CAST('0x' || substr(s, 17, 16) AS UBIGINT) AS {H0}, * EXCLUDE (s) FROM "
            f"(SELECT {sha} AS s, t.{_q(vcol)} AS {V}, {src.e_expr} AS {E}{bsel}, "
            f"{gsel} AS {SEG} FROM {src.rel} t{join})",
            params={"k": key},
        ).to_arrow_table()
    ]
    granted: list[Any] = []
    h128 = f"((CAST({H} AS UHUGEINT) << 64) | CAST({H0} AS UHUGEINT))"

    def before(con: Any) -> None:
        con.register("hdp_in", held[0])
        # repeated ids: fewer distinct keyed hashes than rows (equal ids, equal hashes; a
        # collision of 128-bit hashes is counted as a repeat: fails safe)
        n_null, n_dup = con.execute(
            f"SELECT count_if({H} IS NULL), count({H}) - count(DISTINCT {h128}) FROM hdp_in"
        ).fetchall()[0]
        refuse_ids(icol, int(n_null), int(n_dup), lambda: null_id_row(src, icol))

    def joined(con: Any) -> None:
        con.unregister("hdp_in")
        held.clear()

    def after(con: Any) -> None:
        cols = "".join(f", hdp_b{i}__ AS {_q(c)}" for i, c in enumerate(extra))
        sql = f"SELECT {V} AS {_q(vcol)}, c AS {_q(ecol)}{cols} FROM hdp_chg"
        granted.append(con.sql(sql).to_arrow_table())

    inp = f"(SELECT {h128} AS h, {E} AS e, {SEG} AS g, {', '.join(carry)} FROM hdp_in "
    inp += f"WHERE {SEG} IS NOT NULL)"
    out = run_charge(
        led, inp, s, target, sd_norm, before=before, after=after, carry=carry, joined=joined
    )
    if by is not None:
        src.con.execute("DROP TABLE hdp_keys")
    src.con.register("hdp_rel", granted[0])
    src.rel = "hdp_rel"
    src.types = {**src.types, ecol: "DOUBLE"}
    return people_charge(out, spend, led, by is not None)


def _keys_table(src: Any, by: list[str], keys: list[tuple[int, tuple]]) -> None:
    """Temp table hdp_keys (hdp_g__, hdp_k0__, ...): each released segment's index and key,
    the keys as typed query parameters (never spliced into SQL text)."""
    names = ", ".join([SEG, *[f"hdp_k{i}__" for i in range(len(by))]])
    if not keys:
        cols = ", ".join(
            [f"CAST(NULL AS BIGINT) AS {SEG}"]
            + [f"CAST(NULL AS {src.types[c]}) AS hdp_k{i}__" for i, c in enumerate(by)]
        )
        src.con.execute(f"CREATE OR REPLACE TEMP TABLE hdp_keys AS SELECT {cols} LIMIT 0")
        return
    casts = ", ".join(f"CAST(? AS {src.types[c]})" for c in by)
    vals = ", ".join(f"(CAST(? AS BIGINT), {casts})" for _ in keys)
    params = [x for g, k in keys for x in (int(g), *k)]
    src.con.execute(
        f"CREATE OR REPLACE TEMP TABLE hdp_keys AS SELECT * FROM (VALUES {vals}) v({names})",
        params,
    )


# ------------------------------------------------------------------------------ inspection
def person_summary(led: PrivacyLedger) -> Any:
    """Counts only, never ids or hashes: per last-seen level, the persons, how many have
    spent anything and how many have nothing left, and their spent and remaining (min, mean,
    max, nats). An empty DataFrame when no release had an id."""
    import pandas as pd

    cols = ["eps", "persons", "charged", "exhausted", "spent_min", "spent_mean", "spent_max"]
    cols += ["remaining_min", "remaining_max"]
    with led.transaction() as con:
        if not has_people_table(con):
            return pd.DataFrame(columns=cols)
        budget = (
            f"CASE WHEN isinf(level) THEN NULL ELSE CAST(floor(level * {UNIT!r}) AS HUGEINT) END"
        )
        rows = con.execute(
            f"""SELECT level, count(*), count_if(spent > 0),
                count_if(coalesce(b > 0 AND spent >= b, false)),
                min(spent), avg(CAST(spent AS DOUBLE)), max(spent), min(b - spent), max(b - spent)
            FROM (SELECT level, spent, {budget} AS b FROM hdp_people)
            GROUP BY level ORDER BY level"""
        ).fetchall()
    out = []
    for r in rows:
        rem = [math.inf if x is None else max(int(x), 0) / UNIT for x in (r[7], r[8])]
        spent = [int(r[4]) / UNIT, float(r[5]) / UNIT, int(r[6]) / UNIT]
        out.append([float(r[0]), int(r[1]), int(r[2]), int(r[3]), *spent, *rem])
    return pd.DataFrame(out, columns=cols)


def person_spent_units(led: PrivacyLedger) -> dict[bytes, int]:
    """Every person's exact spend in grid units by keyed hash: for tests and audits only
    (the hashes never leave this process; never shown)."""
    with led.transaction() as con:
        if not has_people_table(con):
            return {}
        return {
            as_hash_bytes(h): int(v)
            for h, v in con.execute("SELECT h, spent FROM hdp_people").fetchall()
        }
