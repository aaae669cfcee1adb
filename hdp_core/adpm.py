"""ADPM, the paper's Algorithm 1 (Affine Differentially Private Mean), solved exactly.

With levels sorted ascending, Algorithm 1 sets r_1 = eps_1 and
r_{k+1} = min(eps_{k+1}, (||r_1^k||_2^2 + 8) / ||r_1^k||_1)            (eq. thm2-r-def).
By the saturation lemma (Lemma 3) this is r_i = min(eps_i, tau*) for one level tau*, the
root of G(t) = sum_{eps_i < t} eps_i (t - eps_i) = 8 (G is increasing, and t*||eps_<t||_1 -
||eps_<t||_2^2 >= 8 is exactly the paper's test eps_{k+1} >= tau_k). So tau* is found without
a full sort for large per-user profiles (a sampled bracket checked exactly, else selection
with np.partition, expected O(n)) and in O(k log k) for k tiers, and the weights need no
sort. Weights w = r / ||r||_1, Laplace noise scale eta = 1/||r||_1,
worst-case MSE f(r) = (||r||_2^2 + 8) / (4 ||r||_1^2) capped at 1/4 (Theorem 2).

Tuned to a known spread (beyond the paper): for data of standard deviation s on [-1/2, 1/2] an
unbiased affine estimator's MSE is s^2 ||w||_2^2 + 2 eta^2 = s^2 (||r||_2^2 + c) / ||r||_1^2
with c = 2/s^2, i.e. the paper's problem with the constant 8 replaced by c. Every solver below
takes c (default 8: s = 1/2, the worst case on the range, the paper's ADPM bit for bit).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

import numpy as np

from hdp_core.errors import ProfileError
from hdp_core.profile import EpsilonProfile, as_profile

__all__ = [
    "WORST_CASE_SD",
    "ADPMSolution",
    "AlgorithmTrace",
    "adpm",
    "adpm_trace",
    "data_sd_constant",
    "saturation_level",
]

_SELECT_MIN = 1 << 15  # below this size a plain sort is as fast as selection
TRACE_MAX_USERS = 10_000


WORST_CASE_SD = 0.5
"""The largest standard deviation of data on [-1/2, 1/2] (TwoPoint(1/2)); ADPM is tuned to it."""


def _g_sat(c: float) -> float:
    """A user saturates when G(eps) >= c (the paper's test eps_{k+1} >= tau_k, with c = 8).
    G is compared with c less a relative 1e-12 so that a level exactly at the threshold (e.g.
    eps1 + 8/(n f eps1) from :func:`two_group_threshold`) counts as saturated whichever way the
    last bit of G rounds; a level that close to the threshold gets the same r either way."""
    return c * (1.0 - 1e-12)


_G_SAT = _g_sat(8.0)


def data_sd_constant(data_sd: Any = None) -> tuple[float, float]:
    """(s, c): the validated spread s and the constant c = 2/s^2 that replaces Algorithm 1's 8.

    ``data_sd`` is the standard deviation of one user's value on the [-1/2, 1/2] scale (data
    units divided by the range width), in (0, 1/2]; None means 1/2, the worst case, giving
    c = 8 exactly (the paper's ADPM). Raises ValueError for anything else.
    """
    if data_sd is None:
        return WORST_CASE_SD, 8.0
    if isinstance(data_sd, bool) or not isinstance(data_sd, numbers.Real):
        raise ValueError(f"data_sd must be a number in (0, 1/2], got {data_sd!r}")
    s = float(data_sd)
    if not (math.isfinite(s) and 0.0 < s <= WORST_CASE_SD):
        raise ValueError(
            f"data_sd = {s!r} is not in (0, 1/2]: it is the standard deviation of one value "
            "on the [-1/2, 1/2] scale (sd in data units / (hi - lo))"
        )
    sq = s * s
    c = 2.0 / sq if sq > 0 else math.inf
    if not math.isfinite(c):
        raise ValueError(f"data_sd = {s!r} is too small (2/data_sd^2 overflows); use PropDPM")
    return s, c


def _g_sorted(lv: np.ndarray, p1: np.ndarray, g0: float) -> np.ndarray:
    """G(lv_j) = sum over users below lv_j of eps (lv_j - eps), for ascending ``lv`` whose
    prefix sums of r are ``p1`` (length lv.size + 1) and with G(lv_0) = ``g0``.

    Built from the nonnegative increments G(lv_j) - G(lv_{j-1}) = (lv_j - lv_{j-1}) p1_j, not
    as lv_j p1_j - p2_j: that difference cancels catastrophically for large levels, and its
    rounding noise alone can pass 8 for tied users (ties add exactly 0 here). The result is
    nondecreasing, so the first saturated entry can be found by bisection."""
    g = np.empty(lv.size)
    g[0] = 0.0
    np.cumsum(np.diff(lv) * p1[1:-1], out=g[1:])
    if g0:
        g += g0
    return g


def _first_saturated_sorted(
    lv: np.ndarray,
    ct: np.ndarray | None = None,
    s1: float = 0.0,
    s2: float = 0.0,
    g_top: float = 0.0,
    top: float = 0.0,
    c: float = 8.0,
) -> tuple[float, bool, float]:
    """For ascending finite levels ``lv`` with counts ``ct`` (None: one user each), after a
    prefix of users with sums s1, s2, largest level ``top`` <= lv_0 and G(top) = ``g_top``,
    return (tau, saturated, cut): tau_k and the level of the first saturated entry, else the
    closing value (||r||_2^2 + c)/||r||_1 over everything, False and math.inf; the test is
    G >= c (c = 8: the paper's)."""
    w1 = lv if ct is None else ct * lv
    p1 = np.empty(lv.size + 1)
    p1[0] = s1
    np.cumsum(w1, out=p1[1:])
    if s1:
        p1[1:] += s1
    g = _g_sorted(lv, p1, g_top + (lv[0] - top) * s1 if s1 > 0 else 0.0)
    j = int(np.searchsorted(g, _g_sat(c)))  # first entry with G >= c, or lv.size
    q2 = s2 + float(np.dot(w1[:j], lv[:j]))  # ||r||_2^2 of the users before it
    if j < lv.size:
        return (q2 + c) / p1[j], True, float(lv[j])
    return (q2 + c) / p1[-1], False, math.inf


def _first_saturated_select(a: np.ndarray, c: float = 8.0) -> tuple[float, bool, float]:
    """Same as :func:`_first_saturated_sorted` for per-user finite positive levels ``a``,
    by quickselect on the median: expected O(n) work, no full sort."""
    g_sat = _g_sat(c)
    s1 = s2 = 0.0
    top = g_top = 0.0  # largest level taken as unsaturated so far, and G there
    cut = math.inf  # smallest level known to saturate so far
    while a.size > _SELECT_MIN:
        m = a.size // 2
        a = np.partition(a, m)
        lower = a[:m]
        pivot = float(a[m])
        # G(pivot) as a sum of nonnegative terms (see _g_sorted)
        g = g_top + (pivot - top) * s1 + float(np.dot(lower, pivot - lower))
        if g >= g_sat:  # G(pivot) >= c: saturation starts at or below the pivot
            a = lower
            cut = pivot
        else:  # the lower half and the pivot are all unsaturated
            s1 += float(lower.sum()) + pivot
            s2 += float(np.dot(lower, lower)) + pivot * pivot
            top, g_top = pivot, g
            a = a[m + 1 :]
    if a.size == 0:
        return (s2 + c) / s1, math.isfinite(cut), cut
    a = np.sort(a)
    tau, sat, cut_left = _first_saturated_sorted(a, None, s1, s2, g_top, top, c)
    if sat:
        return tau, True, cut_left
    # nothing left saturates but a discarded pivot did: tau (the closing value over
    # everything kept) is exactly tau at that pivot
    return tau, math.isfinite(cut), cut


_BRACKET_MIN = 1 << 12  # per-user profiles above this size use a sampled bracket first
_SAMPLE = 1 << 14  # sample size (n/16 for smaller profiles)
_RANDOM_SAMPLE_MIN = 1 << 17  # below this a strided sample (no generator to set up)


def _first_saturated_bracket(
    lv: np.ndarray, c: float = 8.0
) -> tuple[float, bool, float, float, float] | None:
    """(tau, saturated, cut, s1, s2) for per-user levels ``lv`` (0 and inf allowed, any
    order), with public users counted as saturated, ``cut`` a level such that exactly the
    users with eps >= cut saturate, and s1 = ||r||_1, s2 = ||r||_2^2 of the solution
    r = min(lv, tau); None when the guess below misses (the caller then selects). The
    saturation test is G >= c (c = 8: the paper's).

    A random sample (fixed seed) estimates where G crosses 8; the levels below hi are taken
    out in one pass, those in [lo, hi) sorted, those below lo only summed. The bracket is
    accepted only if G(lo) < 8 (everyone below is unsaturated) and either the first saturated
    level lies inside it, or nothing lies above it, or G(hi) >= 8, or everything above is
    public: then the answer is exact whatever the sample was."""
    n = lv.size
    g_sat = _g_sat(c)
    if n >= _RANDOM_SAMPLE_MIN:
        samp = lv[np.random.default_rng(n).integers(0, n, _SAMPLE)]
    else:
        step = max(1, n // min(_SAMPLE, max(n // 16, 2)))
        samp = lv[step // 2 :: step]
    weight = n / samp.size
    samp = np.sort(samp[np.isfinite(samp)])
    if samp.size < 2:
        return None
    c1 = np.cumsum(samp)
    hit = _g_sorted(samp, np.concatenate(([0.0], c1)), 0.0) * weight >= g_sat
    j = int(np.argmax(hit)) if hit.any() else samp.size
    margin = 2 * math.isqrt(j) + 8
    lo = float(samp[j - margin]) if j > margin else 0.0
    hi = float(samp[j + margin]) if j + margin < samp.size else math.inf
    cand = np.extract(lv < hi, lv)  # the one pass over everything; usually a small share
    n_above = n - cand.size  # levels >= hi (all public ones among them)
    below = cand < lo
    low = cand[below]
    s1 = float(low.sum())
    s2 = float(np.dot(low, low))
    if float(np.dot(low, lo - low)) >= g_sat:  # G(lo) >= c: saturation starts below lo
        return None
    mid = cand[~below]
    mid = np.sort(mid[mid > 0])
    if mid.size == 0:
        return None
    p1 = s1 + np.concatenate(([0.0], np.cumsum(mid)))
    if p1[-1] <= 0:
        return None
    g = _g_sorted(mid, p1, float(np.dot(low, mid[0] - low)))
    k = int(np.searchsorted(g, g_sat))  # first level with G >= c, or mid.size
    if k < mid.size:
        cut = float(mid[k])
    elif n_above == 0:  # nobody saturates
        return math.inf, False, math.inf, float(p1[-1]), s2 + float(np.dot(mid, mid))
    elif math.isinf(hi) or g[-1] + (hi - mid[-1]) * p1[-1] >= g_sat:  # G(hi) >= c
        cut = hi
    else:
        return None
    p2k = s2 + float(np.dot(mid[:k], mid[:k]))
    tau = (p2k + c) / p1[k]
    n_sat = n_above + (mid.size - k)
    return float(tau), True, cut, float(p1[k] + tau * n_sat), float(p2k + tau * tau * n_sat)


def _solve_per_user(
    lv: np.ndarray, c: float = 8.0
) -> tuple[float, float, float | None, float | None] | None:
    """(tau*, cut, s1, s2) for per-user levels (0 and inf allowed): tau* = math.inf when
    nothing saturates; exactly the users with eps >= cut saturate; s1 = ||r||_1 and
    s2 = ||r||_2^2 when already known, else None. None when no user has 0 < eps < inf.
    ``c``: the constant of Algorithm 1 (8, or 2/s^2 when tuned to a spread s)."""
    if lv.size > _BRACKET_MIN:
        res = _first_saturated_bracket(lv, c)
        if res is not None:
            tau, sat, cut, s1, s2 = res
            return (tau if sat else math.inf), cut, s1, s2
    a = lv[(lv > 0) & (lv < math.inf)]
    if a.size == 0:
        return None
    has_public = bool(np.isinf(lv).any())
    if a.size <= _SELECT_MIN:
        a = np.sort(a)  # ties need no grouping: a tie adds exactly 0 to G (see _g_sorted)
        tau, sat, cut = _first_saturated_sorted(a, c=c)
    else:
        tau, sat, cut = _first_saturated_select(a, c)
    return (float(tau) if (sat or has_public) else math.inf), cut, None, None


def _solve_tiers(lv: np.ndarray, ct: np.ndarray, c: float = 8.0) -> tuple[float, float] | None:
    """(tau*, cut) for tiers (see :func:`_solve_per_user`); None without usable finite tiers."""
    finite = np.isfinite(lv) & (lv > 0) & (ct > 0)
    if not finite.any():
        return None
    g_lv, g_ct = _group_sorted(lv[finite], ct[finite])
    tau, sat, cut = _first_saturated_sorted(g_lv, g_ct.astype(np.float64), c=c)
    has_public = bool((np.isinf(lv) & (ct > 0)).any())
    return (float(tau) if (sat or has_public) else math.inf), cut


def saturation_level(eps: Any, data_sd: float | None = None) -> float:
    """tau*, the level every looser user is capped at (math.inf when nothing saturates).

    Lemma 3: with k the first index where eps_{k+1} >= tau_k, users k+1..n all get
    tau_k = (||eps_1^k||_2^2 + 8)/||eps_1^k||_1. Public users (inf) always saturate. With
    ``data_sd`` = s (see :func:`adpm`) the 8 becomes 2/s^2: the smaller the spread, the later
    saturation sets in.
    """
    c = data_sd_constant(data_sd)[1]
    prof = as_profile(eps)
    lv, ct = prof.levels, prof.counts
    res = _solve_per_user(lv, c) if not prof.is_tiered else _solve_tiers(lv, ct, c)
    return math.inf if res is None else res[0]


def _group_sorted(lv: np.ndarray, ct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    u, inv = np.unique(lv, return_inverse=True)
    return u, np.bincount(inv, weights=ct, minlength=u.size)


@dataclass(frozen=True, eq=False)
class ADPMSolution:
    """ADPM's weights and noise for a profile; arrays are per entry in the input's order.

    For a tiered profile an entry is a tier and ``weights[j]`` is the weight of *one* user of
    tier j. All privacy levels are in the units of eps (nats of privacy loss).

    ``data_sd`` is the spread s the weights are tuned to (1/2: the paper's ADPM). The estimator
    answers 0 when its MSE at that spread, ``tuned_objective``, passes 1/4: for any data whose
    standard deviation is at most s the affine answer's MSE is at most ``tuned_objective`` and
    0's is mu^2 <= 1/4, so the rule keeps the better worst case over that class (for s = 1/2
    the paper's rule f(r) > 1/4).
    """

    profile: EpsilonProfile
    noise_scale: float
    """Laplace scale eta = 1/||r||_1 of the added noise (0 when every user is public)."""
    saturation_level: float
    """tau*: every user asking for eps >= tau* is granted tau*; math.inf if none saturate."""
    objective: float
    """f(r) = (||r||_2^2 + 8)/(4||r||_1^2), the worst-case MSE before the 1/4 cap (Theorem 2)."""
    data_sd: float = WORST_CASE_SD
    """s: the data standard deviation (on [-1/2, 1/2]) the weights are tuned to."""
    tuned_objective: float = math.nan
    """s^2 ||w||_2^2 + 2 eta^2 = (||r||_2^2 + c)/((c/2)||r||_1^2), c = 2/s^2: the MSE at spread
    s before the 1/4 cap (equals ``objective`` for s = 1/2; left out, it is read as that)."""
    cut: float = field(default=math.inf, repr=False)
    """Exactly the active entries with eps >= cut are saturated (decided by the G test of the
    saturation lemma, not by comparing eps with a rounded tau*)."""
    kind: str = field(default="affine", repr=False)
    """"affine": r = min(eps, tau*), w = r/||r||_1; "public": every usable user is public (the
    plain sample mean of the public users); "none": nobody allows any use (ADPM outputs 0)."""
    r_sum: float = field(default=math.nan, repr=False)
    """||r||_1 over users (for "affine"; the weights are r / r_sum)."""

    # The per-entry arrays r, weights and saturated are computed on first use: a solve on 10^7
    # levels then costs the saturation search alone (benchmarks/bench_core.py), and a caller
    # that needs only tau* or the worst case never builds three arrays of n entries.

    @cached_property
    def r(self) -> np.ndarray:
        """Scaled weights r_i = min(eps_i, tau*) (0 for excluded users, inf if all public)."""
        lv, ct = self.profile.levels, self.profile.counts
        if self.kind != "affine":
            return np.where(np.isinf(lv) & (ct > 0), math.inf, 0.0)
        r = np.minimum(lv, self.saturation_level)
        if self.profile.is_tiered:
            r[ct <= 0] = 0.0
        return cast(np.ndarray, r)

    @cached_property
    def weights(self) -> np.ndarray:
        """w_i = r_i / ||r||_1: weight of one user in the estimate (weights of all users sum
        to 1; for tiers, the weight of one user of the tier)."""
        if self.kind == "affine":
            if self.profile.is_tiered:
                return self.r / self.r_sum
            return self.r * (1.0 / self.r_sum)
        lv, ct = self.profile.levels, self.profile.counts
        public = np.isinf(lv) & (ct > 0)
        if self.kind == "public":
            return np.where(public, 1.0 / int(ct[public].sum()), 0.0)
        return np.zeros(lv.size)

    @cached_property
    def saturated(self) -> np.ndarray:
        """Boolean per entry: the user asked for eps >= tau* and is capped at tau*."""
        lv, ct = self.profile.levels, self.profile.counts
        if self.kind != "affine":
            return np.zeros(lv.size, dtype=bool)
        if self.profile.is_tiered:
            return (ct > 0) & (lv >= self.cut)
        return lv >= self.cut

    def __post_init__(self) -> None:
        if math.isnan(self.tuned_objective):
            if self.data_sd != WORST_CASE_SD:
                raise ValueError("tuned_objective is required when data_sd is not 1/2")
            object.__setattr__(self, "tuned_objective", self.objective)

    @property
    def constant(self) -> float:
        """c = 2/s^2, the constant of Algorithm 1 these weights solve (8 for the paper's)."""
        return data_sd_constant(self.data_sd)[1]

    @property
    def granted_eps(self) -> np.ndarray:
        """Privacy each user actually gets, w_i / eta = r_i (Laplace-mechanism lemma)."""
        return self.r

    @property
    def worst_case_mse(self) -> float:
        """Worst-case MSE over all data in [-0.5, 0.5]: min(f(r), 1/4) for ADPM (Theorem 2).

        In general 1/4 when the estimator answers 0 (MSE mu^2 <= 1/4), else f(r), the affine
        answer's MSE at variance 1/4; tuned to s < 1/2 this can exceed 1/4."""
        return 0.25 if self.outputs_zero else self.objective

    @property
    def tuned_mse(self) -> float:
        """min(tuned_objective, 1/4): the largest MSE over data with standard deviation at most
        ``data_sd`` (the MSE itself, s^2 ||w||^2 + 2 eta^2, when sd = data_sd and it answers)."""
        return min(self.tuned_objective, 0.25)

    @property
    def outputs_zero(self) -> bool:
        """True when the MSE at the tuned spread passes 1/4 (for ADPM: f(r) > 1/4) and the
        estimator outputs 0 instead of the noisy weighted mean."""
        return self.tuned_objective > 0.25

    @property
    def n_saturated(self) -> int:
        """Number of users capped at tau* (they get more privacy than they asked for)."""
        return int(self.profile.counts[self.saturated].sum())

    @property
    def n_excluded(self) -> int:
        """Number of users with eps = 0, whose data is not used."""
        return self.profile.n_excluded

    @property
    def user_weights(self) -> np.ndarray:
        """Weight of each user, expanded to one entry per user (small profiles only)."""
        if not self.profile.is_tiered:
            return self.weights
        self.profile.check_expandable()
        return np.repeat(self.weights, self.profile.counts)

    def estimate(self, x: Any, rng: np.random.Generator | None = None) -> float:
        """One private estimate of mean(x): <w, x> + Laplace(eta), or 0 when f(r) > 1/4.

        ``x`` holds one value in [-0.5, 0.5] per user (tiers expanded in order).
        """
        rng = np.random.default_rng() if rng is None else rng
        if self.outputs_zero:
            return 0.0
        x = np.asarray(x, dtype=np.float64).ravel()
        w = self.user_weights
        if x.size != w.size:
            raise ProfileError(f"got {x.size} data values for {w.size} users")
        noise = rng.laplace(0.0, self.noise_scale) if self.noise_scale > 0 else 0.0
        return float(np.dot(w, x) + noise)


def adpm(eps: Any, data_sd: float | None = None) -> ADPMSolution:
    """Solve ADPM (Algorithm 1) for a profile or an array-like of levels.

    Exact for any order, ties, public users (inf), excluded users (0) and n = 1; tiers are
    solved in O(k log k) without expanding counts, per-user profiles in expected O(n).
    Returns an :class:`ADPMSolution` whose arrays follow the input's order.

    ``data_sd``: the standard deviation s of one user's value on the [-1/2, 1/2] scale, in
    (0, 1/2]; the weights then minimise the MSE s^2 ||w||^2 + 2 eta^2 at that spread (Algorithm
    1 with 8 replaced by 2/s^2; beyond the paper). None means 1/2: the paper's ADPM, bit for
    bit. Each user's granted privacy is still r_i <= eps_i, whatever the data.
    """
    s, c = data_sd_constant(data_sd)
    half_c = 0.5 * c  # 1/s^2; 4 for the paper's
    prof = as_profile(eps)
    lv, ct = prof.levels, prof.counts
    if not prof.is_tiered:  # one user per entry: no counts to weigh, no inactive entries
        res = _solve_per_user(lv, c)
        if res is not None:
            tau, cut, s1, s2 = res
            if s1 is None or s2 is None:
                r = np.minimum(lv, tau)
                s1, s2 = float(r.sum()), float(np.dot(r, r))
            # saturated: decided by the G test (cut), not by comparing eps with a rounded tau
            return ADPMSolution(
                prof,
                1.0 / s1,
                tau,
                (s2 + 8.0) / s1 / s1 / 4.0,
                s,
                (s2 + c) / s1 / s1 / half_c,
                cut=cut,
                r_sum=s1,
            )
    active = ct > 0
    public = np.isinf(lv) & active
    n_public = int(ct[public].sum())
    finite = np.isfinite(lv) & (lv > 0) & active

    if not finite.any():
        if n_public > 0:  # every usable user is public: the plain sample mean
            return ADPMSolution(
                prof, 0.0, math.inf, 0.25 / n_public, s, s * s / n_public, kind="public"
            )
        # nobody allows any use of their data: ADPM outputs 0
        return ADPMSolution(prof, math.inf, math.inf, math.inf, s, math.inf, kind="none")

    solved = _solve_tiers(lv, ct, c)
    assert solved is not None  # profiles without a usable finite tier returned above
    tau, cut = solved
    r = np.minimum(lv, tau)
    r[~active] = 0.0
    cf = ct.astype(np.float64)
    s1 = float(np.dot(cf, r))
    s2 = float(np.dot(cf, r * r))
    objective = (s2 + 8.0) / s1 / s1 / 4.0
    sol = ADPMSolution(
        prof, 1.0 / s1, tau, objective, s, (s2 + c) / s1 / s1 / half_c, cut=cut, r_sum=s1
    )
    sol.__dict__["r"] = r  # already built (k entries): the cached property's value
    return sol


@dataclass(frozen=True)
class AlgorithmTrace:
    """Algorithm 1 run step by step on the sorted levels (one row per user).

    ``eps[k]``, ``r[k]``: requested and granted level of the (k+1)-th strictest user;
    ``l1[k]`` = ||r_1^{k+1}||_1, ``l2[k]`` = ||r_1^{k+1}||_2^2 after adding that user;
    ``tau[k]`` = (l2[k] + 8)/l1[k], the cap the next user is compared with;
    ``saturated[k]`` True when the user's eps reached the previous tau (Definition 2);
    ``f[k]`` = (l2[k] + 8)/(4 l1[k]^2), the worst-case MSE of the first k+1 users.
    ``n_excluded`` users with eps = 0 are left out before the recursion starts.
    Tuned to a spread s, ``constant`` c = 2/s^2 replaces 8 (and 4 becomes c/2 = 1/s^2, so
    ``f`` is the MSE at spread s).
    """

    eps: np.ndarray
    r: np.ndarray
    l1: np.ndarray
    l2: np.ndarray
    tau: np.ndarray
    saturated: np.ndarray
    f: np.ndarray
    n_excluded: int
    constant: float = 8.0

    def as_dict(self) -> dict[str, np.ndarray]:
        """Columns for a table: step, eps_k, r_k, ||r||_1, ||r||_2^2, tau_k, saturated, f."""
        tuned = self.constant != 8.0
        c = f"{self.constant:.4g}" if tuned else "8"
        return {
            "step k": np.arange(1, self.eps.size + 1),
            "eps_k (asked)": self.eps,
            "r_k (granted)": self.r,
            "||r||_1": self.l1,
            "||r||_2^2": self.l2,
            f"tau_k = (||r||_2^2+{c})/||r||_1": self.tau,
            "saturated": self.saturated,
            "MSE at the tuned spread" if tuned else "f(r_1..k)": self.f,
        }


def adpm_trace(
    eps: Any, max_users: int = TRACE_MAX_USERS, data_sd: float | None = None
) -> AlgorithmTrace:
    """Run Algorithm 1 literally, one user at a time, for teaching and as a test oracle.

    The loop is the paper's pseudo-code (r_{k+1} = min(eps_{k+1}, (L2 + 8)/L1)); it is
    O(n) Python steps, so profiles are limited to ``max_users`` users. With ``data_sd`` = s
    (see :func:`adpm`) the 8 is c = 2/s^2.
    """
    c = data_sd_constant(data_sd)[1]
    prof = as_profile(eps)
    if prof.n > max_users:
        raise ProfileError(
            f"the step-by-step trace is for small profiles (at most {max_users} users); "
            f"this one has {prof.n:,}"
        )
    e = np.sort(prof.expand())
    n_excl = int(np.count_nonzero(e == 0))
    e = e[e > 0]
    m = e.size
    r = np.empty(m)
    l1 = np.empty(m)
    l2 = np.empty(m)
    tau = np.empty(m)
    sat = np.zeros(m, dtype=bool)
    L1 = L2 = 0.0
    for k in range(m):
        if k == 0:
            rk = float(e[0])
        else:
            cap = (L2 + c) / L1
            rk = min(float(e[k]), cap)
            sat[k] = e[k] >= cap
        if math.isinf(rk):  # only when every usable user is public
            r[k:] = math.inf
            l1[k:] = l2[k:] = tau[k:] = math.inf
            break
        L1 += rk
        L2 += rk * rk
        r[k], l1[k], l2[k], tau[k] = rk, L1, L2, (L2 + c) / L1
    with np.errstate(invalid="ignore"):
        f = np.where(np.isfinite(l1), (l2 + c) / ((0.5 * c) * l1 * l1), np.nan)
    return AlgorithmTrace(e, r, l1, l2, tau, sat, f, n_excl, c)
