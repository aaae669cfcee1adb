"""The minimax affine estimator of a table's own mean under per-user privacy (beyond the paper).

Setting (data rescaled to [-1/2, 1/2]): a table of n rows x_1..x_n, user i asks for privacy
eps_i in [0, inf]. The target is the table's own mean m(x) = (1/n) sum_i x_i over EVERY row,
with no assumption on how a user's level relates to their value. The class is the one ADPM
optimises over: T = <w, x> + Laplace(eta), user i's privacy w_i / eta <= eps_i (the appendix's
Laplace-mechanism lemma).

Derivation (checked in tests against cvxpy and exact rational arithmetic).

1. Error. T - m = <w - 1/n, x> + L: a fixed bias <v, x> (v = w - 1/n) plus noise, so
   E[(T - m)^2] = <v, x>^2 + 2 eta^2. Over the cube x in [-1/2, 1/2]^n, max |<v, x>| =
   ||v||_1 / 2 (x_i = sign(v_i)/2), so the worst case over every table is
   W(w, eta) = (||w - 1/n||_1 / 2)^2 + 2 eta^2. (A constant offset c added to T only makes
   the worst bias |c| + ||v||_1/2 larger, so the affine class needs no offset.)
2. Weights for fixed eta. The terms separate: minimise |w_i - 1/n| over |w_i| <= eps_i eta,
   giving w_i = min(1/n, eps_i eta): a lenient user is capped at the uniform weight 1/n (the
   mirror image of ADPM's saturation: they are granted 1/(n eta) <= eps_i), a strict user gets
   what their level allows. Public users (eps = inf) get 1/n; users with eps = 0 get weight 0.
3. Noise. With D(eta) = sum_i (1/n - eps_i eta)_+ (eps = 0 users add 1/n each, public users 0),
   the objective is F(eta) = D(eta)^2 / 4 + 2 eta^2. D is convex, nonnegative and
   nonincreasing, so D^2 and F are convex. Between breakpoints 1/(n eps_i) the set S of users
   held below 1/n is fixed, D = |S|/n - eta E_S (E_S = sum of their levels) and
   F'(eta) = 0 at eta_S = (|S|/n) E_S / (E_S^2 + 8) (the paper's 8 again). F is a convex
   quadratic on each closed piece, so the minimum over a piece is its stationary point
   clipped to the piece, and the global minimum is the least of these clipped values.

Users who allow no use of their data (eps = 0) still count in the table's mean (n is every
row): no estimator may look at them, so they force a bias of up to 1/(2n) each, always in the
worst-case bias bound. With only eps = 0 and public rows the answer is the public rows' sum / n
(no noise), biased by at most n_0 / (2n).

The solver evaluates every piece's stationary point and value at once with cumulative sums (no
Python loop over users or levels). Tiers: the k distinct levels are sorted (O(k log k), counts
never expanded, up to 10^15 users). Per-user levels above a few thousand users: no full sort,
as ADPM's saturation level (hdp_core.adpm): a sample (fixed seed) estimates where the optimal
piece lies; one pass takes out the levels below the sample's upper end, only those inside the
bracket are sorted, those below only summed. The bracket is accepted only when F's left
slope is positive at its lower end and not positive at the first level above it (F' is
monotone, so the optimum's piece lies inside) with two pieces to spare on either side, else
the whole array is sorted: the sample only costs time, never correctness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdp_core.errors import ProfileError
from hdp_core.profile import EpsilonProfile, as_profile

__all__ = [
    "TableMeanSolution",
    "table_mean",
    "table_objective",
]


@dataclass(frozen=True, eq=False)
class TableMeanSolution:
    """The minimax affine estimator of the table's own mean; arrays are per profile entry (a
    user, or a tier: then ``weights[j]`` is the weight of ONE user of tier j). Unit scale:
    data on [-1/2, 1/2]; multiply bias bounds and noise by the range width R = hi - lo.

    The weights sum to less than 1 when users are held below 1/n, so the estimator is affine
    about the middle of the range: in data units it is
    mid + sum_i w_i (clamp(x_i) - mid) + Laplace(eta R), mid = (lo + hi)/2 (not
    sum_i w_i x_i); the bias bound ||w - 1/n||_1 R/2 holds only in that form."""

    profile: EpsilonProfile
    weights: np.ndarray
    """w_i = min(1/n, eps_i eta): weight of one user (sum over users is at most 1)."""
    noise_scale: float
    """eta, the Laplace scale of the added noise (0 when no user has 0 < eps < inf)."""
    cap_level: float
    """1/(n eta): every user asking for at least this is granted exactly it, with the uniform
    weight 1/n (math.inf when eta = 0)."""
    bias_bound: float
    """max over tables of |E[T] - m(x)| = ||w - 1/n||_1 / 2 (the worst-case bias)."""

    @property
    def n(self) -> int:
        """Rows in the table (every user, including eps = 0 users)."""
        return self.profile.n

    @property
    def worst_case_mse(self) -> float:
        """max over tables of E[(T - m(x))^2] = bias_bound^2 + 2 eta^2 (unit scale)."""
        return self.bias_bound**2 + 2.0 * self.noise_scale**2

    @property
    def granted_eps(self) -> np.ndarray:
        """Privacy each user gets, w_i / eta = min(eps_i, cap_level) (inf if eta = 0 and
        w_i > 0; 0 for unused users)."""
        if self.noise_scale == 0:
            return np.where(self.weights > 0, math.inf, 0.0)
        return self.weights / self.noise_scale

    @property
    def capped(self) -> np.ndarray:
        """Boolean per entry: the user gets the uniform weight 1/n (asked for >= cap_level)."""
        return self.weights >= 1.0 / self.n

    @property
    def weight_total(self) -> float:
        """sum over users of w_i (1 only when nobody is held below 1/n)."""
        return float(np.dot(self.profile.counts.astype(np.float64), self.weights))

    def bias(self, means: Any) -> float:
        """E[T] - E[m(x)] when user (entry) i's value has mean ``means[i]`` (unit scale):
        sum_i c_i (w_i - 1/n) mu_i. For a fixed table, pass the values themselves."""
        mu = np.asarray(means, dtype=np.float64).ravel()
        if mu.size != self.weights.size:
            raise ProfileError(f"got {mu.size} means for {self.weights.size} profile entries")
        c = self.profile.counts.astype(np.float64)
        return float(np.dot(c * (self.weights - 1.0 / self.n), mu))

    def estimate(self, x: Any, rng: np.random.Generator | None = None) -> float:
        """One private estimate of mean(x): <w, x> + Laplace(eta) (numpy noise: simulation
        and teaching only). ``x`` holds one value in [-1/2, 1/2] per user, tiers expanded."""
        rng = np.random.default_rng() if rng is None else rng
        x = np.asarray(x, dtype=np.float64).ravel()
        if x.size != self.n:
            raise ProfileError(f"got {x.size} data values for {self.n} users")
        self.profile.check_expandable()
        w = np.repeat(self.weights, self.profile.counts) if self.profile.is_tiered else self.weights
        noise = rng.laplace(0.0, self.noise_scale) if self.noise_scale > 0 else 0.0
        return float(np.dot(w, x) + noise)


def table_objective(eps: Any, eta: float) -> float:
    """F(eta) = D(eta)^2/4 + 2 eta^2 with D(eta) = sum_i (1/n - eps_i eta)_+: the worst-case
    MSE against the table's mean of the best weights for noise scale ``eta`` (unit scale)."""
    prof = as_profile(eps)
    lv, c = prof.levels, prof.counts.astype(np.float64)
    n = float(prof.n)
    with np.errstate(invalid="ignore"):
        prod = np.where(np.isinf(lv), math.inf, lv * eta)
    d = float(np.dot(c, np.maximum(1.0 / n - prod, 0.0)))
    return 0.25 * d * d + 2.0 * eta * eta


