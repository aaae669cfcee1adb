"""Benchmark: release_mean (DuckDB) against DuckDB's own SELECT SUM(value) on the same file.

Generates Parquet files (in a temporary directory deleted at the end, or kept in --keep DIR
and reused) of 1e7 rows (--rows; 1e8 more with --big) with (a) a few tiers and (b) per-user
continuous levels, and prints for each: the time of ``SELECT SUM(value)``, the time of
``release_mean``, their ratio (goals, issue 29: tiers <= 3x, per-user levels <= 5x), the
ratio against ``SELECT SUM(value), SUM(eps)`` (reading both columns, which any release must
do: the floor), the peak resident memory growth of each (sampled), the machine's load
average, and Spark local mode at 1e7 beside it. ``--repeat R`` runs R interleaved rounds
(SUM, both columns, release in turn, each round) and reports the best of each: on a shared
machine the ratio of bests is steadier than one timing.

``--compare TREE`` (an export of another commit, e.g. main) runs that tree's
``release_mean`` in a worker process in the same interleaved rounds (its CPU time is the
worker's own, all threads) and prints its best times and ratios beside this tree's.

``--queries`` prints every DuckDB query of one release, each then timed alone (best CPU time
of interleaved rounds, ratio to ``SUM(value)``), and what is left for Python.
``--where`` also prints where one more release's time goes: each DuckDB query alone (wall
time, first words of its SQL) and the rest (Python: plan, exact sums, OpenDP). ``--passes``
times the tiers file's queries alone against ``SUM(value)`` on the release's own DuckDB
connection (statistics propagation off), in interleaved rounds: the tiers pass with its CASE
(before session 11) and without it (integer or double sums), the floor (GROUP BY the level),
the pass taken apart (session 12: the key alone, with a plain sum, with the grid's sum and no
check, and GROUP BY the level column), the level sample and the Parquet statistics query.
``--selftest`` checks those queries' rows and sums against numpy on a small file, then exits.

    python benchmarks/bench_release.py [--rows N] [--big] [--repeat R] [--keep DIR] [--where]
                                       [--passes] [--queries] [--no-spark] [--compare TREE]
                                       [--selftest]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

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


def rounds(fns: dict, reps: int) -> dict:
    """Best wall time, best CPU time and last result of each function, over ``reps``
    interleaved rounds (every function once per round)."""
    return rounds_other(fns, None, "", reps)


def _release(path: str):
    return release_mean(path, value="value", eps="eps", lo=0, hi=1000)


def _worker() -> None:
    """The --compare worker: reads a Parquet path per line, runs release_mean (of the tree on
    its PYTHONPATH) on it once and writes one JSON line (wall, CPU of this process, plan)."""
    for line in sys.stdin:
        path = line.strip()
        t0, c0 = time.perf_counter(), _cpu()
        rel = _release(path)
        print(json.dumps([time.perf_counter() - t0, _cpu() - c0, rel.plan]), flush=True)


class TreeWorker:
    """A benchmark script of another tree (``--compare``) in a worker process, run as
    ``script --worker`` with that tree on its PYTHONPATH: :meth:`ask` sends it a path and
    returns the JSON line it answers."""

    def __init__(self, tree: str, script: str):
        env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
        self.p = subprocess.Popen(
            [sys.executable, os.path.abspath(script), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=os.path.abspath(tree),
        )

    def ask(self, path: str) -> Any:
        assert self.p.stdin is not None and self.p.stdout is not None
        self.p.stdin.write(path + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def close(self) -> None:
        if self.p.stdin is not None:
            self.p.stdin.close()
        self.p.wait(timeout=60)


class Other(TreeWorker):
    """release_mean of another tree (``--compare``), in a worker process."""

    def __init__(self, tree: str):
        super().__init__(tree, __file__)

    def run(self, path: str) -> tuple[float, float, str]:
        wall, cpu, plan = self.ask(path)
        return wall, cpu, plan


def rounds_other(fns: dict, other: Other | None, path: str, reps: int) -> dict:
    """:func:`rounds` with the other tree's release (key "other") in each round, after this
    tree's; its times are those the worker measured."""
    best = {k: [float("inf"), float("inf"), None] for k in fns}
    if other is not None:
        other.run(path)  # warm: its first DuckDB connection and imports
        best["other"] = [float("inf"), float("inf"), None]
    for _ in range(reps):
        for k, fn in fns.items():
            t0, c0 = time.perf_counter(), _cpu()
            out = fn()
            b = best[k]
            b[0] = min(b[0], time.perf_counter() - t0)
            b[1] = min(b[1], _cpu() - c0)
            b[2] = out
        if other is not None:
            wall, cpu, plan = other.run(path)
            b = best["other"]
            b[0], b[1], b[2] = min(b[0], wall), min(b[1], cpu), plan
    return best


