"""The grouped pass's result for a release per segment (hdp_release.engines.grouped): every
segment's level bins in flat numpy arrays (:class:`Grouped`), the exact integer sums carried as
three 42-bit int64 parts each, so that they are summed exactly in numpy and turned into Python
integers only where a plan needs them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdp_release.engines.base import Histogram, from_decimal, q2_exact

PART_BITS = 42
PART_MASK = (1 << PART_BITS) - 1
"""Exact integer sums travel as three 42-bit parts (int64 each): value = p0 + p1 2^42 + p2 2^84."""


def _arr(x: Any, dtype: Any) -> np.ndarray:
    return np.asarray(np.ma.filled(x, 0) if np.ma.isMaskedArray(x) else x, dtype=dtype)


def grouped_from_columns(keys: list[tuple], cols: dict) -> Grouped:
    """A Grouped from the grouped pass's columns (rows in any order: sorted here by sid, then
    bin; rows with a bad level left out and counted), ``keys[sid]`` each segment's key.
    Without columns e1, e2 (DuckDB's pass does not sum them: no plan reads them) they are
    NaN. The rows are sorted by one integer key (sid, then the bin clipped to +-2^18: a finite
    level's bin floor(ln(e) 64) lies within +-2^16 and ZERO_BIN, PUBLIC_BIN are +-2^62, so the
    clip keeps the order) and every column gathered once; the exact sums' parts come as
    (rows, k) views of one block per name group."""
    sid0 = _arr(cols["sid"], np.int64)
    bad0 = _arr(cols["badb"], bool)
    b0 = _arr(cols["b"], np.int64)
    n0 = _arr(cols["n"], np.int64)
    nbad = _arr(cols["nbad"], np.int64)
    keep = np.flatnonzero(~bad0)
    kb = b0[keep]
    key = (sid0[keep] << BIN_SHIFT) + (np.clip(kb, -BIN_CLIP, BIN_CLIP) + BIN_CLIP)
    order = keep[np.argsort(key, kind="stable")]  # stable: as a lexsort of (sid, bin)
    m = order.size

    def take(x: str, dtype: Any) -> np.ndarray:
        return np.take(_arr(cols[x], dtype), order)

    def block(names: list[str]) -> np.ndarray:
        out = np.empty((len(names), m), dtype=np.int64)
        for i, x in enumerate(names):
            np.take(_arr(cols[x], np.int64), order, out=out[i])
        return out.T  # (rows, k), one column per name

    nan = np.full(m, math.nan)
    sid = sid0[order]
    start = np.searchsorted(sid, np.arange(len(keys) + 1), side="left")
    return Grouped(
        keys,
        start,
        b0[order],
        n0[order],
        take("e1", float) if "e1" in cols else nan,
        take("e2", float) if "e2" in cols else nan,
        take("emin", float),
        take("emax", float),
        block([f"{x}{i}" for x in Q2_NAMES for i in range(3)]),
        block([f"sy{i}" for i in range(3)]),
        block([f"sq{i}" for i in range(3)]),
        block([f"sqy{i}" for i in range(3)]),
        int(n0.sum()),
        int(n0[bad0].sum()),
        int(nbad.sum()),
    )


BIN_SHIFT = 20
BIN_CLIP = 1 << 18
"""The sort key of a (segment, bin) row: sid 2^20 + clip(bin, -2^18, 2^18) + 2^18."""


Q2_NAMES = ("q2h", "q2m", "q2l")
"""The three exact sums of q^2 (hdp_release.engines.base.q2_sql), each in three 42-bit parts:
a Grouped's q2 is (rows, 9) int64, columns q2h0..q2h2, q2m0..q2m2, q2l0..q2l2."""


def q2_floats(p: np.ndarray) -> np.ndarray:
    """hdp_release.engines.base.q2_float of each row of (rows, 9) parts: the same IEEE
    operations on the same correctly rounded sums."""
    h, m, lo = (parts_float(p[:, 3 * i : 3 * i + 3]) for i in range(3))
    return (h * 2.0**62 + m * 2.0**32 + lo) * 2.0**-84


def q2_sum(p: np.ndarray) -> int:
    """The exact sum of q^2 over the rows of (rows, 9) parts (fewer than 2^21 rows)."""
    return q2_exact(*(parts_int(p[:, 3 * i : 3 * i + 3]) for i in range(3)))


def q2_parts(ts: list) -> np.ndarray:
    """(rows, 9) parts of a list of three-sum tuples (hdp_release.engines.base.Q2)."""
    if not ts:
        return np.zeros((0, 9), dtype=np.int64)
    return np.concatenate([to_parts([t[i] for t in ts]) for i in range(3)], axis=1)


def to_parts(xs: list[int]) -> np.ndarray:
    """Nonnegative integers (below 2^126) as (len, 3) int64 parts (see PART_BITS)."""
    out = np.empty((len(xs), 3), dtype=np.int64)
    out[:, 0] = [x & PART_MASK for x in xs]
    out[:, 1] = [(x >> PART_BITS) & PART_MASK for x in xs]
    out[:, 2] = [x >> (2 * PART_BITS) for x in xs]
    return out


def parts_int(p: np.ndarray) -> int:
    """The exact sum of the integers whose parts are the rows of ``p`` (fewer than 2^21)."""
    t = p.sum(axis=0).tolist() if len(p) else [0, 0, 0]
    return int(t[0]) + (int(t[1]) << PART_BITS) + (int(t[2]) << (2 * PART_BITS))


def parts_ints(p: np.ndarray) -> list[int]:
    """Each row's integer."""
    return [a + (b << PART_BITS) + (c << (2 * PART_BITS)) for a, b, c in p.tolist()]


def parts_float(p: np.ndarray) -> np.ndarray:
    """float(x) of each row's integer, correctly rounded (as Python's float(int))."""
    out = p[:, 1].astype(np.float64) * float(1 << PART_BITS) + p[:, 0].astype(np.float64)
    big = np.flatnonzero(p[:, 2] != 0)  # above 2^84: Python's exact conversion
    for i in big.tolist():  # rare: a bin whose sum of levels passes 2^42 nats
        out[i] = float(parts_ints(p[i : i + 1])[0])
    return out


@dataclass
class Grouped:
    """The grouped pass's per-segment level bins, flat: segment ``sid`` (key ``keys[sid]``)
    owns rows start[sid]:start[sid + 1], sorted by bin (bad-level rows left out, counted in
    n_bad_eps). Exact integer sums as (rows, 3) int64 parts (PART_BITS). ``self[key]``: that
    segment's Histogram (hdp_release.engines.base), exact Python ints."""

    keys: list[tuple]
    start: np.ndarray
    bin: np.ndarray  # e1, e2 below: NaN from DuckDB's general pass (no plan reads them)
    n: np.ndarray
    e1: np.ndarray
    e2: np.ndarray
    emin: np.ndarray
    emax: np.ndarray
    q2: np.ndarray  # exact sums of q^2: (rows, 9) parts (Q2_NAMES)
    sy: np.ndarray
    sq: np.ndarray
    sqy: np.ndarray
    n_rows: int
    n_bad_eps: int
    n_bad_value: int

    def __post_init__(self) -> None:
        self.index = {k: i for i, k in enumerate(self.keys)}

    def rows(self, key: tuple) -> slice:
        """The flat rows of the segment ``key`` (empty for a key not present)."""
        i = self.index.get(key)
        if i is None:
            return slice(0, 0)
        return slice(int(self.start[i]), int(self.start[i + 1]))

    def __getitem__(self, key: tuple) -> Histogram:
        r = self.rows(key)
        return Histogram(
            self.bin[r],
            self.n[r],
            self.e1[r],
            self.e2[r],
            self.emin[r],
            self.emax[r],
            list(
                zip(*(parts_ints(self.q2[r][:, 3 * i : 3 * i + 3]) for i in range(3)), strict=True)
            ),
            parts_ints(self.sy[r]),
            parts_ints(self.sq[r]),
            parts_ints(self.sqy[r]),
            int(self.n[r].sum()),
            0,
            0,
        )

    def union(self) -> Histogram:
        """Every segment's bins in one Histogram (for the table-wide checks; no exact sums)."""
        return Histogram(
            self.bin,
            self.n,
            self.e1,
            self.e2,
            self.emin,
            self.emax,
            [],
            [],
            [],
            [],
            self.n_rows,
            self.n_bad_eps,
            self.n_bad_value,
        )


def grouped_from_rows(rows: list, m: int) -> Grouped:
    """A Grouped from rows (key..., bin, count, e1, e2, emin, emax, q2, sy, sq, sqy, bad
    values) in any order (Spark's collect)."""
    per: dict[tuple, list] = {}
    for r in rows:  # one row per (segment, bin): aggregates, never the table's rows
        per.setdefault(tuple(r[:m]), []).append(tuple(from_decimal(x) for x in r[m:]))
    keys = list(per)
    flat = []
    for i, k in enumerate(keys):
        rs = per[k]
        rs.sort(key=lambda t: (t[0] is not None, t[0] if t[0] is not None else 0))
        flat += [(i, *t) for t in rs]

    def col(j: int, dtype: Any) -> np.ndarray:
        return np.array([t[j] if t[j] is not None else 0 for t in flat], dtype=dtype)

    def ints(j: int) -> list[int]:
        return [int(t[j]) if t[j] is not None else 0 for t in flat]

    cols: dict[str, Any] = {
        "sid": col(0, np.int64),
        "b": col(1, np.int64),
        "badb": np.array([t[1] is None for t in flat], dtype=bool),
        "n": col(2, np.int64),
        "e1": col(3, float),
        "e2": col(4, float),
        "emin": col(5, float),
        "emax": col(6, float),
        "nbad": col(11, np.int64),
    }
    p9 = q2_parts([t[7] if t[7] is not None else (0, 0, 0) for t in flat])
    for i in range(9):
        cols[f"{Q2_NAMES[i // 3]}{i % 3}"] = p9[:, i]
    for x, j in (("sy", 8), ("sq", 9), ("sqy", 10)):
        p = to_parts(ints(j))
        for i in range(3):
            cols[f"{x}{i}"] = p[:, i]
    return grouped_from_columns(keys, cols)
