"""A fingerprint of a dataset's content, the same on DuckDB, Spark and pandas (issue 22).

The privacy ledger (hdp_release.ledger.store) charges a release to the data it uses; the fingerprint
names that data whatever the file is called or how its rows and columns are ordered.

**What counts as the same data.** The multiset of (value, eps) pairs of the rows a release
would use, *as parsed*: each cell read as the engines read it (a number column as its
doubles; a text cell trimmed and read as a number, a public word such as 'inf' or 'public'
as +inf, a tier name of the menu as its tier's level). So:

* the same: any row order, any column order, other columns, blank lines, the file's name or
  format (CSV, Parquet, a DataFrame), the engine, spellings of one number ('0.1', '0.10',
  ' 1e-1 '), -0.0 and 0.0, a tier's name and its level written as a number;
* different: any changed, added or removed row whose eps is not 0; a value and eps swapped;
  another level for a tier (the menu changed: the users' promises changed);
* values are taken *before* clamping: the range [lo, hi] is a parameter of a release, not
  part of the data (otherwise changing the range would make a new dataset);
* rows with eps = 0 are left out: they are never used, so adding or removing them changes
  no release and must not reset the budget;
* a missing cell and NaN are one state ("missing"); such a table cannot be released anyway.

**How (linear time, in the engine).** Each double is written as exact integers: a class
(missing, zero, positive, negative, +inf, -inf), and for a finite nonzero x its binary
exponent E = floor(log2 |x|) and 53-bit significand M = |x| 2^(52 - E), so |x| = M 2^(E-52)
exactly. DuckDB and Spark compute E from log2 and correct it by one comparison with 2^E
(powers of two are exact in both), numpy uses frexp; tests check they agree bit for bit.
The five 31-bit words of a row are absorbed into two independent 31-bit hash lanes (per
word: xor, xor-shift, multiplication by an odd constant modulo 2^31; then a murmur-style
finalizer; every product stays below 2^62, so the arithmetic is exact in BIGINT, Spark
longs and numpy).
The rows are combined by sums modulo 2^31 per lane (order-independent) with the row count.
The same :data:`_MIX` schedule drives the SQL text, the Spark columns and numpy. It is a
content hash, not a cryptographic commitment: it guards against the same data coming back
under another name or order, not against an analyst who edits the data.

**What the ledger stores (issue 32): a keyed identity of the levels only.** An unkeyed hash
of the (value, eps) pairs is a public function of the raw values: anyone who sees it can
test candidate tables offline, and a ledger that refuses or shows a budget by it answers
"does this candidate equal the data released earlier?" for free. So the ledger never uses
the content fingerprint. It charges :func:`levels_identity_sql` / ``_spark`` / ``_arrays``:
the same mix over (0, eps) pairs, i.e. over the multiset of privacy levels alone (the level
profile: which levels, how many users at each; public by the app's convention, as every
receipt publishes it), with both lanes' seeds and the final hash keyed by the ledger's own
secret (HMAC-SHA256; PrivacyLedger.secret_key). It is the same on every engine for the same
parsed levels, never depends on a value, and means nothing without the secret.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "FINGERPRINT_PREFIX",
    "LEVELS_PREFIX",
    "fingerprint_arrays",
    "fingerprint_duckdb",
    "fingerprint_frame",
    "fingerprint_from_sums",
    "fingerprint_spark",
    "fingerprint_sql",
    "lane_seeds",
    "levels_identity_arrays",
    "levels_identity_counts",
    "levels_identity_frame",
    "levels_identity_from_sums",
    "levels_identity_spark",
    "levels_identity_sql",
]

FINGERPRINT_PREFIX = "fp1:"
"""Fingerprints are 'fp1:' and 32 hex digits (version 1 of the encoding)."""
LEVELS_PREFIX = "lv1:"
"""Keyed level-profile identities are 'lv1:' and 32 hex digits (HMAC-SHA256, truncated)."""

MASK = (1 << 31) - 1
# per lane: seed and the two odd multipliers of the mix (all < 2^31)
_LANES = ((0x1B873593, 0x7FEB352D, 0x045D9F3B), (0x5BD1E995, 0x2C1B3C6D, 0x297A2D39))
_E_OFFSET = 1100  # E + 1100 in [26, 2123]
_MISSING, _ZERO, _POS, _NEG, _PINF, _NINF = range(6)
_TWO52 = 4503599627370496.0


# ------------------------------------------------------------------------------ the mix
class _Ops:
    """The three operations of the mix for one backend (SQL text, Spark columns, numpy)."""

    def __init__(self, xor: Callable, shr: Callable, mulmask: Callable, lit: Callable):
        self.xor, self.shr, self.mulmask, self.lit = xor, shr, mulmask, lit


def _mix_layers(
    seeds: tuple[int, ...] | None = None,
) -> list[Callable[[_Ops, dict[str, Any]], dict[str, Any]]]:
    """The mix as layers; each maps the previous layer's columns (w0..w4, h0, h1) to the
    next. Every layer mentions a column at most three times, so SQL text stays small."""
    words = [f"w{i}" for i in range(5)]
    layers: list[Callable[[_Ops, dict[str, Any]], dict[str, Any]]] = []
    lane_seed = seeds if seeds is not None else tuple(s for s, _, _ in _LANES)

    def start(o: _Ops, c: dict[str, Any]) -> dict[str, Any]:
        out = {w: c[w] for w in words}
        for k in range(len(_LANES)):
            out[f"h{k}"] = o.lit(lane_seed[k])
        return out

    layers.append(start)
    for w in words:  # absorb a word: h = mix1(h ^ w), one multiplication

        def absorb(o: _Ops, c: dict[str, Any], w: str = w) -> dict[str, Any]:
            out = {x: c[x] for x in words}
            for k, (_, c1, _) in enumerate(_LANES):
                t = o.xor(c[f"h{k}"], c[w])
                out[f"h{k}"] = o.mulmask(o.xor(t, o.shr(t, 16)), c1)
            return out

        layers.append(absorb)

    def middle(o: _Ops, c: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for k, (_, _, c2) in enumerate(_LANES):
            h = c[f"h{k}"]
            out[f"h{k}"] = o.mulmask(o.xor(h, o.shr(h, 15)), c2)
        return out

    layers.append(middle)

    def finish(o: _Ops, c: dict[str, Any]) -> dict[str, Any]:
        return {f"h{k}": o.xor(c[f"h{k}"], o.shr(c[f"h{k}"], 16)) for k in range(len(_LANES))}

    layers.append(finish)
    return layers


_MIX = _mix_layers()


def lane_seeds(key: bytes) -> tuple[int, int]:
    """The two lanes' 31-bit seeds under a ledger's secret ``key`` (HMAC-SHA256 of a label)."""
    return tuple(  # type: ignore[return-value]
        int.from_bytes(hmac.new(key, f"hdp-lane-{k}".encode(), hashlib.sha256).digest()[:4]) & MASK
        for k in range(len(_LANES))
    )


def _check_key(key: Any) -> bytes:
    if not isinstance(key, bytes) or len(key) < 16:
        raise ValueError("a keyed identity needs the ledger's secret (at least 16 bytes)")
    return key


def levels_identity_from_sums(n_rows: int, s0: int, s1: int, key: bytes) -> str:
    """The keyed level-profile identity ('lv1:' + 32 hex digits) from the row count and the
    two keyed lane sums: HMAC-SHA256 under ``key`` (the ledger's secret)."""
    text = f"hdp-levels-v1|{int(n_rows)}|{int(s0) & MASK}|{int(s1) & MASK}"
    mac = hmac.new(_check_key(key), text.encode(), hashlib.sha256).hexdigest()
    return LEVELS_PREFIX + mac[:32]


def fingerprint_from_sums(n_rows: int, s0: int, s1: int) -> str:
    """The fingerprint ('fp1:' + 32 hex digits) from the row count and the two lane sums
    (any integers: reduced modulo 2^31 here)."""
    text = f"hdp-fingerprint-v1|{int(n_rows)}|{int(s0) & MASK}|{int(s1) & MASK}"
    return FINGERPRINT_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:32]


