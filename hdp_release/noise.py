"""Noise and privacy map: OpenDP's Laplace measurement on the integer grid, its noise scale
b = R (1 + kappa) / ||r||_1 (Theorem 2), and the receipt's per-level privacy losses (OpenDP's
map, fail closed)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hdp_core.errors import ReleaseError
from hdp_release.plan import Row

_DOMAIN_METRIC: list = []  # OpenDP's float atom domain and absolute distance, built once


# ------------------------------------------------------------------------------ noise
def measurement(scale: float):
    """OpenDP's Laplace measurement on one float (absolute distance) at ``scale``."""
    import opendp.prelude as dp

    if not _DOMAIN_METRIC:  # the domain and metric are the same for every scale: built once
        dp.enable_features("contrib")
        _DOMAIN_METRIC[:] = [dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)]
    return dp.m.make_laplace(_DOMAIN_METRIC[0], _DOMAIN_METRIC[1], scale=scale)


def noise_scale(width: Fraction, s1: Fraction, kappa: float) -> float:
    """Laplace scale in data units, R (1 + kappa) / ||r||_1, rounded up: the exact rational
    rounded once (one integer division, correctly rounded, of its unreduced numerator and
    denominator: the same float as float(width * (1 + Fraction(kappa)) / s1))."""
    kn, kd = kappa.as_integer_ratio()
    num = width.numerator * (kd + kn) * s1.denominator
    return math.nextafter(num / (width.denominator * kd * s1.numerator), math.inf)


def up(x: float) -> float:
    return math.nextafter(x, math.inf)


@dataclass(frozen=True)
class Planned:
    """A plan's receipt rows as columns (run levels eps, eps_max; users; granted r_min,
    r_max; saturated) and its exact totals: s1 = ||r||_1 and w_num = sum_i r_i y_i (exact
    fractions), s2 = ||r||_2^2 (the float sum of the rows' s2 in row order)."""

    eps: Sequence[float]
    eps_max: Sequence[float]
    users: Sequence[int]
    r_min: Sequence[float]
    r_max: Sequence[float]
    saturated: Sequence[bool]
    s1: Fraction
    w_num: Fraction
    s2: float


def planned(rows: list[Row]) -> Planned:
    """The columns and exact totals of a plan's rows (hdp_release.plan.Row)."""
    return Planned(
        [r.eps for r in rows],
        [r.eps_max for r in rows],
        [r.users for r in rows],
        [r.r_min for r in rows],
        [r.r_max for r in rows],
        [r.saturated for r in rows],
        sum((r.s1 for r in rows), Fraction(0)),
        sum((r.w_num for r in rows), Fraction(0)),
        float(sum(r.s2 for r in rows)),  # exact when the rows' s2 are Fractions (bins plans)
    )


def receipt(
    p: Planned,
    meas,
    width: Fraction,
    s1: Fraction,
    delta: float,
    known: dict[float, float] | None = None,
):
    """Privacy check, failing closed: OpenDP's map at each row's sensitivity must not exceed
    the row's requested eps. Returns the receipt columns; raises ReleaseError naming the row.
    ``known``: OpenDP's map results of ``meas`` already computed, per input distance d_in
    (filled here; the same measurement and the same d_in give the same number, so a release
    of many segments asks OpenDP once per distinct (scale, d_in))."""
    loss, loss_max = [], []
    seen: dict[float, float] = {}  # one map call per distinct grant (saturated rows share tau*)
    if known is None:
        known = {}
    # width / s1 as an unreduced ratio of integers: each d_in below is the same correctly
    # rounded quotient of the same rational as with the reduced Fraction
    num, den = width.numerator * s1.denominator, width.denominator * s1.numerator
    two_delta, nxt, inf = 2.0 * delta, math.nextafter, math.inf
    for eps, eps_max, users, r_lo, r_hi in zip(
        p.eps, p.eps_max, p.users, p.r_min, p.r_max, strict=True
    ):
        pair = []
        for r in (r_lo, r_hi):
            got = seen.get(r)
            if got is None:
                rn, rd = float(r).as_integer_ratio()
                # float(Fraction(r) * width / s1): one correctly rounded int division
                d_in = nxt(nxt((rn * num) / (rd * den), inf) + two_delta, inf)
                got = known.get(d_in)
                if got is None:
                    got = known[d_in] = float(meas.map(d_in))
                seen[r] = got
            pair.append(got)
        lost, lost_max = pair
        if not (lost <= eps and lost_max <= eps_max):
            lvl = "public (inf)" if math.isinf(eps) else f"{eps:.6g}"
            raise ReleaseError(
                f"privacy check failed for the level eps = {lvl} ({users:,} users): "
                f"OpenDP's privacy map gives a loss of {lost:.6g} > {lvl}; nothing was "
                "released"
            )
        loss.append(lost)
        loss_max.append(lost_max)
    return loss, loss_max


