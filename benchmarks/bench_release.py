"""Benchmark: release_mean (DuckDB) against DuckDB's own SELECT SUM(value) on the same file.

Generates Parquet files (in a temporary directory, deleted at the end) of 1e7 rows (1e8 with
--big) with (a) a few tiers and (b) per-user continuous levels, and prints for each: the time
of ``SELECT SUM(value)``, the time of ``release_mean``, their ratio (goal: within 2x), the
ratio against ``SELECT SUM(value), SUM(eps)`` (reading both columns, which any release must
do: the floor), the peak resident memory growth of each (sampled), and Spark local mode at 1e7
beside it.

    python benchmarks/bench_release.py [--big] [--no-spark]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import threading
import time

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hdp_release.release import release_mean


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Peak:
    """Peak RSS above the starting RSS while the block runs (sampled every 5 ms)."""

    def __enter__(self):
        self.base = self.peak = _rss()
        self.stop = False
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()
        return self

    def _run(self):
        while not self.stop:
            self.peak = max(self.peak, _rss())
            time.sleep(0.005)

    def __exit__(self, *a):
        self.stop = True
        self.t.join()
        self.mb = (self.peak - self.base) / 2**20


def write(path: str, n: int, kind: str, seed: int = 0) -> None:
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
        t = pa.table({"value": v, "eps": e})
        if w is None:
            w = pq.ParquetWriter(path, t.schema)
        w.write_table(t)
    w.close()


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn, reps: int = 3):
    """Best wall time, best CPU time (all threads; steadier on a shared machine), result."""
    best = best_cpu = float("inf")
    out = None
    for _ in range(reps):
        t0, c0 = time.perf_counter(), _cpu()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, _cpu() - c0)
    timed.cpu = best_cpu
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also 1e8 rows")
    ap.add_argument("--no-spark", action="store_true")
    a = ap.parse_args()
    sizes = [10**7] + ([10**8] if a.big else [])
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            for kind in ("tiers", "continuous"):
                path = os.path.join(d, f"{kind}_{n}.parquet")
                write(path, n, kind)
                con = duckdb.connect()
                with Peak() as p_sum:
                    t_sum, _ = timed(
                        lambda path=path, con=con: con.execute(
                            f"SELECT SUM(value) FROM read_parquet('{path}')"
                        ).fetchall()
                    )
                c_sum = timed.cpu
                # the floor of any release: it must read each user's level too
                t_two, _ = timed(
                    lambda path=path, con=con: con.execute(
                        f"SELECT SUM(value), SUM(eps) FROM read_parquet('{path}')"
                    ).fetchall()
                )
                with Peak() as p_rel:
                    t_rel, rel = timed(
                        lambda path=path: release_mean(
                            path, value="value", eps="eps", lo=0, hi=1000
                        )
                    )
                c_rel = timed.cpu
                print(
                    f"n={n:.0e} {kind:10s} SUM(value) {t_sum:6.3f}s ({p_sum.mb:5.0f} MB)  "
                    f"release_mean {t_rel:6.3f}s ({p_rel.mb:5.0f} MB)  ratio "
                    f"{t_rel / t_sum:5.2f} (CPU time ratio {c_rel / c_sum:5.2f}); against "
                    f"reading both columns (SUM(value), SUM(eps): {t_two:6.3f}s) "
                    f"{t_rel / t_two:5.2f}  plan: {rel.plan}",
                    flush=True,
                )
                if n == 10**7 and not a.no_spark:
                    from hdp_release.engines.spark_source import spark_session

                    spark_session()
                    t_sp, _ = timed(
                        lambda path=path: release_mean(
                            path, value="value", eps="eps", lo=0, hi=1000, engine="spark"
                        ),
                        reps=1,
                    )
                    print(
                        f"            spark local[2] release_mean {t_sp:6.3f}s  ratio to "
                        f"DuckDB SUM {t_sp / t_sum:5.1f}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
