"""The paper's five baselines (its experiments section), defined exactly.

Conventions as in the paper: x_i in [-0.5, 0.5], eps sorted ascending, n users, Laplace(b) has
variance 2 b^2, sigma^2 = 1/4 is the worst-case data variance. An affine estimator
sum_i w_i x_i + Laplace(b) with sum w = 1 gives user i the privacy w_i / b; its MSE under a
distribution with variance V is V ||w||_2^2 + 2 b^2 (exact), worst case V = 1/4.

* UNI, everyone gets the strictest level: w_i = 1/n, b = 1/(n eps_1).
* PropDPM, weights proportional to eps: w = eps / sum(eps), b = 1/sum(eps); every user gets
  exactly eps_i. (999 users at 0.1 plus one public user: worst case 1/4, all weight on the
  public user, where ADPM gets about 4.5e-4.)
* LDPE, local Laplace optimally combined (Ferrando, Gillenwater, Kulesza, "Combining Public and
  Private Data", arXiv 2111.00115): each user sends y_i = x_i + Laplace(1/eps_i); the server
  outputs sum w_i y_i with w_i proportional to 1/(sigma^2 + 2/eps_i^2), i.e. to
  eps_i^2/(eps_i^2 + 8). MSE under variance V: sum_i w_i^2 (V + 2/eps_i^2).
* SM, the sampling mechanism (Jorgensen, Yu, Cormode, "Conservative or Liberal? Personalized
  Differential Privacy", ICDE 2015) in the paper's form: t = max eps; keep user i with
  probability p_i = (e^{eps_i} - 1)/(e^t - 1) (computed stably); output the mean of the N_s
  kept values plus Laplace(1/(N_s t)), or 0 when N_s = 0. Exact MSE: N_s is Poisson-binomial;
  given N_s = k >= 1 the MSE is V/k + 2/(k t)^2, and mu^2 when k = 0.
* FME (Fallah, Makhdoumi, Malekian, Ozdaglar, "Optimal and Differentially Private Data
  Acquisition: Central and Local Mechanisms", Operations Research 72(3), 2024, Theorem 1). The
  paper describes it only by reference; this is a reconstruction that reproduces every FME
  figure the paper reports (Table 1: ln MSE -6.2 in both regimes; order 1e-3 in the 999 x 0.1
  plus one public example): cap every level at c = 1/sqrt(n), then weight proportionally,
  r_i = min(eps_i, 1/sqrt(n)), w = r / sum(r), b = 1/sum(r). It saturates at a fixed level that
  ignores the profile, which is why it loses to ADPM. Shown as "FME (reconstructed)".

Public users (eps = inf): PropDPM puts equal weight on the public users and no noise; UNI uses
the smallest finite level; LDPE gives them weight proportional to 1/sigma^2; SM keeps only them
(t = inf); FME caps them at 1/sqrt(n). When every user is public the answer is the plain
sample mean, MSE V/n. Users with eps = 0 get weight 0 in every method (their data is never
used).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hdp_core.distributions import Distribution
from hdp_core.estimators import AffineEstimator, Estimator, register
from hdp_core.trials import TrialChunk, wsum

__all__ = [
    "FME",
    "LDPE",
    "SM",
    "UNI",
    "PropDPM",
    "count_moments",
    "sm_keep_probabilities",
]


def _affine_or_mean(est: Estimator, r: np.ndarray) -> tuple[np.ndarray, float]:
    """Weights r/||r||_1 and noise 1/||r||_1, or the plain mean of public users if any r=inf."""
    if est._public.any() and not np.isfinite(r[est._active]).all():
        m = float(est._cf[est._public].sum())
        return np.where(est._public, 1.0 / m, 0.0), 0.0
    if not est._active.any():
        return np.zeros(est.profile.k), math.inf
    s1 = float(np.dot(est._cf, r))
    return r / s1, 1.0 / s1


@register
class UNI(AffineEstimator):
    """UNI: everyone gets the strictest level eps_1: w = 1/n, b = 1/(n eps_1).

    eps_1 is the smallest positive finite level; with only public users, b = 0.
    """

    name = "UNI"
    label = "UNI (strictest for all)"
    note = "Sample mean with Laplace noise at the strictest level: everyone gets eps_1."

    def __init__(self, eps: Any):
        Estimator.__init__(self, eps)
        n = self.n_active
        w = np.where(self._active, 1.0 / max(n, 1), 0.0)
        if self._finite.any():
            b = 1.0 / (n * float(self.profile.levels[self._finite].min()))
        elif n:
            b = 0.0
        else:
            b = math.inf
        super().__init__(self.profile, w, b if math.isfinite(b) else 0.0)
        self.outputs_zero = not math.isfinite(b)


@register
class PropDPM(AffineEstimator):
    """PropDPM: weights proportional to eps, w = eps/||eps||_1, b = 1/||eps||_1.

    Every user gets exactly eps_i. With public users: equal weight on them, no noise
    (the paper's Remark on proportional weighting).
    """

    name = "PropDPM"
    label = "PropDPM (proportional)"
    note = "Weights proportional to eps; one public user takes all the weight."

    def __init__(self, eps: Any):
        Estimator.__init__(self, eps)
        r = np.where(self._active, self.profile.levels, 0.0)
        w, b = _affine_or_mean(self, r)
        super().__init__(self.profile, w, 0.0 if not math.isfinite(b) else b)
        self.outputs_zero = not math.isfinite(b)


@register
class FME(AffineEstimator):
    """FME (reconstructed): cap every level at c = 1/sqrt(n), then weight proportionally.

    r_i = min(eps_i, 1/sqrt(n)), w = r/||r||_1, b = 1/||r||_1 (see the module docstring: this
    reconstruction of Fallah et al. Theorem 1 reproduces the paper's three FME figures).
    """

    name = "FME"
    label = "FME (reconstructed)"
    note = (
        "Reconstructed from Fallah et al. (2024), Thm 1: levels capped at 1/sqrt(n), then "
        "proportional weights; reproduces the paper's FME numbers."
    )

    def __init__(self, eps: Any):
        Estimator.__init__(self, eps)
        cap = 1.0 / math.sqrt(max(self.n_active, 1))
        r = np.where(self._active, np.minimum(self.profile.levels, cap), 0.0)
        if not self._finite.any():  # every usable user public: the plain mean (module docstring)
            r = np.where(self._public, math.inf, r)
        w, b = _affine_or_mean(self, r)
        super().__init__(self.profile, w, 0.0 if not math.isfinite(b) else b)
        self.outputs_zero = not math.isfinite(b)


@register
class LDPE(Estimator):
    """LDPE: each user sends x_i + Laplace(1/eps_i); the server combines with weights
    w_i ∝ 1/(1/4 + 2/eps_i^2) ∝ eps_i^2/(eps_i^2 + 8) (public users: ∝ 1).

    MSE under variance V: sum_i w_i^2 (V + 2/eps_i^2) (Ferrando et al., arXiv 2111.00115).
    """

    name = "LDPE"
    label = "LDPE (local noise)"
    note = "Local-DP: every user adds their own Laplace noise; optimally combined."
    affine = False

    weights: np.ndarray

    def __init__(self, eps: Any):
        super().__init__(eps)
        lv = self.profile.levels
        with np.errstate(divide="ignore", over="ignore"):
            inv2 = np.where(self._active, 1.0 / (lv * lv), 0.0)  # 1/eps^2; 0 for public
        self._inv_eps2 = inv2
        raw = np.where(self._active, 1.0 / (1.0 + 8.0 * inv2), 0.0)
        tot = float(np.dot(self._cf, raw))
        self.weights = raw / tot if tot > 0 else raw
        self.noise_scale = None
        self.local_noise_scales = np.where(self._active, np.sqrt(inv2), math.inf)
        """Laplace scale 1/eps_i each user adds to their own value (inf = not sent)."""

    @property
    def granted_eps(self) -> np.ndarray:
        return np.where(self._active, self.profile.levels, 0.0)

    def exact_mse(self, dist: Distribution) -> float:
        if not self._active.any():
            return dist.mean**2
        w2 = self.weights * self.weights
        return float(np.dot(self._cf, w2 * (dist.variance + 2.0 * self._inv_eps2)))

    def estimate(self, x: Any, rng: np.random.Generator | None = None) -> float:
        return self._estimate_once(x, rng)

    def _finish(self, lin: np.ndarray, chunk: TrialChunk, rng: np.random.Generator) -> np.ndarray:
        """Sum of local Laplace noises, drawn exactly as a Gaussian scale mixture:
        Laplace(b) = b sqrt(2E) Z with E ~ Exp(1), so sum_i w_i Laplace(b_i) given the E's is
        N(0, sum_i 2 w_i^2 b_i^2 E_i); a tier of c users contributes E ~ Gamma(c)."""
        if not self._active.any():
            return np.zeros(lin.shape[0])
        t = lin.shape[0]
        coef = 2.0 * self.weights * self.weights * self._inv_eps2  # per entry: 2 w^2 b^2
        var = np.zeros(t)
        cc = coef[chunk.col_entry]
        live = cc > 0
        if live.any():
            e = rng.standard_exponential((t, int(live.sum())))
            var += wsum(e, cc[live])
        cb = coef[chunk.big_entry]
        if cb.size and (cb > 0).any():
            g = rng.standard_gamma(self._cf[chunk.big_entry], (t, cb.size))
            var += wsum(g, cb)
        return lin + np.sqrt(var) * rng.standard_normal(t)


def sm_keep_probabilities(levels: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, float]:
    """SM's sampling probabilities p_i = (e^{eps_i} - 1)/(e^t - 1), t = max eps, and t.

    Computed as exp(eps - t) * expm1(-eps)/expm1(-t), which neither overflows nor underflows
    to NaN for large levels; public users (t = inf) are kept with probability 1, all others 0.
    """
    lv = np.where(active, levels, 0.0)
    t = float(lv.max()) if active.any() else 0.0
    if t == 0.0:
        return np.zeros(lv.size), 0.0
    if math.isinf(t):
        return (np.isinf(lv) & active).astype(np.float64), t
    with np.errstate(over="ignore", invalid="ignore"):
        p = np.exp(lv - t) * (np.expm1(-lv) / np.expm1(-t))
    p = np.where(active, np.clip(p, 0.0, 1.0), 0.0)
    p[active & (lv == t)] = 1.0
    return p, t


_QUAD_STEP = 0.2
_DELTA_MEAN = 1e4
_QUAD_BUDGET = 4_000_000  # grid cells per block
_SERIES_TERMS = 26


def count_moments(p: np.ndarray, counts: np.ndarray) -> tuple[float, float, float]:
    """For N = sum of Binomial(counts_j, p_j): P(N = 0), E[1/N; N >= 1], E[1/N^2; N >= 1].

    Exact method: with the Laplace transform L(u) = E[e^{-uN}] = prod_j (1-p_j+p_j e^{-u})^c_j,
    E[N^{-1}; N>=1] = int_0^inf (L(u) - P0) du and E[N^{-2}; N>=1] = int_0^inf u (L(u) - P0) du.
    The integrands are smooth in log u, so the trapezoid rule on x = log u (step 0.2, limits
    chosen for relative truncation below 1e-14) is accurate to ~1e-12 (checked against brute-force
    pmfs); users with p <= 1/4 enter through 26 power sums, the rest cost O(#groups * 250).
    When E[N] >= 1e4 the fourth-order expansion of 1/N around E[N] with the cumulants of N is
    used instead (relative error below 1e-10 there).
    """
    p = np.asarray(p, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    keep = (c > 0) & (p > 0)
    p, c = p[keep], c[keep]
    if p.size == 0:
        return 1.0, 0.0, 0.0
    n = float(c.sum())
    m = float(np.dot(c, p))
    with np.errstate(divide="ignore"):
        logq = np.log1p(-p)
        p0 = float(np.exp(np.dot(c, logq))) if (p < 1).all() else 0.0
    if m >= _DELTA_MEAN:
        pq = p * (1.0 - p)
        k2 = float(np.dot(c, pq))
        k3 = float(np.dot(c, pq * (1.0 - 2.0 * p)))
        k4 = float(np.dot(c, pq * (1.0 - 6.0 * pq)))
        d2, d3, d4 = k2 / m**2, k3 / m**3, (k4 + 3.0 * k2 * k2) / m**4
        e1 = (1.0 + d2 - d3 + d4) / m
        e2 = (1.0 + 3.0 * d2 - 4.0 * d3 + 5.0 * d4) / m**2
        return p0, e1, e2
    lo = math.log(1e-14 / n)
    hi = math.log(2.0 * math.log(n + 1.0) + 45.0)
    x = np.arange(lo, hi + _QUAD_STEP, _QUAD_STEP)
    u = np.exp(x)
    # log L(u) = -c1 u + log P0' + D(u): c1 users kept surely (p = 1), P0' = prod (1-p)^c over
    # the rest and D(u) = sum c log1p(rho e^{-u}), rho = p/(1-p) >= 0, computed directly so that
    # L(u) - P0 = L(u) (1 - e^{-D(u)}) has no cancellation even when P0 is close to 1.
    sure = p >= 1.0
    c1 = float(c[sure].sum())
    pr, cr = p[~sure], c[~sure]
    log_p0r = float(np.dot(cr, np.log1p(-pr)))
    log_rho = np.log(pr) - np.log1p(-pr)
    d = np.zeros(u.size)
    # rho <= 1/3: log1p(z) as its power series in z = rho e^{-u} through the power sums
    # S_j = sum c rho^j (truncation below 1e-16 per user), so the cost does not grow with n.
    small = log_rho <= math.log(1.0 / 3.0)
    if small.any():
        j = np.arange(1, _SERIES_TERMS + 1)
        sj = cr[small] @ np.exp(log_rho[small, None] * j[None, :])
        d += np.exp(-u[:, None] * j[None, :]) @ (sj * (-1.0) ** (j + 1) / j)
    lb, cb = log_rho[~small], cr[~small]
    step = max(1, _QUAD_BUDGET // u.size)
    for s in range(0, lb.size, step):  # blocks of groups bound memory; not a loop per user
        blk = slice(s, s + step)
        d += cb[blk] @ np.logaddexp(0.0, lb[blk, None] - u[None, :])
    logl = log_p0r + d - c1 * u
    g = np.exp(logl) if c1 > 0 else np.exp(logl) * -np.expm1(-d)
    e1 = float(np.trapezoid(g * u, x))
    e2 = float(np.trapezoid(g * u * u, x))
    return p0, e1, e2


@register
class SM(Estimator):
    """SM (Jorgensen, Yu, Cormode 2015): keep user i with probability
    p_i = (e^{eps_i} - 1)/(e^t - 1), t = max eps; output the mean of the N kept values plus
    Laplace(1/(N t)), or 0 when nobody is kept. Each user gets eps_i.

    Exact MSE: V E[1/N; N>=1] + (2/t^2) E[1/N^2; N>=1] + mu^2 P(N=0), N Poisson-binomial.
    """

    name = "SM"
    label = "SM (sampling)"
    note = "Sampling mechanism: keeps each user with probability (e^eps - 1)/(e^t - 1)."
    affine = False

    def __init__(self, eps: Any):
        super().__init__(eps)
        self.p, self.t = sm_keep_probabilities(self.profile.levels, self._active)
        self.weights = None
        self.noise_scale = None
        self._moments: tuple[float, float, float] | None = None

    @property
    def moments(self) -> tuple[float, float, float]:
        """P(N=0), E[1/N; N>=1], E[1/N^2; N>=1] of the number N of sampled users."""
        if self._moments is None:
            self._moments = count_moments(self.p, self.profile.counts)
        return self._moments

    @property
    def granted_eps(self) -> np.ndarray:
        return np.where(self._active, self.profile.levels, 0.0)

    def _noise_coef(self) -> float:
        return 0.0 if (self.t == 0 or math.isinf(self.t)) else 2.0 / (self.t * self.t)

    def exact_mse(self, dist: Distribution) -> float:
        p0, e1, e2 = self.moments
        return dist.variance * e1 + self._noise_coef() * e2 + dist.mean**2 * p0

    @property
    def worst_case_mse(self) -> float:
        """Max over distributions on [-0.5, 0.5]: V + mu^2 <= 1/4, so the data part is at most
        max(E[1/N; N>=1], P(N=0))/4 (attained by a two-point distribution)."""
        p0, e1, e2 = self.moments
        return 0.25 * max(e1, p0) + self._noise_coef() * e2

    def estimate(self, x: Any, rng: np.random.Generator | None = None) -> float:
        return self._estimate_once(x, rng)

    def _keep_probabilities(self) -> np.ndarray:
        return self.p

    def _simulate_chunk(self, chunk: TrialChunk, rng: np.random.Generator) -> np.ndarray:
        t = chunk.trials
        pc = self.p[chunk.col_entry]
        live = pc > 0
        if live.any():
            all_live = bool(live.all())
            mask = rng.random((t, int(live.sum()))) < (pc if all_live else pc[live])
            xs = chunk.x if all_live else chunk.x[:, live]
            kept = np.einsum("ij,ij->i", mask, xs, dtype=np.float64)
            count = mask.sum(axis=1, dtype=np.float64)
        else:
            kept = np.zeros(t)
            count = np.zeros(t)
        if chunk.kept_counts is not None and chunk.kept_sums is not None and chunk.kept_counts.size:
            kept = kept + chunk.kept_sums.sum(axis=1)
            count = count + chunk.kept_counts.sum(axis=1)
        out = np.zeros(t)
        ok = count > 0
        out[ok] = kept[ok] / count[ok]
        if self.t > 0 and math.isfinite(self.t):
            scale = np.ones(t)
            scale[ok] = 1.0 / (count[ok] * self.t)
            out += np.where(ok, rng.laplace(0.0, 1.0, t) * scale, 0.0)
        return out
