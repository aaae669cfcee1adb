"""Benchmark (issues 28 and 29): the floors under the release's speed goals, side by side in one
run with the baselines and the real releases.

The goals: ``release_mean`` (DuckDB, 10^7-row Parquet) within 5x DuckDB's own ``SELECT
SUM(value)`` with per-user levels and within 3x with a few tiers (issue 29); ``release_means``
(1,000 segments) within 5x ``SELECT seg, SUM(value) ... GROUP BY seg`` (issue 28). Any
release that finds tau* (the paper's saturation level) from the data's levels and forms the
weighted sum sum_i min(eps_i, tau*) y_i must at least read both columns, group the levels (by
tier, or in bins fine enough to bracket tau*) and sum the values per group; a grouped release
must also ask OpenDP for noise per segment. This script times those minimal queries (the SQL
constants below, each with what it proves), OpenDP's per-call costs, and the real releases, in
the same interleaved rounds, and prints each one's best CPU time (all threads) and wall time
and its ratio to its baseline, then the floors the goals sit on.

What a floor leaves out (so the real release costs more than it, by design): the value and
level checks (missing, NaN, infinite, negative cells: refused with their row), clamping the
values to the public range, the exact integer sums that make the estimate independent of the
row order and the engine (DuckDB and Spark agree bit for bit), the narrow second pass over the
bin holding tau*, the interval, and OpenDP's privacy map per receipt row.

Writes two Parquet files once (bench_release_means.write: value U(0, 1000); eps log-uniform in
[1e-3, 10] per user, or 5 tiers {0.1, 0.5, 1, 5, inf}; seg 0..S-1) in a temporary directory, or
in ``--keep DIR`` (kept and reused). Floors run on the release's own DuckDB connection
(statistics propagation off, issue 32); the baselines on a plain DuckDB connection (DuckDB's
own, as the goals are stated) and, for reference, on the release's.

``--selftest`` checks that each floor query computes what it claims (its result fetched and
compared with numpy's on a file of ``--rows`` rows, default 10^5: counts and exact integer sums
equal, float sums within 1e-9 relative, the weighted sum at a bin edge rebuilt from the bins'
sums) and OpenDP's calls, then exits (tests/release/test_bench_release_floor.py runs it).

    python benchmarks/bench_release_floor.py [--rows N] [--segments S] [--rounds R] [--reps K]
        [--keep DIR] [--selftest]

Each round runs the queries and OpenDP's calls ``--reps`` times in turn (default 3: more
samples of the short baselines, whose best varied by a fifth between runs of 5 rounds), then
each real release once.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

import duckdb
import numpy as np
import pyarrow.parquet as pq
from bench_release_means import write

LO, HI = 0.0, 1000.0
"""The files' public value range (bench_release_means.write draws values in it)."""

Y = "CAST(value / 1000.0 * 1073741824 AS BIGINT)"
"""The value on the release's 2^30 grid of [0, 1000] (CAST rounds half away from zero), no
clamp: the floor assumes every value is in range."""

Q = "CAST(floor(eps * 4398046511104.0) AS BIGINT)"
"""The level on the release's 2^42 grid (q = floor(eps 2^42)), no clamp (levels <= 10 here)."""

K8 = "CAST(floor(8 * log10(eps)) AS TINYINT)"
"""The level's 1/8-decade bin (the release's receipt rows), as the narrowest integer that holds
this file's bins (-24..7): no key for 0, inf or a bad level (the per-user file has none)."""

TAU_KNOWN = 0.5
"""A saturation level given in advance (the known-tau floor; its cost does not depend on it)."""

SUM_VALUE = "SELECT sum(value) FROM {rel}"
# baseline of issue 29: DuckDB's own sum of the value column

SUM_BY_SEG = "SELECT seg, sum(value) FROM {rel} GROUP BY seg"
# baseline of issue 28: DuckDB's own sum of the value column per segment

BOTH = "SELECT sum(value), sum(eps) FROM {rel}"
# any release reads both columns: the cost of reading the level column too

HIST = f"SELECT k, count(*) FROM (SELECT {K8} AS k FROM {{rel}}) GROUP BY k"
# per-user levels: the level histogram alone (1/8-decade bins), needed to bracket tau*

