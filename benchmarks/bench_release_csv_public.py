"""Benchmark: the cost of checking a CSV's public levels' text (hdp_release.engines.base
check_public: '1e400' is refused, not read as a public user) in release_mean on DuckDB.

Writes a CSV (in a temporary directory, deleted at the end) of N rows (2e6 by default) with
levels 0.5, 1, 2 and 'inf' (a quarter of the users public: the check runs), and prints the
median time of release_mean with the check and with it switched off, measured alternately in
one run, and their ratio. The check reads the eps column's text once (a streaming scan); a
table without public users, Parquet files and DataFrames never pay it.

    python benchmarks/bench_release_csv_public.py [--rows N] [--repeat K]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np
import pandas as pd

import hdp_release.engines.duckdb_source as D
from hdp_release.release import release_mean


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=8)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.csv")
        pd.DataFrame(
            {
                "value": rng.uniform(0, 100, a.rows).round(3),
                "eps": rng.choice(np.array(["0.5", "1", "2", "inf"]), a.rows),
            }
        ).to_csv(path, index=False)
        real = D.DuckSource.check_public
        times: dict[str, list[float]] = {"with": [], "without": []}
        try:
            for i in range(a.repeat):
                order = ("with", "without") if i % 2 == 0 else ("without", "with")
                for label in order:
                    D.DuckSource.check_public = real if label == "with" else _off  # type: ignore[method-assign]
                    t = time.perf_counter()
                    release_mean(path, value="value", eps="eps", lo=0, hi=100)
                    times[label].append(time.perf_counter() - t)
        finally:
            D.DuckSource.check_public = real  # type: ignore[method-assign]
    w, wo = statistics.median(times["with"]), statistics.median(times["without"])
    print(
        f"CSV of {a.rows:,} rows, a quarter public: release_mean {w:.3f} s with the public-text "
        f"check, {wo:.3f} s without (medians of {a.repeat}); ratio {w / wo:.2f}"
    )


def _off(self: object, col: str) -> None:
    """The check switched off (for the comparison only)."""


if __name__ == "__main__":
    main()
