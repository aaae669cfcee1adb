"""Data distributions on [-0.5, 0.5]: the paper's data domain (Section 2).

Each distribution knows its mean and variance, draws values with a vectorised sampler, and
draws sums of many values (per tier) without one number per user when the tier is large.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

__all__ = ["EXACT_SUM_MAX", "WORST_CASE", "Beta", "Distribution", "TwoPoint", "Uniform"]

EXACT_SUM_MAX = 32
"""Sums of more draws than this are drawn from the normal approximation (central limit
theorem), except for TwoPoint, whose sums are exact binomials at any size."""


class Distribution:
    """A data distribution on [-0.5, 0.5]."""

    name: str = "distribution"

    @property
    def mean(self) -> float:
        """Mean of one draw (data units, in [-0.5, 0.5])."""
        raise NotImplementedError

    @property
    def variance(self) -> float:
        """Variance of one draw (at most 1/4 on [-0.5, 0.5])."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        """Independent draws with the given shape."""
        raise NotImplementedError

    @property
    def exact_sums(self) -> bool:
        """True when :meth:`sample_sums` is exact at every size."""
        return False

    def sample_sums(self, rng: np.random.Generator, counts: np.ndarray) -> tuple[np.ndarray, bool]:
        """Sums of ``counts[...]`` independent draws (an integer array of any shape).

        Returns (sums with the shape of ``counts``, approximate). Counts up to EXACT_SUM_MAX are
        summed draw by draw; larger ones are drawn from N(c mean, c variance) (central limit
        theorem) and ``approximate`` is then True.
        """
        counts = np.asarray(counts, dtype=np.int64)
        out = np.empty(counts.shape)
        small = counts <= EXACT_SUM_MAX
        if small.any():
            cs = counts[small]
            cmax = int(cs.max())
            if cmax:
                draws = self.sample(rng, (cs.size, cmax))
                draws[np.arange(cmax)[None, :] >= cs[:, None]] = 0.0
                out[small] = draws.sum(axis=1)
            else:
                out[small] = 0.0
        big = ~small
        if big.any():
            cb = counts[big].astype(np.float64)
            out[big] = cb * self.mean + np.sqrt(cb * self.variance) * rng.standard_normal(cb.size)
        return out, bool(big.any())

    def label(self) -> str:
        """Short description for tables and legends."""
        return self.name


@dataclass(frozen=True)
class Beta(Distribution):
    """Beta(a, b) shifted to [-0.5, 0.5]: X = B - 1/2 (the paper uses Beta(2, 3))."""

    a: float = 2.0
    b: float = 3.0

    def __post_init__(self) -> None:
        if not (self.a > 0 and self.b > 0 and math.isfinite(self.a) and math.isfinite(self.b)):
            raise ValueError(f"Beta needs a > 0 and b > 0, got a={self.a}, b={self.b}")

    name = "Beta"

    @property
    def mean(self) -> float:
        return self.a / (self.a + self.b) - 0.5

    @property
    def variance(self) -> float:
        s = self.a + self.b
        return self.a * self.b / (s * s * (s + 1.0))

    def sample(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return cast(np.ndarray, rng.beta(self.a, self.b, size) - 0.5)

    def label(self) -> str:
        return f"Beta({self.a:g}, {self.b:g})"


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform on [-0.5, 0.5] (mean 0, variance 1/12)."""

    name = "Uniform"

    @property
    def mean(self) -> float:
        return 0.0

    @property
    def variance(self) -> float:
        return 1.0 / 12.0

    def sample(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return cast(np.ndarray, rng.random(size) - 0.5)

    def label(self) -> str:
        return "Uniform[-0.5, 0.5]"


@dataclass(frozen=True)
class TwoPoint(Distribution):
    """Mass p on +0.5 and 1-p on -0.5; p = 1/2 has the largest variance, 1/4 (worst case)."""

    p: float = 0.5

    def __post_init__(self) -> None:
        if not (0.0 <= self.p <= 1.0):
            raise ValueError(f"TwoPoint needs 0 <= p <= 1, got {self.p}")

    name = "TwoPoint"

    @property
    def mean(self) -> float:
        return self.p - 0.5

    @property
    def variance(self) -> float:
        return self.p * (1.0 - self.p)

    @property
    def exact_sums(self) -> bool:
        return True

    def sample(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return cast(np.ndarray, (rng.random(size) < self.p) - 0.5)

    def sample_sums(self, rng: np.random.Generator, counts: np.ndarray) -> tuple[np.ndarray, bool]:
        counts = np.asarray(counts, dtype=np.int64)
        return rng.binomial(counts, self.p) - 0.5 * counts, False

    def label(self) -> str:
        return f"Two-point (p = {self.p:g})"


WORST_CASE = TwoPoint(0.5)
"""The distribution with the largest variance on [-0.5, 0.5]."""
