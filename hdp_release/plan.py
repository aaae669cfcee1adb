"""The release's plans (see hdp_release.release for the whole story): grouped sums per level
(tiers plan) or per level bin (bins plan), the exact walk to tau* (ADPM, Lemma 1) or to
TableMean's cap, and the rows of the receipt. Exact integer sums on the 2^30 value grid."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from hdp_core.adpm import adpm
from hdp_core.errors import ReleaseError
from hdp_core.profile import EpsilonProfile
from hdp_core.table_mean import table_mean
from hdp_release.engines.base import (
    FETCH_USERS,
    MAX_TIERS,
    Q_CAP,
    QE,
    RECEIPT_ROWS_PER_DECADE,
    SUB_BINS,
    Histogram,
    q2_exact,
    q2_float,
    q2_level,
)
from hdp_release.result import SATURATED_AT


def const(sd_norm: float | None) -> float:
    """The constant of Algorithm 1: 8 (the paper), or 2 / s^2 for a declared spread s."""
    return 8.0 if sd_norm is None else 2.0 / (sd_norm * sd_norm)


def tiers_solution(levels: np.ndarray, counts: np.ndarray, sd_norm: float | None):
    """r per tier and tau* from hdp_core's ADPM on the tiers profile (the tuned variant
    ``hdp.adpm(prof, data_sd=s)`` when a spread is declared)."""
    sol = adpm(run_profile(levels, counts), data_sd=sd_norm)
    return np.asarray(sol.r, dtype=float), float(sol.saturation_level)


def _walk(lo_l, hi_l, s1, s2, c: float):
    """First saturated entry of ascending entries (level range [lo_l, hi_l], sums s1, s2 of
    their levels): returns (j, kind, P1, P2) with kind 'at' (entry j's smallest level has
    G >= c: it and everything after saturate), 'inside' (G crosses c inside entry j: fetch
    its levels), or 'none'; P1, P2 the sums over entries before j. G(t) = sum_{eps<t} eps
    (t - eps) is built from nonnegative increments (as in hdp_core.adpm)."""
    g = p1 = p2 = 0.0
    prev = None
    for j in range(len(lo_l)):
        if prev is not None:
            g += (lo_l[j] - prev) * p1
        if g >= c * SATURATED_AT:
            return j, "at", p1, p2
        if hi_l[j] > lo_l[j]:
            gh = g + (hi_l[j] - lo_l[j]) * p1 + max(hi_l[j] * s1[j] - s2[j], 0.0)
            if gh >= c * SATURATED_AT:
                return j, "inside", p1, p2
            g, prev = gh, hi_l[j]
        else:
            prev = lo_l[j]
        p1 += s1[j]
        p2 += s2[j]
    return len(lo_l), "none", p1, p2


# ------------------------------------------------------------------------------ plans
@dataclass
class Row:
    eps: float  # smallest requested level in the row
    eps_max: float
    users: int
    r_min: float  # granted level of the row's smallest level
    r_max: float
    w_num: Fraction  # contribution to sum_i r_i y_i
    s1: Fraction  # contribution to ||r||_1
    s2: float | Fraction  # contribution to ||r||_2^2: exact in the bins plans, a float in the
    # tiers plans (their rows, sorted by level, are summed in one order)
    saturated: bool


def _public_row(h: Histogram, i: int, level: float, flevel: Fraction) -> Row:
    """The receipt row of the public users in histogram group ``i``: granted ``level`` (tau*
    for ADPM, the cap for TableMean; ``flevel`` is it as an exact fraction), saturated."""
    n = int(h.n[i])
    return Row(
        math.inf,
        math.inf,
        n,
        level,
        level,
        flevel * h.sy[i],
        flevel * n,
        flevel * flevel * n,
        True,
    )


def _level_rows(
    levels: np.ndarray, counts: np.ndarray, sy: list, r: np.ndarray, cut: float
) -> list[Row]:
    """One receipt row per distinct level (the few-levels plan): granted level r[j], the exact
    sums of r y and r over its users (from the engine's integer sum sy[j]), and saturated when
    the level is at least ``cut`` (tau* for ADPM, the cap for TableMean)."""
    rows = []
    for j in range(levels.size):  # k <= MAX_TIERS levels, each with exact rational sums
        rj = float(r[j])
        fr = Fraction(rj)
        lv, c = float(levels[j]), int(counts[j])
        rows.append(Row(lv, lv, c, rj, rj, fr * sy[j], fr * c, rj * rj * float(c), bool(lv >= cut)))
    return rows


def plan_tiers(h: Histogram, fin: np.ndarray, pub: np.ndarray, sd_norm):
    levels = np.concatenate([h.emin[fin], np.full(int(pub.sum()), math.inf)])
    counts = np.concatenate([h.n[fin], h.n[pub]])
    sy = [h.sy[i] for i in np.flatnonzero(fin)] + [h.sy[i] for i in np.flatnonzero(pub)]
    r, tau = tiers_solution(levels, counts, sd_norm)
    return _level_rows(levels, counts, sy, np.asarray(r, dtype=np.float64), tau), tau


def run_profile(levels: Any, counts: Any) -> EpsilonProfile:
    """A tiers profile of the levels a release runs at. Levels come from the engine (already
    checked against the supported range at the requested levels); at a spend below 1 they
    may lie below LEVEL_MIN, which is a rule for what users ask, not for the mathematics."""
    lv = np.asarray(levels, dtype=np.float64)
    ct = np.asarray(counts, dtype=np.int64)
    return EpsilonProfile._make(lv, ct, True, None, None)


def _cap_below(eta: float, n: int) -> float:
    """The largest float <= 1 / (n eta) (exactly): a user granted it has weight <= 1/n."""
    cap = Fraction(1) / (n * Fraction(eta))
    f = float(cap)
    if Fraction(f) > cap:
        f = math.nextafter(f, 0.0)
    return f


def plan_tiers_table(h: Histogram, fin: np.ndarray, pub: np.ndarray, n_zero: int):
    """The table target on exact levels: hdp.table_mean on the tiers (eps = 0 users counted
    in n, with weight 0); user j is granted min(eps_j, cap) with cap <= 1/(n eta), so the
    weights r eta never pass 1/n. Returns (rows, cap, norm = 1/eta)."""
    levels = np.concatenate([h.emin[fin], np.full(int(pub.sum()), math.inf)])
    counts = np.concatenate([h.n[fin], h.n[pub]])
    sy = [h.sy[i] for i in np.flatnonzero(fin)] + [h.sy[i] for i in np.flatnonzero(pub)]
    n = int(counts.sum()) + n_zero
    lv = np.append(levels, 0.0) if n_zero else levels
    ct = np.append(counts, n_zero) if n_zero else counts
    eta = float(table_mean(run_profile(lv, ct)).noise_scale)
    cap = _cap_below(eta, n)
    r = np.minimum(np.asarray(levels, dtype=np.float64), cap)
    return _level_rows(levels, counts, sy, r, cap), cap, 1 / Fraction(eta)


def plan_bins_table(h: Histogram, fin: np.ndarray, pub: np.ndarray, n_zero: int):
    """The table target on per-user levels known through level bins (relative width
    e^(1/64)). eta is TableMean's on the levels floored to each bin's smallest level (on the
    2^-42 grid); then each user below the cap 1/(n eta) is granted their own level on the
    2^-42 grid (exact sums of q and q y: nothing lost), each user of a bin wholly at or above
    the cap gets the cap (weight 1/n at most), and the one bin that straddles the cap is
    granted its smallest level (a loss of at most 1.6% of those users' levels). Privacy:
    every grant is at most the user's level. The bias bound is that of these weights.
    Returns (rows, cap, norm = 1/eta)."""
    idx = np.flatnonzero(fin)
    qmin = np.array([_qlevel(h.emin[i]) for i in idx])
    qmax = np.array([_qlevel(h.emax[i]) for i in idx])
    n_pub = int(h.n[pub].sum())
    counts = h.n[idx]
    n = int(counts.sum()) + n_pub + n_zero
    lv = np.concatenate([qmin, [math.inf, 0.0]])
    ct = np.concatenate([counts, [n_pub, n_zero]])
    keep = ct > 0
    eta = float(table_mean(run_profile(lv[keep], ct[keep])).noise_scale)
    cap = _cap_below(eta, n)
    fcap = Fraction(cap)
    rows = []
    for k, i in enumerate(idx):
        users = int(h.n[i])
        if qmax[k] <= cap:  # every user below the cap: their own grid level
            rows.append(
                Row(
                    float(h.emin[i]),
                    float(h.emax[i]),
                    users,
                    float(qmin[k]),
                    float(qmax[k]),
                    Fraction(h.sqy[i], QE),
                    Fraction(h.sq[i], QE),
                    Fraction(q2_exact(*h.q2[i]), QE2),
                    False,
                )
            )
        else:
            r = cap if qmin[k] >= cap else float(qmin[k])
            fr = Fraction(r)
            rows.append(
                Row(
                    float(h.emin[i]),
                    float(h.emax[i]),
                    users,
                    r,
                    r,
                    fr * h.sy[i],
                    fr * users,
                    fr * fr * users,
                    bool(qmin[k] >= cap),
                )
            )
    rows += [_public_row(h, int(i), cap, fcap) for i in np.flatnonzero(pub)]
    return _merge_rows(rows), cap, 1 / Fraction(eta)


MAX_PASSES = 64


def _qlevel(e: float) -> float:
    return math.floor(min(e, Q_CAP) * QE) / QE


def _entry(
    emin: Any,
    emax: Any,
    users: Any,
    sq: int,
    sqy: int,
    q2: tuple[int, int, int],
    sy: int,
    key: int | None = None,
    q: int | None = None,
) -> list[Any]:
    """One entry of the walk: users with levels in [emin, emax] and their exact sums (``q``:
    the group's one quantized level, when it is a single fetched level; ``key``: its bin;
    ``q2`` the exact sum of q^2 as three sums, base.q2_exact)."""
    qmin, qmax = (q / QE, q / QE) if q is not None else (_qlevel(emin), _qlevel(emax))
    return [float(emin), float(emax), int(users), qmin, qmax, sq, sqy, q2, sy, key]


QE2 = QE * QE


def tau_star(sq: int, sq2: int, c: float) -> float:
    """ADPM's saturation level (Lemma 1) tau* = (P2 + c) / P1 of the users below it, from the
    exact sums sq = sum q and sq2 = sum q^2 of their grid levels q / QE: one rounding, so
    the same for any row order, grouping or plan. Raises ZeroDivisionError when sq = 0."""
    return float((Fraction(sq2, QE2) + Fraction(c)) / Fraction(sq, QE))


def plan_bins(h: Histogram, src, fin: np.ndarray, pub: np.ndarray, c: float):
    # entries: (eps_min, eps_max, users, qmin, qmax, sq, sqy, q2 (exact ints), sy, bin or None)
    ent = [
        _entry(h.emin[i], h.emax[i], h.n[i], h.sq[i], h.sqy[i], h.q2[i], h.sy[i], int(h.bin[i]))
        for i in np.flatnonzero(fin)
    ]
    passes = 1
    while True:
        j, kind, _, _ = _walk(
            [e[3] for e in ent],
            [e[4] for e in ent],
            [e[5] / QE for e in ent],
            [q2_float(*e[7]) for e in ent],
            c,
        )
        if h.coarse and (
            (kind == "inside" and ent[j][9] in h.coarse)
            or (kind == "none" and any(e[9] in h.coarse_above for e in ent))
        ):
            raise BracketMissed  # tau* is not inside the fast plan's bracket
        if kind != "inside":
            break
        passes += 1
        if passes > MAX_PASSES:
            raise ReleaseError(
                f"tau* could not be isolated in {MAX_PASSES} passes over the table (levels "
                "too close together); round the eps column"
            )
        if ent[j][2] > FETCH_USERS:  # too many users to fetch level by level: refine the bin
            ent[j : j + 1] = [
                _entry(r[6], r[7], r[1], int(r[3]), int(r[4]), r[5], int(r[2] or 0))
                for r in src.refine(ent[j][0], ent[j][1], SUB_BINS)
            ]
            continue
        q, n, sy, emn, emx = src.fetch(ent[j][0], ent[j][1])
        ent[j : j + 1] = [
            _entry(
                emn[k],
                emx[k],
                n[k],
                int(q[k]) * int(n[k]),
                int(q[k]) * sy[k],
                q2_level(int(q[k]), int(n[k])),
                sy[k],
                q=int(q[k]),
            )
            for k in range(q.size)
        ]
    has_public = bool(pub.any())
    tau = (
        tau_star(sum(e[5] for e in ent[:j]), sum(q2_exact(*e[7]) for e in ent[:j]), c)
        if (kind == "at" or has_public)
        else math.inf
    )
    if kind == "at":  # granted min(eps, tau*): never above the smallest saturated level
        tau = min(tau, ent[j][3])
    ftau = Fraction(tau) if math.isfinite(tau) else None
    rows = _bins_rows(ent, j, tau, ftau)
    if pub.any():
        assert ftau is not None  # public users make tau* finite
        rows += [_public_row(h, int(i), tau, ftau) for i in np.flatnonzero(pub)]
    return _merge_rows(rows), tau, passes


def receipt_group(eps: float) -> int:
    """The per-user receipt row (1/8 decade) of a positive finite level ``eps``:
    floor(log10(eps) * RECEIPT_ROWS_PER_DECADE), as math.log10 gives it."""
    return math.floor(math.log10(eps) * RECEIPT_ROWS_PER_DECADE)


def _bins_rows(ent: list, j: int, tau: float, ftau: Fraction | None) -> list[Row]:
    """The receipt rows of the walk's entries (before public users), already merged as
    :func:`_merge_rows` merges them: each run of consecutive unsaturated entries (before j)
    in one 1/8 decade of their smallest level, their exact sums added as integers (one
    Fraction per row: sum q y / QE, sum q / QE, sum q^2 / QE^2), and the saturated entries
    (from j, granted tau*) as one row. The same rows, with the same exact sums, as one Row
    per entry merged by _merge_rows (issue 29: a fraction of the Python time)."""
    rows: list[Row] = []
    run: list[Any] | None = None
    last = None
    for e in ent[:j]:
        g = receipt_group(e[0])
        if run is not None and g == last:
            run[0], run[1] = min(run[0], e[0]), max(run[1], e[1])
            run[3], run[4] = min(run[3], e[3]), max(run[4], e[4])
            run[2] += e[2]
            run[5] += e[6]
            run[6] += e[5]
            run[7] += q2_exact(*e[7])
        else:
            if run is not None:
                rows.append(_unsaturated_row(run))
            run = [e[0], e[1], e[2], e[3], e[4], e[6], e[5], q2_exact(*e[7])]
        last = g
    if run is not None:
        rows.append(_unsaturated_row(run))
    if j < len(ent):  # saturated entries exist only when tau* is finite
        assert ftau is not None
        sat = ent[j:]
        users = sum(e[2] for e in sat)
        sy = sum(e[8] for e in sat)
        rows.append(
            Row(
                min(e[0] for e in sat),
                max(e[1] for e in sat),
                users,
                tau,
                tau,
                ftau * sy,
                ftau * users,
                ftau * ftau * users,
                True,
            )
        )
    return rows


def _unsaturated_row(run: list[Any]) -> Row:
    """A receipt row of unsaturated entries from their merged sums (eps, eps_max, users, r_min,
    r_max, sum q y, sum q, sum q^2: exact integers on the 2^-42 level grid)."""
    return Row(
        run[0],
        run[1],
        run[2],
        run[3],
        run[4],
        Fraction(run[5], QE),
        Fraction(run[6], QE),
        Fraction(run[7], QE2),
        False,
    )


def _merge_rows(rows: list[Row]) -> list[Row]:
    """The per-user-levels receipt: the unsaturated bins merged into rows of 1/8 decade of
    requested eps, the saturated finite levels into one row (all granted tau*), public users
    into one row. The privacy check at a merged row's smallest level still covers every level
    in it: loss(eps) - eps is nonincreasing in eps over the whole range (module docstring),
    so the smallest level of any interval is its tightest. Fewer rows: a receipt a person can
    read, and one OpenDP map call per row instead of per bin."""

    def group(r: Row) -> tuple[int, float]:
        if math.isinf(r.eps):
            return (2, 0.0)
        if r.saturated:
            return (1, 0.0)
        return (0, receipt_group(r.eps))

    out: list[Row] = []
    last = None
    for r in rows:
        g = group(r)
        if out and g == last:
            m = out[-1]
            out[-1] = Row(
                min(m.eps, r.eps),
                max(m.eps_max, r.eps_max),
                m.users + r.users,
                min(m.r_min, r.r_min),
                max(m.r_max, r.r_max),
                m.w_num + r.w_num,
                m.s1 + r.s1,
                m.s2 + r.s2,
                m.saturated,
            )
        else:
            out.append(r)
        last = g
    return out


class BracketMissed(Exception):
    """The fast plan's bracket does not contain tau* (the general plan is used)."""


def _bracket(sample: np.ndarray, n_rows: int, c: float) -> tuple[float, float] | None:
    """A bracket [a, b) for tau* from a sample of the levels: G estimated by the sample
    (scaled by n_rows / sample size) reaches c (1 - s) at a and c (1 + s) at b, with a slack
    s = 0.05 + 5 / sqrt(sample levels below tau), at most 0.5. Only steers the plan: the
    bracket pass verifies it with the exact G (else the general plan runs)."""
    x = sample[np.isfinite(sample) & (sample > 0)]
    if x.size == 0 or n_rows <= 0:
        return None
    s = np.sort(x)
    f = n_rows / sample.size
    p1, p2 = np.cumsum(s), np.cumsum(s * s)
    nxt = np.append(s[1:], np.inf)

    def t_at(target: float) -> tuple[float, int]:
        t = (p2 + target / f) / p1
        k = int(np.argmax(t <= nxt))
        return float(t[k]), k + 1

    _, k0 = t_at(c)
    slack = min(0.5, 0.05 + 5.0 / math.sqrt(k0))
    a, b = t_at(c * (1 - slack))[0], t_at(c * (1 + slack))[0]
    return (a, b) if 0 < a < b < Q_CAP else None


def fast_histogram(
    src, vcol: str, ecol: str, lo: float, hi: float, c: float, engine: str, tiers_only=False
):
    """DuckDB's fast plan (see the module docstring): (Histogram or None, full passes made,
    note). None means the general plan must run (bad input, or the sample missed levels).
    ``tiers_only`` (the table target): only the tiers pass (the bracket is ADPM's). After a
    ledger's light check on DuckDB (checks.precheck with the range) the tiers come from that
    check's scan, charged by now: no pass of its own."""
    if engine != "duckdb":
        return None, 0, ""
    src._prepare(vcol, ecol, lo, hi)
    checked = src.checked_levels()  # the ledger check's tiers scan, when it read this table
    if checked is not None:
        h = src.fast_tiers(checked)
        return h, 1, ("shared with the ledger's check" if h is not None else "")
    head = src.level_counts()  # the first rows' distinct levels (empty: an empty table)
    if not head or any(math.isnan(x) or x < 0 for x, _ in head):
        return None, 0, ""
    if len(head) <= MAX_TIERS:
        levels = np.array([x for x, _ in head], dtype=float)
        if src.levels_share_a_bin(sorted(float(x) for x in levels)):
            return None, 0, ""  # the general plan's level bins hold several of these levels
        share = max(n for _, n in head) / sum(n for _, n in head)
        h = src.fast_tiers(levels, share)
        return h, 1, ("" if h is not None else "fast tiers pass missed levels")
    if tiers_only:
        return None, 0, ""
    sample = src.level_sample()
    if bool((np.isnan(sample) | (sample < 0)).any()):
        return None, 0, ""
    n_rows = src.row_count()
    br = _bracket(sample, n_rows, c)
    if br is None:
        return None, 0, ""
    fin = sample[np.isfinite(sample)]
    above_first = bool((fin >= br[1]).sum() > (fin < br[0]).sum())
    h = src.fast_bracket(br[0], br[1], SUB_BINS, above_first, n_rows)
    return h, 1, ("" if h is not None else "fast bracket pass found bad input")