# ------------------------------------------------------------------------------ numpy
def _np_words(v: np.ndarray, e: np.ndarray) -> dict[str, np.ndarray]:
    def parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k = np.select(
            [np.isnan(x), x == 0, np.isposinf(x), np.isneginf(x), x > 0],
            [_MISSING, _ZERO, _PINF, _NINF, _POS],
            _NEG,
        ).astype(np.int64)
        fin = (k == _POS) | (k == _NEG)
        m, ex = np.frexp(np.where(fin, np.abs(x), 1.0))
        big_e = np.where(fin, ex.astype(np.int64) - 1, 0)
        big_m = np.where(fin, np.ldexp(m, 53).astype(np.int64), 0)
        return k, big_e, big_m

    kv, ev, mv = parts(v)
    ke, ee, me = parts(e)
    return {
        "w0": ((kv * 4096 + ev + _E_OFFSET) << 15) + (ke * 4096 + ee + _E_OFFSET),
        "w1": mv >> 31,
        "w2": mv & MASK,
        "w3": me >> 31,
        "w4": me & MASK,
    }


_NP = _Ops(
    xor=lambda a, b: a ^ b,
    shr=lambda a, k: a >> k,
    mulmask=lambda a, c: (a * np.int64(c)) & np.int64(MASK),
    lit=lambda x: np.int64(x),
)


