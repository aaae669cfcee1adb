"""Benchmark: release_means (a private mean per segment, DuckDB) against DuckDB's own
``SELECT seg, SUM(value) FROM file GROUP BY seg`` on the same Parquet file.

Writes (in a temporary directory, deleted at the end) Parquet files of N rows (default 1e7;
``--rows``) with 1,000 segments and (a) a few tiers, (b) per-user continuous levels, and
prints side by side: the time of the GROUP BY SUM, of release_means, their ratio (goal <= 5x),
where release_means' time goes (the segment pass, the grouped aggregate pass, the second
pass, OpenDP: building each segment's measurement, its privacy map per receipt row and the
noise, and the rest: planning, exact sums, intervals, receipts), the peak resident memory
growth of each (sampled), and Spark local mode beside it (``--spark``).

    python benchmarks/bench_release_means.py [--rows N] [--segments S] [--spark] [--kinds K]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from bench_release import Peak, timed

import hdp_release.finish
import hdp_release.grouped
import hdp_release.grouped_bins
from hdp_release.engines.grouped import duck_grouped_histogram
from hdp_release.engines.open import open_source
from hdp_release.grouped import release_means

SPENT: dict[str, float] = {}
"""Seconds spent per part of the last release_means (filled by the wrappers below)."""


def _timed_fn(mod, name: str, label: str) -> None:
    fn = getattr(mod, name)

    def wrapper(*a, **k):
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            SPENT[label] = SPENT.get(label, 0.0) + time.perf_counter() - t0

    setattr(mod, name, wrapper)


class _TimedMeasurement:
    """OpenDP's measurement, its construction, privacy map and noise timed (the same calls)."""

    real = hdp_release.finish.measurement

    def __init__(self, scale):
        t0 = time.perf_counter()
        self.m = _TimedMeasurement.real(scale)
        SPENT["opendp"] = SPENT.get("opendp", 0.0) + time.perf_counter() - t0

    def map(self, d):
        t0 = time.perf_counter()
        try:
            return self.m.map(d)
        finally:
            SPENT["opendp"] += time.perf_counter() - t0
            SPENT["maps"] = SPENT.get("maps", 0) + 1

    def __call__(self, x):
        t0 = time.perf_counter()
        try:
            return self.m(x)
        finally:
            SPENT["opendp"] += time.perf_counter() - t0


def instrument() -> None:
    """Time the parts of release_means (the functions it calls, unchanged)."""
    _timed_fn(hdp_release.grouped, "segment_counts", "segments")
    _timed_fn(hdp_release.grouped, "grouped_histogram", "grouped")
    _timed_fn(hdp_release.grouped_bins, "fetch_many", "fetch")
    hdp_release.finish.measurement = _TimedMeasurement


def write(path: str, n: int, kind: str, segments: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    w = None
    chunk = 5_000_000
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        v = rng.uniform(0, 1000, m)
        if kind == "tiers":
            e = rng.choice(np.array([0.1, 0.5, 1.0, 5.0, np.inf]), m)
        else:
            e = np.exp(rng.uniform(np.log(1e-3), np.log(10.0), m))
        seg = rng.integers(0, segments, m)
        t = pa.table({"value": v, "eps": e, "seg": seg})
        if w is None:
            w = pq.ParquetWriter(path, t.schema)
        w.write_table(t)
    w.close()


def engine_pass(path: str) -> None:
    src, v, e = open_source(path, "value", "eps")
    try:
        duck_grouped_histogram(src, v, e, ["seg"], 0.0, 1000.0)
    finally:
        src.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("--spark", action="store_true")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--kinds", default="tiers,continuous", help="tiers, continuous or both")
    a = ap.parse_args()
    n = int(a.rows)
    instrument()
    with tempfile.TemporaryDirectory() as d:
        for kind in a.kinds.split(","):
            path = os.path.join(d, f"{kind}.parquet")
            write(path, n, kind, a.segments)
            con = duckdb.connect()
            sql = f"SELECT seg, SUM(value) FROM read_parquet('{path}') GROUP BY seg"
            with Peak() as p_sum:
                t_sum, _ = timed(lambda con=con, sql=sql: con.execute(sql).fetchall(), a.reps)
            t_pass, _ = timed(lambda path=path: engine_pass(path), a.reps)
            parts = {}

            def one(path=path, parts=parts):
                SPENT.clear()
                t0 = time.perf_counter()
                out = release_means(path, value="value", eps="eps", by="seg", lo=0, hi=1000)
                total = time.perf_counter() - t0
                if not parts or total < parts["total"]:
                    parts.clear()
                    parts.update(SPENT, total=total)
                return out

            with Peak() as p_rel:
                t_rel, g = timed(one, a.reps)
            print(
                f"n={n:.0e} {a.segments} segments {kind:10s} GROUP BY SUM {t_sum:6.3f}s "
                f"({p_sum.mb:4.0f} MB)  release_means {t_rel:6.3f}s ({p_rel.mb:4.0f} MB)  "
                f"ratio {t_rel / t_sum:6.2f}  [grouped pass alone {t_pass:6.3f}s = "
                f"{t_pass / t_sum:5.2f}x; planning, noise and receipts {t_rel - t_pass:6.3f}s]"
                f"  plan: {g.plan}",
                flush=True,
            )
            rest = parts["total"] - sum(
                parts.get(k, 0.0) for k in ("segments", "grouped", "fetch", "opendp")
            )
            print(
                f"    where release_means' {parts['total']:.3f}s go: segment pass "
                f"{parts.get('segments', 0):.3f}s, grouped pass {parts.get('grouped', 0):.3f}s, "
                f"second pass {parts.get('fetch', 0):.3f}s, OpenDP {parts.get('opendp', 0):.3f}s "
                f"({parts.get('maps', 0)} privacy maps; a measurement and a noise per "
                f"segment), rest (plan, exact sums, intervals, receipts) {rest:.3f}s",
                flush=True,
            )
            if a.spark:
                from hdp_release.engines.spark_source import spark_session

                spark_session()
                t0 = time.perf_counter()
                release_means(
                    path, value="value", eps="eps", by="seg", lo=0, hi=1000, engine="spark"
                )
                t_sp = time.perf_counter() - t0
                print(
                    f"            spark local[2] release_means {t_sp:6.3f}s  ratio to DuckDB "
                    f"GROUP BY SUM {t_sp / t_sum:6.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