FLOAT_PASS = (
    "SELECT k, count(*), sum(value), sum(eps * value), sum(eps), sum(eps * eps) "
    f"FROM (SELECT {K8} AS k, value, eps FROM {{rel}}) GROUP BY k"
)
# per-user levels, one pass: per bin the float sums that give sum_i min(eps_i, tau) v_i and
# sum_i min(eps_i, tau)(^2) for tau at any bin edge (no checks, no exact sums, no second pass)

EXACT_PASS = (
    "SELECT k, count(*), sum(y), sum(q), sum((q >> 31) * y), sum((q & 2147483647) * y), "
    f"sum(CAST(q AS HUGEINT) * q) FROM (SELECT {K8} AS k, {Y} AS y, {Q} AS q FROM {{rel}}) "
    "GROUP BY k"
)
# per-user levels, one pass with the release's exact integers: per bin users, sum y, sum q,
# sum q y (two BIGINT products: q = qh 2^31 + ql) and sum q^2 (one HUGEINT product), no checks

TAU_NEAR = 0.005
"""About the per-user file's tau* (0.0048 at c = 8): the release's exact pass needs the level
sums only below it (the bracket pass forms q only below the bracket's top)."""

KB = f"CASE WHEN eps < {TAU_NEAR} THEN CAST(floor(8 * log10(eps)) AS INTEGER) ELSE 100 END"
"""1/8-decade classes below TAU_NEAR, one class (100) from it."""

EXACT_BELOW = (
    "SELECT k, count(*), sum(y), sum(q), sum(CAST(q AS HUGEINT) * y), sum((q >> 31) * (q >> 31)), "
    "sum((q >> 31) * (q & 2147483647)), sum((q & 2147483647) * (q & 2147483647)) FROM (SELECT "
    f"{KB} AS k, {Y} AS y, CASE WHEN eps < {TAU_NEAR} THEN {Q} END AS q FROM {{rel}}) GROUP BY k"
)
# per-user levels, one pass with main's exact sums as the release's bracket pass forms them (q
# only below tau*): per class users, sum y, sum q, sum q y (a HUGEINT product) and sum q^2 as
# three BIGINT products (qh^2, qh ql, ql^2 with q = qh 2^31 + ql), no checks, no sub-bins

KS = (
    f"CASE WHEN eps < {TAU_NEAR} THEN CAST(floor(8 * log10(eps)) AS INTEGER) + 64 * "
    "CAST(floor(eps * 2048.0) AS INTEGER) ELSE 100000 END"
)
"""KB's classes below TAU_NEAR split by qh = floor(eps 2^11) = q >> 31 (key class + 64 qh)."""

EXACT_SPLIT = (
    "SELECT k, count(*), sum(y), sum(ql), sum(ql * y), sum(ql * ql) FROM (SELECT "
    f"{KS} AS k, {Y} AS y, CASE WHEN eps < {TAU_NEAR} THEN {Q} & 2147483647 END AS ql "
    "FROM {rel}) GROUP BY k"
)
# the same exact sums with qh in the key (session 12, the release's split bracket pass,
# hdp_release.engines.duckdb_bracket): one qh per group, so sum q, sum q y and the three sums
# of q^2 follow exactly from users, sum y, sum ql, sum ql y and sum ql^2 (BIGINT products)

KNOWN_TAU = "SELECT sum(least(eps, {tau}) * value), sum(least(eps, {tau})) FROM {rel}"
# per-user levels with tau* known in advance (no histogram at all): the weighted sum alone

TIERS_FLOAT = "SELECT eps, count(*), sum(value) FROM {rel} GROUP BY eps"
# few tiers: users and float sum of values per tier, all a tiers plan needs (no checks)

TIERS_EXACT = f"SELECT eps, count(*), sum({Y}) FROM {{rel}} GROUP BY eps"
# few tiers: the same with the exact integer value grid (row-order independent), no checks

G_BOTH = "SELECT seg, sum(value), sum(eps) FROM {rel} GROUP BY seg"
# per segment: reading both columns

G_HIST = f"SELECT seg, k, count(*) FROM (SELECT seg, {K8} AS k FROM {{rel}}) GROUP BY seg, k"
# per segment, per-user levels: the level histogram per segment alone

G_FLOAT = (
    "SELECT seg, k, count(*), sum(value), sum(eps * value), sum(eps), sum(eps * eps) "
    f"FROM (SELECT seg, {K8} AS k, value, eps FROM {{rel}}) GROUP BY seg, k"
)
# per segment, per-user levels: FLOAT_PASS per (segment, bin)