def _np_sums(v: np.ndarray, e: np.ndarray, seeds: tuple[int, ...] | None) -> tuple[int, int, int]:
    keep = ~(e == 0)  # eps = 0 rows are not used: not part of the data (NaN is kept)
    cols: dict[str, Any] = _np_words(v[keep], e[keep])
    for layer in _MIX if seeds is None else _mix_layers(seeds):
        cols = layer(_NP, cols)
    return int(keep.sum()), int(np.sum(cols["h0"])), int(np.sum(cols["h1"]))


def levels_identity_arrays(levels: Any, key: bytes) -> str:
    """The keyed level-profile identity of parsed privacy levels (a float array; NaN for a
    missing cell, inf for a public user; eps = 0 rows left out). Vectorised numpy."""
    e = np.asarray(levels, dtype=float).ravel()
    return levels_identity_from_sums(*_np_sums(np.zeros_like(e), e, lane_seeds(key)), key)


def levels_identity_counts(levels: Any, counts: Any, key: bytes) -> str:
    """The keyed level-profile identity from distinct parsed levels and how many rows hold
    each (eps = 0 left out, as always): the lane sums are sums over rows, so each level's
    lane hashes (vectorised numpy) times its count give exactly the sums of
    :func:`levels_identity_sql` over the rows, without hashing every row (issue 30: the
    ledger's check pass groups rows by level). Exact Python integers."""
    e = np.asarray(levels, dtype=float).ravel()
    n = np.asarray(counts, dtype=np.int64).ravel()
    if e.shape != n.shape:
        raise ValueError(f"levels and counts differ in length ({e.size} and {n.size})")
    keep = ~(e == 0)
    e, n = e[keep], n[keep]
    cols: dict[str, Any] = _np_words(np.zeros_like(e), e)
    for layer in _mix_layers(lane_seeds(_check_key(key))):
        cols = layer(_NP, cols)
    s0 = sum(int(c) * int(h) for c, h in zip(n, cols["h0"], strict=True))
    s1 = sum(int(c) * int(h) for c, h in zip(n, cols["h1"], strict=True))
    return levels_identity_from_sums(int(n.sum()), s0, s1, key)


def fingerprint_arrays(values: Any, levels: Any) -> str:
    """The fingerprint of parsed values and privacy levels (float arrays of one length; NaN
    for a missing cell, inf for a public user). Vectorised numpy, linear time."""
    v = np.asarray(values, dtype=float).ravel()
    e = np.asarray(levels, dtype=float).ravel()
    if v.shape != e.shape:
        raise ValueError(f"values and levels differ in length ({v.size} and {e.size})")
    return fingerprint_from_sums(*_np_sums(v, e, None))


def fingerprint_frame(df: Any, value: str, eps: str, tiers: Any = None) -> str:
    """The fingerprint of a pandas DataFrame's columns ``value`` and ``eps``, each cell read
    as the release reads it (``tiers`` as in release_mean: tier names take their levels).
    Raises ReleaseError naming the row of a text cell that is not a number."""
    from hdp_release.checks import column_floats as _column_floats
    from hdp_release.preview import tier_levels

    names = tier_levels(tiers)
    v = _column_floats(df, value, "value", {}, "biuf")
    e = _column_floats(df, eps, "eps", names, "iufc")
    return fingerprint_arrays(v, e)


def levels_identity_frame(df: Any, eps: str, tiers: Any, key: bytes) -> str:
    """The keyed level-profile identity of a pandas DataFrame's column ``eps``, each cell
    read as the release reads it (``tiers`` as in release_mean); the same as the engines'
    for the same table. Raises ReleaseError naming the row of a cell that is not a level."""
    from hdp_release.checks import column_floats as _column_floats
    from hdp_release.preview import tier_levels

    return levels_identity_arrays(_column_floats(df, eps, "eps", tier_levels(tiers), "iufc"), key)


