"""The per-person check-and-charge inside the ledger's transaction (hdp_release.ledger.people
has the semantics and the proof sketch): the grid arithmetic, each segment's cap tau, the
charge and the receipt. Engine-free: its input is a relation of this release's persons (h:
keyed hash, e: current level, g: segment index; 0 for a release of one mean) readable by the
ledger's DuckDB connection.

Per segment. A person's run level r_i = min(s x eps_i, remaining_i) does not depend on the
segments; the cap tau_g (ADPM's tau* or the table's cap 1/(n eta)) is computed from the run
levels of segment g's persons alone, and person i is charged g_i = min(r_i, tau_{g(i)}): the
level granted in THEIR segment, once (parallel composition: each value enters one segment's
estimate). A release of one mean is the case of one segment.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from hdp_core.errors import BadCellError, BudgetExceeded, LedgerUnusable, ReleaseError
from hdp_core.table_mean import table_mean
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN
from hdp_release.engines.base import TEXT_SPACES, lit
from hdp_release.engines.duckdb_sql import quote_name
from hdp_release.ledger.modes import check_persons_allowed
from hdp_release.ledger.store import ChargeTicket
from hdp_release.plan import run_profile, tiers_solution

GRID_BITS = 42
UNIT = float(1 << GRID_BITS)
"""Grid units per nat: budgets, run levels and charges are integers of 2^-42 nats."""
PUBLIC_CHARGE = math.floor(LEVEL_MAX * UNIT)
MAX_SPEND_DENOMINATOR = 1 << 40
PERSONS = "persons"
"""BudgetExceeded.identity when no person of a release has any budget left."""
MAX_RECEIPT_LEVELS = 64
"""At most this many distinct levels (per segment) get a receipt row each; more are grouped
by 1/8 decade."""
H, E, SEG, V = "hdp_h__", "hdp_e__", "hdp_g__", "hdp_v__"
"""Reserved column names of the per-person relation (hash, parsed level, segment index,
value)."""
H0 = "hdp_h0__"
"""Reserved: the low 64 bits of the keyed hash beside H (its high 64 bits) on DuckDB."""

SCHEMA = """CREATE TABLE IF NOT EXISTS hdp_people (h UHUGEINT NOT NULL, level DOUBLE NOT NULL,
    spent HUGEINT NOT NULL, releases INTEGER NOT NULL, last_release BIGINT NOT NULL)"""
"""The person table: h is the keyed hash's 16 bytes read as one big-endian 128-bit integer
(fixed width: joins, counts and writes about three times cheaper than a BLOB, issue 30).
Ledgers written before kept h as a 16-byte BLOB: :func:`migrate_people` converts them."""


def blob_key(col: str) -> str:
    """The SQL of a 16-byte BLOB hash ``col`` as the person table's key (UHUGEINT)."""
    return f"CAST('0x' || hex({col}) AS UHUGEINT)"


def as_hash_bytes(h: Any) -> bytes:
    """A stored keyed hash as its 16 bytes (a UHUGEINT big-endian; an old BLOB as is)."""
    return bytes(h) if isinstance(h, (bytes, bytearray, memoryview)) else int(h).to_bytes(16)


def hash_key(con: Any, inp: str) -> str | None:
    """None when the relation ``inp``'s column h is already the person table's key
    (UHUGEINT); else the SQL, over ``i.h``, of a 16-byte BLOB hash (the Spark side's) as that
    key."""
    t = con.execute(f"DESCRIBE SELECT h FROM {inp}").fetchall()[0][1]
    if str(t).upper() == "UHUGEINT":
        return None
    return blob_key("i.h")


