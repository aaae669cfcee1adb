"""The population target's level-bins plan (per-user levels) for many segments at once, as
arrays (issue 28's speed): each segment's walk to tau* (hdp_release.plan.plan_bins, the
saturation lemma) on numpy arrays of its bins instead of Python rows, its second passes
batched (ONE fetch query per round for every segment whose tau* falls inside a bin,
hdp_release.engines.grouped.fetch_many, on DuckDB and Spark; a bin of more than FETCH_USERS
users refined on its segment's rows first), and its receipt rows (1/8 decade,
hdp_release.plan's merge) and exact totals formed from the bins' integer sums (42-bit parts)
without a Fraction per bin.

Equal, bit for bit, to hdp_release.plan.plan_bins + hdp_release.noise.planned on each
segment's histogram (tests/release/test_release_means.py compares with release_mean): every
float sum is sequential in the same order (np.cumsum is a sequential loop), every exact sum an
integer sum (the sums of q^2 as Python ints in object arrays: tau* and the sum of squared
grants from exact sums, rounded once, hdp_release.plan.tau_star), and each rounding the same
IEEE operation on the same operands."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from hdp_core.errors import ReleaseError
from hdp_release.engines.base import (
    FETCH_USERS,
    PUBLIC_BIN,
    Q_CAP,
    QE,
    RECEIPT_ROWS_PER_DECADE,
    SUB_BINS,
    ZERO_BIN,
    q2_level,
)
from hdp_release.engines.grouped import fetch_many, segment_view
from hdp_release.engines.segment_bins import (
    Grouped,
    parts_float,
    parts_int,
    q2_floats,
    q2_parts,
    q2_sum,
    to_parts,
)
from hdp_release.finish import finish_planned, put_receipts
from hdp_release.noise import Planned
from hdp_release.plan import MAX_PASSES, QE2, receipt_group, tau_star
from hdp_release.result import SATURATED_AT

QEF = float(QE)


@dataclass
class Entries:
    """A segment's walk entries, ascending: users with levels in [emin, emax], their grid
    levels qmin, qmax (2^-42 grid), s1 = sum q / 2^42 (float), the exact sums of q^2 as
    (k, 9) int64 parts (hdp_release.engines.segment_bins.Q2_NAMES), and the exact sums of q,
    q y and y as (k, 3) int64 parts; s2: the walk's float sum of q^2 / 2^84 per entry
    (hdp_release.engines.segment_bins.q2_floats of q2)."""

    emin: np.ndarray
    emax: np.ndarray
    users: np.ndarray
    qmin: np.ndarray
    qmax: np.ndarray
    s1: np.ndarray
    q2: np.ndarray
    sq: np.ndarray
    sqy: np.ndarray
    sy: np.ndarray
    s2: np.ndarray

    def splice(self, j: int, new: Entries) -> Entries:
        """Entry j replaced by ``new`` (its fetched levels or its sub-bins)."""

        def cat(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return np.concatenate([a[:j], b, a[j + 1 :]])

        return Entries(*(cat(getattr(self, f), getattr(new, f)) for f in _FIELDS))


_FIELDS = ("emin", "emax", "users", "qmin", "qmax", "s1", "q2", "sq", "sqy", "sy", "s2")


def qlevel(e: np.ndarray) -> np.ndarray:
    """Levels floored to the 2^-42 grid, capped at Q_CAP (hdp_release.plan's _qlevel)."""
    return np.floor(np.minimum(e, Q_CAP) * QEF) / QEF


@dataclass
class RowFloats:
    """The walk's per-bin floats of every row of a Grouped, computed once (each elementwise,
    so a segment's slice equals the same function on the segment's rows): grid levels qmin,
    qmax, s1 = sum q / 2^42 and s2 = sum q^2 / 2^84 (the walk's steering sums)."""

    qmin: np.ndarray
    qmax: np.ndarray
    s1: np.ndarray
    s2: np.ndarray


def row_floats(g: Grouped) -> RowFloats:
    """:class:`RowFloats` of every row of ``g``."""
    return RowFloats(qlevel(g.emin), qlevel(g.emax), parts_float(g.sq) / QEF, q2_floats(g.q2))


def bin_entries(g: Grouped, r: slice, fin: np.ndarray, f: RowFloats | None = None) -> Entries:
    """The walk's entries of one segment's finite bins (its flat rows ``r`` of ``g``; ``f``:
    :func:`row_floats` of ``g``, computed here when not given). A segment's rows are sorted by
    bin (ZERO_BIN first, PUBLIC_BIN last), so its finite bins are one run of rows: taken as
    views (the general case, any mask, by index)."""
    if f is None:
        f = row_floats(g)
    at = np.flatnonzero(fin)
    if at.size and int(at[-1]) - int(at[0]) + 1 == at.size:
        take: Any = slice(r.start + int(at[0]), r.start + int(at[-1]) + 1)
    else:
        take = at + r.start
    return Entries(
        g.emin[take],
        g.emax[take],
        g.n[take],
        f.qmin[take],
        f.qmax[take],
        f.s1[take],
        g.q2[take],
        g.sq[take],
        g.sqy[take],
        g.sy[take],
        f.s2[take],
    )


def fetched_entries(got: Any) -> Entries:
    """Entries of a fetch's distinct grid levels (hdp_release.engines.base.fetch_rows)."""
    q, n, sy, emn, emx = got
    qi, ni = [int(x) for x in q.tolist()], [int(x) for x in n.tolist()]
    qf = np.array([x / QE for x in qi], dtype=float)
    sq = [a * b for a, b in zip(qi, ni, strict=True)]
    q2 = q2_parts([q2_level(a, b) for a, b in zip(qi, ni, strict=True)])
    return Entries(
        np.asarray(emn, dtype=float),
        np.asarray(emx, dtype=float),
        np.asarray(ni, dtype=np.int64),
        qf,
        qf,
        np.array([x / QE for x in sq], dtype=float),
        q2,
        to_parts(sq),
        to_parts([a * int(b) for a, b in zip(qi, sy, strict=True)]),
        to_parts([int(b) for b in sy]),
        q2_floats(q2),
    )


def refined_entries(rows: list) -> Entries:
    """Entries of a refine's sub-bins (rows k, users, sum y, sum q, sum q y, sum q^2, emin,
    emax)."""
    emin = np.array([float(r[6]) for r in rows], dtype=float)
    emax = np.array([float(r[7]) for r in rows], dtype=float)
    sq = [int(r[3]) for r in rows]
    q2 = q2_parts([r[5] for r in rows])
    return Entries(
        emin,
        emax,
        np.array([int(r[1]) for r in rows], dtype=np.int64),
        qlevel(emin),
        qlevel(emax),
        np.array([x / QE for x in sq], dtype=float),
        q2,
        to_parts(sq),
        to_parts([int(r[4]) for r in rows]),
        to_parts([int(r[2] or 0) for r in rows]),
        q2_floats(q2),
    )


def walk(e: Entries, c: float) -> tuple[int, str, float, float]:
    """hdp_release.plan's _walk on arrays: (j, kind, P1, P2), the first saturated entry, its
    kind ('at', 'inside', 'none') and the sums of s1 and q2 / 2^84 over the entries before it
    (floats: tau* comes from the exact sums, :func:`planned_bins`). G is
    the same sequential float sum of the same increments: a_j = (lo_j - prev) P1_j, then, for
    an entry spanning several levels, (hi_j - lo_j) P1_j and max(hi_j s1_j - s2_j, 0)."""
    lo, hi, s1 = e.qmin, e.qmax, e.s1
    s2 = e.s2  # base.q2_float of each entry, as hdp_release.plan's walk
    k = lo.size
    thr = c * SATURATED_AT
    if k == 0:
        return 0, "none", 0.0, 0.0
    c1 = np.cumsum(s1)
    p1 = np.concatenate([[0.0], c1[:-1]])  # P1 before entry j (sequential, as the walk's)
    rng = hi > lo
    prev = np.where(rng, hi, lo)
    a = np.zeros(k)
    a[1:] = (lo[1:] - prev[:-1]) * p1[1:]
    t = np.zeros((k, 3))
    t[:, 0] = a
    t[:, 1] = np.where(rng, (hi - lo) * p1, 0.0)
    t[:, 2] = np.where(rng, np.maximum(hi * s1 - s2, 0.0), 0.0)
    g = np.cumsum(t.ravel()).reshape(k, 3)  # adding 0.0 leaves a sum as it is
    hit = np.zeros((k, 3), dtype=bool)
    hit[:, 0] = g[:, 0] >= thr
    hit[:, 2] = rng & (g[:, 2] >= thr)
    flat = hit.ravel()
    c2 = np.cumsum(s2)
    if not flat.any():
        return k, "none", float(c1[-1]), float(c2[-1])
    first = int(np.argmax(flat))
    j = first // 3
    p2 = float(c2[j - 1]) if j > 0 else 0.0
    return j, ("at" if first % 3 == 0 else "inside"), float(p1[j]), p2


def bins_segments(
    src: Any,
    bcols: list[str],
    chosen: list,
    g: Grouped,
    segs: list[int],
    out: list,
    lo: float,
    hi: float,
    sd_norm: float | None,
    data_sd: float | None,
    c: float,
    engine: str,
    factor: float,
    passes: list[int],
) -> None:
    """The population target's level-bins plan for the segments ``segs`` (indices into
    ``chosen``), each finished into ``out[s]``; ``passes[0]`` counts the passes made."""
    ents: dict[int, Entries] = {}
    pub_rows: dict[int, np.ndarray] = {}
    extra = dict.fromkeys(segs, 0)
    f = row_floats(g)
    for s in segs:
        r = g.rows(chosen[s][0])
        b = g.bin[r]
        fin = (b != ZERO_BIN) & (b != PUBLIC_BIN)
        ents[s] = bin_entries(g, r, fin, f)
        pub_rows[s] = np.flatnonzero(b == PUBLIC_BIN) + r.start
    done: dict[int, tuple[int, str, float, float]] = {}
    pending = list(segs)
    while pending:
        needs: list[tuple[int, int, float, float]] = []
        for s in pending:  # per segment: its walk on arrays
            e = ents[s]
            while True:
                j, kind, p1, p2 = walk(e, c)
                if kind != "inside":
                    done[s] = (j, kind, p1, p2)
                    break
                if 1 + extra[s] >= MAX_PASSES:
                    raise ReleaseError(
                        f"tau* could not be isolated in {MAX_PASSES} passes over the table "
                        "(levels too close together); round the eps column"
                    )
                if int(e.users[j]) > FETCH_USERS:  # too many users to fetch: refine the bin
                    view = segment_view(src, bcols, chosen[s][0], engine)
                    sub = view.refine(float(e.emin[j]), float(e.emax[j]), SUB_BINS)
                    e = ents[s] = e.splice(j, refined_entries(sub))
                    extra[s] += 1
                    passes[0] += 1
                    continue
                needs.append((s, j, float(e.emin[j]), float(e.emax[j])))
                break
        pending = [s for s, _, _, _ in needs]
        if needs:
            got = fetch_many(src, bcols, [(chosen[s][0], a, b) for s, _, a, b in needs], engine)
            passes[0] += 1
            for (s, j, _, _), res in zip(needs, got, strict=True):
                ents[s] = ents[s].splice(j, fetched_entries(res))
                extra[s] += 1
    receipts: list = []  # the receipts' columns: their DataFrames built at once at the end
    shared: dict = {}  # OpenDP's measurement and map results per distinct noise scale
    for s in segs:
        p, tau = planned_bins(g, ents[s], pub_rows[s], *done[s], c)
        r = g.rows(chosen[s][0])
        b, n = g.bin[r], g.n[r]
        n_ex, n_pub = int(n[b == ZERO_BIN].sum()), int(n[b == PUBLIC_BIN].sum())
        n_used = int(n[(b != ZERO_BIN) & (b != PUBLIC_BIN)].sum()) + n_pub
        kind = "level bins" + (f" (+{extra[s]} fetch or refine)" if extra[s] else "")
        out[s] = finish_planned(
            p,
            tau,
            lo,
            hi,
            sd_norm,
            data_sd,
            engine,
            n_used,
            n_ex,
            n_pub,
            kind,
            target="population",
            factor=factor,
            receipts=receipts,
            shared=shared,
        )
    put_receipts(out, segs, receipts)


def _group_keys(eps: np.ndarray) -> np.ndarray:
    """floor(log10(eps) * RECEIPT_ROWS_PER_DECADE) as math.log10 gives it (numpy's log10,
    checked against math's where it lies near an integer)."""
    x = np.log10(eps) * RECEIPT_ROWS_PER_DECADE
    k = np.floor(x)
    near = np.flatnonzero(np.abs(x - np.round(x)) < 1e-6)
    for i in near.tolist():  # rare: a level within 1e-6 of a 1/8-decade boundary
        k[i] = receipt_group(float(eps[i]))
    return k


def planned_bins(
    g: Grouped, e: Entries, pub: np.ndarray, j: int, kind: str, p1: float, p2: float, c: float
) -> tuple[Planned, float]:
    """tau* and the merged receipt rows with exact totals (hdp_release.plan.plan_bins and
    _merge_rows): entries before j unsaturated (granted their grid levels), from j on
    saturated (granted tau*), the public users granted tau*."""
    has_public = pub.size > 0
    q2_below = q2_sum(e.q2[:j])  # exact
    sq_below = parts_int(e.sq[:j])
    tau = tau_star(sq_below, q2_below, c) if (kind == "at" or has_public) else math.inf
    if kind == "at":  # granted min(eps, tau*): never above the smallest saturated level
        tau = min(tau, float(e.qmin[j]))
    k = e.emin.size
    n_pub = g.n[pub]
    eps = np.concatenate([e.emin, np.full(pub.size, math.inf)])
    eps_max = np.concatenate([e.emax, np.full(pub.size, math.inf)])
    users = np.concatenate([e.users, n_pub])
    sat = np.arange(k + pub.size) >= j
    r_lo = np.concatenate([e.qmin[:j], np.full(k - j + pub.size, tau)])
    r_hi = np.concatenate([e.qmax[:j], np.full(k - j + pub.size, tau)])
    # groups: the unsaturated rows by 1/8 decade, the saturated finite rows, the public rows
    key = np.empty(k + pub.size)
    key[:j] = _group_keys(e.emin[:j])
    key[j:k] = -math.inf
    key[k:] = math.inf
    starts = np.flatnonzero(np.append(True, key[1:] != key[:-1]))
    n_sat = int(e.users[j:].sum()) + int(n_pub.sum())
    sy_sat = parts_int(e.sy[j:]) + parts_int(g.sy[pub])
    tn, td = tau.as_integer_ratio() if math.isfinite(tau) else (0, 1)
    if n_sat and not math.isfinite(tau):
        raise ReleaseError("saturated users without a saturation level; nothing was released")
    # the exact totals over one common denominator (QE td; QE2 td^2): the same rationals as
    # Fraction(sum, QE) + Fraction(tau) x count, normalised once (s1, w_num) or rounded once
    # (total_s2: one correctly rounded integer division)
    s1 = Fraction(sq_below * td + tn * n_sat * QE, QE * td)
    w_num = Fraction(parts_int(e.sqy[:j]) * td + tn * sy_sat * QE, QE * td)
    total_s2 = (q2_below * td * td + tn * tn * n_sat * QE2) / (QE2 * td * td)  # one rounding
    p = Planned(
        np.minimum.reduceat(eps, starts).tolist(),
        np.maximum.reduceat(eps_max, starts).tolist(),
        np.add.reduceat(users, starts).tolist(),
        np.minimum.reduceat(r_lo, starts).tolist(),
        np.maximum.reduceat(r_hi, starts).tolist(),
        sat[starts].tolist(),
        s1,
        w_num,
        total_s2,
    )
    return p, tau