G_EXACT = (
    "SELECT seg, k, count(*), sum(y), sum(q), sum((q >> 31) * y), sum((q & 2147483647) * y), "
    f"sum(CAST(q AS HUGEINT) * q) FROM (SELECT seg, {K8} AS k, {Y} AS y, {Q} AS q "
    "FROM {rel}) GROUP BY seg, k"
)
# per segment, per-user levels: EXACT_PASS per (segment, bin)

G_TIERS_FLOAT = "SELECT seg, eps, count(*), sum(value) FROM {rel} GROUP BY seg, eps"
# per segment, few tiers: users and float sum of values per (segment, tier)

G_TIERS_EXACT = f"SELECT seg, eps, count(*), sum({Y}) FROM {{rel}} GROUP BY seg, eps"
# per segment, few tiers: the same with the exact integer value grid

QUERIES: list[tuple[str, str, str, str]] = [
    # (name, file, SQL, baseline name); "*_own": on a plain DuckDB connection (the baselines)
    ("SUM(value) [continuous]", "continuous", SUM_VALUE, ""),
    ("SUM(value) [tiers]", "tiers", SUM_VALUE, ""),
    ("GROUP BY seg SUM [continuous]", "continuous", SUM_BY_SEG, ""),
    ("GROUP BY seg SUM [tiers]", "tiers", SUM_BY_SEG, ""),
    ("  same, release's connection", "continuous_rel", SUM_VALUE, "SUM(value) [continuous]"),
    (
        "  GROUP BY seg, release's conn.",
        "continuous_rel",
        SUM_BY_SEG,
        "GROUP BY seg SUM [continuous]",
    ),
    ("SUM(value), SUM(eps)", "continuous_rel", BOTH, "SUM(value) [continuous]"),
    ("histogram, 1/8-decade bins", "continuous_rel", HIST, "SUM(value) [continuous]"),
    ("one pass per bin, float sums", "continuous_rel", FLOAT_PASS, "SUM(value) [continuous]"),
    ("one pass per bin, exact ints", "continuous_rel", EXACT_PASS, "SUM(value) [continuous]"),
    ("exact ints below tau*, main sums", "continuous_rel", EXACT_BELOW, "SUM(value) [continuous]"),
    ("exact ints below tau*, qh key", "continuous_rel", EXACT_SPLIT, "SUM(value) [continuous]"),
    ("tau* known: weighted sum only", "continuous_rel", KNOWN_TAU, "SUM(value) [continuous]"),
    ("tiers: GROUP BY eps, float", "tiers_rel", TIERS_FLOAT, "SUM(value) [tiers]"),
    ("tiers: GROUP BY eps, exact grid", "tiers_rel", TIERS_EXACT, "SUM(value) [tiers]"),
    ("seg: SUM(value), SUM(eps)", "continuous_rel", G_BOTH, "GROUP BY seg SUM [continuous]"),
    ("seg x bin: histogram", "continuous_rel", G_HIST, "GROUP BY seg SUM [continuous]"),
    ("seg x bin: float sums", "continuous_rel", G_FLOAT, "GROUP BY seg SUM [continuous]"),
    ("seg x bin: exact ints", "continuous_rel", G_EXACT, "GROUP BY seg SUM [continuous]"),
    ("seg x tier: float", "tiers_rel", G_TIERS_FLOAT, "GROUP BY seg SUM [tiers]"),
    ("seg x tier: exact grid", "tiers_rel", G_TIERS_EXACT, "GROUP BY seg SUM [tiers]"),
]

OPENDP_CALLS = 200
"""OpenDP calls per timing of a per-call cost (the cost is the time over the calls)."""


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _commit() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=here
    )
    return out.stdout.strip() or "?"


def sql_of(template: str, path: str) -> str:
    """The query ``template`` on the Parquet file at ``path``."""
    rel = "read_parquet('" + path.replace("'", "''") + "')"
    return template.format(rel=rel, tau=repr(TAU_KNOWN))


def connections() -> dict[str, Any]:
    """DuckDB's own (a plain connection) and the release's (hdp_release's shared cursor)."""
    from hdp_release.engines.duckdb_sql import shared_cursor

    return {"own": duckdb.connect(), "rel": shared_cursor()}


