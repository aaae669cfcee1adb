"""The last step of a release: from the planned rows, the exact integer sums and the noise
scale to the noisy estimate (OpenDP's Laplace on the grid), its proven 95% interval with
every rounding in its allowance, the receipt of privacy losses, and the all-public case
(no noise). Numbers in data units unless said."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from hdp_core.errors import ReleaseError
from hdp_core.intervals import (
    interval_in_range,
    population_half_width_moments,
    table_half_width,
)
from hdp_core.rounding import release_half_width
from hdp_release.engines.base import Histogram, Q
from hdp_release.noise import (
    Planned,
    frame,
    frames,
    measurement,
    noise_scale,
    planned,
    receipt,
    up,
)
from hdp_release.result import UNIT_ROUNDOFF, Release


def finish(
    rows,
    tau,
    lo,
    hi,
    sd_norm,
    data_sd,
    engine,
    n_used,
    n_excluded,
    n_public,
    plan,
    target: str = "population",
    norm: Fraction | None = None,
    factor: float = 1.0,
):
    """Noise, privacy check and interval for the planned rows (hdp_release.plan.Row): see
    :func:`finish_planned`."""
    return finish_planned(
        planned(rows),
        tau,
        lo,
        hi,
        sd_norm,
        data_sd,
        engine,
        n_used,
        n_excluded,
        n_public,
        plan,
        target=target,
        norm=norm,
        factor=factor,
    )


def finish_planned(
    p: Planned,
    tau,
    lo,
    hi,
    sd_norm,
    data_sd,
    engine,
    n_used,
    n_excluded,
    n_public,
    plan,
    target: str = "population",
    norm: Fraction | None = None,
    factor: float = 1.0,
    receipts: list | None = None,
    shared: dict | None = None,
):
    """Noise, privacy check and interval for a plan's receipt columns and exact totals
    (``p``, hdp_release.noise.Planned). With ``receipts`` (a list) the receipt's columns are
    appended to it and the Release's ``tiers`` is left None, for the caller to build many
    receipts at once (hdp_release.noise.frames) and put each in place. With ``shared`` (a
    dict kept by the caller across the segments of one release) OpenDP's measurement is built
    once per distinct noise scale and its privacy map asked once per distinct input distance
    (segments with the same users and levels have the same scale and sensitivities); every
    segment still draws its own noise, and every receipt row is still checked against its
    own level. ``norm``: the normaliser of
    the granted levels (weight of a user granted r is r / norm): ADPM's ||r||_1 (None) or,
    for the table target, 1 / eta (then the weights sum to S / norm <= 1 and the estimate is
    affine about the middle of the range)."""
    width = range_width(hi, lo)
    wf = float(width)
    # the noise is added to the mean relative to lo, a number in [0, R]: its one rounding to
    # a float is at most 2^-53 R (2^-52 R below, with room), whatever lo is
    delta = max(UNIT_ROUNDOFF * wf, 2.0**-1074)
    notes = []
    s1 = p.s1
    s2 = p.s2
    if target == "population":
        norm = s1
        fs1 = float(s1)
        var = 0.25 if sd_norm is None else sd_norm * sd_norm
        objective = (var * s2 + 2.0) / (fs1 * fs1)
        if objective > 0.25:  # ADPM answers the mid-range: no data used, nothing to check
            mid = lo + 0.5 * (hi - lo)
            notes.append(
                "ADPM's worst case passes 1/4 of the squared range: the answer is the "
                "mid-range, which uses no data."
            )
            zeros = [0.0] * len(p.users)
            return Release(
                mid,
                (lo, hi),
                0.0,
                tau,
                n_used,
                _receipt(p, zeros, zeros, factor, receipts),
                engine,
                lo,
                hi,
                data_sd,
                0.5 * (hi - lo),
                n_excluded,
                n_public,
                True,
                plan,
                0.0,
                0.0,
                tuple(notes),
                target=target,
            )
    assert norm is not None
    fnorm = float(norm)
    r_min = min(r for r, u in zip(p.r_min, p.users, strict=True) if u > 0)
    c_r = 2.0 * delta * fnorm / wf
    kappa = 2.0 * c_r / r_min + 2.0**-40
    scale = noise_scale(width, norm, kappa)
    if not (math.isfinite(scale) and scale > 0):  # fail closed, before OpenDP is asked
        raise ReleaseError("the noise scale is not a finite positive number; nothing was released")
    if shared is None:
        meas, known = measurement(scale), None
    else:
        got = shared.get(scale)
        if got is None:
            got = shared[scale] = (measurement(scale), {})
        meas, known = got
    loss, loss_max = receipt(p, meas, width, norm, delta, known)  # raises: nothing released
    w_num = p.w_num
    # the sum of the weights s1 / norm: exactly 1 for ADPM (norm is s1), at most 1 for the
    # table target; spare = 1 - it (0 for ADPM)
    weights = Fraction(1) if norm == s1 else s1 / norm
    spare = 1 - weights
    # the weighted mean minus lo, exactly, in [0, R]: R (sum_i w_i y_i / Q + (1 - W) / 2)
    if spare:
        x = float(width * (w_num / (norm * Q) + spare / 2))
    else:  # the same rational as a Fraction, rounded once (one correctly rounded division)
        x = (width.numerator * w_num.numerator * norm.denominator) / (
            width.denominator * w_num.denominator * norm.numerator * Q
        )
    # fail closed: only a finite number in [0, R] (the clamped, weighted mean relative to lo)
    # ever reaches the noise (rounding is monotone: x <= fl(R))
    if not 0.0 <= x <= wf:
        raise ReleaseError(
            "the value to be noised is not a finite number inside the range; nothing was released"
        )
    estimate = lo + float(meas(x))  # adding lo is post-processing
    eta = scale / wf  # the noise's Laplace scale on the unit scale (as drawn)
    bias = 0.0
    if target == "population":
        r_max = max(r for r, u in zip(p.r_max, p.users, strict=True) if u > 0)
        # s2 is a float sum: a relative 1e-12 more is an upper bound (valid in the bound)
        h_unit = population_half_width_moments(
            s2 / (fnorm * fnorm) * (1 + 1e-12), up(r_max / fnorm), eta, data_sd=sd_norm
        )
    else:
        bias = up(float(spare / 2))  # ||w - 1/n||_1 / 2 for the weights used, rounded up
        h_unit = table_half_width(bias, eta)
    # every rounding (grid, reading, the float handed to the noise, the noise's own rounding,
    # adding lo) in the half-width: hdp_core.rounding (proof there)
    h = release_half_width(h_unit, up(float(weights)), lo, hi)
    return Release(
        estimate,
        interval_in_range(estimate, h, lo, hi),
        scale,
        tau,
        n_used,
        _receipt(p, loss, loss_max, factor, receipts),
        engine,
        lo,
        hi,
        data_sd,
        h,
        n_excluded,
        n_public,
        False,
        plan,
        delta,
        kappa,
        tuple(notes),
        target=target,
        bias_bound=bias * wf,
    )


def put_receipts(out: list, segs: list[int], receipts: list) -> None:
    """Give each Release ``out[s]`` (made by :func:`finish_planned` with ``receipts``: its
    receipt left None) its receipt, the DataFrames of all built at once
    (hdp_release.noise.frames). The Releases are new, not yet returned to anyone: the frozen
    field is set in place (what dataclasses.replace would copy the Release to set)."""
    for s, df in zip(segs, frames(receipts), strict=True):
        object.__setattr__(out[s], "tiers", df)


@functools.lru_cache(maxsize=64)
def range_width(hi: float, lo: float) -> Fraction:
    """hi - lo exactly (a Fraction; kept for the few ranges in use: every segment of a
    release has the same)."""
    return Fraction(hi) - Fraction(lo)


def _receipt(p: Planned, loss, loss_max, factor: float, receipts: list | None):
    if receipts is None:
        return frame(p, loss, loss_max, factor)
    receipts.append((p, loss, loss_max, factor))
    return None


def all_public(
    h: Histogram, pub, lo, hi, engine, n_excluded, target, sd_norm, data_sd, factor
) -> Release:
    """Every usable user is public (eps = inf): no noise (nobody asked for privacy). The
    population target: the plain mean of the clamped values; the table target: the public
    users' values and the mid-range for the eps = 0 users (their bias, at most n_0 / (2n) of
    the range, is the interval)."""
    import pandas as pd

    n = int(h.n[pub].sum())
    sy = sum(h.sy[i] for i in np.flatnonzero(pub))
    width = Fraction(hi) - Fraction(lo)
    wf = float(width)
    weight_sum = 1.0  # the population target: weight 1/n on each public user
    if target == "population":
        est = float(Fraction(lo) + width * Fraction(sy, n * Q))
        h_unit = population_half_width_moments(up(1.0 / n), up(1.0 / n), 0.0, data_sd=sd_norm)
        bias = 0.0
        note = "Every usable user is public (eps = inf): the plain mean, no noise."
    else:
        n_all = n + n_excluded
        spare = Fraction(n_excluded, n_all)
        est = float(Fraction(lo) + width * (Fraction(sy, n_all * Q) + spare / 2))
        bias = up(float(spare / 2))
        h_unit = bias
        weight_sum = up(float(1 - spare))
        note = (
            "Every usable user is public (eps = inf): their values, and the mid-range for "
            "users with eps = 0, no noise."
        )
    hw = release_half_width(h_unit, weight_sum, lo, hi)
    df = pd.DataFrame(
        {
            "eps": [math.inf],
            "eps_max": [math.inf],
            "run_eps": [math.inf],
            "run_eps_max": [math.inf],
            "users": [n],
            "granted_eps": [math.inf],
            "granted_eps_max": [math.inf],
            "privacy_loss": [math.inf],
            "privacy_loss_max": [math.inf],
            "saturated": [False],
        }
    )
    return Release(
        est,
        interval_in_range(est, hw, lo, hi),
        0.0,
        math.inf,
        n,
        df,
        engine,
        lo,
        hi,
        data_sd,
        hw,
        n_excluded,
        n,
        False,
        "public only (1 aggregate pass)",
        0.0,
        0.0,
        (note,),
        target=target,
        bias_bound=bias * wf,
    )
