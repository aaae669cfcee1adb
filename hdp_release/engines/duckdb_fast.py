"""DuckDB's fast plan (hdp_release.release, "Fast plan"): the tiers pass and the bracket pass,
each one grouped scan keyed by a small integer computed in the scan, with the value checks
fused into it. A mixin of :class:`hdp_release.engines.duckdb_source.DuckSource`, which gives
the query runner, the cells' parsing and the level sample (``sample_levels``)."""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from hdp_release.engines.base import (
    BINS_PER_E,
    DBL_MAX,
    DECADE_OFFSET,
    MAX_TIERS,
    PUBLIC_BIN,
    Q_CAP,
    QE,
    RECEIPT_ROWS_PER_DECADE,
    SUB_KEY,
    ZERO_BIN,
    Histogram,
    Q,
    bad_values,
    histogram_from_rows,
    lit,
    q2_float,
    q2_level,
    q2_sql,
    q2_triple,
)
from hdp_release.engines.duckdb_bracket import (
    QH_LEVEL,
    all_good,
    inside_y,
    merge_split_rows,
    ok_sql,
    qh_term,
    split_pass_sql,
)
from hdp_release.engines.duckdb_sql import grid_t


def grid_sql(lo: float, hi: float) -> str:
    """SQL of y, the value ``v`` on the 2^30 grid of [lo, hi] (hdp_release.engines.base): the
    general plan's y, cheaper in DuckDB than least/greatest. round() rounds half away from
    zero, as the general plan (DuckDB) and Spark's F.round (HALF_UP, on y >= 0) do; a bare
    CAST of a DOUBLE to an integer rounds ties to even in DuckDB, which gave the fast plan
    another y than the general plan and Spark on a value exactly halfway between two grid
    points (found in session 11; tests/release/test_release_fast_grid.py). v in [lo, hi]
    gives (v - lo) / R * Q in [0, Q] exactly; a value below lo counts 0, above hi counts Q;
    a missing, NaN or infinite value gives NULL (counted: bad input; DuckDB orders NaN above
    +inf)."""
    lo_s, hi_s, mx = lit(lo), lit(hi), lit(DBL_MAX)
    return (
        f"CASE WHEN v >= {lo_s} AND v <= {hi_s} THEN CAST(round({grid_t(lo, hi)}) AS BIGINT) "
        f"WHEN v < {lo_s} AND v >= -{mx} THEN 0 WHEN v > {hi_s} AND v <= {mx} THEN {Q} END"
    )


DOUBLE_ROWS = 1 << 23
"""A sum of at most this many grid values (each an integer in [0, Q], Q = 2^30) is exact in
doubles, whatever the order or threads: every partial sum is an integer <= 2^53."""


def inside_pass_sql(key: str, scan: str, lo: float, hi: float, double: bool = False) -> str:
    """The tiers pass without a CASE (issue 29), for tables whose values all lie in [lo, hi]:
    per key its rows, the rows whose y = round((v - lo) / R * Q) is in [0, Q], and the sum
    of y. As TRY_CAST(... AS UINTEGER) (an integer sum), y is NULL for a missing, NaN or
    infinite value and for a value far enough below lo to round below 0 (UINTEGER has no
    negatives), so one integer comparison checks it; with ``double``, y stays a double
    (NaN, +-inf fail the check; no cast per row) and its sum is exact when the group has at
    most DOUBLE_ROWS rows (the caller checks). When the two counts agree in every group,
    every row's y is in [0, Q], and then it is :func:`grid_sql`'s y: the same rounding of
    the same double for a value in [lo, hi], 0 for one below lo (t <= 0 rounds to 0) and Q
    for one above hi (t >= Q rounds to Q); so the rows equal the CASE pass's (key, rows, good
    values, sum of y). Otherwise the caller runs the CASE pass. Per row no CASE's
    comparisons and branches."""
    y, ok = (
        (f"round({grid_t(lo, hi)})", f"y BETWEEN 0 AND {float(Q)!r}")
        if double
        else (inside_y(lo, hi), f"y <= {Q}")
    )
    return (
        f"SELECT k, count(*), count_if({ok}), sum(y) FROM (SELECT {key} AS k, {y} AS y FROM "
        f"{scan}) GROUP BY k ORDER BY k NULLS FIRST"
    )