def migrate_people(con: Any, path: str) -> bool:
    """Convert a person table written with h as a 16-byte BLOB (before issue 30's cost work)
    to h UHUGEINT, every row, inside the caller's transaction (so a charge that fails or is
    refused rolls it back with itself). Raises LedgerUnusable (reason 'corrupt') if a stored
    hash is not 16 bytes (the ledger at ``path``). Returns whether it converted."""
    t = con.execute(
        "SELECT data_type FROM duckdb_columns() WHERE database_name = current_database() "
        "AND table_name = 'hdp_people' AND column_name = 'h'"
    ).fetchall()
    if not t or str(t[0][0]).upper() != "BLOB":
        return False
    bad = con.execute("SELECT count_if(octet_length(h) <> 16) FROM hdp_people").fetchall()[0][0]
    if bad:
        raise LedgerUnusable(
            f"the privacy ledger's person table holds {int(bad):,} hashes that are not 16 "
            "bytes; it cannot be used until it is repaired; nothing was charged",
            path=path,
            reason="corrupt",
        )
    con.execute("ALTER TABLE hdp_people RENAME TO hdp_people_blob")
    con.execute(SCHEMA)
    con.execute(
        f"INSERT INTO hdp_people SELECT {blob_key('h')}, level, spent, releases, last_release "
        "FROM hdp_people_blob"
    )
    con.execute("DROP TABLE hdp_people_blob")
    return True


def to_units(level: float) -> int:
    """A level (nats) as whole grid units, rounded down (a budget)."""
    return math.floor(Fraction(level) * (1 << GRID_BITS))


@dataclass(frozen=True)
class PeopleCharge:
    """What the per-person check-and-charge did: the ledger ticket (record the release with
    it), the receipt per level (DataFrame: eps, eps_max, asked, persons, run_min, run_max,
    lost_min, lost_max, kept_min, kept_max, saturated, exhausted; levels in nats; a release
    per segment adds a first column ``segment``: the index of the segment in the release),
    the cap tau (tau* or the table's cap; inf if none; a release per segment: ``caps``, one
    per segment index) and counts."""

    ticket: ChargeTicket
    receipt: Any
    cap: float
    persons: int
    new_persons: int
    exhausted: int
    saturated: int
    caps: tuple[float, ...] = ()


def spend_fraction(s: Fraction) -> Fraction:
    """The spend the grid arithmetic uses: s itself, or s rounded down to a multiple of 2^-40
    when its terms are too large for 128-bit products (runs less, never more)."""
    if max(s.numerator, s.denominator) <= MAX_SPEND_DENOMINATOR:
        return s
    down = Fraction(math.floor(s * MAX_SPEND_DENOMINATOR), MAX_SPEND_DENOMINATOR)
    if down == 0:
        raise ReleaseError("the spend is too small for the per-person ledger (below 2^-40)")
    return down


def check_reserved(names: list[str]) -> None:
    """Refuse a value or segment column named like the per-person relation's own columns."""
    for n in names:
        if n in (H, H0, E, SEG, V):
            raise ReleaseError(f"a column may not be named {n!r} with an id")


def cap_of(lv: np.ndarray, ct: np.ndarray, target: str, sd_norm: float | None) -> float:
    """tau (population: ADPM's tau* on the run levels; table: TableMean's cap 1/(n eta))
    from one segment's distinct run levels and their person counts only (inf when nobody
    there has a positive run level: nobody is charged)."""
    use = lv > 0
    if not use.any():
        return math.inf
    if target == "table":
        return float(table_mean(run_profile(lv, ct)).cap_level)
    return float(tiers_solution(lv[use], ct[use], sd_norm)[1])


ID_SPACES = TEXT_SPACES
"""The characters trimmed from both ends of a text id (engines.base.TEXT_SPACES): an id with
a no-break space at an end is the same person (the same keyed hash) on both engines."""


def duck_id_text(src: Any, icol: str) -> str:
    """DuckDB SQL of the id column ``icol`` of ``src`` as text (trimmed text, an empty one
    NULL; an integer as its digits): what the keyed hash reads."""
    t = src.types.get(icol, "")
    if t in ("VARCHAR", "STRING", "TEXT"):
        return f"nullif(trim({quote_name(icol)}), '')"
    return f"CAST({quote_name(icol)} AS VARCHAR)"


def null_id_row(src: Any, icol: str) -> int:
    """The first row (1-based, in the source's order) whose id is missing on the DuckDB
    source ``src``, or 0 if none."""
    rows = src.con.execute(
        f"SELECT rn FROM (SELECT row_number() OVER () AS rn, {duck_id_text(src, icol)} AS i "
        f"FROM {src.rel}) WHERE i IS NULL ORDER BY rn LIMIT 1"
    ).fetchall()
    return int(rows[0][0]) if rows else 0


