"""Benchmark: the privacy ledger at 10^5 releases (issue 32). Goals: open, check
(``remaining``), charge, one page of history and the listing command each under 0.2 s; four
processes calling ``remaining`` at once never LedgerBusy.

Builds a ledger of N releases (10^5 by default; --releases) in the ledger's own schema with
one bulk insert per table (each release charged to its own keyed level profile, as edited
uploads are, and to one of N / 100 names, spending 1/100 each, so every name is spent; a
receipt and summary of realistic size), checks that PrivacyLedger accepts it, then prints
best-of-three times side by side, and the slowest of four processes started together
(each: open, then ``remaining``).

    python benchmarks/bench_ledger_scale.py [--releases N]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout

import duckdb

from hdp_release.ledger.cli import main as list_ledger
from hdp_release.ledger.store import PrivacyLedger, name_identity

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOAL = 0.2


def _best(f, k: int = 3) -> float:
    out = []
    for _ in range(k):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return min(out)


def build(path: str, n: int) -> None:
    """A ledger of ``n`` releases, written in bulk (the schema PrivacyLedger made)."""
    PrivacyLedger(path)
    names = max(n // 100, 1)
    tiers = [{"eps": e, "users": 1000, "run_eps": e, "privacy_loss": e} for e in (0.5, 1, 2)]
    summary = json.dumps({"estimate": 1.0, "tiers": tiers, "notes": ["x" * 200]})
    con = duckdb.connect(path)
    con.execute("BEGIN TRANSACTION")
    con.execute(
        f"""INSERT INTO releases SELECT i, TIMESTAMP '2026-01-01' + INTERVAL (i) SECOND,
            '1/100', 'released', TIMESTAMP '2026-01-01' + INTERVAL (i) SECOND, 'duckdb',
            'population', 50.0, 40.0, 60.0, ?, ?, NULL FROM range(1, {n + 1}) t(i)""",
        [json.dumps(tiers), summary],
    )
    lv = "'lv1:' || substr(md5(CAST(i AS VARCHAR)), 1, 32)"
    nm = f"'name:dataset ' || CAST(i % {names} AS VARCHAR)"
    con.execute(
        f"""INSERT INTO charges SELECT i, {lv} FROM range(1, {n + 1}) t(i)
            UNION ALL SELECT i, {nm} FROM range(1, {n + 1}) t(i)"""
    )
    con.execute(
        """INSERT INTO datasets SELECT DISTINCT identity,
            CASE WHEN identity LIKE 'name:%' THEN 'name' ELSE 'levels' END,
            TIMESTAMP '2026-01-01' FROM charges"""
    )
    con.execute(
        """INSERT INTO totals SELECT identity, CASE WHEN count(*) = 100 THEN '1'
           ELSE CAST(count(*) AS VARCHAR) || '/100' END, count(*)
           FROM charges GROUP BY identity"""
    )
    con.execute(f"UPDATE meta SET value = '{n}' WHERE key = 'releases'")
    con.execute("COMMIT")
    con.execute("CHECKPOINT")
    con.close()


CHILD = """
import sys, time
t0 = time.perf_counter()
from hdp_release.ledger.store import PrivacyLedger
from hdp_core.errors import LedgerBusy
try:
    led = PrivacyLedger(sys.argv[1])
    led.remaining(sys.argv[2])
    print("ok", time.perf_counter() - t0)
except LedgerBusy:
    print("busy", time.perf_counter() - t0)
"""


def race(path: str, ident: str, k: int = 4) -> list[tuple[str, float]]:
    """``k`` processes started together, each opening the ledger and calling remaining."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, path, ident], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(k)
    ]
    out = []
    for p in procs:
        word, secs = p.communicate(timeout=300)[0].split()
        out.append((word, float(secs)))
    return out


def measure(path: str) -> list[tuple[str, float]]:
    """Best-of-three times of each operation on the ledger at ``path`` (built by build)."""
    led = PrivacyLedger(path)
    name = name_identity("dataset 7")
    lv = "lv1:" + hashlib.md5(b"7").hexdigest()[:32]
    fresh = iter(range(10**6))

    def charge() -> None:
        led.charge([f"lv1:{next(fresh):032x}", name_identity("new")], "1/1000")

    def listing() -> None:
        with redirect_stdout(io.StringIO()):
            assert list_ledger([path]) == 0

    return [
        ("open (verify)", _best(lambda: PrivacyLedger(path))),
        ("check (remaining)", _best(lambda: led.remaining([lv, name]))),
        ("charge", _best(charge)),
        ("history page (50 newest)", _best(lambda: led.history(limit=50))),
        ("history page of a name", _best(lambda: led.history(name, limit=50))),
        ("release count", _best(lambda: led.release_count())),
        ("listing command (50 newest)", _best(listing)),
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--releases", type=int, default=100_000)
    n = ap.parse_args().releases
    with tempfile.TemporaryDirectory() as d:
        path, small = os.path.join(d, "ledger.duckdb"), os.path.join(d, "small.duckdb")
        t = time.perf_counter()
        build(path, n)
        t_build = time.perf_counter() - t
        build(small, 100)
        led = PrivacyLedger(path)
        assert led.release_count() == n and led.remaining(name_identity("dataset 7")) == 0
        big, base = measure(path), measure(small)  # side by side, in one run
        size = os.path.getsize(path) / 2**20
        print(f"releases {n:,}   ledger file {size:.1f} MiB   built in {t_build:.1f} s   "
              f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
        print(f"{'':30s} {n:>9,} {'100':>9s}   ratio   goal {GOAL} s at {n:,}")
        for (label, secs), (_, ref) in zip(big, base, strict=True):
            verdict = "ok" if secs < GOAL else "OVER"
            print(f"{label:30s} {secs:8.4f}s {ref:8.4f}s {secs / ref:6.2f}x   {verdict}")
        got = race(path, name_identity("dataset 7"))
        busy = sum(w == "busy" for w, _ in got)
        slowest = max(s for _, s in got)
        print(
            f"4 processes at once (start, open, remaining): {busy} LedgerBusy; slowest "
            f"{slowest:.2f} s (Python start and imports included)"
        )


if __name__ == "__main__":
    main()