# ------------------------------------------------------------------------------ DuckDB
_SQL = _Ops(
    xor=lambda a, b: f"xor({a}, {b})",
    shr=lambda a, k: f"({a} >> {k})",
    mulmask=lambda a, c: f"(({a} * {int(c)}) & {MASK})",
    lit=lambda x: f"CAST({int(x)} AS BIGINT)",
)


def fingerprint_sql(
    relation: str, value_expr: str, eps_expr: str, seeds: tuple[int, ...] | None = None
) -> str:
    """A DuckDB query returning one row (rows, lane sum 0, lane sum 1) for the rows of
    ``relation`` (a table name or a parenthesised query / table function) with
    ``value_expr`` and ``eps_expr`` as DOUBLE expressions over it; pass the row to
    :func:`fingerprint_from_sums`. One scan, linear time."""
    q = (
        f"SELECT * FROM (SELECT CAST({value_expr} AS DOUBLE) AS v, CAST({eps_expr} AS DOUBLE) "
        f"AS e FROM {relation}) WHERE e IS NULL OR isnan(e) OR e <> 0"
    )

    def part(x: str) -> tuple[str, str, str]:
        k = (
            f"CASE WHEN {x} IS NULL OR isnan({x}) THEN {_MISSING} WHEN {x} = 0 THEN {_ZERO} "
            f"WHEN isinf({x}) AND {x} > 0 THEN {_PINF} WHEN isinf({x}) THEN {_NINF} "
            f"WHEN {x} > 0 THEN {_POS} ELSE {_NEG} END"
        )
        a = f"CASE WHEN isfinite({x}) AND {x} <> 0 THEN abs({x}) ELSE 1.0 END"
        g = f"least(greatest(floor(log2({a})), -1074), 1023)"
        return k, a, g

    kv, av, gv = part("v")
    ke, ae, ge = part("e")
    q = (
        f"SELECT CAST({kv} AS BIGINT) AS kv, {av} AS av, {gv} AS gv, CAST({ke} AS BIGINT) AS ke,"
        f" {ae} AS ae, {ge} AS ge FROM ({q})"
    )
    q = f"SELECT *, pow(2.0, gv) AS pv, pow(2.0, ge) AS pe FROM ({q})"

    def exp_sig(k: str, a: str, g: str, p: str) -> tuple[str, str]:
        """E = g corrected by one, and M = a / 2^E * 2^52 with 2^E = p / 2, p or 2 p (exact:
        g is clamped to [-1074, 1023], so p / 2 is taken only above 2^-1074, 2 p only below
        2^1023)."""
        low, high = f"{a} < {p}", f"{a} >= 2.0 * {p}"
        fin = f"{k} IN ({_POS}, {_NEG})"
        ex = f"CAST({g} - CASE WHEN {low} THEN 1 WHEN {high} THEN -1 ELSE 0 END AS BIGINT)"
        pe = f"CASE WHEN {low} THEN {p} * 0.5 WHEN {high} THEN {p} * 2.0 ELSE {p} END"
        m = f"CASE WHEN {fin} THEN CAST({a} / ({pe}) * {_TWO52!r} AS BIGINT) ELSE 0 END"
        return f"CASE WHEN {fin} THEN {ex} ELSE 0 END", m

    ev, mv = exp_sig("kv", "av", "gv", "pv")
    ee, me = exp_sig("ke", "ae", "ge", "pe")
    q = f"SELECT kv, {ev} AS ev, {mv} AS mv, ke, {ee} AS ee, {me} AS me FROM ({q})"
    q = (
        f"SELECT (((kv * 4096 + ev + {_E_OFFSET}) << 15) + (ke * 4096 + ee + {_E_OFFSET})) "
        f"AS w0, (mv >> 31) AS w1, (mv & {MASK}) AS w2, (me >> 31) AS w3, (me & {MASK}) AS w4 "
        f"FROM ({q})"
    )
    names = ["w0", "w1", "w2", "w3", "w4"]
    cols: dict[str, Any] = {n: n for n in names}
    for layer in _MIX if seeds is None else _mix_layers(seeds):
        out = layer(_SQL, cols)
        q = "SELECT " + ", ".join(f"{x} AS {n}" for n, x in out.items()) + f" FROM ({q})"
        cols = {n: n for n in out}
    return f"SELECT count(*), coalesce(sum(h0), 0), coalesce(sum(h1), 0) FROM ({q})"


