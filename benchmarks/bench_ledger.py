"""Benchmark: the dataset fingerprint and the ledger's charge beside release_mean (DuckDB).

Writes a Parquet file of N rows (1e6 by default; --rows) with a few tiers, then prints side
by side, best of three: release_mean, the fingerprint query in DuckDB (fingerprint_sql), the
same numbers through numpy (fingerprint_arrays on the loaded columns) and one ledger charge
(open, check, charge, commit, close), with the ratios to release_mean.

    python benchmarks/bench_ledger.py [--rows N]
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

from hdp_release.fingerprint import fingerprint_arrays, fingerprint_duckdb
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean


def _best(f, k: int = 3) -> float:
    out = []
    for _ in range(k):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    n = ap.parse_args().rows
    rng = np.random.default_rng(0)
    v = rng.uniform(0, 500, n)
    e = rng.choice([0.1, 0.5, 1.0, 2.0], n)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.parquet")
        pq.write_table(pa.table({"v": v, "e": e}), path)
        rel = f"read_parquet('{path}')"
        con = duckdb.connect()
        t_rel = _best(lambda: release_mean(path, value="v", eps="e", lo=0, hi=500))
        t_fp = _best(lambda: fingerprint_duckdb(con, rel, "v", "e"))
        t_np = _best(lambda: fingerprint_arrays(v, e))
        led = PrivacyLedger(os.path.join(d, "l.duckdb"))
        t_ch = _best(lambda: led.charge(["fp1:" + "a" * 32], "1/1000"))
        print(f"rows {n:,}   load average {os.getloadavg()[0]:.1f}")
        print(f"release_mean (DuckDB)        {t_rel:8.3f} s   1.00x")
        print(f"fingerprint in DuckDB        {t_fp:8.3f} s   {t_fp / t_rel:.2f}x")
        print(f"fingerprint in numpy         {t_np:8.3f} s   {t_np / t_rel:.2f}x")
        print(f"one ledger charge            {t_ch:8.3f} s   {t_ch / t_rel:.2f}x")


if __name__ == "__main__":
    main()