class OpenDPCalls:
    """OpenDP's calls as the release makes them (hdp_release.noise.measurement: a Laplace
    measurement on one float), each timed over OPENDP_CALLS calls, and a Laplace measurement on
    a vector of 1,000 floats."""

    def __init__(self) -> None:
        import opendp.prelude as dp

        from hdp_release.noise import measurement

        self.make = measurement
        self.meas = measurement(3.0)
        self.meas.map(1.0)
        self.meas(500.0)
        self.vec = dp.m.make_laplace(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), 3.0
        )
        self.xs = [500.0] * 1000
        self.vec(self.xs)
        self.scales = [3.0 + i / 7 for i in range(OPENDP_CALLS)]
        self.d_ins = [1.0 + i / 11 for i in range(OPENDP_CALLS)]

    def build(self) -> None:
        for s in self.scales:
            self.make(s)

    def map(self) -> None:
        for d in self.d_ins:
            self.meas.map(d)

    def invoke(self) -> None:
        for _ in range(OPENDP_CALLS):
            self.meas(500.0)

    def vector(self) -> None:
        self.vec(self.xs)


def release_calls(paths: dict[str, str]) -> dict[str, Callable[[], object]]:
    """The real releases on both files: release_mean and release_means (no ledger)."""
    from hdp_release.grouped import release_means
    from hdp_release.release import release_mean

    out: dict[str, Callable[[], object]] = {}
    for kind in ("continuous", "tiers"):
        p = paths[kind]
        out[f"release_mean [{kind}]"] = lambda p=p: release_mean(
            p, value="value", eps="eps", lo=LO, hi=HI
        )
        out[f"release_means [{kind}]"] = lambda p=p: release_means(
            p, value="value", eps="eps", by="seg", lo=LO, hi=HI
        )
    return out


def opendp_counts(paths: dict[str, str]) -> dict[str, dict]:
    """OpenDP's calls in one release_means of each file (measurements built, privacy maps,
    noises), counted by bench_release_means.instrument (after the timed rounds: it wraps them)."""
    import bench_release_means as brm

    brm.instrument()
    calls = release_calls(paths)
    out = {}
    for kind in ("continuous", "tiers"):
        brm.SPENT.clear()
        calls[f"release_means [{kind}]"]()
        out[kind] = {k: brm.SPENT.get(k, 0) for k in ("built", "maps", "draws")}
    return out


def _files(d: str, n: int, segments: int) -> dict[str, str]:
    paths = {}
    for kind in ("tiers", "continuous"):
        paths[kind] = os.path.join(d, f"{kind}_{n}_{segments}.parquet")
        if not os.path.exists(paths[kind]):
            write(paths[kind], n, kind, segments)
    return paths


def measure(paths: dict[str, str], rounds: int, reps: int) -> dict[str, list[float]]:
    """Best (CPU, wall) seconds of every item over ``rounds`` interleaved rounds: in each, the
    queries and OpenDP's calls ``reps`` times in turn (each takes 0.04-1.3 s: more samples of
    the short baselines), then each real release once."""
    cons = connections()
    short: dict[str, Callable[[], object]] = {}
    for name, f, tmpl, _ in QUERIES:
        con = cons["rel" if f.endswith("_rel") else "own"]
        sql = sql_of(tmpl, paths[f.removesuffix("_rel")])
        short[name] = lambda con=con, sql=sql: con.execute(sql).fetchall()
    od = OpenDPCalls()
    short |= {
        "OpenDP build": od.build,
        "OpenDP map": od.map,
        "OpenDP invoke": od.invoke,
        "OpenDP vector invoke": od.vector,
    }
    releases = release_calls(paths)
    for fn in [*short.values(), *releases.values()]:  # warm: imports, first reads of files
        fn()
    best = {k: [math.inf, math.inf] for k in [*short, *releases]}
    for _ in range(rounds):
        for batch in [short] * reps + [releases]:
            for k, fn in batch.items():
                t0, c0 = time.perf_counter(), _cpu()
                fn()
                w, c = time.perf_counter() - t0, _cpu() - c0
                best[k][0] = min(best[k][0], c)
                best[k][1] = min(best[k][1], w)
    return best