def refuse_ids(icol: str, n_null: int, n_dup: int, null_row: Any) -> None:
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


def run_charge(
    led: Any,
    inp: str,
    s: Fraction,
    target: str,
    sd_norm: float | None,
    *,
    before: Any = None,
    after: Any = None,
    carry: list[str] | tuple[str, ...] = (),
    joined: Any = None,
) -> tuple:
    """:func:`charge_in` in ONE transaction of the ledger ``led``, under its exclusive lock
    (rolled back on any error: nothing charged). ``before(con)`` first makes ``inp``
    readable on the ledger's connection; ``after(con)`` then reads ``hdp_chg`` (the granted
    level per person) back to the engine, after the commit: if it fails, a ReleaseError says
    the charge stands and nothing was released. ``carry`` and ``joined``: see charge_in. Returns
    charge_in's result."""
    import duckdb

    with led.transaction() as con:
        con.execute("BEGIN TRANSACTION")
        try:
            migrate_people(con, led.path)  # a ledger from before h was a 128-bit integer
            if before is not None:
                before(con)
            out = charge_in(con, inp, s, target, sd_norm, carry, joined)
            con.execute("COMMIT")
        except BaseException:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass
            raise
        if after is not None:
            try:
                after(con)
            except Exception as exc:  # after the commit: the charge stands, say so
                raise ReleaseError(
                    f"the privacy ledger {led.path!r} charged this release (release "
                    f"{out[0]}: every person's spend stands, never undone) but the levels "
                    f"granted could not be read back ({type(exc).__name__}); nothing was "
                    "released"
                ) from None
    return out


def people_charge(out: tuple, spend: Fraction, led: Any, segments: bool) -> PeopleCharge:
    """The :class:`PeopleCharge` of :func:`run_charge`'s result (``segments``: keep the
    receipt's segment column and every segment's cap; else one cap, segment 0's)."""
    rid, receipt, caps, counts = out
    ticket = ChargeTicket(rid, (), spend, 1.0, Fraction(0), led.path)
    if not segments:
        receipt = receipt.drop(columns=["segment"])
    n_seg = max(caps) + 1 if caps else 0
    every = tuple(caps.get(g, math.inf) for g in range(n_seg))
    persons, new, exhausted, saturated = counts
    cap = caps.get(0, math.inf)
    return PeopleCharge(ticket, receipt, cap, persons, new, exhausted, saturated, caps=every)


def spend_units(budget: str, p: int, q: int) -> str:
    """SQL of floor(budget x p / q) (a HUGEINT) for a budget in [0, 2^62) (a level of at most
    LEVEL_MAX = 10^6 nats on the 2^-42 grid) and a spend p/q <= 1: in 64-bit integers as
    (b // q) p + ((b % q) p) // q when p q < 2^62 (every term then fits; the same integer,
    and far cheaper per row than a 128-bit division), else in HUGEINT."""
    if p * q < 1 << 62:
        b = f"CAST({budget} AS BIGINT)"
        return f"CAST(({b} // {q}) * {p} + (({b} % {q}) * {p}) // {q} AS HUGEINT)"
    return f"{budget} * CAST({p} AS HUGEINT) // CAST({q} AS HUGEINT)"