def where(path: str) -> None:
    """Print the wall time of each DuckDB query of one release of ``path``, and the rest."""
    from hdp_release.engines import duckdb_source

    real = duckdb_source.DuckSource._run
    log: list[tuple[float, str]] = []

    def run(self, sql: str, how: str = "all"):
        t0 = time.perf_counter()
        out = real(self, sql, how)
        log.append((time.perf_counter() - t0, " ".join(sql.split())[:70]))
        return out

    duckdb_source.DuckSource._run = run
    try:
        t0 = time.perf_counter()
        release_mean(path, value="value", eps="eps", lo=0, hi=1000)
        total = time.perf_counter() - t0
    finally:
        duckdb_source.DuckSource._run = real
    for t, sql in log:
        print(f"            {t:6.3f}s  {sql}")
    print(f"            {total - sum(t for t, _ in log):6.3f}s  the rest (Python)", flush=True)


def pass_sqls(rel: str, lv: list[float], lo: float = 0.0, hi: float = 1000.0) -> dict:
    """The tiers file's queries that ``--passes`` times, by name, on relation ``rel`` whose
    levels are ``lv`` (the first rows' distinct levels, as the release finds them): the
    tiers pass as the release runs it (with the CASE, and without it: integer or double
    sums), the floor of any tiers release (GROUP BY the level, count and sum of the value),
    and the pass taken apart (issue 29, session 12): the level key alone (count per key),
    the key with the plain sum of the value (no grid), the key with the grid's sum but no
    range check, and grouping by the level column itself instead of the key (what the key
    costs; not used by the release: its groups would not be bounded by the first rows'
    levels when later rows hold others). Every grouped query gives per group (key, rows,
    ...), the last column its sum."""
    from hdp_release.engines.duckdb_fast import grid_sql, inside_pass_sql, tier_key
    from hdp_release.engines.duckdb_sql import grid_t

    scan = f"(SELECT CAST(value AS DOUBLE) AS v, CAST(eps AS DOUBLE) AS e FROM {rel})"
    key = tier_key(lv)
    y = f"round({grid_t(lo, hi)})"
    ok = f"count_if(y BETWEEN 0 AND {float(1 << 30)!r})"

    def grouped(k: str, aggs: str, cols: str) -> str:
        return (
            f"SELECT k, {aggs} FROM (SELECT {k} AS k, {cols} FROM {scan}) GROUP BY k "
            "ORDER BY k NULLS FIRST"
        )

    return {
        "SUM(value)": f"SELECT SUM(value) FROM {rel}",
        "floor: GROUP BY eps": f"SELECT eps, count(*), sum(value) FROM {rel} GROUP BY eps",
        "tiers pass, CASE": grouped(key, "count(*), count(y), sum(y)", f"{grid_sql(lo, hi)} AS y"),
        "tiers pass, no CASE, integer": inside_pass_sql(key, scan, lo, hi),
        "tiers pass, no CASE, double": inside_pass_sql(key, scan, lo, hi, True),
        "  apart: GROUP BY e, count only": grouped("e", "count(*)", "e"),
        "  apart: the key alone": grouped(key, "count(*)", "e"),
        "  apart: key, sum(v) (no grid)": grouped(key, "count(*), sum(v)", "v"),
        "  apart: key, grid, no check": grouped(key, "count(*), sum(y)", f"{y} AS y"),
        "  apart: GROUP BY e, grid, check": grouped("e", f"count(*), {ok}, sum(y)", f"{y} AS y"),
    }