def report(best: dict, counts: dict, segments: int) -> None:
    """The table and the derived floors."""
    base = {name: b for name, _, _, b in QUERIES}
    base |= {
        "release_mean [continuous]": "SUM(value) [continuous]",
        "release_mean [tiers]": "SUM(value) [tiers]",
        "release_means [continuous]": "GROUP BY seg SUM [continuous]",
        "release_means [tiers]": "GROUP BY seg SUM [tiers]",
    }
    print(f"{'item':40s} {'CPU s':>8s} {'wall s':>8s} {'CPU ratio':>9s} {'wall ratio':>10s}")
    for name, b in base.items():
        c, w = best[name]
        if b:
            rc, rw = c / best[b][0], w / best[b][1]
            print(f"{name:40s} {c:8.3f} {w:8.3f} {rc:8.2f}x {rw:9.2f}x  (vs {b})")
        else:
            print(f"{name:40s} {c:8.3f} {w:8.3f} {'(baseline)':>20s}")
    per = {k: best[f"OpenDP {k}"][0] / OPENDP_CALLS for k in ("build", "map", "invoke")}
    vec = best["OpenDP vector invoke"][0] / 1000
    print(
        f"OpenDP per call (CPU, best of {OPENDP_CALLS}-call batches): build "
        f"{per['build'] * 1e6:.0f} us, map {per['map'] * 1e6:.0f} us, invoke "
        f"{per['invoke'] * 1e6:.0f} us; a vector Laplace on 1,000 floats "
        f"{best['OpenDP vector invoke'][0] * 1e3:.1f} ms ({vec * 1e6:.1f} us per element)"
    )
    least = per["build"] + per["map"] + per["invoke"]
    print(
        f"minimum OpenDP per segment (1 build, 1 map, 1 invoke) {least * 1e6:.0f} us x "
        f"{segments:,} segments = {least * segments:.3f} s"
    )
    one = per["build"] + per["map"] + best["OpenDP vector invoke"][0]
    print(
        f"(for reference, not how release_means works: one vector Laplace for all segments at "
        f"one scale, 1 build + 1 map + 1 vector invoke of 1,000 floats = {one:.3f} s)"
    )
    for kind, cnt in counts.items():
        t = cnt["built"] * per["build"] + cnt["maps"] * per["map"] + cnt["draws"] * per["invoke"]
        print(
            f"OpenDP as release_means [{kind}] calls it: {cnt['built']:,} builds, "
            f"{cnt['maps']:,} maps, {cnt['draws']:,} invokes = {t:.3f} s at these per-call costs"
        )

    def r(name: str, b: str) -> float:
        return best[name][0] / best[b][0]

    sc, st = "SUM(value) [continuous]", "SUM(value) [tiers]"
    gc, gt = "GROUP BY seg SUM [continuous]", "GROUP BY seg SUM [tiers]"
    od = least * segments
    print("floors (CPU-time ratios; each assumes what its query's comment says):")
    print(
        f"floor of a per-user release_mean (float, no checks) = "
        f"{r('one pass per bin, float sums', sc):.1f}x vs goal 5x (exact ints "
        f"{r('one pass per bin, exact ints', sc):.1f}x; exact ints below tau* only "
        f"{r('exact ints below tau*, main sums', sc):.1f}x with main's sums, "
        f"{r('exact ints below tau*, qh key', sc):.1f}x with qh in the key; tau* known "
        f"{r('tau* known: weighted sum only', sc):.1f}x; "
        f"histogram alone {r('histogram, 1/8-decade bins', sc):.1f}x; the release "
        f"{r('release_mean [continuous]', sc):.1f}x)"
    )
    print(
        "floor of a tiers release_mean (exact grid) = "
        f"{r('tiers: GROUP BY eps, exact grid', st):.1f}x "
        f"vs goal 3x (float {r('tiers: GROUP BY eps, float', st):.1f}x; the release "
        f"{r('release_mean [tiers]', st):.1f}x)"
    )
    for kind, q, b in (
        ("tiers", "seg x tier: exact grid", gt),
        ("per-user, float", "seg x bin: float sums", gc),
        ("per-user, exact", "seg x bin: exact ints", gc),
    ):
        tot = (best[q][0] + od) / best[b][0]
        print(
            f"floor of release_means ({kind}): pass + minimum OpenDP = {tot:.1f}x vs goal 5x "
            f"(pass {r(q, b):.1f}x + OpenDP {od / best[b][0]:.1f}x)"
        )
    print(
        f"the releases: release_means tiers {r('release_means [tiers]', gt):.1f}x, per-user "
        f"{r('release_means [continuous]', gc):.1f}x"
    )