def _slope_positive(level: float, e_k: float, size_k: float, n: float) -> bool:
    """F'(b -) > 0 at the breakpoint b = 1/(n level) of the piece whose held set has
    ``size_k`` users with levels summing to ``e_k`` (see :func:`_solve_eta`)."""
    b = 1.0 / (n * level)
    return 4.0 * b - 0.5 * e_k * (size_k / n - b * e_k) > 0


def _solve_eta(
    lv: np.ndarray,
    ct: np.ndarray | None,
    n: float,
    n_zero: float,
    below: tuple[int, float, float | None] | None = None,
    next_level: float | None = None,
) -> float | None:
    """eta* for ascending finite positive levels ``lv`` with counts ``ct`` (float; None: one
    user each, ties allowed), n rows in all and n_zero rows at eps = 0 (module docstring,
    step 3).

    Piece k (k = 0..m) holds the eps = 0 users and the k strictest levels below 1/n, for eta in
    [b_{k+1}, b_k] with breakpoints b_k = 1/(n lv[k-1]) (b_0 = inf, b_{m+1} = 0). F's left
    derivative at b_k, 4 b_k - (E_k/2)(|S_k|/n - b_k E_k), is nondecreasing in eta, so the
    last k with a positive one (k0) is found by bisection over the prefix sums; eta* is piece
    k0's stationary point clipped to the piece. The pieces next to k0 are evaluated too (the
    least F wins), so rounding at the bisection's boundary cannot pick a wrong piece.

    ``below`` = (count, sum, largest) of levels strictly below ``lv`` left out of it and
    ``next_level`` the smallest level above it left out (per-user bracket, :func:`_per_user`):
    ``lv`` is then a window of the sorted levels whose optimal piece the caller has checked to
    lie inside; None is returned when that piece is within two of the window's edge (the
    neighbours compared above would be missing) so the caller sorts everything instead."""
    m = lv.size
    k_off, e_off, prev = below if below is not None else (0, 0.0, None)
    w1 = lv if ct is None else ct * lv
    e_sum = np.empty(m + 1)
    e_sum[0] = e_off
    np.cumsum(w1, out=e_sum[1:])  # E_k
    if e_off:
        e_sum[1:] += e_off
    c_sum = None
    if ct is not None:
        c_sum = np.empty(m + 1)
        c_sum[0] = 0.0
        np.cumsum(ct, out=c_sum[1:])

    def size(k: np.ndarray | int) -> Any:  # |S_k|
        return n_zero + k_off + (k if c_sum is None else c_sum[k])

    def left_slope_positive(k: int) -> bool:  # F'(b_k -) > 0, k = 1..m
        return _slope_positive(float(lv[k - 1]), float(e_sum[k]), float(size(k)), n)

    lo_k, hi_k = 0, m  # invariant: slope positive at every k <= lo_k (vacuous at 0)
    while lo_k < hi_k:
        mid = (lo_k + hi_k + 1) // 2
        if left_slope_positive(mid):
            lo_k = mid
        else:
            hi_k = mid - 1
    if (lo_k < 2 and k_off > 0) or (lo_k > m - 2 and next_level is not None):
        return None
    ks = np.arange(max(lo_k - 2, 0), min(lo_k + 2, m) + 1)
    ek = e_sum[ks]
    sk = np.asarray(size(ks), dtype=np.float64)
    top = math.inf if prev is None else 1.0 / (n * prev)
    bottom = 0.0 if next_level is None else 1.0 / (n * next_level)
    upper = np.where(ks == 0, top, 1.0 / (n * lv[np.maximum(ks - 1, 0)]))
    lower = np.where(ks == m, bottom, 1.0 / (n * lv[np.minimum(ks, m - 1)]))
    stat = (sk / n) * ek / (ek * ek + 8.0)
    cand = np.clip(stat, lower, upper)
    d = sk / n - cand * ek
    val = 0.25 * d * d + 2.0 * cand * cand
    return float(cand[int(np.argmin(val))])


