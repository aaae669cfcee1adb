"""Ready-made privacy profiles: the paper's experiments, worked examples and generators.

Every function returns an :class:`EpsilonProfile`; random ones are reproducible from ``seed``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hdp_core.errors import ProfileError
from hdp_core.profile import EpsilonProfile
from hdp_core.validate import describe, parse_level

__all__ = [
    "PAPER_LOG_RANGES",
    "PRESETS",
    "log_uniform",
    "mixture",
    "paper_profile",
    "preset",
    "product_menu",
    "strict_plus_loose",
    "two_groups",
]

PAPER_LOG_RANGES = {"high": (-4.0, 2.0), "low": (-3.0, -2.0)}
"""Natural-log ranges of eps in the paper's Table 1: high and low variance of eps."""

MAX_GENERATED = 2_000_000
"""Largest per-user profile the generators draw (use tiers for more users)."""


def _whole_n(n: Any, what: str = "n") -> int:
    """``n`` as a whole number ≥ 1 (ProfileError otherwise, never OverflowError/TypeError)."""
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ProfileError(f"{what} must be a whole number ≥ 1, got {describe(n)}")
    return int(n)


def _level_arg(x: Any, what: str, allow_public: bool = False) -> float:
    """A generator's level argument: a number in [LEVEL_MIN, LEVEL_MAX] (or inf if allowed)."""
    return parse_level(x, what, error=ProfileError, allow_zero=False, allow_public=allow_public)


def _check_n(n: int) -> int:
    n = _whole_n(n)
    if n > MAX_GENERATED:
        raise ProfileError(
            f"n = {n:,} is too many users to draw one by one (max {MAX_GENERATED:,})"
        )
    return int(n)


def log_uniform(n: int, lo: float, hi: float, seed: int = 0) -> EpsilonProfile:
    """n levels with log(eps) uniform on [log lo, log hi] (0 < lo <= hi < inf)."""
    n = _check_n(n)
    lo, hi = _level_arg(lo, "low"), _level_arg(hi, "high")
    if not lo <= hi:
        raise ProfileError(f"need low ≤ high, got low={lo:g}, high={hi:g}")
    rng = np.random.default_rng(seed)
    # clipped: exp(log(lo)) may round a last bit below lo (outside the supported range)
    eps = np.exp(rng.uniform(math.log(lo), math.log(hi), n))
    return EpsilonProfile.from_values(np.clip(eps, lo, hi))


def paper_profile(kind: str = "high", n: int = 1000, seed: int = 0) -> EpsilonProfile:
    """The paper's experiment profiles (Table 1): log eps ~ U[-4, 2] ('high') or U[-3, -2]
    ('low'), n = 1000 users, drawn with ``seed``."""
    if kind not in PAPER_LOG_RANGES:
        raise ProfileError(f"kind must be 'high' or 'low', got {kind!r}")
    a, b = PAPER_LOG_RANGES[kind]
    return log_uniform(n, math.exp(a), math.exp(b), seed)


def two_groups(n: int, frac: float, eps1: float, eps2: float) -> EpsilonProfile:
    """Two tiers: round(frac*n) users at eps1 and the rest at eps2 (the paper's Remark)."""
    n = _whole_n(n)
    eps1 = parse_level(eps1, "eps1", error=ProfileError)
    eps2 = parse_level(eps2, "eps2", error=ProfileError)
    if not (0 <= frac <= 1):
        raise ProfileError(f"the first group's share must be in [0, 1], got {frac!r}")
    n1 = round(frac * n)
    return EpsilonProfile.from_tiers([eps1, eps2], [n1, int(n) - n1], ["group 1", "group 2"])


def strict_plus_loose(n_strict: int = 1000, n_loose: int = 200, seed: int = 0) -> EpsilonProfile:
    """The paper's example: n_strict users at 0.1 plus looser users from 0.5 up to public.

    Every looser user is granted 0.18 by ADPM whatever they asked for.
    """
    _check_n(n_strict)
    _check_n(n_loose)
    rng = np.random.default_rng(seed)
    loose = np.exp(rng.uniform(math.log(0.5), math.log(50.0), n_loose))
    loose[: max(1, n_loose // 10)] = math.inf
    return EpsilonProfile.from_values(np.concatenate([np.full(n_strict, 0.1), loose]))


def mixture(
    n: int, lo: float, hi: float, public_share: float = 0.1, seed: int = 0
) -> EpsilonProfile:
    """Private users log-uniform on [lo, hi] mixed with a share of public users (eps = inf)."""
    n = _check_n(n)
    if not (0 <= public_share <= 1):
        raise ProfileError(f"public share must be in [0, 1], got {public_share!r}")
    prof = log_uniform(n, lo, hi, seed)
    eps = np.array(prof.levels)
    n_pub = round(public_share * n)
    if n_pub:
        eps[np.random.default_rng(seed + 1).choice(n, n_pub, replace=False)] = math.inf
    return EpsilonProfile.from_values(eps)


def product_menu(n: int = 1_000_000) -> EpsilonProfile:
    """A typical product's four tiers: Strict 0.1 (50%), Balanced 0.5 (30%), Relaxed 2 (15%)
    and Public (5%) among ``n`` users."""
    n = _whole_n(n)
    shares = np.array([0.5, 0.3, 0.15, 0.05])
    counts = np.floor(shares * n).astype(np.int64)
    counts[0] += int(n) - int(counts.sum())
    return EpsilonProfile.from_tiers(
        [0.1, 0.5, 2.0, math.inf], counts, ["Strict", "Balanced", "Relaxed", "Public"]
    )


PRESETS = {
    "paper_high": "Paper, high variance: 1000 users, log eps ~ U[-4, 2]",
    "paper_low": "Paper, low variance: 1000 users, log eps ~ U[-3, -2]",
    "strict_loose": "1000 users at 0.1 plus 200 looser users (0.5 to public)",
    "two_groups": "Two groups: 900 users at 0.1, 100 at 1.0",
    "public_mix": "Mix: 900 private users (0.05 to 1) and 100 public users",
    "product_menu": "Product menu: four tiers for 1,000,000 users",
}
"""Preset names and one-line descriptions (in the order the app lists them)."""


def preset(name: str, seed: int = 0) -> EpsilonProfile:
    """The preset profile called ``name`` (a key of :data:`PRESETS`)."""
    if name == "paper_high":
        return paper_profile("high", 1000, seed)
    if name == "paper_low":
        return paper_profile("low", 1000, seed)
    if name == "strict_loose":
        return strict_plus_loose(1000, 200, seed)
    if name == "two_groups":
        return two_groups(1000, 0.9, 0.1, 1.0)
    if name == "public_mix":
        return mixture(1000, 0.05, 1.0, 0.1, seed)
    if name == "product_menu":
        return product_menu(1_000_000)
    raise ProfileError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
