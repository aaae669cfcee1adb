"""Benchmark (issue 30): the cost of the ledgers beside the release, side by side in one run.

Writes a Parquet file of N rows (1e7 by default; --rows) with an integer person id and four
tiers, then prints, best of --repeat runs each: release_mean without a ledger, with the
dataset ledger (fingerprint, check, charge, record), with the per-person ledger on a new
ledger (first release: keyed hashes, every person inserted) and on a ledger holding the
first release's spends (second release: every person read and updated), with the ratios to
the release without a ledger. Goals of the issue: dataset ledger <= 1.5x, per-person <= 3x.

    python benchmarks/bench_ledger_people.py [--rows N] [--repeat K]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean


def _best(run, prepare=None, k: int = 3) -> float:
    out = []
    for _ in range(k):
        arg = prepare() if prepare is not None else None
        t = time.perf_counter()
        run(arg)
        out.append(time.perf_counter() - t)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    n, k = a.rows, a.repeat
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.parquet")
        pq.write_table(
            pa.table(
                {
                    "uid": rng.permutation(n).astype(np.int64),
                    "v": rng.uniform(0, 500, n),
                    "e": rng.choice([0.1, 0.5, 1.0, 2.0], n),
                }
            ),
            path,
        )
        kw = dict(value="v", eps="e", lo=0, hi=500)
        seq = iter(range(10**6))

        def fresh(copy_of: str | None = None) -> PrivacyLedger:
            p = os.path.join(d, f"l{next(seq)}.duckdb")
            if copy_of is not None:
                shutil.copy(copy_of, p)
            return PrivacyLedger(p)

        first = os.path.join(d, "first.duckdb")
        release_mean(path, **kw, ledger=PrivacyLedger(first), id="uid", spend="1/2")
        dataset_led = fresh()
        t0 = _best(lambda _: release_mean(path, **kw, ledger=False), k=k)
        t1 = _best(lambda _: release_mean(path, **kw, ledger=dataset_led, spend="1/1000"), k=k)
        t2 = _best(lambda led: release_mean(path, **kw, ledger=led, id="uid"), fresh, k=k)
        t3 = _best(
            lambda led: release_mean(path, **kw, ledger=led, id="uid", spend="1/2"),
            lambda: fresh(first),
            k=k,
        )
        print(f"rows {n:,}   best of {k}   load average {os.getloadavg()[0]:.1f}")
        print(f"release, no ledger                   {t0:8.3f} s   1.00x")
        print(f"release, dataset ledger              {t1:8.3f} s   {t1 / t0:5.2f}x  (goal 1.5x)")
        print(f"release, per-person, first release   {t2:8.3f} s   {t2 / t0:5.2f}x  (goal 3x)")
        print(f"release, per-person, second release  {t3:8.3f} s   {t3 / t0:5.2f}x  (goal 3x)")


if __name__ == "__main__":
    main()
