"""Internal to the simulator and the estimators: a block of simulated trials, weighted sums.

Not part of the library's interface; :func:`hdp_core.simulate.simulate_mse` builds the blocks
and each estimator turns one into estimates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np


def wsum(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """a @ w for a (trials, users) block, by einsum rather than BLAS: OpenBLAS's own threads
    spin after each call and starve the simulator's worker threads (measured 1.2 s against
    0.85 s for the paper's experiment on 2 cores)."""
    if a.shape[1] == 0:
        return np.zeros(a.shape[0])
    return cast(np.ndarray, np.einsum("ij,j->i", a, w))


@dataclass
class TrialChunk:
    """Data for a block of simulated trials, shared by every method (common random numbers).

    ``x``: (T, m) values of the users simulated one by one; ``col_entry[c]`` is the profile
    entry of column c. ``sums``: (T, kb) sums of the data of the large tiers ``big_entry``
    (drawn in aggregate). For the sampling mechanism, ``kept_counts``/``kept_sums`` split each
    large tier into the users it keeps and their data sum (None when not requested).
    """

    x: np.ndarray
    col_entry: np.ndarray
    sums: np.ndarray
    big_entry: np.ndarray
    kept_counts: np.ndarray | None = None
    kept_sums: np.ndarray | None = None

    @property
    def trials(self) -> int:
        return int(self.x.shape[0])