def queries(path: str, reps: int) -> None:
    """Print every DuckDB query one release of ``path`` runs, each timed alone afterwards on the
    release's connection (best CPU time of ``reps`` interleaved rounds, with DuckDB's own
    ``SUM(value)`` on a plain connection in each round) and its ratio to ``SUM(value)``; then
    the release's own best CPU time in the same rounds and what is left for Python."""
    from hdp_release.engines import duckdb_source
    from hdp_release.engines.duckdb_sql import shared_cursor

    real = duckdb_source.DuckSource._run
    log: list[str] = []

    def run(self, sql: str, how: str = "all"):
        log.append(sql)
        return real(self, sql, how)

    duckdb_source.DuckSource._run = run
    try:
        _release(path)
    finally:
        duckdb_source.DuckSource._run = real
    con, own = shared_cursor(), duckdb.connect()
    fns = {"SUM(value)": lambda: own.execute(f"SELECT SUM(value) FROM read_parquet('{path}')")}
    for i, sql in enumerate(log):
        fns[f"q{i}"] = lambda sql=sql: con.execute(sql).fetchall()
    fns["release_mean"] = lambda: _release(path)
    b = rounds(fns, reps)
    base = b["SUM(value)"][1]
    for i, sql in enumerate(log):
        c = b[f"q{i}"][1]
        print(f"            q{i} CPU {c:6.3f}s {c / base:6.2f}x  {' '.join(sql.split())[:90]}")
    c = b["release_mean"][1]
    rest = c - sum(b[f"q{i}"][1] for i in range(len(log)))
    print(f"            release_mean CPU {c:6.3f}s {c / base:6.2f}x; the rest {rest:6.3f}s")


def passes(path: str, reps: int) -> None:
    """Print the CPU time of the tiers file's queries alone (:func:`pass_sqls`; best of
    ``reps`` interleaved rounds) and their ratio to ``SUM(value)``, on the release's own
    connection (statistics propagation off), then the level sample and the Parquet
    statistics query. Read the pass taken apart as differences: the key alone minus GROUP BY
    e's count is the key's cost; key + sum(v) minus the key alone, one grouped sum;
    key + grid minus key + sum(v), the grid's arithmetic; the double pass minus key + grid,
    the range check."""
    from hdp_release.engines.duckdb_source import DuckSource

    src = DuckSource(path)
    try:
        lv = sorted(float(x) for x in np.unique(src.run_numpy(src._head("eps AS e"))["e"]))
        src.cols = ("value", "eps")
        sqls = pass_sqls(src.rel, lv)
        fns = {k: (lambda q=q: src.con.execute(q).fetchall()) for k, q in sqls.items()}
        fns["level sample"] = lambda: src.run_numpy(src._head("eps"))  # as the release

        def stats() -> None:
            src.value_stats = None
            src.values_inside(0.0, 1000.0)

        fns["Parquet statistics"] = stats
        b = rounds(fns, reps)
        base = b["SUM(value)"][1]
        for k in fns:
            print(f"            {k:34s} CPU {b[k][1]:6.3f}s  {b[k][1] / base:5.2f}x", flush=True)
    finally:
        src.close()


def selftest(rows: int = 20_000) -> int:
    """Check that every grouped query of :func:`pass_sqls` computes what it claims on a small
    tiers file written here: per level its rows and its sum (of the value, or of the grid
    value round((v - lo) / R Q), each row's own, summed in Python as exact integers), all
    rows in range. Returns the number of groups checked; raises AssertionError."""
    from hdp_release.engines.duckdb_source import DuckSource

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tiers.parquet")
        write(path, rows, "tiers", seed=7)
        t = pq.read_table(path)
        v, e = t["value"].to_numpy(), t["eps"].to_numpy()
        lv = sorted(float(x) for x in np.unique(e))
        t_ = v / 1000.0 * (1 << 30)  # the same double operations as the SQL (v >= 0 here)
        fl = np.floor(t_)
        y = (fl + (t_ - fl >= 0.5)).astype(np.int64)  # half away from zero, exactly
        src = DuckSource(path)
        checked = 0
        try:
            for name, sql in pass_sqls(src.rel, lv).items():
                got = src.con.execute(sql).fetchall()
                if name == "SUM(value)":
                    assert abs(got[0][0] - float(v.sum())) <= 1e-9 * float(v.sum()), name
                    continue
                by_level = name.startswith("floor") or "GROUP BY e" in name
                for r in got:
                    level = float(r[0]) if by_level else lv[int(r[0]) - 1]
                    m = e == level
                    assert int(r[1]) == int(m.sum()), (name, level)
                    assert all(int(c) == int(m.sum()) for c in r[2:-1]), (name, level)
                    if name.startswith("floor") or "sum(v)" in name:
                        want = float(v[m].sum())
                        assert abs(float(r[-1]) - want) <= 1e-9 * want, (name, level)
                    elif len(r) > 2:  # not a count only
                        assert int(r[-1]) == int(y[m].sum()), (name, level)
                    checked += 1
                assert sum(int(r[1]) for r in got) == rows, name
        finally:
            src.close()
    return checked