# ------------------------------------------------------------------------------ selftest
def _close(a: float, b: float, what: str, rel: float = 1e-9) -> None:
    if not abs(a - b) <= rel * max(abs(a), abs(b), 1e-300):
        raise AssertionError(f"{what}: {a!r} != {b!r}")


def _grouped(keys: list[np.ndarray], cols: dict[str, np.ndarray]) -> dict[tuple, dict]:
    """numpy's per-group count and sums (object columns summed as Python ints)."""
    order = np.lexsort(keys[::-1])
    ks = [k[order] for k in keys]
    new = np.ones(len(order), bool)
    new[1:] = np.any([k[1:] != k[:-1] for k in ks], axis=0)
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, len(order)))
    sums = {n: np.add.reduceat(c[order], starts) for n, c in cols.items()}
    out = {}
    for j, s in enumerate(starts):
        key = tuple(k[s].item() for k in ks)
        out[key] = {"n": int(counts[j])} | {n: sums[n][j] for n in cols}
    return out


def _check_groups(
    rows: list, ngroup: int, want: dict, names: list[str], what: str, count: bool = True
) -> int:
    """Compare a query's rows (group keys, count unless ``count`` is false, sums) with numpy's
    groups; return the groups checked."""
    if len(rows) != len(want):
        raise AssertionError(f"{what}: {len(rows)} groups, numpy {len(want)}")
    for row in rows:
        key = tuple(float(x) if isinstance(x, float) else int(x) for x in row[:ngroup])
        w = want[key]
        if count and int(row[ngroup]) != w["n"]:
            raise AssertionError(f"{what} {key}: count {row[ngroup]} != {w['n']}")
        for n, got in zip(names, row[ngroup + int(count) :], strict=True):
            if isinstance(w[n], int):
                if int(got or 0) != w[n]:  # a sum over no row (all NULL) is NULL
                    raise AssertionError(f"{what} {key} {n}: {got} != {w[n]}")
            else:
                _close(float(got), float(w[n]), f"{what} {key} {n}")
    return len(rows)