def table_mean(eps: Any) -> TableMeanSolution:
    """The affine estimator <w, x> + Laplace(eta), w_i / eta <= eps_i, that minimises the
    worst case over every table in [-1/2, 1/2]^n of E[(T - table mean)^2] (module docstring:
    derivation; beyond the paper). Takes a profile or an array-like of levels (0 and inf
    allowed; tiers never expanded). Returns a :class:`TableMeanSolution` in the input's order.
    """
    prof = as_profile(eps)
    if not prof.is_tiered:
        return _per_user(prof)
    lv, ct = prof.levels, prof.counts
    n = float(prof.n)
    active = ct > 0
    finite = active & np.isfinite(lv) & (lv > 0)
    public = active & np.isinf(lv)
    n_zero = float(ct[active & (lv == 0)].sum())
    if finite.any():
        g_lv, inv = np.unique(lv[finite], return_inverse=True)
        g_ct = np.bincount(inv, weights=ct[finite].astype(np.float64), minlength=g_lv.size)
        found = _solve_eta(g_lv, g_ct, n, n_zero)
        assert found is not None  # a whole profile always holds its optimum's neighbours
        eta = found
    else:
        eta = 0.0
    w = np.where(public, 1.0 / n, 0.0)
    w[finite] = np.minimum(1.0 / n, lv[finite] * eta)
    d = float(np.dot(ct.astype(np.float64), np.where(active, 1.0 / n - w, 0.0)))
    cap = 1.0 / (n * eta) if eta > 0 else math.inf
    return TableMeanSolution(prof, w, eta, cap, 0.5 * max(d, 0.0))


_BRACKET_MIN = 1 << 12  # per-user profiles above this size try a sampled bracket first
_SAMPLE = 1 << 14


