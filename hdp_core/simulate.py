"""Exact and simulated MSE of every method, and one-call access to each estimator.

``exact_mse`` uses each method's closed form. ``simulate_mse`` runs Monte Carlo with common
random numbers: in each trial every method sees the same data; each method draws its own
noise from its own stream, so adding a method leaves the others' numbers unchanged (except
that when tiers are drawn in aggregate, see below, the data stream also draws SM's split of
each such tier into kept and dropped users, which re-draws the shared data). Work is
vectorised over users and trials and chunked so memory stays bounded.

Large tiers (more than EXPAND_MAX users; for TwoPoint data any tier of more than one user) are
never simulated user by user: their data sums are drawn in aggregate, exactly for TwoPoint
(binomial) and from the normal approximation for other distributions, in which case the result
is marked ``approximate``.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdp_core.distributions import Distribution
from hdp_core.errors import ProfileError
from hdp_core.estimators import get_method, stream_id, tuned_spread
from hdp_core.profile import EpsilonProfile, as_profile
from hdp_core.trials import TrialChunk, wsum

__all__ = [
    "CI_MIN_TRIALS",
    "EXPAND_MAX",
    "MAX_SIM_WIDTH",
    "SimResult",
    "mse_interval",
    "simulate_mse",
    "simulated_width",
]

EXPAND_MAX = 2_000
"""Tiers with at most this many users are simulated user by user (exactly)."""
MAX_SIM_WIDTH = 4_000_000
"""Most random data values simulate_mse draws per trial (users of small tiers drawn one by one
plus one sum per large tier); a profile needing more is refused before anything is expanded
(about 32 MB per array of one trial)."""
CHUNK_CELLS = 1 << 20
"""Trials are processed in chunks of about this many simulated values (bounds memory)."""
_WORKERS = max(1, min(2, os.cpu_count() or 1))
"""Threads simulating chunks at the same time (each holds one chunk in memory)."""
CI_MIN_TRIALS = 500
"""Fewest trials for which the 95% interval of :func:`mse_interval` is trusted (coverage
measured >= 93% at this count for 30 users, every method; tests/test_simulate_coverage.py)."""


def mse_interval(mean: float, var: float, trials: int, z: float = 1.96) -> tuple[float, float]:
    """95% confidence interval for an MSE from ``trials`` squared errors with sample mean
    ``mean`` and sample variance ``var``, built on the log scale (delta method):
    mean * exp(+-z se/mean), se = sqrt(var/trials).

    Squared errors are right-skewed (a Laplace error squared has skewness about 6), so the
    symmetric interval mean +- z se misses the true MSE on the high side far more often than
    5% at small trial counts (73-85% coverage at 10 trials). The log-scale interval is
    asymmetric the same way and stays positive; it holds its level from CI_MIN_TRIALS trials.
    A constant error (var = 0) gives the point interval [mean, mean].
    """
    if not mean > 0:
        return 0.0, 0.0
    se = math.sqrt(max(var, 0.0) / trials)
    spread = z * se / mean
    return mean * math.exp(-spread), mean * math.exp(spread)


@dataclass
class SimResult:
    """Monte Carlo MSE of one method with a 95% confidence interval (data in [-0.5, 0.5];
    the interval is :func:`mse_interval`, asymmetric on the log scale)."""

    method: str
    mse: float
    ci_low: float
    ci_high: float
    std_err: float
    exact: float
    trials: int
    approximate: bool
    estimates: np.ndarray | None = None

    @property
    def log_mse(self) -> float:
        """Natural log of the simulated MSE (the paper's unit in Table 1)."""
        return math.log(self.mse) if self.mse > 0 else -math.inf


def _combine(parts: list[tuple[int, float, float]]) -> tuple[float, float]:
    """Mean and sum of squared deviations of the union of chunks given as (count, mean, M2)
    (Chan et al.'s pairwise update: no cancellation, exactly 0 for constant errors)."""
    n, mean, m2 = 0, 0.0, 0.0
    for nb, mb, m2b in parts:
        tot = n + nb
        delta = mb - mean
        mean += delta * nb / tot
        m2 += m2b + delta * delta * n * nb / tot
        n = tot
    return mean, m2


def _aggregated(prof: EpsilonProfile, dist: Distribution) -> np.ndarray:
    """Boolean per entry: the tier's data is drawn as one aggregate sum."""
    ct = prof.counts
    return ct > 1 if dist.exact_sums else ct > EXPAND_MAX


def _width(prof: EpsilonProfile, dist: Distribution) -> int:
    """Values drawn per trial, computed from the counts without expanding anything."""
    agg = _aggregated(prof, dist)
    if not prof.is_tiered:
        return prof.k
    return int(prof.counts[~agg].sum(dtype=np.int64)) + int(np.count_nonzero(agg))


def _layout(prof: EpsilonProfile, dist: Distribution) -> tuple[np.ndarray, np.ndarray]:
    """(column entry index per simulated user, entries drawn in aggregate); refuses a profile
    wider than MAX_SIM_WIDTH before expanding it."""
    width = _width(prof, dist)
    if width > MAX_SIM_WIDTH:
        raise ProfileError(
            f"simulating this profile would draw {width:,} values per trial (users of tiers "
            f"of at most {EXPAND_MAX:,} are drawn one by one); the limit is "
            f"{MAX_SIM_WIDTH:,} values per trial: merge small tiers, or use the exact MSE"
        )
    ct = prof.counts
    agg = _aggregated(prof, dist)
    small = np.flatnonzero(~agg & (ct > 0))
    cols = np.repeat(small, ct[small])
    return cols, np.flatnonzero(agg)


def simulated_width(eps: Any, dist: Distribution) -> int:
    """Random data values simulate_mse draws per trial for this profile and distribution.

    Users of small tiers (and every user of a per-user profile) are drawn one by one; large
    tiers are drawn as one aggregate sum each (all tiers with more than one user for TwoPoint).
    The work of a run is about trials x this width.
    """
    return _width(as_profile(eps), dist)


def _draw_chunk(
    dist: Distribution,
    rng: np.random.Generator,
    t: int,
    cols: np.ndarray,
    big: np.ndarray,
    counts: np.ndarray,
    keep_p: np.ndarray | None,
) -> tuple[TrialChunk, bool]:
    x = dist.sample(rng, (t, cols.size))
    approx = False
    kept_c = kept_s = None
    if big.size:
        c = np.broadcast_to(counts[big], (t, big.size))
        if keep_p is not None:
            kept_c = rng.binomial(c, keep_p[big])
            kept_s, a1 = dist.sample_sums(rng, kept_c)
            rest_s, a2 = dist.sample_sums(rng, c - kept_c)
            sums = kept_s + rest_s
            approx = a1 or a2
        else:
            sums, approx = dist.sample_sums(rng, c)
    else:
        sums = np.zeros((t, 0))
    return TrialChunk(x, cols, sums, big, kept_c, kept_s), approx


def simulate_mse(
    methods: Any,
    eps: Any,
    dist: Distribution,
    trials: int = 20_000,
    seed: int = 0,
    return_estimates: bool = False,
    data_sd: float | None = None,
) -> dict[str, SimResult]:
    """Monte Carlo MSE of each method (names from METHODS, or "ADPM-tuned") with common random
    numbers.

    Returns {name: SimResult} with the mean squared error against the population mean, its
    95% confidence interval (:func:`mse_interval`, on the log scale; trusted from
    CI_MIN_TRIALS trials), the exact MSE, and optionally the raw estimates (for histograms).
    "ADPM-tuned" is tuned to ``data_sd`` (sd on [-0.5, 0.5]), by default to the standard
    deviation of ``dist``.
    """
    prof = as_profile(eps)
    if isinstance(methods, str):
        methods = [methods]
    names = list(dict.fromkeys(methods))
    if not names:
        raise ProfileError("choose at least one method")
    trials = int(trials)
    if trials < 2:
        raise ProfileError(f"need at least 2 trials, got {trials}")
    cols, big = _layout(prof, dist)  # first: refuses a too-wide profile before any work
    sd = tuned_spread(data_sd, dist) if "ADPM-tuned" in names else None
    ests = {m: get_method(m, prof, sd) for m in names}
    keep_p = None
    for e in ests.values():
        kp = e._keep_probabilities()
        if kp is not None:
            keep_p = kp
    mu = dist.mean
    width = max(1, cols.size + big.size)
    step = max(1, min(trials, CHUNK_CELLS // width))
    starts = range(0, trials, step)
    raw = {m: np.empty(trials) for m in names} if return_estimates else None
    weights = {m: w for m in names if (w := ests[m].weights) is not None}
    affine = list(weights)
    w_cols = np.column_stack([weights[m][cols] for m in affine]) if affine else np.zeros((0, 0))
    w_big = np.column_stack([weights[m][big] for m in affine]) if affine else np.zeros((0, 0))
    method_ids = {m: stream_id(m) for m in names}

    def run_chunk(ci: int) -> tuple[dict[str, tuple[int, float, float]], bool]:
        """(count, mean, M2) of the squared errors of chunk ``ci``, drawn from its own streams
        (seed, stream, chunk), so the result does not depend on how chunks meet threads."""
        done = starts[ci]
        t = min(step, trials - done)
        data_rng = np.random.default_rng([seed, 1_000_003, ci])
        chunk, approx = _draw_chunk(dist, data_rng, t, cols, big, prof.counts, keep_p)
        lin = np.zeros((t, 0))
        if affine:  # column by column without BLAS (see _trials.wsum)
            lin = np.column_stack(
                [
                    wsum(chunk.x, w_cols[:, j]) + wsum(chunk.sums, w_big[:, j])
                    for j in range(len(affine))
                ]
            )
        sums = {}
        for m in names:
            e, rng = ests[m], np.random.default_rng([seed, method_ids[m], ci])
            if m in weights:
                est = e._finish(lin[:, affine.index(m)], chunk, rng)
            else:
                est = e._simulate_chunk(chunk, rng)
            err2 = (est - mu) ** 2
            c_mean = float(err2.mean())
            dev = err2 - c_mean
            sums[m] = (t, c_mean, float(np.einsum("i,i->", dev, dev)))
            if raw is not None:
                raw[m][done : done + t] = est
        return sums, approx

    # numpy's generators and array kernels release the GIL, so chunks run in parallel threads
    workers = min(len(starts), _WORKERS)
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(run_chunk, range(len(starts))))
    else:
        parts = [run_chunk(ci) for ci in range(len(starts))]
    approximate = any(a for _, a in parts)
    moments = {m: _combine([p[m] for p, _ in parts]) for m in names}
    out = {}
    for m in names:
        mean, m2 = moments[m]
        var = m2 / (trials - 1)
        se = math.sqrt(var / trials)
        ci_low, ci_high = mse_interval(mean, var, trials)
        out[m] = SimResult(
            method=m,
            mse=mean,
            ci_low=ci_low,
            ci_high=ci_high,
            std_err=se,
            exact=ests[m].exact_mse(dist),
            trials=trials,
            approximate=approximate,
            estimates=None if raw is None else raw[m],
        )
    return out