def selftest(paths: dict[str, str]) -> int:
    """Every floor query's result against numpy's; OpenDP's calls. Returns the checks made."""
    cons = connections()
    checks = 0

    def run(tmpl: str, kind: str, con: str = "rel") -> list:
        return cons[con].execute(sql_of(tmpl, paths[kind])).fetchall()

    for kind in ("continuous", "tiers"):
        t = pq.read_table(paths[kind]).to_pydict()
        v, e, seg = (np.asarray(t[c]) for c in ("value", "eps", "seg"))
        yi = np.floor(v / 1000.0 * 1073741824 + 0.5).astype(np.int64)  # half away, v >= 0
        y = yi.astype(object)
        _close(run(SUM_VALUE, kind, "own")[0][0], float(np.sum(v)), "SUM(value)")
        want = _grouped([seg], {"v": v})
        checks += _check_groups(run(SUM_BY_SEG, kind, "own"), 1, want, ["v"], "GROUP BY seg", False)
        want = _grouped([seg], {"v": v, "e": e}) if kind == "continuous" else None
        if kind == "tiers":
            checks += _check_groups(
                run(TIERS_FLOAT, kind), 1, _grouped([e], {"v": v}), ["v"], "tiers float"
            )
            ys = {"y": y}
            checks += _check_groups(run(TIERS_EXACT, kind), 1, _grouped([e], ys), ["y"], "tiers")
            g = _grouped([seg, e], {"v": v})
            checks += _check_groups(run(G_TIERS_FLOAT, kind), 2, g, ["v"], "seg x tier float")
            g = _grouped([seg, e], ys)
            checks += _check_groups(run(G_TIERS_EXACT, kind), 2, g, ["y"], "seg x tier exact")
            continue
        assert want is not None
        checks += _check_groups(run(G_BOTH, kind), 1, want, ["v", "e"], "seg both", False)
        b = run(BOTH, kind)[0]
        _close(b[0], float(np.sum(v)), "both v")
        _close(b[1], float(np.sum(e)), "both e")
        k = np.floor(8 * np.log10(e)).astype(np.int64)
        q = np.floor(e * 4398046511104.0).astype(np.int64).astype(object)
        fl = {"v": v, "ev": e * v, "e": e, "ee": e * e}
        ex = {"y": y, "q": q, "qyh": (q >> 31) * y, "qyl": (q & 2147483647) * y, "qq": q * q}
        checks += _check_groups(run(HIST, kind), 1, _grouped([k], {}), [], "histogram")
        bins = _grouped([k], fl)
        checks += _check_groups(run(FLOAT_PASS, kind), 1, bins, list(fl), "float pass")
        checks += _check_groups(run(EXACT_PASS, kind), 1, _grouped([k], ex), list(ex), "exact")
        g = _grouped([seg, k], {})
        checks += _check_groups(run(G_HIST, kind), 2, g, [], "seg x bin histogram")
        g = _grouped([seg, k], fl)
        checks += _check_groups(run(G_FLOAT, kind), 2, g, list(fl), "seg x bin float")
        g = _grouped([seg, k], ex)
        checks += _check_groups(run(G_EXACT, kind), 2, g, list(ex), "seg x bin exact")
        below = e < TAU_NEAR
        kb = np.where(below, k, 100)
        qb = np.where(below, q, 0)
        qh, ql = qb >> 31, qb & 2147483647
        ex = {"y": y, "q": qb, "qy": qb * y, "hh": qh * qh, "hl": qh * ql, "ll": ql * ql}
        checks += _check_groups(run(EXACT_BELOW, kind), 1, _grouped([kb], ex), list(ex), "below")
        ks = np.where(below, k + 64 * np.floor(e * 2048.0).astype(np.int64), 100000)
        ex = {"y": y, "ql": ql, "qly": ql * y, "qll": ql * ql}
        checks += _check_groups(run(EXACT_SPLIT, kind), 1, _grouped([ks], ex), list(ex), "split")
        kn = run(KNOWN_TAU, kind)[0]
        _close(kn[0], float(np.sum(np.minimum(e, TAU_KNOWN) * v)), "known tau sum")
        _close(kn[1], float(np.sum(np.minimum(e, TAU_KNOWN))), "known tau weight")
        # what the float pass proves: the weighted sum at a bin edge from the bins' sums alone
        for j in sorted(bins)[1:-1:4]:
            tau = 10.0 ** (j[0] / 8)
            s = sum(
                float(w["ev"]) if key[0] < j[0] else tau * float(w["v"]) for key, w in bins.items()
            )
            _close(s, float(np.sum(np.minimum(e, tau) * v)), f"weighted sum at tau {tau:.3g}")
            checks += 1
        checks += 6
    od = OpenDPCalls()
    _close(float(od.meas.map(1.5)), 0.5, "OpenDP map of d_in 1.5 at scale 3", 1e-12)
    if not isinstance(od.meas(500.0), float) or len(od.vec(od.xs)) != 1000:
        raise AssertionError("OpenDP's Laplace did not return one float / 1,000 floats")
    return checks + 2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=None, help="rows (1e7; 1e5 with --selftest)")
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3, help="queries and OpenDP calls per round")
    ap.add_argument("--keep", default=None, help="keep (and reuse) the files in this folder")
    ap.add_argument("--selftest", action="store_true", help="check the queries, then exit")
    a = ap.parse_args()
    n = int(a.rows if a.rows is not None else (1e5 if a.selftest else 1e7))
    with tempfile.TemporaryDirectory() as tmp:
        d = a.keep or tmp
        os.makedirs(d, exist_ok=True)
        paths = _files(d, n, a.segments)
        if a.selftest:
            print(f"selftest ok: {selftest(paths):,} groups and sums checked, {n:,} rows")
            return
        load0, t0 = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        best = measure(paths, a.rounds, a.reps)
        counts = opendp_counts(paths)
        load1 = os.getloadavg()
    print(
        f"{t0}, commit {_commit()}, {n:,} rows, {a.segments:,} segments, best of {a.rounds} "
        f"interleaved rounds (queries and OpenDP calls {a.reps} times a round; CPU time of all "
        f"threads; wall), load average "
        f"{load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} -> {load1[0]:.2f} {load1[1]:.2f} "
        f"{load1[2]:.2f}, {os.cpu_count()} cores"
    )
    report(best, counts, a.segments)


if __name__ == "__main__":
    main()
