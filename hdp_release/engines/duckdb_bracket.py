"""The bracket pass of DuckDB's fast plan with fewer and narrower sums (issue 29): the high part
of each level's grid value in the group key, so that every sum of the pass is a BIGINT product
summed exactly, and the grid value y without its CASE when the Parquet statistics allow (checked
in the same scan). Used by :meth:`hdp_release.engines.duckdb_fast.FastPlan.fast_bracket`.

Why it is exact. The level's grid value is q = floor(e 2^42) (e < b, below the bracket's top)
and q = qh 2^31 + ql with qh = q >> 31 = floor(e 2^11) (floor(floor(x) / n) = floor(x / n);
e 2^42 and e 2^11 are exact in doubles) and ql = q & (2^31 - 1). When every level of the pass
is below 1 (b <= QH_LEVEL), qh < 2^11 and the group key k + QH_KEY qh (k < QH_KEY, the class)
puts one qh in each group. A group of n rows with one qh = c then has, exactly,

    sum q = n c 2^31 + sum ql,   sum q y = c 2^31 sum y + sum ql y,
    sum qh^2 = n c^2,   sum qh ql = c sum ql,   sum ql^2 = sum ql^2,

with ql y < 2^61 and ql^2 < 2^62: three BIGINT products summed (as 128-bit states) instead of
a 128-bit product and four BIGINT products (the general pass's sum(q), sum(q y) as HUGEINT and
base.q2_sql's three sums). The groups of one class are added back in Python (exact integers;
min and max of e), so the pass returns the very rows of the general bracket pass: the same
classes, counts and exact sums (tests/release/test_release_bracket_qh.py)."""

from __future__ import annotations

from hdp_release.engines.base import Q2_MASK, Q2_SPLIT, QE, Q, lit
from hdp_release.engines.duckdb_sql import grid_t

QH_KEY = 4096
"""The class keys of the bracket pass are below this (base.SUB_KEY + SUB_BINS + 3 < 4096); a
key k + QH_KEY qh carries the level's high part qh (< 2^11) beside its class k."""

QH_LEVEL = 1.0
"""The split keys are used when the bracket's top b is at most this: then qh = floor(e 2^11)
< 2^11 for every level below b, and the number of (class, qh) groups is at most the classes
plus 2^11 (each multiple of 2^-11 below b starts at most one new group)."""


def qh_term(e: str = "e") -> str:
    """SQL of QH_KEY x qh = QH_KEY floor(e 2^11) (an INTEGER; e in [0, 1))."""
    return f"{QH_KEY} * CAST(floor({e} * {float(1 << (42 - Q2_SPLIT))!r}) AS INTEGER)"


def ql_sql(b: float) -> str:
    """SQL of ql = floor(e 2^42) & (2^31 - 1) for a level below ``b``, else NULL (not summed);
    greatest(e, 0): a bad negative level's ql is never used but must not fail the cast."""
    return (
        f"CASE WHEN e < {lit(b)} THEN CAST(floor(greatest(e, 0) * {float(QE)!r}) AS BIGINT) "
        f"& {Q2_MASK} END"
    )


def inside_y(lo: float, hi: float) -> str:
    """SQL of y = round((v - lo) / R Q) without a CASE, as duckdb_fast.inside_pass_sql forms
    it (NULL for a missing, NaN or infinite value and one far below lo); the pass counts the
    rows whose y is in [0, Q], and when every row's is, y is the CASE pass's y."""
    return f"TRY_CAST(round({grid_t(lo, hi)}) AS UINTEGER)"


def split_pass_sql(key: str, y: str, ok: str, b: float, scan: str) -> str:
    """The bracket pass with the split key ``key`` (class + QH_KEY qh below b): per key its
    good values (``ok``: count(y), or the rows with y in [0, Q] for the pass without the
    CASE), sum y, sum ql, sum ql y, sum ql^2 and min and max of e. No count(*) (one sum less
    per row): the caller keeps the rows only when the good values add up to the table's rows
    (then every row's value is good and each key's good values are its rows)."""
    return f"""
        SELECT k, {ok}, sum(y), sum(ql), sum(ql * y), sum(ql * ql), min(e), max(e)
        FROM (SELECT {key} AS k, e, {y} AS y, {ql_sql(b)} AS ql FROM {scan})
        GROUP BY k ORDER BY k NULLS FIRST"""


def all_good(rows: list, n_rows: int) -> list | None:
    """The split pass's ``rows`` with each key's rows (its good values) put in second place,
    when the good values add up to ``n_rows`` (every value good); else None."""
    if sum(int(r[1]) for r in rows) != n_rows:
        return None
    return [(r[0], r[1], *r[1:]) for r in rows]


def ok_sql(inside: bool) -> str:
    """SQL of a group's good values: count(y) (the CASE's y is NULL for a bad value), or
    the rows whose y is in [0, Q] (the pass without the CASE)."""
    return f"count_if(y <= {Q})" if inside else "count(y)"


def merge_split_rows(rows: list) -> list:
    """The split pass's rows (key, rows, good values, sum y, sum ql, sum ql y, sum ql^2, min e,
    max e) added back into one row per class, in the general bracket pass's shape: (class,
    rows, good values, sum y, sum q, sum q y, (sum qh^2, sum qh ql, sum ql^2), min e, max e),
    exact integers; a NULL key (a bad level) stays a row of its own (keyed None). Only the
    classes below b are split (their levels finite and positive, or zero): the public class,
    whose max(e) tells a NaN level from +inf, is one group as before."""
    out: dict = {}
    for r in rows:
        if r[0] is None:
            out.setdefault(None, []).append(r)
            continue
        k, c = int(r[0]) % QH_KEY, int(r[0]) // QH_KEY
        n, ok, sy = int(r[1]), int(r[2]), int(r[3] or 0)
        sl, sly, sll = int(r[4] or 0), int(r[5] or 0), int(r[6] or 0)
        add = [n, ok, sy, n * c * (1 << Q2_SPLIT) + sl, (c << Q2_SPLIT) * sy + sly]
        q2 = (n * c * c, c * sl, sll)
        m = out.get(k)
        if m is None:
            out[k] = [*add, q2, r[7], r[8]]
        else:
            m[:5] = [x + y for x, y in zip(m[:5], add, strict=True)]
            m[5] = tuple(x + y for x, y in zip(m[5], q2, strict=True))
            m[6], m[7] = min(m[6], r[7]), max(m[7], r[8])  # finite levels below b
    bad = [tuple(r[:3]) + (None,) * 6 for r in out.pop(None, [])]
    return bad + [(k, *v) for k, v in sorted(out.items())]