def charge_in(
    con: Any,
    inp: str,
    s: Fraction,
    target: str,
    sd_norm: float | None,
    carry: list[str] | tuple[str, ...] = (),
    joined: Any = None,
):
    """The check-and-charge inside the ledger's transaction; ``inp``: the relation of this
    release's persons (h, e, g, and the columns ``carry``, kept beside each person).
    ``joined(con)``, when given, is called once the working table holds them (the caller may
    then free ``inp``). Leaves the view ``hdp_chg`` (h, g, c: the granted level, cu: the
    charge in grid units, the carried columns, ...) on ``con``. Passes: one materialised
    join with the people table; the histogram, the receipt and counts (one aggregate), the
    update and the insert read it. Returns (release id, receipt, caps per segment index,
    counts)."""
    check_persons_allowed(con, s)  # one kind of budget per ledger (hdp_release.ledger.modes)
    con.execute(SCHEMA)
    u = f"{UNIT!r}"
    p, q = s.numerator, s.denominator
    run_f = "CAST(run_u AS DOUBLE)"
    extra = "".join(f", {c}" for c in carry)
    # the key joined with and stored in the person table: h itself, or (a BLOB hash from
    # Spark, which gets its h back in hdp_chg) a column k beside it
    kx = hash_key(con, inp)
    kcol = "h" if kx is None else "k"
    if kx is not None:
        extra += ", k"
    # a budget (grid units, rounded down; NULL: public) is recomputed from the level
    budget = f"CASE WHEN isinf(e) THEN NULL ELSE CAST(floor(e * {u}) AS HUGEINT) END"
    con.execute(
        f"""CREATE TEMP TABLE hdp_run AS
        WITH i AS (SELECT *{"" if kx is None else f", {kx} AS k"} FROM {inp} i),
        a0 AS (
            SELECT i.h, i.e, i.g{extra}, coalesce(p.spent, CAST(0 AS HUGEINT)) AS spent0,
                   p.h IS NOT NULL AS known
            FROM i LEFT JOIN hdp_people p ON p.h = i.{kcol}),
        a AS (SELECT *, {budget} AS budget FROM a0),
        b AS (SELECT *, CASE WHEN budget IS NULL THEN NULL ELSE greatest(least(
                  {spend_units("budget", p, q)}, budget - spent0),
                  CAST(0 AS HUGEINT)) END AS run_u FROM a),
        c AS (SELECT *, CASE WHEN run_u IS NULL THEN CAST('inf' AS DOUBLE)
                  WHEN CAST({run_f} AS HUGEINT) > run_u THEN nextafter({run_f}, 0.0) / {u}
                  ELSE {run_f} / {u} END AS r0 FROM b)
        SELECT h, e, g{extra}, spent0, known, run_u,
               CASE WHEN r0 < {lit(LEVEL_MIN)} THEN 0.0 ELSE r0 END AS r FROM c"""
    )
    if joined is not None:
        joined(con)
    got = con.execute(
        "SELECT g, r, count(*) AS n FROM hdp_run GROUP BY g, r ORDER BY g, r"
    ).fetchnumpy()
    gs = np.asarray(got["g"], dtype=np.int64)
    lv = np.asarray(got["r"], dtype=float)
    ct = np.asarray(got["n"], dtype=np.int64)
    if not ((lv > 0) & (ct > 0)).any():
        raise BudgetExceeded(
            "no person in this table has any privacy budget left (each has spent their "
            "level); nothing was charged or released",
            identity=PERSONS,
            spent=Fraction(1),
            remaining=Fraction(0),
            requested=s,
        )
    caps = _segment_caps(con, gs, lv, ct, target, sd_norm)
    con.execute(
        f"""CREATE TEMP VIEW hdp_chg AS SELECT h, e, g{extra}, r, run_u, spent0, known,
            {budget} AS budget, CASE WHEN r = 0 THEN 0.0 ELSE least(r, t.tau) END AS c,
            CASE WHEN r = 0 THEN CAST(0 AS HUGEINT) WHEN run_u IS NULL THEN t.pub_u
                 WHEN t.fin THEN least(run_u, t.tau_u) ELSE run_u END AS cu
            FROM hdp_run JOIN hdp_tau t USING (g)"""
    )
    # c is a function of (g, r) alone: grants below the minimum, from the histogram
    tau_g = np.array([caps[int(g)] for g in gs], dtype=float)
    granted = np.where(lv == 0, 0.0, np.minimum(lv, tau_g))
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
            f"FROM hdp_chg c WHERE c.known AND hdp_people.h = c.{kcol}"
        )
    if counts[1]:
        con.execute(
            f"INSERT INTO hdp_people SELECT {kcol}, e, cu, 1, {rid} FROM hdp_chg WHERE NOT known"
        )
    return rid, receipt, caps, counts