def fingerprint_duckdb(con: Any, relation: str, value_expr: str, eps_expr: str) -> str:
    """Run :func:`fingerprint_sql` on a DuckDB connection; returns the fingerprint."""
    row = con.execute(fingerprint_sql(relation, value_expr, eps_expr)).fetchall()[0]
    return fingerprint_from_sums(int(row[0]), int(row[1]), int(row[2]))


def levels_identity_sql(relation: str, eps_expr: str, key: bytes) -> str:
    """A DuckDB query returning (rows, keyed lane sum 0, keyed lane sum 1) over the levels
    ``eps_expr`` of ``relation`` alone (no value enters it); pass the row and ``key`` to
    :func:`levels_identity_from_sums`. One scan."""
    return fingerprint_sql(relation, "0.0", eps_expr, lane_seeds(_check_key(key)))


# ------------------------------------------------------------------------------ Spark
_INF = "CAST('Infinity' AS DOUBLE)"

_SPARK_SQL = _Ops(
    xor=lambda a, b: f"({a} ^ {b})",
    shr=lambda a, k: f"shiftright({a}, {int(k)})",
    mulmask=lambda a, c: f"(({a} * {int(c)}L) & {MASK}L)",
    lit=lambda x: f"{int(x)}L",
)
"""The mix's operations as Spark SQL text (BIGINT arithmetic, as the DuckDB text's)."""

FP_ROWS, FP_LANE0, FP_LANE1 = "hdp_fk__", "hdp_h0__", "hdp_h1__"
"""Columns of :func:`spark_lanes`: whether a row counts (eps is not 0) and its lane hashes."""


def levels_identity_spark(df: Any, eps_col: Any, key: bytes) -> str:
    """The keyed level-profile identity of a Spark DataFrame's levels ``eps_col`` (a Column or
    a column name; no value enters it). One distributed aggregate; only three sums come to
    the driver. (A release's check computes it inside its own aggregate instead:
    :func:`levels_identity_spark_lanes`.)"""
    t, aggs = levels_identity_spark_lanes(df.select(_as_double(eps_col).alias("e")), "e", key)
    n, s0, s1 = (int(x or 0) for x in t.agg(*aggs).collect()[0])
    return levels_identity_from_sums(n, s0, s1, key)


def levels_identity_spark_lanes(df: Any, eps_name: str, key: bytes) -> tuple[Any, list[Any]]:
    """The per-row part of :func:`levels_identity_spark` for a caller's own aggregate: ``df``
    (whose DOUBLE column ``eps_name`` holds the parsed levels) with the lane columns added,
    and the three aggregate Columns (rows counted, keyed lane sums 0 and 1) to pass, with
    ``key``, to :func:`levels_identity_from_sums`. Every column of ``df`` is kept (none may
    start with 'hdp_f'), so the caller's other aggregates run in the same job."""
    from pyspark.sql import functions as F

    t = spark_lanes(df, None, eps_name, lane_seeds(_check_key(key)))
    keep = F.col(FP_ROWS)
    aggs = [
        F.count(F.when(keep, F.lit(1))),
        F.sum(F.when(keep, F.col(FP_LANE0))),
        F.sum(F.when(keep, F.col(FP_LANE1))),
    ]
    return t, aggs


def fingerprint_spark(df: Any, value_col: Any, eps_col: Any) -> str:
    """The fingerprint of a Spark DataFrame's rows, with ``value_col`` and ``eps_col`` (Spark
    Columns or column names) as doubles. One distributed aggregate, linear time."""
    from pyspark.sql import functions as F

    t = spark_lanes(
        df.select(_as_double(value_col).alias("v"), _as_double(eps_col).alias("e")), "v", "e", None
    )
    row = t.where(F.col(FP_ROWS)).agg(F.count(F.lit(1)), F.sum(FP_LANE0), F.sum(FP_LANE1))
    n, s0, s1 = row.collect()[0]
    return fingerprint_from_sums(int(n), int(s0 or 0), int(s1 or 0))


def _as_double(c: Any) -> Any:
    from pyspark.sql import functions as F

    return (F.col(f"`{c}`") if isinstance(c, str) else c).cast("double")


