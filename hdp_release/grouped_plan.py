"""Per-segment planning of a release per segment (hdp_release.grouped): the population
target's tiers plan for every segment at once (hdp_core.segments.adpm_tiers_batch), the other
plans per segment (hdp_release.plan), whose second passes (the per-user-levels plan's fetch of
the bin where tau* falls) are batched: one query fetches those bins for every segment that
needs one (hdp_release.engines.grouped.fetch_many); then noise, check and interval per
segment (hdp_release.finish)."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np

from hdp_core.segments import adpm_tiers_batch
from hdp_release.engines.base import PUBLIC_BIN, ZERO_BIN
from hdp_release.engines.segment_bins import parts_ints
from hdp_release.finish import all_public, finish, finish_planned, put_receipts
from hdp_release.grouped_bins import bins_segments
from hdp_release.noise import Planned
from hdp_release.plan import plan_bins_table, plan_tiers_table
from hdp_release.result import Release


def _no_data(lo: float, hi: float, engine: str, data_sd, target: str, n_excluded: int, why: str):
    """A segment with no usable user: the mid-range from no data, the whole range."""
    return Release(
        lo + 0.5 * (hi - lo),
        (lo, hi),
        0.0,
        math.inf,
        0,
        _empty_receipt(),
        engine,
        lo,
        hi,
        data_sd,
        0.5 * (hi - lo),
        n_excluded,
        0,
        True,
        "no data",
        0.0,
        0.0,
        (why,),
        target=target,
        bias_bound=0.5 * (hi - lo) if target == "table" else 0.0,
    )


def _empty_receipt():
    import pandas as pd

    cols = [
        "eps",
        "eps_max",
        "run_eps",
        "run_eps_max",
        "users",
        "granted_eps",
        "granted_eps_max",
        "privacy_loss",
        "privacy_loss_max",
        "saturated",
    ]
    return pd.DataFrame({k: [] for k in cols})


def plan_segments(
    src, bcols, chosen, hists, lo, hi, sd_norm, data_sd, c, engine, target, factor, passes
) -> list[Release]:
    """Each chosen segment's Release, in order (``chosen``: (key, present, rows);
    ``hists``: per key its Histogram; ``passes[0]`` counts the passes made)."""
    out: list[Release | None] = [None] * len(chosen)
    batch = []  # segments on the population target's tiers plan: solved at once
    bins: list[int] = []  # segments on the population target's level-bins plan
    per = segment_sums(hists)  # per segment of hists: users at eps = 0, public, finite; ranged
    for s, (key, here, _) in enumerate(chosen):  # per segment: classification only
        if not here:
            out[s] = _no_data(
                lo,
                hi,
                engine,
                data_sd,
                target,
                0,
                "This segment is not in the table: the mid-range, from no data.",
            )
            continue
        i = hists.index.get(key)
        n_ex, n_pub, n_fin, ranged = (0, 0, 0, 0) if i is None else (x[i] for x in per)
        n_used = n_fin + n_pub
        if n_used == 0:
            out[s] = _no_data(
                lo,
                hi,
                engine,
                data_sd,
                target,
                n_ex,
                "Every user of this segment has eps = 0: the mid-range, from no data.",
            )
        elif n_pub == n_used:
            pub = hists.bin[hists.rows(key)] == PUBLIC_BIN
            out[s] = all_public(
                hists[key], pub, lo, hi, engine, n_ex, target, sd_norm, data_sd, factor
            )
        elif target == "population" and ranged == 0:  # every finite bin holds one level
            batch.append(s)
        elif target == "population":
            bins.append(s)
        else:
            b = hists.bin[hists.rows(key)]
            pub = b == PUBLIC_BIN
            fin = (b != ZERO_BIN) & ~pub
            out[s] = _one_segment(
                hists[key],
                fin,
                pub,
                n_used,
                n_ex,
                n_pub,
                lo,
                hi,
                sd_norm,
                data_sd,
                engine,
                target,
                factor,
            )
    if bins:
        bins_segments(
            src,
            bcols,
            chosen,
            hists,
            bins,
            out,
            lo,
            hi,
            sd_norm,
            data_sd,
            c,
            engine,
            factor,
            passes,
        )
    if batch:
        _tiers_batch(batch, chosen, hists, out, lo, hi, sd_norm, data_sd, c, engine, factor)
    assert all(r is not None for r in out)
    return [r for r in out if r is not None]


def segment_sums(g) -> tuple[list[int], list[int], list[int], list[int]]:
    """Per segment of the Grouped ``g`` (in its key order), as Python ints: its users with
    eps = 0, its public users, its users with a finite positive level, and its finite bins
    holding more than one level (emin < emax); exact integer sums over each segment's rows
    (differences of cumulative sums), for all segments at once."""
    b = g.bin
    zero, pub = b == ZERO_BIN, b == PUBLIC_BIN
    fin = ~zero & ~pub
    lo, hi = g.start[:-1], g.start[1:]

    def per(x: np.ndarray) -> list[int]:
        cs = np.concatenate([[0], np.cumsum(x, dtype=np.int64)])
        return (cs[hi] - cs[lo]).tolist()

    zero_n = np.where(zero, g.n, 0)
    pub_n = np.where(pub, g.n, 0)
    fin_n = np.where(fin, g.n, 0)
    return per(zero_n), per(pub_n), per(fin_n), per(fin & (g.emin != g.emax))


def _tiers_batch(batch, chosen, hists, out, lo, hi, sd_norm, data_sd, c, engine, factor):
    """The population target's tiers plan for many segments: tau* of all at once
    (hdp_core.segments.adpm_tiers_batch), their granted levels and sums of squares as arrays,
    then each segment's exact sums, OpenDP noise and receipt (the measurement and its map
    shared between segments of the same scale: hdp_release.finish.finish_planned)."""
    g = hists
    spans = [g.rows(chosen[s][0]) for s in batch]
    lens = np.array([r.stop - r.start for r in spans], dtype=np.int64)
    flat = np.concatenate([np.arange(r.start, r.stop) for r in spans])
    seg = np.repeat(np.arange(len(batch)), lens)  # each flat row's position in the batch
    b, n = g.bin[flat], g.n[flat]
    zero, pub = b == ZERO_BIN, b == PUBLIC_BIN
    used = ~zero  # a segment's rows are sorted by bin: its finite levels, then its public row
    fin = used & ~pub
    n_s = len(batch)
    n_ex = np.bincount(seg, weights=np.where(zero, n, 0), minlength=n_s).astype(np.int64)
    n_pub = np.bincount(seg, weights=np.where(pub, n, 0), minlength=n_s).astype(np.int64)
    has_pub = n_pub > 0
    # the used rows of each segment, padded into one (segments x rows) array, in row order
    u_seg = seg[used]
    u_len = np.bincount(u_seg, minlength=n_s)
    u_start = np.concatenate([[0], np.cumsum(u_len)[:-1]])
    u_col = np.arange(u_seg.size) - np.repeat(u_start, u_len)
    width = int(u_len.max())
    lv = np.zeros((n_s, width))  # padding: level 0 with 0 users (adds 0.0 to every sum)
    ct = np.zeros((n_s, width))
    level = np.where(pub, math.inf, g.emin[flat])[used]
    lv[u_seg, u_col] = level
    ct[u_seg, u_col] = n[used]
    sizes = np.bincount(seg[fin], minlength=n_s)
    taus = adpm_tiers_batch(lv, ct, sizes, has_pub, c)  # public rows lie past each size
    r = np.minimum(lv, taus[:, None])  # as hdp_release.plan's tiers rows: min(eps, tau*)
    # the rows' sum of r^2 x users, sequential in row order (np.cumsum is a sequential loop;
    # padding adds 0.0), the same float sum as the plan's
    s2 = np.cumsum(r * r * ct, axis=1)[:, -1]
    sy = parts_ints(g.sy[flat[used]])
    levels_all = level.tolist()
    users_all = n[used].tolist()
    r_all = r[u_seg, u_col].tolist()
    sat_all = (level >= taus[u_seg]).tolist()
    ratio: dict[float, tuple[int, int]] = {}  # exact ratios, once per distinct grant
    shared: dict = {}  # OpenDP's measurement and map results per distinct noise scale
    receipts: list = []  # the receipts' columns: their DataFrames built at once at the end
    ends = np.cumsum(u_len).tolist()
    for i, s in enumerate(batch):  # per segment: its exact sums, OpenDP noise and check
        e = ends[i]
        a = e - int(u_len[i])
        rs, counts = r_all[a:e], users_all[a:e]
        p = Planned(
            levels_all[a:e],
            levels_all[a:e],
            counts,
            rs,
            rs,
            sat_all[a:e],
            exact_sum(rs, counts, ratio),
            exact_sum(rs, sy[a:e], ratio),
            float(s2[i]),
        )
        out[s] = finish_planned(
            p,
            float(taus[i]),
            lo,
            hi,
            sd_norm,
            data_sd,
            engine,
            int(sum(counts)),
            int(n_ex[i]),
            int(n_pub[i]),
            "tiers (segments solved at once)",
            target="population",
            factor=factor,
            receipts=receipts,
            shared=shared,
        )
    put_receipts(out, batch, receipts)


def exact_sum(r: list[float], mult: list[int], ratio: dict) -> Fraction:
    """sum_j r_j m_j exactly (floats r_j, integers m_j): one integer sum over the common
    power-of-two denominator, equal to the sum of Fraction(r_j) * m_j (``ratio`` caches each
    float's integer ratio)."""
    nd = []
    for x in r:
        got = ratio.get(x)
        if got is None:
            got = ratio[x] = x.as_integer_ratio()
        nd.append(got)
    den = max(d for _, d in nd)  # every d is a power of two: each divides the largest
    return Fraction(sum(n * (den // d) * m for (n, d), m in zip(nd, mult, strict=True)), den)


def _one_segment(
    h, fin, pub, n_used, n_ex, n_pub, lo, hi, sd_norm, data_sd, engine, target, factor
) -> Release:
    """The table target's plans (hdp_release.plan) on one segment's histogram (no second
    pass: the table target's plans need none)."""
    if bool((h.emin[fin] == h.emax[fin]).all()):
        rows, tau, norm = plan_tiers_table(h, fin, pub, n_ex)
        kind = "tiers"
    else:
        rows, tau, norm = plan_bins_table(h, fin, pub, n_ex)
        kind = "level bins"
    rel = finish(
        rows,
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
        target=target,
        norm=norm,
        factor=factor,
    )
    if data_sd is not None:
        rel = replace(
            rel, notes=(*rel.notes, "The declared data_sd is not used by the table target.")
        )
    return rel
