"""Benchmark (issue 30): the floor under any per-person release, beside the release itself.

The per-person ledger stores each id only as a keyed SHA-256 (hdp_release.ledger.people:
``sha256(secret_hex || '|' || id)`` computed by the engine for every row of every release).
Whatever else a per-person release does (the repeated-id check, the join with the person
table, the writes), it cannot cost less than that hash of every id. This script prints, best
of --repeat runs taken in turns on one N-row Parquet file (the table of
bench_ledger_people.py: an integer id and four tiers):

* ``release_mean`` without a ledger (the issue's unit);
* DuckDB's keyed SHA-256 of every id as the ledger computes it (64 hex digits of key, a
  separator, the id as text: two SHA-256 blocks per id), reduced with ``max`` so that
  nothing but reading the ids and hashing them is paid;
* for reference, the same hash with a 32-hex-digit key (one block per id of up to 22
  characters) and the keyed MD5 (``md5_number``), the cheapest cryptographic hash DuckDB and
  Spark both compute;
* DuckDB's ``count(DISTINCT id)`` on the raw ids (the repeated-id check without hashing).

with each one's ratio to the release, wall and CPU time. When the hash alone is over 3x the
release, the issue's goal of a per-person ledger within 3x cannot be met by any change that
keeps a keyed cryptographic hash of every id computed in the engine.

    python benchmarks/bench_person_floor.py [--rows N] [--repeat K]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable

import numpy as np
from bench_ledger_people import best_interleaved, write_people_table

from hdp_release.engines.duckdb_sql import shared_cursor
from hdp_release.release import release_mean

KEY = "ab" * 32 + "|"
"""A key of the ledger's shape: 32 secret bytes as 64 hex digits, then the separator."""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    n = a.rows
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.parquet")
        write_people_table(path, n, rng)
        con = shared_cursor()
        rel = "read_parquet('" + path.replace("'", "''") + "')"

        def one(sql: str, key: str | None = None) -> tuple[Callable[[object], object], None]:
            params = None if key is None else [key]
            return lambda _: con.execute(sql, params).fetchall(), None

        ids = "CAST(uid AS VARCHAR)"
        runs = {
            "release": (
                lambda _: release_mean(path, value="v", eps="e", lo=0, hi=500, ledger=False),
                None,
            ),
            "sha256": one(f"SELECT max(sha256(? || {ids})) FROM {rel}", KEY),
            "sha256_1block": one(f"SELECT max(sha256(? || {ids})) FROM {rel}", KEY[32:]),
            "md5": one(f"SELECT max(md5_number(? || {ids})) FROM {rel}", KEY[32:]),
            "distinct": one(f"SELECT count(DISTINCT uid) FROM {rel}"),
        }
        wall, cpu = best_interleaved(runs, a.repeat)
    labels = {
        "release": "release_mean, no ledger",
        "sha256": "keyed SHA-256 of every id (the ledger's)",
        "sha256_1block": "  the same, 32-hex-digit key (1 block)",
        "md5": "  keyed MD5 of every id",
        "distinct": "count(DISTINCT id), raw ids",
    }
    print(f"rows {n:,}   best of {a.repeat}, in turns   load average {os.getloadavg()[0]:.1f}")
    print(f"{'':44s}{'wall':>9s} {'ratio':>7s}{'CPU':>10s} {'ratio':>7s}")
    for name, label in labels.items():
        print(
            f"{label:44s}{wall[name]:7.3f} s {wall[name] / wall['release']:6.1f}x"
            f"{cpu[name]:8.3f} s {cpu[name] / cpu['release']:6.1f}x"
        )
    print("goal of issue 30: a per-person release within 3x the release without a ledger")


if __name__ == "__main__":
    main()