def _segment_caps(
    con: Any, gs: np.ndarray, lv: np.ndarray, ct: np.ndarray, target: str, sd_norm
) -> dict[int, float]:
    """Each segment's cap from its own run levels (rows of (g, r, count) sorted by g), put
    on ``con`` as table hdp_tau (g, tau, fin, tau_u: ceil(tau x 2^42), pub_u: a public
    person's charge). Returns {segment index: tau}."""
    import pandas as pd

    seg, start = np.unique(gs, return_index=True)
    ends = np.append(start[1:], gs.size)
    caps = {  # one ADPM (or TableMean) solve per segment, on its distinct run levels only
        int(g): cap_of(lv[a:b], ct[a:b], target, sd_norm)
        for g, a, b in zip(seg, start, ends, strict=True)
    }
    tau = np.array([caps[int(g)] for g in seg], dtype=float)
    fin = np.isfinite(tau)
    tau_u = [
        math.ceil(Fraction(float(t)) * (1 << GRID_BITS)) if f else 0
        for t, f in zip(tau, fin, strict=True)
    ]
    pub_u = [min(t, PUBLIC_CHARGE) if f else PUBLIC_CHARGE for t, f in zip(tau_u, fin, strict=True)]
    frame = pd.DataFrame(
        {"g": seg.astype(np.int64), "tau": tau, "fin": fin, "tau_u": np.array(tau_u, np.int64)}
    ).assign(pub_u=np.array(pub_u, np.int64))
    con.register("hdp_tau_in", frame)
    con.execute(
        "CREATE TEMP TABLE hdp_tau AS SELECT g, tau, fin, CAST(tau_u AS HUGEINT) AS tau_u, "
        "CAST(pub_u AS HUGEINT) AS pub_u FROM hdp_tau_in"
    )
    con.unregister("hdp_tau_in")
    return caps


def _receipt(con: Any, s: Fraction) -> tuple[Any, tuple[int, int, int, int]]:
    """Per segment and level (or 1/8 decade when a segment has many levels): persons, what
    they asked, the levels run at, lost (charged) and kept (what remains after), in nats;
    and, from the same aggregate, the counts of persons, new, exhausted and saturated."""
    import pandas as pd

    n_levels = con.execute(
        "SELECT coalesce(max(n), 0) FROM (SELECT count(DISTINCT e) AS n FROM hdp_run GROUP BY g)"
    ).fetchall()[0][0]
    key = (
        "e"
        if n_levels <= MAX_RECEIPT_LEVELS
        else "CASE WHEN e > 0 AND NOT isinf(e) THEN floor(log10(e) * 8) ELSE e END"
    )
    rows = con.execute(
        f"""SELECT g, min(e), max(e), count(*), min(r), max(r), min(cu), max(cu),
                min(budget - spent0 - cu), max(budget - spent0 - cu),
                count_if(r > 0 AND c < r), count_if(r = 0 AND e > 0), count_if(NOT known)
            FROM hdp_chg GROUP BY g, {key} ORDER BY g, min(e)"""
    ).fetchall()
    cols = ["segment", "eps", "eps_max", "persons", "run_min", "run_max", "lost_min", "lost_max"]
    cols += ["kept_min", "kept_max", "saturated", "exhausted"]
    out = []
    for r in rows:
        e0, e1 = float(r[1]), float(r[2])
        kept = [None if k is None else max(int(k), 0) / UNIT for k in (r[8], r[9])]
        out.append(
            [int(r[0]), e0, e1, int(r[3]), float(r[4]), float(r[5])]
            + [int(r[6]) / UNIT, int(r[7]) / UNIT]
            + [math.inf if k is None else k for k in kept]
            + [int(r[10]), int(r[11])]
        )
    df = pd.DataFrame(out, columns=cols)
    df.insert(3, "asked", df["eps"] * float(s))
    persons, new = sum(int(r[3]) for r in rows), sum(int(r[12]) for r in rows)
    exhausted, saturated = sum(int(r[11]) for r in rows), sum(int(r[10]) for r in rows)
    return df, (persons, new, exhausted, saturated)