def tier_key(levels: list[float]) -> str:
    """SQL of the tiers pass's key: the 1-based position of the row's level ``e`` in
    ``levels`` (at most MAX_TIERS), NULL when it is none of them (a NULL, NaN or other
    level). list_position is evaluated once per entry of a dictionary-encoded column (issue
    29: about a quarter less work than a CASE chain at 10^7 rows); -0.0 finds 0.0, as e = 0
    does. As UTINYINT: with statistics propagation off (issue 32) DuckDB sizes its hash
    aggregate by the key's type, and a one-byte key is cheaper than a BIGINT one."""
    arr = ", ".join(lit(x) for x in levels)
    return f"CAST(list_position([{arr}], e) AS UTINYINT)"


class FastPlan:
    """The fast plan's passes, on a DuckDB source (the attributes below are the source's)."""

    rel: str
    level_factor: float
    cols: tuple[str, str] | None
    v_expr: str
    e_expr: str
    e0_expr: str
    yc_expr: str
    y_expr: str
    q_expr: str
    key_expr: str
    sample0: np.ndarray | None
    tiers_from_check = False  # the release's tiers came from the ledger check's scan
    bounds: tuple[float, float]
    checked: tuple[tuple[str, str, float, float], list[float], list] | None = None
    """The ledger check's tiers scan (``tiers_check``): (what it read: the value and level
    SQL and lo, hi; the asked levels; its rows), kept unused until the charge succeeds."""

    if TYPE_CHECKING:  # given by DuckSource

        def _run(self, sql: str, how: str = "all") -> Any: ...

        def _as_double(self, col: str, role: str, eps: bool) -> str: ...

        def _scaled(self, e: str) -> str: ...

        def values_inside(self, lo: float, hi: float) -> bool: ...

        def stats_rows(self) -> int | None: ...

    def _prepare(self, value: str, eps: str, lo: float, hi: float) -> None:
        self.cols = (value, eps)
        self.v_expr = self._as_double(value, "value", False)
        self.e0_expr = self._as_double(eps, "eps", True)  # as asked, before the spend
        self.e_expr = self._scaled(self.e0_expr)
        self.sample0: np.ndarray | None = None
        self.yc_expr = grid_sql(lo, hi)
        self.y_expr = self.yc_expr
        self.q_expr = f"CAST(floor(least(greatest(e, 0), {lit(Q_CAP)}) * {float(QE)!r}) AS BIGINT)"
        self.bounds = (lo, hi)

    def _scan(self) -> str:
        return f"(SELECT {self.v_expr} AS v, {self.e_expr} AS e FROM {self.rel})"

    def _fast(
        self,
        key: str,
        below: str | None,
        q: str | None = None,
        scan: str = "",
        bounds: tuple[float, float] | None = None,
        share: float = 1.0,
    ) -> list:
        """One grouped scan by ``key`` (an integer, NULL for a bad level): users, good values
        and exact integer sums (q sums only where ``below`` holds; ``q``: the SQL of q there,
        default the general one; ``bounds``: the range (lo, hi) of y, default the
        release's). Without ``below`` (the tiers pass), when the Parquet file's statistics
        say every value is in the range (``values_inside``, only a hint), the pass without
        a CASE (:func:`inside_pass_sql`) is tried first, with double sums when the largest
        group (``share`` of the rows, the level sample's estimate) should hold at most half
        DOUBLE_ROWS rows; its rows are kept only when every row's value was in the range
        and every double sum is exact (else the integer sums, or the CASE pass, run)."""
        lo, hi = bounds or self.bounds
        self.key_expr = key
        scan = scan or self._scan()
        if below is None and self.values_inside(lo, hi):
            rows_est = self.stats_rows()
            double = rows_est is not None and share * rows_est <= DOUBLE_ROWS // 2
            rows = self._run(inside_pass_sql(key, scan, lo, hi, double))
            if all(int(r[2]) == int(r[1]) for r in rows):
                if not double:
                    return rows
                if all(int(r[1]) <= DOUBLE_ROWS for r in rows):
                    return [(r[0], r[1], r[2], int(r[3])) for r in rows]
                rows = self._run(inside_pass_sql(key, scan, lo, hi))  # a group too large
                if all(int(r[2]) == int(r[1]) for r in rows):
                    return rows
        if below is None:
            qcols = "NULL, NULL, NULL, NULL"
        else:  # q is NULL (skipped by the sums) outside ``below``
            qq = f"CASE WHEN {below} THEN {q or self.q_expr} END"
            # sum of q^2 exactly (three sums of BIGINT products, base.q2_sql), combined below
            # into one Python int: the same for any row order, threads or grouping
            qcols = f"sum(q), sum(CAST(q AS HUGEINT) * y), {q2_sql()}, min(e), max(e)"
        y = self.yc_expr if bounds is None else grid_sql(lo, hi)
        sql = f"""
            SELECT k, count(*), count(y), sum(y), {qcols}
            FROM (SELECT {key} AS k, e, v, {y} AS y
                  {", " + qq + " AS q" if below is not None else ""} FROM {scan})
            GROUP BY k ORDER BY k NULLS FIRST"""
        rows = self._run(sql)
        if below is None:
            return rows
        return [(*r[:6], q2_triple(*r[6:9]), *r[9:]) for r in rows]

    def fast_tiers(self, levels: np.ndarray, share: float = 1.0) -> Histogram | None:
        """The tiers pass: one scan grouped by which of ``levels`` (the sample's distinct
        levels) a row has (or the ledger check's scan, :meth:`tiers_check`, when it read
        this table); None when some row has another level or any value is bad. ``share``:
        the sample's largest share of rows at one level (only steers the pass's sums)."""
        lv = sorted(float(x) for x in levels)
        if self.levels_share_a_bin(lv):
            return None
        rows = self._tier_rows(lv, share)
        if rows is None:
            return None
        out: list[tuple] = []
        for r in rows:
            if r[0] is None or not 1 <= int(r[0]) <= len(lv) or bad_values(r):
                return None
            i = int(r[0]) - 1
            x, n, sy = lv[i], int(r[1]), int(r[3] or 0)
            if x == 0 or math.isinf(x):
                out.append(
                    (ZERO_BIN if x == 0 else PUBLIC_BIN, n, 0.0, 0.0, x, x, None, sy, 0, 0, 0)
                )
            else:  # the general plan's per-bin sums, for one level (exact integers)
                q = math.floor(min(x, Q_CAP) * QE)
                out.append((i, n, x * n, x * x * n, x, x, q2_level(q, n), sy, q * n, q * sy, 0))
        out.sort(key=lambda t: t[0])
        return histogram_from_rows(out)

    def levels_share_a_bin(self, lv: list[float]) -> bool:
        """Whether two of the positive finite levels ``lv`` (ascending, distinct) fall in one
        level bin of the general plan (floor(ln(e) BINS_PER_E), DuckDB's own ln): then the
        general plan walks that bin's levels together (the level bins plan), and the tiers
        pass, one bin per level, would release other numbers than the general plan, Spark
        and release_means (found by helper attack11, session 11). DuckDB is asked only when
        two levels are within a factor e^(1/BINS_PER_E) (a hair over) of each other."""
        pos = [x for x in lv if 0 < x < math.inf]
        near = math.exp(1 / BINS_PER_E) * (1 + 1e-9)
        if not any(b < a * near for a, b in itertools.pairwise(pos)):
            return False
        vals = ", ".join(f"({lit(x)})" for x in pos)
        got = self._run(
            f"SELECT count(DISTINCT CAST(floor(ln(x) * {BINS_PER_E}) AS BIGINT)) FROM "
            f"(VALUES {vals}) AS l(x)",
            "one",
        )
        return int(got[0]) != len(pos)

    def _tier_rows(self, lv: list[float], share: float = 1.0) -> list | None:
        """The tiers pass's rows (position of the level in ``lv``, users, good values, sum of
        y), or None for a level not in it. At a spend below 1 (issue 30) keyed by the asked
        level eps, mapped to its run level eps x factor (the SQL's product, which per row cost
        as much as the rest of the pass); asked levels with one run level are summed. The
        ledger check's scan, when it read this table, is mapped the same way (no scan)."""
        kept = self._checked_rows()
        if kept is not None:
            self.tiers_from_check = True
            return self._to_run_levels(kept[0], kept[1], lv)
        u = self.sample0
        if self.level_factor == 1.0 or u is None or u.size > MAX_TIERS:
            return self._fast(tier_key(lv), None, share=share)
        asked = [float(x) for x in u]
        scan = f"(SELECT {self.v_expr} AS v, {self.e0_expr} AS e FROM {self.rel})"
        rows = self._fast(tier_key(asked), None, scan=scan, share=share)
        return self._to_run_levels(asked, rows, lv)

    def _to_run_levels(self, asked: list[float], rows: list, lv: list[float]) -> list | None:
        """``rows`` keyed by the position in ``asked`` (levels as asked) re-keyed by the
        position in ``lv`` of their run level (asked x level_factor), sums of one run level
        added; None when a run level or a row's key is not in it."""
        f = self.level_factor
        where = {x: i for i, x in enumerate(lv)}
        to = [where.get(x * f, -1) + 1 for x in asked]  # 0: not in lv
        if 0 in to:
            return None
        merged: dict[int, list[int]] = {}
        for r in rows:
            if r[0] is None or not 1 <= int(r[0]) <= len(to):
                return None
            m = merged.setdefault(to[int(r[0]) - 1], [0, 0, 0])
            m[0], m[1], m[2] = m[0] + int(r[1]), m[1] + int(r[2]), m[2] + int(r[3] or 0)
        return [(k, n, ny, sy) for k, (n, ny, sy) in sorted(merged.items())]

    def tiers_check(
        self, lv: list[float], bounds: tuple[float, float], share: float = 1.0
    ) -> list[int] | None:
        """The ledger's light check as the tiers pass itself (issue 30): one scan of the
        parsed values and levels (as asked) grouped by which of ``lv`` a row's level is,
        giving per level its rows, good values and the exact sum of y on the grid of
        ``bounds`` = (lo, hi). Returns the rows per level of ``lv`` when every row holds one
        of them and every value is finite (the check's light answer; the rows are kept on the
        source, unused, for the release after the charge), else None (nothing kept).
        ``share``: the first rows' largest share at one level (steers the pass's sums)."""
        self.checked = None
        lo, hi = bounds
        scan = f"(SELECT {self.v_expr} AS v, {self.e_expr} AS e FROM {self.rel})"
        rows = self._fast(tier_key(lv), None, scan=scan, bounds=(lo, hi), share=share)
        cnt = [0] * len(lv)
        for r in rows:
            if r[0] is None or not 1 <= int(r[0]) <= len(lv) or bad_values(r):
                return None
            cnt[int(r[0]) - 1] = int(r[1])
        self.checked = ((self.v_expr, self.e_expr, lo, hi), lv, [tuple(r[:4]) for r in rows])
        return cnt

    def _checked_rows(self) -> tuple[list[float], list] | None:
        """The ledger check's tiers scan (asked levels, rows), when it read what this release
        reads (the same value and level SQL, the same lo and hi), else None."""
        if self.checked is None:
            return None
        read, lv, rows = self.checked
        lo, hi = self.bounds
        return (lv, rows) if read == (self.v_expr, self.e0_expr, lo, hi) else None

    def checked_levels(self) -> np.ndarray | None:
        """The run levels (asked x level_factor) of the ledger check's tiers scan when it
        read what this release reads (after :meth:`_prepare`), else None."""
        kept = self._checked_rows()
        if kept is None:
            return None
        return np.unique(np.asarray(kept[0], dtype=float) * self.level_factor)

    def _split_bracket(self, key: str, b: float, n_rows: int) -> list | None:
        """The bracket pass with the split key (hdp_release.engines.duckdb_bracket), its
        rows added back into the general bracket pass's rows (the same classes and exact
        sums), or None when some value is bad (then the general plan counts and refuses).
        Without the value's CASE first when the Parquet statistics put every value in the
        release's range (only a hint: kept only when every row's y was in [0, Q], which
        makes it the CASE's y), else with it. The table's ``n_rows`` (count(*), as the
        bracket's estimate used) stands for the pass's own count: when the good values add
        up to it, each key's good values are its rows."""
        lo, hi = self.bounds
        self.key_expr = key
        scan = self._scan()
        if self.values_inside(lo, hi):
            rows = self._run(split_pass_sql(key, inside_y(lo, hi), ok_sql(True), b, scan))
            good = all_good(rows, n_rows)
            if good is not None:
                return merge_split_rows(good)
        sql = split_pass_sql(key, self.yc_expr, ok_sql(False), b, scan)
        good = all_good(self._run(sql), n_rows)
        return None if good is None else merge_split_rows(good)

    def fast_bracket(
        self, a: float, b: float, m: int, above_first: bool = False, n_rows: int | None = None
    ) -> Histogram | None:
        """The bracket pass for per-user levels: one scan grouped into the levels below ``a``
        (one class per 1/8 decade, the receipt's rows), m equal sub-bins of [a, b), the finite
        levels from ``b`` (one class), public and zero levels; None when any level or value
        is bad. ``n_rows``: the table's rows (count(*)), which the pass with the split key
        (brackets below 1) needs; without it main's general bracket pass runs."""
        # Keys (INTEGER): below a, floor(8 log10 e) + DECADE_OFFSET (one per 1/8 decade,
        # the receipt's rows; below SUB_KEY for any positive double below Q_CAP); SUB_KEY + i
        # for sub-bin i of [a, b) (i in 0..m: the product may round up to m just below b);
        # then the class above, public, zero. No clamps, and constants for the big classes
        # (issue 29: DuckDB builds no perfect hash with statistics propagation off, so the
        # key's own cost counts; a CASE branch giving a constant is the cheapest). A NaN
        # level joins +inf (both > DBL_MAX: DuckDB orders NaN above +inf), where max(e) =
        # NaN tells it apart; a NULL or negative level matches nothing (key NULL). Either
        # sends the release to the general plan.
        sub = SUB_KEY
        above, public, zero = sub + m + 1, sub + m + 2, sub + m + 3
        split = b <= QH_LEVEL and n_rows is not None  # the level's high part in the key
        qh = f" + {qh_term()}" if split else ""
        inner = f"{sub} + CAST(floor((e - {lit(a)}) * {lit(m / (b - a))}) AS INTEGER){qh}"
        decade = (
            f"CAST(floor(log10(e) * {RECEIPT_ROWS_PER_DECADE}) AS INTEGER) + {DECADE_OFFSET}{qh}"
        )
        high = (
            f"WHEN e BETWEEN {lit(b)} AND {lit(DBL_MAX)} THEN {above} "
            f"WHEN e > {lit(DBL_MAX)} THEN {public} WHEN e >= {lit(a)} THEN {inner} "
        )
        if above_first:  # the common class first
            when = f"{high}WHEN e > 0 THEN {decade} "
        else:
            when = f"WHEN e > 0 AND e < {lit(a)} THEN {decade} {high}"
        key = f"CASE {when}WHEN e = 0 THEN {zero} END"
        if split:
            assert n_rows is not None
            got = self._split_bracket(key, b, n_rows)
            if got is None:
                return None  # a bad value: the general plan counts and refuses
            rows = got
        else:
            # q only below b (< Q_CAP: no upper clamp); greatest(e, 0): a bad negative
            # level's q is never used, but must not fail the cast (-inf)
            q = f"CAST(floor(greatest(e, 0) * {float(QE)!r}) AS BIGINT)"
            rows = self._fast(key, f"e < {lit(b)}", q)
        out = []
        coarse = set()
        for r in rows:
            if r[0] is None or bad_values(r):
                return None
            k, n, sy = int(r[0]), int(r[1]), int(r[3] or 0)
            if k == public:
                if not (math.isinf(float(r[7])) and math.isinf(float(r[8]))):
                    return None  # a NaN level (max(e) is NaN)
                out.append((PUBLIC_BIN, n, 0.0, 0.0, math.inf, math.inf, None, sy, 0, 0, 0))
            elif k == zero:
                out.append((ZERO_BIN, n, 0.0, 0.0, 0.0, 0.0, None, sy, 0, 0, 0))
            elif k == above:  # saturated for sure when the bracket holds: no q sums
                out.append((k, n, 0.0, 0.0, float(r[7]), float(r[8]), None, sy, 0, 0, 0))
            else:
                if k < sub:
                    coarse.add(k)
                sq = int(r[4])
                q2 = r[6]  # sum of q^2, exact (three sums)
                out.append(
                    (
                        k,
                        n,
                        sq / QE,
                        q2_float(*q2),
                        float(r[7]),
                        float(r[8]),
                        q2,
                        sy,
                        sq,
                        int(r[5]),
                        0,
                    )
                )
        out.sort(key=lambda t: t[0])
        h = histogram_from_rows(out)
        h.coarse = frozenset(coarse | {above})
        h.coarse_above = frozenset({above})
        return h
