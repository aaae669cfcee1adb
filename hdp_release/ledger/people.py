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
the engine (one SQL pass, never a Python loop); truncation defeats length extension. Ids are
text or integers (a CSV's id column is read as text, trimmed: '007' is not '7'); float ids
are refused. Null and duplicated ids are refused before anything is charged (row and
column; the count, never an id).

**Storage.** Table ``hdp_people`` (h BLOB: the hash; level: the last level seen; spent:
HUGEINT grid units; releases; last_release) in the ledger's DuckDB file; a release with an id
is a row of ``releases`` (history, record / record_failure as usual) with no dataset charge:
its persons are its budget. The check-and-charge of every person is one transaction, under
the ledger's exclusive lock, before anything is computed from the values.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from hdp_core.errors import BadCellError, BudgetExceeded, ReleaseError
from hdp_core.table_mean import table_mean
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN
from hdp_release.engines.base import check_column_names, lit, match_column
from hdp_release.ledger.modes import check_persons_allowed
from hdp_release.ledger.store import ChargeTicket, PrivacyLedger
from hdp_release.plan import run_profile, tiers_solution

__all__ = [
    "GRID_BITS",
    "PERSONS",
    "PeopleCharge",
    "attach_id",
    "charge_people",
    "person_summary",
    "to_units",
]

GRID_BITS = 42
UNIT = float(1 << GRID_BITS)
"""Grid units per nat: budgets, run levels and charges are integers of 2^-42 nats."""
PUBLIC_CHARGE = math.floor(LEVEL_MAX * UNIT)
MAX_SPEND_DENOMINATOR = 1 << 40
PERSONS = "persons"
"""BudgetExceeded.identity when no person of a release has any budget left."""
MAX_RECEIPT_LEVELS = 64
"""At most this many distinct levels get a receipt row each; more are grouped by 1/8 decade."""

_SCHEMA = """CREATE TABLE IF NOT EXISTS hdp_people (h BLOB NOT NULL, level DOUBLE NOT NULL,
    spent HUGEINT NOT NULL, releases INTEGER NOT NULL, last_release BIGINT NOT NULL)"""
_INT_TYPES: tuple[str, ...] = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT")
_INT_TYPES += ("UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT")
_H, _E, _V = "hdp_h__", "hdp_e__", "hdp_v__"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def to_units(level: float) -> int:
    """A level (nats) as whole grid units, rounded down (a budget)."""
    return math.floor(Fraction(level) * (1 << GRID_BITS))


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
    if _is_spark(src):
        return _attach_spark(src, icol)
    if src.kind == "csv" and not src.all_varchar and src.rel.endswith(")"):
        src.rel = src.rel[:-1] + f", types = {{'{icol.replace(chr(39), chr(39) * 2)}': 'VARCHAR'}})"
        desc = src.con.execute(f"DESCRIBE SELECT * FROM {src.rel}").fetchall()
        src.types = {str(r[0]): str(r[1]).upper() for r in desc}
    t = src.types.get(icol, "")
    if not (t in _INT_TYPES or t in ("VARCHAR", "STRING", "TEXT") or t.endswith(",0)")):
        raise ReleaseError(
            f"id column {icol!r} has type {t}; ids must be integers or text (a float id can "
            "print differently in another engine)"
        )
    return icol


def _is_spark(src: Any) -> bool:
    return hasattr(src, "spark") and hasattr(src, "df")


def _attach_spark(src: Any, icol: str) -> str:
    """attach_id on Spark: a CSV is read again with the id column as text (the other
    columns keep the types Spark inferred)."""
    from pyspark.sql.types import StringType, StructField, StructType

    if src.kind == "csv" and src.path is not None:
        fields = [
            StructField(f.name, StringType(), True) if f.name == icol else f
            for f in src.df.schema.fields
        ]
        src.df = (
            src.spark.read.option("header", True)
            .option("enforceSchema", False)
            .schema(StructType(fields))
            .csv(src.path)
        )
        src.types = {f.name: f.dataType.simpleString().upper() for f in src.df.schema.fields}
    t = src.types.get(icol, "")
    if not (t in ("TINYINT", "SMALLINT", "INT", "BIGINT", "STRING") or t.endswith(",0)")):
        raise ReleaseError(
            f"id column {icol!r} has type {t}; ids must be integers or text (a float id can "
            "print differently in another engine)"
        )
    return icol


def _spark_id_text(src: Any, icol: str) -> Any:
    from pyspark.sql import functions as F

    c = F.col("`" + icol.replace("`", "``") + "`")
    if src.types.get(icol) == "STRING":
        t = F.trim(c)
        return F.when(t == F.lit(""), F.lit(None)).otherwise(t)
    return c.cast("string")


def _id_text(src: Any, icol: str) -> str:
    t = src.types.get(icol, "")
    if t in ("VARCHAR", "STRING", "TEXT"):
        return f"nullif(trim({_q(icol)}), '')"
    return f"CAST({_q(icol)} AS VARCHAR)"


# ------------------------------------------------------------------------------ the charge
@dataclass(frozen=True)
class PeopleCharge:
    """What the per-person check-and-charge did: the ledger ticket (record the release with
    it), the receipt per level (DataFrame: eps, eps_max, persons, asked, run_min, run_max,
    lost_min, lost_max, kept_min, kept_max, saturated, exhausted; levels in nats), the cap
    tau (tau* or the table's cap; inf if none) and counts."""

    ticket: ChargeTicket
    receipt: Any
    cap: float
    persons: int
    new_persons: int
    exhausted: int
    saturated: int


def _spend_fraction(s: Fraction) -> Fraction:
    """The spend the grid arithmetic uses: s itself, or s rounded down to a multiple of 2^-40
    when its terms are too large for 128-bit products (runs less, never more)."""
    if max(s.numerator, s.denominator) <= MAX_SPEND_DENOMINATOR:
        return s
    down = Fraction(math.floor(s * MAX_SPEND_DENOMINATOR), MAX_SPEND_DENOMINATOR)
    if down == 0:
        raise ReleaseError("the spend is too small for the per-person ledger (below 2^-40)")
    return down


def _spend_units(budget: str, p: int, q: int) -> str:
    """SQL of floor(budget x p / q) (a HUGEINT) for a budget in [0, 2^62) (a level of at most
    LEVEL_MAX = 10^6 nats on the 2^-42 grid) and a spend p/q <= 1: in 64-bit integers as
    (b // q) p + ((b % q) p) // q when p q < 2^62 (every term then fits; the same integer,
    and far cheaper per row than a 128-bit division), else in HUGEINT."""
    if p * q < 1 << 62:
        b = f"CAST({budget} AS BIGINT)"
        return f"CAST(({b} // {q}) * {p} + (({b} % {q}) * {p}) // {q} AS HUGEINT)"
    return f"{budget} * CAST({p} AS HUGEINT) // CAST({q} AS HUGEINT)"


def _cap(lv: np.ndarray, ct: np.ndarray, target: str, sd_norm: float | None) -> float:
    """tau (population: ADPM's tau* on the run levels; table: TableMean's cap 1/(n eta))
    from the distinct run levels and their person counts only."""
    if target == "table":
        return float(table_mean(run_profile(lv, ct)).cap_level)
    use = lv > 0
    if not use.any():
        return math.inf
    return float(tiers_solution(lv[use], ct[use], sd_norm)[1])


def _null_row(src: Any, icol: str) -> int:
    rows = src.con.execute(
        f"SELECT rn FROM (SELECT row_number() OVER () AS rn, {_id_text(src, icol)} AS i "
        f"FROM {src.rel}) WHERE i IS NULL ORDER BY rn LIMIT 1"
    ).fetchall()
    return int(rows[0][0]) if rows else 0


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
) -> PeopleCharge:
    """Check and charge every person of the open DuckDB source in one ledger transaction
    (module docstring), before anything is computed from the values; then point the source
    at the levels granted (``src.rel``: the value column and the granted level per row), so
    the release runs at them with level factor 1. Raises BadCellError (null id: row,
    column), ReleaseError (duplicated ids: their count), BudgetExceeded (no person has any
    budget left; nothing charged)."""
    import duckdb

    s = _spend_fraction(spend)
    key = led.secret_key().hex() + "|"
    if vcol in (_H, _E, _V):
        raise ReleaseError(f"the value column may not be named {vcol!r} with an id")
    if _is_spark(src):
        return _charge_spark(led, src, vcol, ecol, icol, spend, s, key, target, sd_norm)
    # the keyed hashes (in parallel in the engine) go to the ledger as one Arrow table, the
    # value beside them, and come back with the granted level: no copy, no join by hash
    held = [  # held only until the ledger's working table holds the persons
        src.con.sql(
            f"SELECT unhex(substr(sha256($k || {_id_text(src, icol)}), 1, 32)) AS {_H}, "
            f"{_q(vcol)} AS {_V}, {src.e_expr} AS {_E} FROM {src.rel}",
            params={"k": key},
        ).to_arrow_table()
    ]

    def free_input() -> None:
        con.unregister("hdp_in")
        held.clear()

    with led.transaction() as con:
        con.execute("BEGIN TRANSACTION")
        try:
            con.register("hdp_in", held[0])
            # repeated ids: as many distinct 64-bit hashes as rows proves there is none (equal
            # ids, equal hashes); fewer (a repeat, or a rare collision) is counted exactly
            n_null, n_dup = con.execute(
                f"SELECT count_if({_H} IS NULL), count({_H}) - count(DISTINCT hash({_H})) "
                f"FILTER (WHERE {_H} IS NOT NULL) FROM hdp_in"
            ).fetchall()[0]
            if n_dup and not n_null:
                n_dup = con.execute(
                    f"SELECT count({_H}) - count(DISTINCT {_H}) FROM hdp_in"
                ).fetchall()[0][0]
            _refuse_ids(icol, int(n_null), int(n_dup), lambda: _null_row(src, icol))
            out = _charge_in(
                con,
                f"(SELECT {_H} AS h, {_E} AS e, {_V} FROM hdp_in)",
                s,
                target,
                sd_norm,
                carry=_V,
                joined=free_input,
            )
            con.execute("COMMIT")
        except BaseException:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass
            raise
        granted = con.sql(
            f"SELECT {_V} AS {_q(vcol)}, c AS {_q(ecol)} FROM hdp_chg"
        ).to_arrow_table()
    src.con.register("hdp_rel", granted)
    src.rel = "hdp_rel"
    src.types = {**src.types, ecol: "DOUBLE"}
    rid, receipt, cap, counts = out
    ticket = ChargeTicket(rid, (), spend, 1.0, Fraction(0), led.path)
    return PeopleCharge(ticket, receipt, cap, *counts)