def _tick(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def spark_lanes(df: Any, v: str | None, e: str, seeds: tuple[int, ...] | None) -> Any:
    """``df`` with FP_ROWS (the row counts: its eps is not 0) and the two lane hashes of
    (value, eps) per row (FP_LANE0, FP_LANE1): columns ``v`` (None: the value 0.0, for the
    keyed levels identity) and ``e`` of DOUBLE type. Each layer is one Spark SQL text
    projection (a handful of calls from Python, however many operations the mix has); the
    same functions and BIGINT arithmetic as DuckDB's text, exact. Every column of ``df`` is
    carried along."""
    keep = [_tick(c) for c in df.columns]
    val = "0.0D" if v is None else _tick(v)

    def part(x: str) -> tuple[str, str, str]:
        k = (
            f"CAST(CASE WHEN {x} IS NULL OR isnan({x}) THEN {_MISSING} WHEN {x} = 0 THEN {_ZERO}"
            f" WHEN {x} = {_INF} THEN {_PINF} WHEN {x} = -{_INF} THEN {_NINF} WHEN {x} > 0 "
            f"THEN {_POS} ELSE {_NEG} END AS BIGINT)"
        )
        fin = f"({x} IS NOT NULL AND NOT isnan({x}) AND abs({x}) != {_INF} AND {x} != 0)"
        a = f"CASE WHEN {fin} THEN abs({x}) ELSE 1.0D END"
        return k, a, f"CAST(least(greatest(floor(log2({a})), -1074), 1023) AS BIGINT)"

    kv, av, gv = part(val)
    ke, ae, ge = part(_tick(e))
    fk = f"({_tick(e)} IS NULL OR isnan({_tick(e)}) OR {_tick(e)} != 0)"
    t = df.selectExpr(
        *keep, f"{fk} AS {FP_ROWS}", f"{kv} AS hdp_fkv", f"{av} AS hdp_fav", f"{gv} AS hdp_fgv",
        f"{ke} AS hdp_fke", f"{ae} AS hdp_fae", f"{ge} AS hdp_fge",
    )  # fmt: skip
    keep.append(FP_ROWS)

    def exp(a: str, g: str) -> str:
        p = f"pow(2.0D, {g})"
        one = f"CASE WHEN {a} < {p} THEN 1 WHEN {a} >= 2.0D * {p} THEN -1 ELSE 0 END"
        return f"CAST({g} - {one} AS BIGINT)"

    t = t.selectExpr(
        *keep, "hdp_fkv", "hdp_fav", f"{exp('hdp_fav', 'hdp_fgv')} AS hdp_fev", "hdp_fke",
        "hdp_fae", f"{exp('hdp_fae', 'hdp_fge')} AS hdp_fee",
    )  # fmt: skip

    def sig(k: str, a: str, ex: str) -> tuple[str, str]:
        fin = f"{k} IN ({_POS}, {_NEG})"
        m = f"CAST({a} / pow(2.0D, {ex}) * {_TWO52!r}D AS BIGINT)"
        return f"CASE WHEN {fin} THEN {m} ELSE 0L END", f"CASE WHEN {fin} THEN {ex} ELSE 0L END"

    mv, ev = sig("hdp_fkv", "hdp_fav", "hdp_fev")
    me, ee = sig("hdp_fke", "hdp_fae", "hdp_fee")
    t = t.selectExpr(
        *keep, "hdp_fkv", f"{ev} AS hdp_fev", f"{mv} AS hdp_fmv", "hdp_fke", f"{ee} AS hdp_fee",
        f"{me} AS hdp_fme",
    )  # fmt: skip
    off = f"{_E_OFFSET}L"
    w0 = f"shiftleft(hdp_fkv * 4096 + hdp_fev + {off}, 15) + (hdp_fke * 4096 + hdp_fee + {off})"
    t = t.selectExpr(
        *keep, f"{w0} AS hdp_fw0", "shiftright(hdp_fmv, 31) AS hdp_fw1",
        f"(hdp_fmv & {MASK}L) AS hdp_fw2", "shiftright(hdp_fme, 31) AS hdp_fw3",
        f"(hdp_fme & {MASK}L) AS hdp_fw4",
    )  # fmt: skip
    cols: dict[str, Any] = {f"w{i}": f"hdp_fw{i}" for i in range(5)}
    for layer in _MIX if seeds is None else _mix_layers(seeds):
        out = layer(_SPARK_SQL, cols)
        t = t.selectExpr(*keep, *[f"{x} AS hdp_f{n}" for n, x in out.items()])
        cols = {n: f"hdp_f{n}" for n in out}
    return t.withColumnsRenamed({"hdp_fh0": FP_LANE0, "hdp_fh1": FP_LANE1})
