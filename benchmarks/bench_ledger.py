"""Benchmark: the ledger's keyed level-profile identity and its charge beside release_mean
(DuckDB). (At scale, 10^5 releases: benchmarks/bench_ledger_scale.py.)

Writes a Parquet file of N rows (1e6 by default; --rows) with a few tiers, then prints side
by side, best of three: release_mean, the keyed identity query in DuckDB
(levels_identity_sql), the same through numpy (levels_identity_arrays on the loaded levels)
and one ledger charge (open, check, charge, commit, close), with the ratios to release_mean.

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

from hdp_release.fingerprint import (
    levels_identity_arrays,
    levels_identity_from_sums,
    levels_identity_sql,
)
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
        led = PrivacyLedger(os.path.join(d, "l.duckdb"))
        key = led.secret_key()
        t_rel = _best(lambda: release_mean(path, value="v", eps="e", lo=0, hi=500))
        t_fp = _best(
            lambda: levels_identity_from_sums(
                *con.execute(levels_identity_sql(rel, "e", key)).fetchone(), key
            )
        )
        t_np = _best(lambda: levels_identity_arrays(e, key))
        t_ch = _best(lambda: led.charge(["lv1:" + "a" * 32], "1/1000"))
        print(f"rows {n:,}   load average {os.getloadavg()[0]:.1f}")
        print(f"release_mean (DuckDB)        {t_rel:8.3f} s   1.00x")
        print(f"keyed levels id in DuckDB    {t_fp:8.3f} s   {t_fp / t_rel:.2f}x")
        print(f"keyed levels id in numpy     {t_np:8.3f} s   {t_np / t_rel:.2f}x")
        print(f"one ledger charge            {t_ch:8.3f} s   {t_ch / t_rel:.2f}x")


if __name__ == "__main__":
    main()