def _refuse_ids(icol: str, n_null: int, n_dup: int, null_row: Any) -> None:
    """Refuse null ids (row, column) and repeated ids (their count, never an id)."""
    if n_null:
        row = null_row()
        where = f"row {row}" if row else "a row"
        raise BadCellError(
            f"id column {icol!r}, {where}: empty; every row needs its person's id "
            f"({int(n_null):,} rows have none); nothing was charged",
            row=row,
            column=icol,
            reason="empty",
        )
    if n_dup:
        raise ReleaseError(
            f"id column {icol!r}: {int(n_dup):,} rows repeat an id of an earlier row; one row "
            "per person per release (aggregate each person's rows first); nothing was charged"
        )


def _charge_spark(
    led: PrivacyLedger,
    src: Any,
    vcol: str,
    ecol: str,
    icol: str,
    spend: Fraction,
    s: Fraction,
    key: str,
    target: str,
    sd_norm: float | None,
) -> PeopleCharge:
    """charge_people on Spark: the keyed hashes computed by Spark SQL (sha2), counted there,
    and handed to the ledger through a Parquet folder (never row by row to the driver); the
    granted levels come back the same way and are joined in Spark."""
    import shutil
    import tempfile

    import duckdb
    from pyspark.sql import functions as F

    h = F.unhex(F.substring(F.sha2(F.concat(F.lit(key), _spark_id_text(src, icol)), 256), 1, 32))
    vc = F.col("`" + vcol.replace("`", "``") + "`")
    t = src.df.select(h.alias(_H), vc.alias(vcol), src.e_expr.alias(_E))
    n_null, n_dup = t.agg(
        F.sum(F.col(_H).isNull().cast("long")),
        F.count(_H) - F.countDistinct(_H),
    ).collect()[0]
    _refuse_ids(icol, int(n_null or 0), int(n_dup or 0), lambda: 0)
    tmp = tempfile.mkdtemp(prefix="hdp-people-")
    try:
        t.select(F.col(_H).alias("h"), F.col(_E).alias("e")).write.parquet(tmp + "/in")
        with led.transaction() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                inp = f"read_parquet('{tmp}/in/*.parquet')"
                out = _charge_in(con, inp, s, target, sd_norm)
                con.execute("COMMIT")
            except BaseException:
                try:
                    con.execute("ROLLBACK")
                except duckdb.Error:
                    pass
                raise
            con.execute(
                f"COPY (SELECT h AS {_H}, c FROM hdp_chg) TO '{tmp}/runs.parquet' (FORMAT parquet)"
            )
        runs = src.spark.read.parquet(tmp + "/runs.parquet")
        src.df = (
            t.join(runs, on=_H, how="inner")
            .select(F.col(vcol), F.col("c").alias(ecol))
            .localCheckpoint(eager=True)
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    src.types = {**src.types, ecol: "DOUBLE"}
    src.read_names = [vcol, ecol]
    rid, receipt, cap, counts = out
    ticket = ChargeTicket(rid, (), spend, 1.0, Fraction(0), led.path)
    return PeopleCharge(ticket, receipt, cap, *counts)


def _charge_in(
    con: Any,
    inp: str,
    s: Fraction,
    target: str,
    sd_norm: float | None,
    carry: str | None = None,
    joined: Any = None,
):
    """The check-and-charge inside the ledger's transaction (see charge_people); ``inp``:
    the relation of this release's persons (h: keyed hash, e: current level, and the column
    ``carry`` when given, kept beside each person; ``joined``, when given, is called once the
    working table holds them, so the caller can free ``inp``). Leaves the view ``hdp_chg``
    (h, e, r, c: the granted level, cu: the charge in grid units, ...) for the caller. Passes: one
    materialised join with the people table; the level histogram, the receipt and counts,
    the update and the insert read it."""
    check_persons_allowed(con, s)  # one kind of budget per ledger (hdp_release.ledger.modes)
    con.execute(_SCHEMA)
    u = f"{UNIT!r}"
    p, q = s.numerator, s.denominator
    run_f = "CAST(run_u AS DOUBLE)"
    extra = f", {carry}" if carry else ""
    # a budget (grid units, rounded down; NULL: public) is recomputed from the level
    budget = f"CASE WHEN isinf(e) THEN NULL ELSE CAST(floor(e * {u}) AS HUGEINT) END"
    con.execute(
        f"""CREATE TEMP TABLE hdp_run AS
        WITH a0 AS (
            SELECT i.h, i.e{extra}, coalesce(p.spent, CAST(0 AS HUGEINT)) AS spent0,
                   p.h IS NOT NULL AS known
            FROM {inp} i LEFT JOIN hdp_people p USING (h)),
        a AS (SELECT *, {budget} AS budget FROM a0),
        b AS (SELECT *, CASE WHEN budget IS NULL THEN NULL ELSE greatest(least(
                  {_spend_units("budget", p, q)}, budget - spent0),
                  CAST(0 AS HUGEINT)) END AS run_u FROM a),
        c AS (SELECT *, CASE WHEN run_u IS NULL THEN CAST('inf' AS DOUBLE)
                  WHEN CAST({run_f} AS HUGEINT) > run_u THEN nextafter({run_f}, 0.0) / {u}
                  ELSE {run_f} / {u} END AS r0 FROM b)
        SELECT h, e{extra}, spent0, known, run_u,
               CASE WHEN r0 < {lit(LEVEL_MIN)} THEN 0.0 ELSE r0 END AS r FROM c"""
    )
    if joined is not None:
        joined()
    got = con.execute("SELECT r, count(*) FROM hdp_run GROUP BY r ORDER BY r").fetchnumpy()
    lv = np.asarray(got["r"], dtype=float)
    ct = np.asarray(got["count_star()"], dtype=np.int64)
    if not ((lv > 0) & (ct > 0)).any():
        raise BudgetExceeded(
            "no person in this table has any privacy budget left (each has spent their "
            "level); nothing was charged or released",
            identity=PERSONS,
            spent=Fraction(1),
            remaining=Fraction(0),
            requested=s,
        )
    tau = _cap(lv, ct, target, sd_norm)
    if math.isfinite(tau):
        tau_u = math.ceil(Fraction(tau) * (1 << GRID_BITS))
        c_sql = f"least(r, {lit(tau)})"
        cu_sql = f"least(run_u, CAST({tau_u} AS HUGEINT))"
        pub_u = min(tau_u, PUBLIC_CHARGE)
        granted = np.where(lv == 0, 0.0, np.minimum(lv, tau))
    else:
        c_sql, cu_sql, pub_u = "r", "run_u", PUBLIC_CHARGE
        granted = np.where(lv == 0, 0.0, lv)
    con.execute(
        f"""CREATE TEMP VIEW hdp_chg AS SELECT h, e{extra}, r, run_u, spent0, known,
            {budget} AS budget,
            CASE WHEN r = 0 THEN 0.0 ELSE {c_sql} END AS c,
            CASE WHEN r = 0 THEN CAST(0 AS HUGEINT) WHEN run_u IS NULL
                 THEN CAST({pub_u} AS HUGEINT) ELSE {cu_sql} END AS cu
            FROM hdp_run"""
    )
    # c is a function of r alone: grants below the minimum, from the histogram
    if ((granted > 0) & (granted < LEVEL_MIN) & (ct > 0)).any():
        raise ReleaseError(
            "this release would grant some persons a level below the supported minimum "
            f"({LEVEL_MIN:g}); spend more of the budget; nothing was charged"
        )
    rid = int(con.execute("SELECT coalesce(max(release_id), 0) + 1 FROM releases").fetchall()[0][0])
    now = _dt.datetime.now(_dt.UTC).replace(tzinfo=None)
    con.execute(
        "INSERT INTO releases (release_id, charged_at, spend, status) VALUES (?, ?, ?, 'charged')",
        [rid, now, str(s)],
    )
    con.execute(
        "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS VARCHAR) WHERE key = 'releases'"
    )
    receipt, counts = _receipt(con, s)
    if counts[0] > counts[1]:  # persons seen before: one update of their rows
        con.execute(
            f"UPDATE hdp_people SET spent = hdp_people.spent + c.cu, level = c.e, "
            f"releases = hdp_people.releases + 1, last_release = {rid} "
            "FROM hdp_chg c WHERE c.known AND hdp_people.h = c.h"
        )
    if counts[1]:
        con.execute(
            f"INSERT INTO hdp_people SELECT h, e, cu, 1, {rid} FROM hdp_chg WHERE NOT known"
        )
    return rid, receipt, tau, counts


def _receipt(con: Any, s: Fraction) -> tuple[Any, tuple[int, int, int, int]]:
    """Per level (or 1/8 decade when there are many levels): persons, what they asked, the
    levels run at, lost (charged) and kept (what remains after), in nats; and, from the same
    aggregate, the counts of persons, new persons, exhausted and saturated persons."""
    import pandas as pd

    n_levels = con.execute(
        f"SELECT count(*) FROM (SELECT DISTINCT e FROM hdp_run LIMIT {MAX_RECEIPT_LEVELS + 1})"
    ).fetchall()[0][0]
    key = (
        "e"
        if n_levels <= MAX_RECEIPT_LEVELS
        else "CASE WHEN e > 0 AND NOT isinf(e) THEN floor(log10(e) * 8) ELSE e END"
    )
    rows = con.execute(
        f"""SELECT min(e), max(e), count(*), min(r), max(r), min(cu), max(cu),
                min(budget - spent0 - cu), max(budget - spent0 - cu),
                count_if(r > 0 AND c < r), count_if(r = 0 AND e > 0), count_if(NOT known)
            FROM hdp_chg GROUP BY {key} ORDER BY min(e)"""
    ).fetchall()
    cols = ["eps", "eps_max", "persons", "run_min", "run_max", "lost_min", "lost_max"]
    cols += ["kept_min", "kept_max", "saturated", "exhausted"]
    out = []
    for r in rows:
        e0, e1 = float(r[0]), float(r[1])
        kept = [None if k is None else max(int(k), 0) / UNIT for k in (r[7], r[8])]
        out.append(
            [e0, e1, int(r[2]), float(r[3]), float(r[4]), int(r[5]) / UNIT, int(r[6]) / UNIT]
            + [math.inf if k is None else k for k in kept]
            + [int(r[9]), int(r[10])]
        )
    df = pd.DataFrame(out, columns=cols)
    df.insert(2, "asked", df["eps"] * float(s))
    persons, new = sum(int(r[2]) for r in rows), sum(int(r[11]) for r in rows)
    exhausted, saturated = sum(int(r[10]) for r in rows), sum(int(r[9]) for r in rows)
    return df, (persons, new, exhausted, saturated)


# ------------------------------------------------------------------------------ inspection
def person_summary(led: PrivacyLedger) -> Any:
    """Counts only, never ids or hashes: per last-seen level, the persons, how many have
    spent anything and how many have nothing left, and their spent and remaining (min, mean,
    max, nats). An empty DataFrame when no release had an id."""
    import pandas as pd

    cols = ["eps", "persons", "charged", "exhausted", "spent_min", "spent_mean", "spent_max"]
    cols += ["remaining_min", "remaining_max"]
    with led.transaction() as con:
        has = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'hdp_people'"
        ).fetchall()[0][0]
        if not has:
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
        has = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'hdp_people'"
        ).fetchall()[0][0]
        if not has:
            return {}
        return {
            bytes(h): int(v) for h, v in con.execute("SELECT h, spent FROM hdp_people").fetchall()
        }