def _bracketed(lv: np.ndarray) -> tuple[float, int, np.ndarray] | None:
    """(eta*, eps = 0 users, the levels held below the uniform weight, unsorted) for per-user
    levels, sorting only a bracket around the optimal piece (module docstring); None when the
    sample's bracket is not certified (the caller then sorts)."""
    n_i = lv.size
    n = float(n_i)
    if n_i >= (1 << 17):
        samp = lv[np.random.default_rng(n_i).integers(0, n_i, _SAMPLE)]
    else:
        step = max(1, n_i // min(_SAMPLE, max(n_i // 16, 2)))
        samp = lv[step // 2 :: step]
    weight = n / samp.size
    samp = np.sort(samp)
    z = int(np.searchsorted(samp, 0.0, side="right"))
    fin = samp[z : int(np.searchsorted(samp, math.inf, side="left"))]
    if fin.size < 2:
        return None
    # the sample's estimate of F's left slope at each of its levels (scaled to n users)
    b = 1.0 / (n * fin)
    e = np.cumsum(fin) * weight
    size = (z + np.arange(1, fin.size + 1)) * weight
    pos = 4.0 * b - 0.5 * e * (size / n - b * e) > 0
    j = int(np.argmin(pos)) if not pos.all() else fin.size  # first non-positive slope
    margin = 2 * math.isqrt(j) + 8
    lo = float(fin[j - margin]) if j > margin else 0.0
    hi = float(fin[j + margin]) if j + margin < fin.size else math.inf
    cand = np.extract(lv < hi, lv)  # the one pass over everything
    n_zero = int(np.count_nonzero(cand == 0.0))
    low = cand[(cand > 0) & (cand < lo)]
    mid = np.sort(cand[cand >= lo]) if lo > 0 else np.sort(cand[cand > 0])
    if mid.size == 0:
        return None
    k_off, e_off = low.size, float(low.sum())
    prev = float(low.max()) if k_off else None
    if prev is not None and not _slope_positive(prev, e_off, n_zero + k_off, n):
        return None  # the optimum's piece starts below the bracket
    nxt = None
    if math.isfinite(hi):
        above = np.where(lv >= hi, lv, math.inf).min()
        if math.isfinite(above):
            nxt = float(above)
            e_next = e_off + float(mid.sum()) + nxt
            if _slope_positive(nxt, e_next, n_zero + k_off + mid.size + 1, n):
                return None  # the optimum's piece ends above the bracket
    eta = _solve_eta(mid, None, n, float(n_zero), (k_off, e_off, prev), nxt)
    if eta is None:
        return None
    cap = 1.0 / (n * eta)
    return eta, n_zero, np.concatenate((low, mid[: int(np.searchsorted(mid, cap, side="left"))]))


def _per_user(prof: EpsilonProfile) -> TableMeanSolution:
    """:func:`table_mean` for one user per entry, in a few passes: a certified bracket
    (:func:`_bracketed`) or one sort (eps = 0 users first, public ones last, the finite levels
    a view in between; a tie is a piece of zero width, harmless: its candidate is the
    breakpoint itself), one prefix sum, the weights."""
    lv = prof.levels
    n_i = lv.size
    n = float(n_i)
    if n_i > _BRACKET_MIN:
        res = _bracketed(lv)
        if res is not None:
            eta, n_zero, held = res
            w = lv * eta
            np.minimum(w, 1.0 / n, out=w)
            d = n_zero / n + float(np.sum(1.0 / n - eta * held))
            return TableMeanSolution(prof, w, eta, 1.0 / (n * eta), 0.5 * max(d, 0.0))
    srt = np.sort(lv)
    n_zero = int(np.searchsorted(srt, 0.0, side="right"))
    n_fin_end = int(np.searchsorted(srt, math.inf, side="left"))
    fin = srt[n_zero:n_fin_end]
    if fin.size == 0:  # only eps = 0 and public users: the public rows' sum / n, no noise
        w = np.where(np.isinf(lv), 1.0 / n, 0.0)
        return TableMeanSolution(prof, w, 0.0, math.inf, 0.5 * n_zero / n)
    found = _solve_eta(fin, None, n, float(n_zero))
    assert found is not None  # a whole profile always holds its optimum's neighbours
    eta = found
    w = lv * eta
    np.minimum(w, 1.0 / n, out=w)  # public users: inf * eta -> 1/n; eps = 0 users: 0
    held = fin[: int(np.searchsorted(fin, 1.0 / (n * eta), side="left"))]
    d = n_zero / n + float(np.sum(1.0 / n - eta * held))
    return TableMeanSolution(prof, w, eta, 1.0 / (n * eta), 0.5 * max(d, 0.0))
