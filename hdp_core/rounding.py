"""Every rounding a release makes, in its interval's half-width (beyond the paper).

A release (hdp_release) puts each clamped value on a grid of GRID = 2^30 steps of the range,
sums exact integers, scales the exact sum, and hands one float to OpenDP's Laplace, which
adds noise exactly on the grid 2^-1074 (every double is on it) and rounds the result to a
double; ``lo`` is then added in floating point. :func:`release_half_width` turns a proven
half-width h (unit scale, for the exact-arithmetic estimate of exact values:
hdp_core.intervals) into one that is proven for the numbers the release really computes.

Derivation. R = hi - lo, M = max(|lo|, |hi|), u = 2^-53 (unit roundoff of a double), W = sum
of the weights actually used (1 for ADPM, <= 1 for TableMean), every weight >= 0.

1. One value (the grid). An engine computes y = round(fl(fl(v - lo) / fl(R)) * GRID) for the
   double v of the clamped value (multiplying by GRID = 2^30 is exact). With p = (v - lo)/R
   in [0, 1], the quotient is p (1 + d1)(1 + d2) / (1 + d0), |d_j| <= u, so within
   3.0000001 u of p, and rounding to an integer moves it by at most 1/2: |y / GRID - p| <=
   1/(2 GRID) + 3.0000001 u (clamping y to [0, GRID] only moves it towards p). A value
   written as decimal text is read as the nearest double: after clamping (1-Lipschitz) that
   moves p by at most ulp(M) / (2 R). So each user's grid value is within
   e = 1/(2 GRID) + 4 u + ulp(M) / (2 R) of the exact one (unit scale).
2. The weighted sum of grid values is exact (integers and fractions), so it is within
   sum_i w_i e = W e of the weighted sum of the exact values: the estimate before noise
   moves by at most G = W e R (data units), deterministically, for every table. This is
   the "R x sum of weights / (2 GRID)" of the issue, plus the float terms.
3. The exact value x in [0, R] (relative to lo) is rounded once to a double: at most
   ulp(R) / 2 <= u R. OpenDP's noise: x is on its grid (k = -1074, no shift), the noisy
   x + L (exact, a multiple of 2^-1074) is converted to a double, then lo is added. Each of
   these two roundings is taken as at most 2u of its result (one ulp: enough even if the
   conversion were only faithful, not to nearest): at most 2u (R + |L|), then
   2u (|lo| + R + |L| + that), so together at most 2u (1 + 2u) (|lo| + 2R + 2|L|) <=
   2^-51 (|lo| + 2R) + 2^-50 |L|.
4. Let D = (estimate in exact arithmetic from exact values) - target = Zdata + L, with
   |Zdata| <= R (population: |sum_i w_i (x_i - mu)| <= W R; table: the bias, at most R),
   so |L| <= |D| + R. The released estimate minus the target is D + E with
   |E| <= G + u R + 2^-51 (|lo| + 2R) + 2^-50 (|D| + R) <= G + 2^-51 (|lo| + 5R) + 2^-50 |D|.
   If |D| <= h R then |D + E| <= h R (1 + 2^-50) + G + 2^-51 (|lo| + 6R) =: H, so
   P(|D + E| > H) <= P(|D| > h R) <= alpha: the interval estimate +- H is proven whenever
   estimate +- h R is proven for the exact arithmetic. H is computed with every operation
   rounded upwards (math.nextafter), and the result is widened by 2^-50 of itself.

The all-public release (no noise, estimate = the exact mean rounded once) is the case
L = 0 of the same bound.
"""

from __future__ import annotations

import math

__all__ = ["GRID", "grid_allowance", "release_half_width"]

GRID = 1 << 30
"""Steps of the range on the release's value grid: y in {0, ..., GRID} stands for
lo + y R / GRID (hdp_release.engines.base.Q)."""

_U = 2.0**-53


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


def grid_allowance(weight_sum: float, lo: float, hi: float) -> float:
    """G (data units): the most the grid (and the reading of the values as doubles) can move
    a release's estimate before noise, for weights adding up to ``weight_sum`` (<= 1) on
    the range [lo, hi]: weight_sum x (R / (2 GRID) + 4 u R + ulp(max(|lo|, |hi|)) / 2),
    rounded up (module docstring, steps 1 and 2)."""
    w, lo_f, hi_f = float(weight_sum), float(lo), float(hi)
    r = hi_f - lo_f
    if not (math.isfinite(r) and r > 0 and 0 <= w <= 1 + 1e-9):
        raise ValueError(f"need finite lo < hi and a weight sum in [0, 1], got {lo}, {hi}, {w}")
    r = _up(r)  # at least the exact hi - lo
    e = _up(_up(r / (2 * GRID) + _up(4 * _U * r)) + math.ulp(max(abs(lo_f), abs(hi_f))) / 2)
    return _up(_up(w) * e)


def release_half_width(h_unit: float, weight_sum: float, lo: float, hi: float) -> float:
    """The half-width (data units) a release states, given ``h_unit``, a proven half-width on
    the unit scale for its exact-arithmetic estimate (hdp_core.intervals), the sum of the
    weights it used and its range: H = h R (1 + 2^-50) + G + 2^-51 (|lo| + 6R), widened by
    2^-50 of itself, G from :func:`grid_allowance` (module docstring: the derivation)."""
    h, lo_f, hi_f = float(h_unit), float(lo), float(hi)
    if not (math.isfinite(h) and h >= 0):
        raise ValueError(f"the half-width must be finite and >= 0, got {h_unit}")
    r = _up(hi_f - lo_f)
    g = grid_allowance(weight_sum, lo_f, hi_f)
    floats = _up(2.0**-51 * _up(abs(lo_f) + 6.0 * r))
    total = _up(_up(_up(h * r) * (1.0 + 2.0**-50)) + _up(g + floats))
    return _up(total * (1.0 + 2.0**-50))