def frame(p: Planned, loss, loss_max, factor: float = 1.0):
    """The receipt: per row the requested levels (eps, eps_max), the levels the release ran
    at (run_eps = eps x factor, what OpenDP's check bounds), users, granted levels and
    OpenDP's privacy loss."""
    import numpy as np
    import pandas as pd

    run = np.asarray(p.eps, dtype=np.float64)
    run_max = np.asarray(p.eps_max, dtype=np.float64)
    return pd.DataFrame(
        {
            "eps": run if factor == 1.0 else run / factor,
            "eps_max": run_max if factor == 1.0 else run_max / factor,
            "run_eps": run,
            "run_eps_max": run_max,
            "users": np.asarray(p.users, dtype=np.int64),
            "granted_eps": np.asarray(p.r_min, dtype=np.float64),
            "granted_eps_max": np.asarray(p.r_max, dtype=np.float64),
            "privacy_loss": np.asarray(loss, dtype=np.float64),
            "privacy_loss_max": np.asarray(loss_max, dtype=np.float64),
            "saturated": np.asarray(p.saturated, dtype=bool),
        },
        copy=False,
    )


def frames(items: list[tuple[Planned, Any, Any, float]]) -> list:
    """:func:`frame` of many receipts (plan, loss, loss_max, factor) at once: one DataFrame
    of all their rows, each receipt a slice of it with its own index 0..k-1 (equal to
    :func:`frame`'s; pandas' copy-on-write keeps them independent)."""
    from itertools import chain

    import numpy as np
    import pandas as pd

    if not items:
        return []
    sizes = [len(p.users) for p, _, _, _ in items]

    def cat(get: Any, dtype: Any) -> np.ndarray:  # one conversion of all the receipts' column
        return np.array(list(chain.from_iterable(get(it) for it in items)), dtype=dtype)

    run = cat(lambda it: it[0].eps, np.float64)
    run_max = cat(lambda it: it[0].eps_max, np.float64)
    fac = np.repeat(np.array([f for _, _, _, f in items], dtype=np.float64), sizes)
    ones = fac == 1.0
    big = pd.DataFrame(
        {
            "eps": np.where(ones, run, run / fac),
            "eps_max": np.where(ones, run_max, run_max / fac),
            "run_eps": run,
            "run_eps_max": run_max,
            "users": cat(lambda it: it[0].users, np.int64),
            "granted_eps": cat(lambda it: it[0].r_min, np.float64),
            "granted_eps_max": cat(lambda it: it[0].r_max, np.float64),
            "privacy_loss": cat(lambda it: it[1], np.float64),
            "privacy_loss_max": cat(lambda it: it[2], np.float64),
            "saturated": cat(lambda it: it[0].saturated, bool),
        },
    )  # copied: the float columns in one block, whose row slices are cheap to take
    ends = np.cumsum(sizes).tolist()
    index = {k: pd.RangeIndex(k) for k in set(sizes)}
    out = []
    for e, k in zip(ends, sizes, strict=True):
        part = big.iloc[e - k : e]
        part.index = index[k]  # this slice's own axis (set_axis copies its blocks' headers)
        out.append(part)
    return out
