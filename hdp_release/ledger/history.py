"""Reading the privacy ledger on an open connection: running totals per identity and a page
of history, each a few indexed queries whatever the ledger's size (issue 32)."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from hdp_release.ledger.identity import LedgerEntry

__all__ = ["history_page", "spent_of"]


def history_page(
    con: Any, ids: tuple[str, ...] | None, limit: int | None, before: int | None
) -> tuple[list[LedgerEntry], int, Fraction | None]:
    """PrivacyLedger.overview on an open connection (entries oldest first, the release
    count, the remaining budget or None): release ids from ``charges`` (an
    identity's) or the dense 1..n, then only those releases and their charges."""
    upto = "" if before is None else f" AND release_id < {int(before)}"
    tail = "" if limit is None else f" ORDER BY release_id DESC LIMIT {int(limit)}"
    left: Fraction | None = None
    if ids is None:
        total = int(con.execute("SELECT count(*) FROM releases").fetchone()[0])
        sql, args = f"SELECT release_id FROM releases WHERE TRUE{upto}{tail}", []
    else:
        marks = ", ".join("?" for _ in ids)
        args = list(ids)
        counts = dict(
            con.execute(
                f"SELECT identity, releases FROM totals WHERE identity IN ({marks})", args
            ).fetchall()
        )
        if len(ids) == 1:  # the running total counts its releases: no scan
            total = int(counts.get(ids[0], 0))
        else:
            (total,) = con.execute(
                f"SELECT count(DISTINCT release_id) FROM charges WHERE identity IN ({marks})",
                args,
            ).fetchone()
        sql = f"SELECT DISTINCT release_id FROM charges WHERE identity IN ({marks}){upto}{tail}"
        spent = spent_of(con, ids)
        left = 1 - max((spent.get(i, Fraction(0)) for i in ids), default=Fraction(0))
    rids = sorted(int(r[0]) for r in con.execute(sql, args).fetchall())
    rows: list[Any] = []
    charged: dict[int, list[str]] = {}
    if rids:
        # the ids are sorted and releases are stored in id order: the range prunes blocks
        where = "release_id BETWEEN ? AND ? AND list_contains(?, release_id)"
        span = [rids[0], rids[-1], rids]
        rows = con.execute(
            "SELECT release_id, charged_at, spend, status, recorded_at, engine, target, "
            "estimate, ci_low, ci_high, receipt, summary, failure FROM releases WHERE "
            f"{where} ORDER BY release_id",
            span,
        ).fetchall()
        for rid, ident in con.execute(
            f"SELECT release_id, identity FROM charges WHERE {where} ORDER BY identity", span
        ).fetchall():
            charged.setdefault(int(rid), []).append(ident)
    entries = [
        LedgerEntry(
            int(r[0]),
            r[1],
            tuple(charged.get(int(r[0]), [])),
            Fraction(r[2]),
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
            None if r[8] is None else (float(r[8]), float(r[9])),
            None if r[10] is None else json.loads(r[10]),
            None if r[11] is None else json.loads(r[11]),
            r[12],
        )
        for r in rows
    ]
    return entries, int(total), left


def spent_of(con: Any, ids: tuple[str, ...]) -> dict[str, Fraction]:
    """Exact cumulative spend per identity, from the running totals (one row each)."""
    rows = con.execute(
        f"SELECT identity, spent FROM totals WHERE identity IN ({', '.join('?' for _ in ids)})",
        list(ids),
    ).fetchall()
    return {ident: Fraction(spent) for ident, spent in rows}
