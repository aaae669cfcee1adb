"""Benchmark: release_means (a private mean per segment, DuckDB) against DuckDB's own
``SELECT seg, SUM(value) FROM file GROUP BY seg`` on the same Parquet file.

Writes (in a temporary directory, deleted at the end, or kept in ``--keep DIR`` and reused)
Parquet files of N rows (default 1e7; ``--rows``) with 1,000 segments and (a) a few tiers,
(b) per-user continuous levels. Then ``--rounds`` interleaved rounds (in each: the GROUP BY
SUM, the grouped aggregate pass alone and release_means, for every kind in turn, so a change
in the machine's load falls on all of them) and prints, side by side in one table, the best
wall and CPU time (all threads) of each, their ratios (goal <= 5x), where release_means'
time goes in its best round (the segment pass, the grouped aggregate pass, the second pass,
OpenDP: building measurements, privacy maps and noise, and the rest: planning, exact sums,
intervals, receipts), the peak resident memory growth (sampled), the load average, the date
and the commit; Spark local mode beside it with ``--spark``. With ``--compare TREE`` (another
checkout of the repository, e.g. main exported by ``git archive``), that tree's release_means
runs in a worker process in the same rounds, interleaved (SUM, this tree, that tree, per
kind), and its ratios and parts are printed beside this tree's.

    python benchmarks/bench_release_means.py [--rows N] [--segments S] [--rounds R]
        [--kinds tiers,continuous] [--keep DIR] [--spark] [--compare TREE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from bench_release import Peak, TreeWorker

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
        SPENT["built"] = SPENT.get("built", 0) + 1

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
            SPENT["draws"] = SPENT.get("draws", 0) + 1


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


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=os.path.dirname(os.path.abspath(hdp_release.grouped.__file__)),
            check=False,
        )
        return out.stdout.strip() or "?"
    except OSError:
        return "?"


def _release(path: str):
    return release_means(path, value="value", eps="eps", by="seg", lo=0, hi=1000)


def _timed(fn):
    """(wall, CPU of all threads, peak MB, parts, output) of one call."""
    SPENT.clear()
    with Peak() as peak:
        t0, c0 = time.perf_counter(), _cpu()
        out = fn()
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
    return wall, cpu, peak.mb, dict(SPENT), out


def _worker() -> None:
    """The --compare worker: reads a Parquet path per line, runs release_means (of the tree
    on its PYTHONPATH) on it and writes one JSON line (wall, cpu, peak, parts, plan)."""
    instrument()
    for line in sys.stdin:
        path = line.strip()
        wall, cpu, mb, parts, out = _timed(lambda path=path: _release(path))
        print(json.dumps([wall, cpu, mb, parts, out.plan]), flush=True)


class _Other(TreeWorker):
    """release_means of another tree (``--compare``), in a worker process."""

    def __init__(self, tree: str):
        super().__init__(tree, __file__)

    def run(self, path: str) -> tuple:
        wall, cpu, mb, parts, plan = self.ask(path)
        return wall, cpu, mb, parts, type("Out", (), {"plan": plan})()


def _parts_line(label: str, r_: list) -> str:
    parts = r_[3]
    total = r_[0]
    rest = total - sum(parts.get(k, 0.0) for k in ("segments", "grouped", "fetch", "opendp"))
    return (
        f"{label}: where release_means' best {total:.3f}s go: segment pass "
        f"{parts.get('segments', 0):.3f}s, grouped pass {parts.get('grouped', 0):.3f}s, "
        f"second pass {parts.get('fetch', 0):.3f}s, OpenDP {parts.get('opendp', 0):.3f}s "
        f"({parts.get('built', 0)} measurements, {parts.get('maps', 0)} privacy maps, "
        f"{parts.get('draws', 0)} noises), rest (plan, exact sums, intervals, receipts) "
        f"{rest:.3f}s; plan: {r_[4].plan}"
    )


def main() -> None:
    if "--worker" in sys.argv:
        _worker()
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("--spark", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kinds", default="tiers,continuous", help="tiers, continuous or both")
    ap.add_argument("--keep", default=None, help="keep (and reuse) the files in this folder")
    ap.add_argument("--compare", default=None, help="another tree's release_means beside it")
    a = ap.parse_args()
    n = int(a.rows)
    kinds = a.kinds.split(",")
    instrument()
    with tempfile.TemporaryDirectory() as tmp:
        d = a.keep or tmp
        os.makedirs(d, exist_ok=True)
        paths = {}
        for kind in kinds:
            paths[kind] = os.path.join(d, f"{kind}_{n}_{a.segments}.parquet")
            if not os.path.exists(paths[kind]):
                write(paths[kind], n, kind, a.segments)
        con = duckdb.connect()
        other = _Other(a.compare) if a.compare else None
        load0 = os.getloadavg()
        best: dict = {}  # (kind, what) -> [wall, cpu, peak MB, parts]
        for _ in range(a.rounds):
            for kind in kinds:
                path = paths[kind]
                sql = f"SELECT seg, SUM(value) FROM read_parquet('{path}') GROUP BY seg"
                jobs = {
                    "sum": lambda con=con, sql=sql: _timed(lambda: con.execute(sql).fetchall()),
                    "pass": lambda path=path: _timed(lambda: engine_pass(path)),
                    "release": lambda path=path: _timed(lambda: _release(path)),
                }
                if other is not None:
                    jobs["other"] = lambda path=path: other.run(path)
                for what, fn in jobs.items():
                    wall, cpu, mb, parts, out = fn()
                    b = best.setdefault((kind, what), [math.inf, math.inf, 0.0, {}, None])
                    if wall < b[0]:
                        b[0], b[3] = wall, parts
                    b[1] = min(b[1], cpu)
                    b[2] = max(b[2], mb)
                    b[4] = out
        load1 = os.getloadavg()
        if other is not None:
            other.close()
        print(
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {_commit()}, "
            f"{n:.0e} rows, {a.segments} segments, best of {a.rounds} interleaved rounds, "
            f"load average {load0[0]:.1f} -> {load1[0]:.1f}"
        )
        print(
            f"{'levels':10s} {'GROUP BY SUM':>16s} {'release_means':>16s} "
            f"{'ratio wall':>10s} {'ratio CPU':>9s} {'pass alone':>10s} {'peak MB':>13s}"
        )
        for kind in kinds:
            s_, p_, r_ = (best[(kind, w)] for w in ("sum", "pass", "release"))
            print(
                f"{kind:10s} {s_[0]:6.3f}s {s_[1]:6.3f}c  {r_[0]:6.3f}s {r_[1]:6.3f}c "
                f"{r_[0] / s_[0]:9.2f}x {r_[1] / s_[1]:8.2f}x {p_[1] / s_[1]:9.2f}x "
                f"{s_[2]:5.0f} / {r_[2]:5.0f}"
            )
        print(
            "(s: wall seconds, c: CPU seconds of all threads; pass alone: CPU ratio of the grouped"
        )
        print(" aggregate pass alone; peak MB: resident growth of the SUM / of release_means)")
        if other is not None:
            print(f"beside it, {a.compare} (release_means in a worker process, same rounds):")
            for kind in kinds:
                s_, o_ = best[(kind, "sum")], best[(kind, "other")]
                print(
                    f"{kind + ' (other)':18s} {o_[0]:6.3f}s {o_[1]:6.3f}c  ratio wall "
                    f"{o_[0] / s_[0]:6.2f}x  ratio CPU {o_[1] / s_[1]:6.2f}x  peak {o_[2]:5.0f} MB"
                )
        for kind in kinds:
            print(_parts_line(kind, best[(kind, "release")]), flush=True)
            if other is not None:
                print(_parts_line(f"{kind} (other)", best[(kind, "other")]), flush=True)
        if a.spark:
            from hdp_release.engines.spark_source import spark_session

            spark_session()
            for kind in kinds:
                t0 = time.perf_counter()
                release_means(
                    paths[kind], value="value", eps="eps", by="seg", lo=0, hi=1000, engine="spark"
                )
                t_sp = time.perf_counter() - t0
                t_sum = best[(kind, "sum")][0]
                print(
                    f"{kind}: spark local[2] release_means {t_sp:6.3f}s  ratio to DuckDB "
                    f"GROUP BY SUM {t_sp / t_sum:6.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