def main() -> None:
    if "--worker" in sys.argv:
        _worker()
        return
    if "--selftest" in sys.argv:
        print(f"selftest ok: {selftest():,} groups checked", flush=True)
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=1e7, help="rows of the files (default 1e7)")
    ap.add_argument("--big", action="store_true", help="also 1e8 rows")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--keep", default=None, help="write (or reuse) the files in this folder")
    ap.add_argument("--where", action="store_true", help="time each query of one release")
    ap.add_argument("--passes", action="store_true", help="time the tiers queries alone")
    ap.add_argument("--queries", action="store_true", help="CPU of each query of a release")
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--compare", default=None, help="another tree's release_mean beside it")
    ap.add_argument("--kinds", default="tiers,continuous", help="which files (default both)")
    a = ap.parse_args()
    other = Other(a.compare) if a.compare else None
    sizes = [int(a.rows)] + ([10**8] if a.big else [])
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        d = a.keep or tmp
        os.makedirs(d, exist_ok=True)
        for n in sizes:
            for kind in a.kinds.split(","):
                path = os.path.join(d, f"{kind}_{n}.parquet")
                if not os.path.exists(path):
                    write(path, n, kind)
                con = duckdb.connect()
                sql1 = f"SELECT SUM(value) FROM read_parquet('{path}')"
                sql2 = f"SELECT SUM(value), SUM(eps) FROM read_parquet('{path}')"
                with Peak() as p_sum:
                    con.execute(sql1).fetchall()
                with Peak() as p_rel:
                    release_mean(path, value="value", eps="eps", lo=0, hi=1000)
                b = rounds_other(
                    {
                        "sum": lambda con=con, sql1=sql1: con.execute(sql1).fetchall(),
                        "two": lambda con=con, sql2=sql2: con.execute(sql2).fetchall(),
                        "rel": lambda path=path: _release(path),
                    },
                    other,
                    path,
                    a.repeat,
                )
                t_sum, c_sum = b["sum"][:2]
                t_two = b["two"][0]
                t_rel, c_rel, rel = b["rel"]
                print(
                    f"n={n:.0e} {kind:10s} SUM(value) {t_sum:6.3f}s ({p_sum.mb:5.0f} MB)  "
                    f"release_mean {t_rel:6.3f}s ({p_rel.mb:5.0f} MB)  ratio "
                    f"{t_rel / t_sum:5.2f} (CPU time ratio {c_rel / c_sum:5.2f}); against "
                    f"reading both columns (SUM(value), SUM(eps): {t_two:6.3f}s) "
                    f"{t_rel / t_two:5.2f}  load {os.getloadavg()[0]:.2f}  plan: {rel.plan}",
                    flush=True,
                )
                if other is not None:
                    t_o, c_o, plan_o = b["other"]
                    print(
                        f"            beside it, {a.compare}: release_mean {t_o:6.3f}s (CPU "
                        f"{c_o:6.3f}s; this tree {c_rel:6.3f}s)  ratio {t_o / t_sum:5.2f} (CPU "
                        f"time ratio {c_o / c_sum:5.2f})  plan: {plan_o}",
                        flush=True,
                    )
                if a.where:
                    where(path)
                if a.queries:
                    queries(path, max(a.repeat, 5))
                if a.passes and kind == "tiers":
                    passes(path, max(a.repeat, 5))
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
    if other is not None:
        other.close()


if __name__ == "__main__":
    main()
