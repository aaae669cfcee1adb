"""The ledger's integrity check on every open (issue 32): a handful of aggregate queries run
inside DuckDB, so its cost does not grow with a Python loop over past charges.

Refused (``reason`` 'corrupt' unless said): missing tables or magic ('not-a-ledger'), another
format version ('version'), a release count that disagrees with meta, release ids that are
not 1..n, a charge naming no release, a spend that is not an exact fraction in (0, 1], an
unknown status, running totals that lie outside [0, 1] or whose release counts do not add up
to the charges. Each is one column scan (no join, no Python per row); the releases' spends
and statuses are checked once (from the last verified release on), so an open does not read
every past release. Not re-checked on every open: a row edited by hand after it was
verified, and that each total equals the exact sum of its identity's spends (a charge
computes and writes both in one transaction)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["FRACTION_SQL", "STATUSES", "TABLES", "build_totals", "verify_tables"]

TABLES = frozenset({"meta", "datasets", "releases", "charges", "totals"})
STATUSES = ("charged", "released", "failed")
FRACTION_SQL = "regexp_full_match({x}, '[1-9][0-9]{{0,30}}(/[1-9][0-9]{{0,30}})?')"
"""A spend or total written as str(Fraction) of a positive number: p or p/q, at most 31 digits
each (HUGEINT holds them)."""


def _num(x: str) -> str:
    return f"TRY_CAST(split_part({x}, '/', 1) AS HUGEINT)"


def _den(x: str) -> str:
    return f"coalesce(TRY_CAST(nullif(split_part({x}, '/', 2), '') AS HUGEINT), 1)"


def build_totals(con: Any) -> None:
    """Create and fill ``totals`` from the charges (a ledger written before running totals:
    once, on its first write-open). Exact: the fractions are summed in Python, once."""
    from fractions import Fraction

    con.execute(
        "CREATE TABLE totals (identity VARCHAR PRIMARY KEY, spent VARCHAR NOT NULL, "
        "releases BIGINT NOT NULL)"
    )
    acc: dict[str, list[Any]] = {}
    for ident, spend in con.execute(
        "SELECT c.identity, r.spend FROM charges c JOIN releases r USING (release_id)"
    ).fetchall():
        row = acc.setdefault(ident, [Fraction(0), 0])
        row[0] += Fraction(spend)
        row[1] += 1
    if acc:
        con.executemany(
            "INSERT INTO totals VALUES (?, ?, ?)", [[k, str(v[0]), v[1]] for k, v in acc.items()]
        )


def verify_tables(
    con: Any,
    meta: dict[str, str],
    version: str,
    unusable: Callable[[str, str], Exception],
    write: bool = False,
) -> None:
    """Raise ``unusable(reason, why)`` if the ledger's tables disagree (see the module). The
    releases' spends and statuses are checked from meta 'verified' on (the release count at
    the last verified write-open; 0 when absent: a hand-made or older ledger is checked
    whole); a write-open that passes moves it to the current count."""
    if meta.get("version") != version:
        raise unusable("version", f"its format version {meta.get('version')!r} is not {version!r}")
    n = con.execute("SELECT count(*) FROM releases").fetchone()[0]
    if str(n) != meta.get("releases"):
        raise unusable("corrupt", f"it lists {n} releases but recorded {meta.get('releases')}")
    try:
        done = min(max(int(meta.get("verified", "0")), 0), int(n))
    except ValueError:
        done = 0
    statuses = ", ".join(f"'{s}'" for s in STATUSES)
    bad = con.execute(
        f"""SELECT
          (SELECT count(*) FROM charges WHERE release_id < 1 OR release_id > {int(n)}),
          (SELECT count_if(NOT {FRACTION_SQL.format(x="spend")} OR {_num("spend")} IS NULL
                  OR {_num("spend")} > {_den("spend")}) FROM releases
           WHERE release_id > {done}),
          (SELECT count_if(status IS NULL OR status NOT IN ({statuses})) FROM releases
           WHERE release_id > {done}),
          (SELECT count_if(spent <> '0' AND (NOT {FRACTION_SQL.format(x="spent")}
                  OR {_num("spent")} IS NULL OR {_num("spent")} > {_den("spent")})
                  OR releases < 0) FROM totals),
          (SELECT coalesce(min(release_id), 1) <> 1 OR coalesce(max(release_id), 0) <> {int(n)}
           FROM releases),
          (SELECT coalesce(sum(releases), 0) FROM totals) <> (SELECT count(*) FROM charges)"""
    ).fetchone()
    # release ids are 1..n (primary key, n rows, min 1, max n): a charge in 1..n names a
    # release, so no join is needed to find an orphan charge
    if bad[0] or bad[4]:
        raise unusable("corrupt", "a charge names a release that is not there")
    if bad[1]:
        raise unusable("corrupt", f"{bad[1]} release(s) record a spend outside (0, 1]")
    if bad[2]:
        raise unusable("corrupt", f"{bad[2]} release(s) have an unknown status")
    if bad[3]:
        raise unusable("corrupt", "an identity has spent more than its budget")
    if bad[5]:
        raise unusable("corrupt", "its running totals disagree with its charges")
    if write and done != n:
        con.execute(
            "INSERT INTO meta VALUES ('verified', ?) ON CONFLICT (key) DO UPDATE SET "
            "value = excluded.value",
            [str(n)],
        )
