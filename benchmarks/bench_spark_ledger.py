"""Benchmark (issues 27 and 30): the Spark jobs and seconds of one Spark release without a
ledger, with the dataset ledger and with the per-person ledger (first release on a new
ledger, second on a ledger holding the first's spends), side by side in one run.

On a small table a Spark release's time is Spark's fixed cost per job (each action: a
collect, a write, a checkpoint; with adaptive execution an aggregate is two jobs) plus
building query plans on the driver, so this prints per variant the number of Spark jobs
(counted by job group), the best wall time of --repeat rounds (the variants taken in turns,
one of each per round) and, for the best round, each Spark action with its seconds and the
line of hdp_release that started it.

    python benchmarks/bench_spark_ledger.py [--rows N] [--repeat K] [--csv]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import traceback
import warnings
from typing import Any

import numpy as np
import pandas as pd

from hdp_release.engines.spark_source import spark_session
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean

VARIANTS = ("none", "dataset", "people first", "people second")


def _spy_actions(log: list) -> None:
    """Record every Spark action (DataFrame collect / localCheckpoint / count / toPandas,
    DataFrameWriter.parquet) with its seconds and the hdp_release line that called it."""
    from pyspark.sql import DataFrameWriter
    from pyspark.sql.classic.dataframe import DataFrame

    def wrap(cls: Any, name: str) -> None:
        orig = getattr(cls, name)

        def f(self: Any, *a: Any, **k: Any) -> Any:
            here = [s for s in traceback.extract_stack()[:-1] if "hdp_release" in s.filename]
            where = f"{os.path.basename(here[-1].filename)}:{here[-1].lineno}" if here else "?"
            t = time.perf_counter()
            try:
                return orig(self, *a, **k)
            finally:
                log.append((name, where, time.perf_counter() - t))

        setattr(cls, name, f)

    for n in ("collect", "localCheckpoint", "count", "toPandas"):
        wrap(DataFrame, n)
    wrap(DataFrameWriter, "parquet")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=600)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--csv", action="store_true", help="read a CSV file (default: a DataFrame)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    spark = spark_session("local[2]", java_options="-XX:TieredStopAtLevel=1")  # as the tests
    sc = spark.sparkContext
    log: list = []
    _spy_actions(log)
    rng = np.random.default_rng(11)
    n = args.rows
    df = pd.DataFrame(
        {
            "uid": [f"u{k}" for k in range(n)],
            "x": rng.uniform(0, 1, n),
            "eps": rng.choice([0.1, 1.0, 5.0], n),
        }
    )
    tmp = tempfile.mkdtemp(prefix="bench-spark-ledger-")
    src: Any = df
    if args.csv:
        src = os.path.join(tmp, "t.csv")
        df.to_csv(src, index=False)
    kw: dict[str, Any] = {"value": "x", "eps": "eps", "lo": 0, "hi": 1, "engine": "spark"}

    def run(variant: str, r: int) -> None:
        if variant == "none":
            release_mean(src, **kw, ledger=False)
        elif variant == "dataset":
            release_mean(src, **kw, ledger=PrivacyLedger(f"{tmp}/d{r}.duckdb"), spend="1/1000")
        else:  # the second release reads the first's spends from the same ledger
            release_mean(
                src, **kw, ledger=PrivacyLedger(f"{tmp}/p{r}.duckdb"), id="uid", spend="1/2"
            )

    run("people first", -1)  # warm the JVM
    best: dict[str, tuple[float, float, int, list]] = {}
    for r in range(args.repeat):
        for v in VARIANTS:
            group = f"bench-{r}-{v}"
            sc.setJobGroup(group, group)
            log.clear()
            t, c = time.perf_counter(), time.process_time()
            run(v, r)
            wall, cpu = time.perf_counter() - t, time.process_time() - c
            jobs = len(sc.statusTracker().getJobIdsForGroup(group))
            if v not in best or wall < best[v][0]:
                best[v] = (wall, cpu, jobs, list(log))
    base = best["none"][0]
    print(f"{n:,} rows ({'CSV' if args.csv else 'pandas DataFrame'}), best of {args.repeat}")
    print(f"load average: {os.getloadavg()[0]:.1f}")
    for v in VARIANTS:
        wall, cpu, jobs, acts = best[v]
        ratio = wall / base
        print(f"{v:14s} {jobs:3d} Spark jobs {wall:6.2f} s ({ratio:4.1f}x) Python CPU {cpu:.2f} s")
        for name, where, dt in acts:
            print(f"    {dt:6.3f} s  {name:15s} {where}")


if __name__ == "__main__":
    main()
