"""hdp_release.ledger and hdp_release.fingerprint: the privacy budget that outlives the session.

Oracles: exact rational arithmetic (fractions.Fraction) for spends and run levels; a scalar
pure-Python encoding of each double (struct bits, not the code's log2 or frexp) and a plain
integer re-implementation of the mix for the fingerprint; counts of successes in races.
"""

from __future__ import annotations

import fcntl
import math
import os
import pathlib
import struct
import subprocess
import sys
import textwrap
import threading
import time
from fractions import Fraction

import duckdb
import numpy as np
import pandas as pd
import pytest

import hdp_release
from hdp_core.errors import BudgetExceeded, LedgerBusy, LedgerError, LedgerUnusable, ReleaseError
from hdp_release.fingerprint import (
    fingerprint_arrays,
    fingerprint_duckdb,
    fingerprint_frame,
    fingerprint_from_sums,
    fingerprint_sql,
    levels_identity_arrays,
)
from hdp_release.ledger.store import (
    DEFAULT_PATH,
    ENV_VAR,
    PrivacyLedger,
    as_spend,
    dataset_identities,
    default_ledger_path,
    name_identity,
    spend_factor,
    spend_levels,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FP_A = "lv1:" + "a" * 32
FP_B = "lv1:" + "b" * 32


@pytest.fixture
def ledger(tmp_path):
    return PrivacyLedger(tmp_path / "ledger.duckdb")


# ------------------------------------------------------------------------------ spends
def test_ten_tenths_spend_exactly_the_budget(ledger):
    for k in range(10):
        t = ledger.charge([FP_A], 0.1)
        assert t.remaining == 1 - Fraction(k + 1, 10)
    assert ledger.remaining(FP_A) == 0
    with pytest.raises(BudgetExceeded) as info:
        ledger.charge([FP_A], 1e-9)
    e = info.value
    assert (e.identity, e.spent, e.remaining, e.requested) == (
        FP_A,
        Fraction(1),
        Fraction(0),
        Fraction(1, 10**9),
    )
    assert len(ledger.history(FP_A)) == 10  # the refusal charged nothing


def test_thirds_and_a_refused_overspend(ledger):
    for _ in range(3):
        ledger.charge(FP_A, "1/3")
    assert ledger.remaining(FP_A) == 0
    ledger.charge(FP_B, 0.1 + 0.2)  # the float 0.30000000000000004, exactly
    with pytest.raises(BudgetExceeded) as info:
        ledger.charge(FP_B, 0.7)
    assert info.value.remaining == Fraction(7, 10) - Fraction(4, 10**17)
    ledger.charge(FP_B, info.value.remaining)  # exactly what remains is allowed
    assert ledger.remaining(FP_B) == 0


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, math.nan, math.inf, "abc", True, None, "1/0"])
def test_a_spend_outside_0_1_is_refused(ledger, bad):
    with pytest.raises(ReleaseError, match="spend"):
        ledger.charge([FP_A], bad)
    assert ledger.history() == []


def test_spend_levels_never_pass_spend_times_eps():
    rng = np.random.default_rng(3)
    eps = np.concatenate(
        [10 ** rng.uniform(-6, 6, 4000), [1e-6, 0.1, 1 / 3, 1.0, 2.0, 1e6, 0.7, 3.0]]
    )
    spends = [0.1, 0.3, 0.7, "1/3", "2/3", 0.9, 0.999, 1e-6, 0.123456789, 0.75, 0.5, 1]
    for s in spends:
        exact = as_spend(s)
        lv = spend_levels(eps, s)
        for e, x in zip(eps, lv, strict=True):
            assert Fraction(float(x)) <= Fraction(float(e)) * exact
            assert float(x) >= float(e) * float(exact) * (1 - 1e-15)  # and barely below
    assert spend_factor(1) == 1.0 and spend_factor(0.5) == 0.5
    assert as_spend(np.float64(0.1)) == as_spend("0.1") == as_spend(0.1) == Fraction(1, 10)
    lv = spend_levels([0.0, math.inf, 0.3], 1)
    assert lv[0] == 0 and math.isinf(lv[1]) and lv[2] == 0.3  # spend 1: today's release


# ------------------------------------------------------------------------------ identities
def test_name_identities_are_normalised():
    assert name_identity("  Sales 2026 ") == name_identity("sales 2026") == "name:sales 2026"
    assert dataset_identities(FP_A, "X") == (FP_A, "name:x")
    for bad in ["", "   ", None, 3]:
        with pytest.raises(ReleaseError):
            name_identity(bad)
    for bad in ["fp1:short", "a" * 36, "", "name:"]:
        with pytest.raises(ReleaseError):
            dataset_identities(bad)


def test_exhausted_when_any_identity_is(ledger):
    ledger.charge(dataset_identities(FP_A, "sales"), 1)
    # the same content under a new name, and a new content under the same name: refused
    with pytest.raises(BudgetExceeded) as a:
        ledger.charge(dataset_identities(FP_A, "renamed"), 0.01)
    assert a.value.identity == FP_A
    with pytest.raises(BudgetExceeded) as b:
        ledger.charge(dataset_identities(FP_B, "Sales "), 0.01)
    assert b.value.identity == "name:sales"
    assert ledger.remaining([FP_B]) == 1 and ledger.remaining([FP_B, "name:sales"]) == 0
    ledger.charge(dataset_identities(FP_B, "other"), 0.5)
    [h] = ledger.history("name:other")
    assert h.identities == (FP_B, "name:other") and h.spend == Fraction(1, 2)


def test_a_new_ledger_object_sees_the_spend(tmp_path):
    p = tmp_path / "l.duckdb"
    PrivacyLedger(p).charge([FP_A], 0.75)
    again = PrivacyLedger(str(p))  # a reload, a new session
    assert again.remaining(FP_A) == Fraction(1, 4)
    with pytest.raises(BudgetExceeded):
        again.charge([FP_A], 0.5)


def test_default_path_from_env_and_home(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env.duckdb"))
    assert default_ledger_path() == str(tmp_path / "env.duckdb")
    assert PrivacyLedger().path == str(tmp_path / "env.duckdb")
    monkeypatch.delenv(ENV_VAR)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    os.makedirs(tmp_path / "home")
    want = str(tmp_path / "home" / DEFAULT_PATH[2:])
    assert default_ledger_path() == want
    assert PrivacyLedger().path == want and os.path.isfile(want)  # its folder is made


# ------------------------------------------------------------------------------ records
def _small_release():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"v": rng.uniform(0, 100, 300), "e": rng.choice([0.5, 1.0, 2.0], 300)})
    return df, hdp_release.release_mean(df, value="v", eps="e", lo=0, hi=100)


def test_the_receipt_stored_equals_the_one_returned(ledger):
    df, rel = _small_release()
    fp = levels_identity_arrays(df["e"], ledger.secret_key())
    t = ledger.charge(dataset_identities(fp, "survey"), 1)
    ledger.record(t, rel, target="v")
    [h] = ledger.history(fp)
    assert h.status == "released" and h.engine == "duckdb" and h.target == "v"
    assert h.estimate == rel.estimate and h.ci95 == rel.ci95
    assert h.receipt == rel.to_dict()["tiers"]
    assert h.summary == rel.to_dict()
    with pytest.raises(LedgerError, match="already recorded"):
        ledger.record(t, rel)


def test_a_failed_release_keeps_its_charge(ledger):
    t = ledger.charge([FP_A], 0.6)
    ledger.record_failure(t, ReleaseError("value column 'v', row 3: 'secret' is not a number"))
    [h] = ledger.history()
    assert h.status == "failed" and h.failure == "ReleaseError"  # the type, never the message
    assert ledger.remaining(FP_A) == Fraction(2, 5)
    ledger.charge([FP_A], 0.4)  # an unrecorded charge also stands
    assert ledger.remaining(FP_A) == 0 and ledger.history()[-1].status == "charged"


def test_history_filters_by_identity(ledger):
    ledger.charge([FP_A], 0.1)
    ledger.charge([FP_B], 0.2)
    ledger.charge([FP_A, "name:x"], 0.3)
    assert [h.spend for h in ledger.history(FP_A)] == [Fraction(1, 10), Fraction(3, 10)]
    assert [h.release_id for h in ledger.history()] == [1, 2, 3]
    assert ledger.history("name:nobody") == []


# ------------------------------------------------------------------------------ corrupt
def _used_ledger(path):
    led = PrivacyLedger(path)
    for _ in range(40):
        led.charge([FP_A], "1/50")
    return led


def _refuses_everything(path, reason=None):
    with pytest.raises(LedgerUnusable) as info:
        PrivacyLedger(path)
    if reason:
        assert info.value.reason == reason
    assert "nothing is released" in str(info.value)
    return info.value


@pytest.mark.slow
def test_every_truncation_refuses_or_keeps_every_charge(tmp_path):
    p = str(tmp_path / "l.duckdb")
    _used_ledger(p)
    data = pathlib.Path(p).read_bytes()
    refused = 0
    n = len(data)
    for cut in sorted({0, 1, 100, 4096, 8192, 12288, n // 4, n // 2, 3 * n // 4, n - 4096, n - 1}):
        q = str(tmp_path / f"cut{cut}.duckdb")
        with open(q, "wb") as f:
            f.write(data[:cut])
        try:
            led = PrivacyLedger(q)
        except LedgerUnusable:
            refused += 1
            continue
        # DuckDB opened it: then nothing may be lost (the cut only removed free blocks)
        assert led.remaining(FP_A) == Fraction(1, 5) and len(led.history()) == 40
    assert refused >= 3


@pytest.mark.slow
def test_a_corrupt_or_foreign_file_refuses_every_operation(tmp_path):
    p = tmp_path / "l.duckdb"
    led = _used_ledger(p)
    with open(p, "r+b") as f:  # garbage over the header
        f.write(os.urandom(8192))
    for op in (lambda: led.charge([FP_B], 0.1), lambda: led.remaining(FP_A), led.history):
        with pytest.raises(LedgerUnusable):
            op()
    assert os.path.getsize(p) > 8192  # never replaced


def test_refusals(tmp_path):
    garbage = tmp_path / "garbage.duckdb"
    garbage.write_bytes(os.urandom(50_000))
    _refuses_everything(garbage, "corrupt")
    empty = tmp_path / "empty.duckdb"
    empty.write_bytes(b"")
    _refuses_everything(empty, "corrupt")
    folder = tmp_path / "folder.duckdb"
    folder.mkdir()
    _refuses_everything(folder, "directory")
    foreign = tmp_path / "foreign.duckdb"
    duckdb.connect(str(foreign)).execute("CREATE TABLE t (x INT)").close()
    _refuses_everything(foreign, "not-a-ledger")
    loop = tmp_path / "loop.duckdb"
    os.symlink(loop, loop)  # unreadable, even for root
    _refuses_everything(loop)
    _refuses_everything(tmp_path / "missing" / "l.duckdb", "no-parent")
    (tmp_path / "afile").write_text("x")
    _refuses_everything(tmp_path / "afile" / "l.duckdb", "no-parent")
    orphan = tmp_path / "orphan.duckdb"
    (tmp_path / "orphan.duckdb.wal").write_bytes(b"x")
    _refuses_everything(orphan, "orphan-wal")
    assert not orphan.exists()


def test_a_ledger_that_disappears_is_not_restarted_empty(tmp_path):
    p = tmp_path / "l.duckdb"
    led = PrivacyLedger(p)
    led.charge([FP_A], 1)
    os.remove(p)
    with pytest.raises(LedgerUnusable) as info:
        led.charge([FP_A], 1)
    assert info.value.reason == "vanished" and not p.exists()


@pytest.mark.slow
def test_tampered_tables_refuse(tmp_path):
    p = str(tmp_path / "l.duckdb")
    _used_ledger(p)
    con = duckdb.connect(p)
    con.execute("DELETE FROM releases WHERE release_id = 40")  # a charge silently lost
    con.close()
    _refuses_everything(p, "corrupt")
    con = duckdb.connect(p)
    con.execute("UPDATE meta SET value = '39' WHERE key = 'releases'")
    con.close()
    _refuses_everything(p, "corrupt")  # the orphan charge row still names release 40


# ------------------------------------------------------------------------------ concurrency
def test_threads_never_overspend(ledger):
    results: list[str] = []
    go = threading.Event()

    def work():
        go.wait()
        try:
            ledger.charge([FP_A], 0.25)
            results.append("ok")
        except BudgetExceeded:
            results.append("refused")

    threads = [threading.Thread(target=work) for _ in range(10)]
    for t in threads:
        t.start()
    go.set()
    for t in threads:
        t.join()
    assert sorted(results) == ["ok"] * 4 + ["refused"] * 6
    assert ledger.remaining(FP_A) == 0


def test_busy_ledger_raises_after_the_bounded_wait(tmp_path):
    p = str(tmp_path / "l.duckdb")
    led = PrivacyLedger(p, busy_timeout=0.4)
    fd = os.open(p + ".lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another process's operation in progress
    try:
        t0 = time.monotonic()
        with pytest.raises(LedgerBusy) as info:
            led.charge([FP_A], 0.5)
        assert 0.3 <= info.value.waited <= 3 and time.monotonic() - t0 < 5
    finally:
        os.close(fd)
    led.charge([FP_A], 0.5)  # free again
    assert [h.spend for h in led.history()] == [Fraction(1, 2)]


def _child(path: str, go: str, spend: str, out: str) -> subprocess.Popen:
    code = textwrap.dedent(
        f"""
        import os, sys, time
        from hdp_release.ledger.store import PrivacyLedger
        from hdp_core.errors import BudgetExceeded
        led = PrivacyLedger({path!r})
        while not os.path.exists({go!r}):
            time.sleep(0.001)
        try:
            t = led.charge([{FP_A!r}], {spend!r})
            led.record(t, {{"engine": "duckdb", "estimate": 1.0, "ci95": [0.0, 2.0],
                            "tiers": []}})
            r = "ok"
        except BudgetExceeded:
            r = "refused"
        open({out!r}, "w").write(r)
        """
    )
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", code], env=env, cwd=ROOT)


@pytest.mark.slow
def test_two_processes_share_one_ledger(tmp_path):
    p = str(tmp_path / "l.duckdb")
    PrivacyLedger(p)
    go = str(tmp_path / "go")
    pathlib.Path(go).touch()
    for i in range(2):
        _child(p, go, "0.6", str(tmp_path / f"r{i}")).wait(timeout=120)
    got = sorted((tmp_path / f"r{i}").read_text() for i in range(2))
    assert got == ["ok", "refused"]
    [h] = PrivacyLedger(p).history()
    assert h.status == "released" and h.spend == Fraction(3, 5)


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(4))
def test_a_race_of_four_processes_spends_at_most_the_budget(tmp_path, round_):
    """Budget for two releases of spend 0.5: exactly two of four racing processes succeed
    (repeated: a flaky race is a failing test)."""
    p = str(tmp_path / "l.duckdb")
    PrivacyLedger(p)
    go = str(tmp_path / "go")
    procs = [_child(p, go, "0.5", str(tmp_path / f"r{i}")) for i in range(4)]
    time.sleep(1.0 + round_ * 0.3)  # let them import and open the ledger
    pathlib.Path(go).touch()
    for pr in procs:
        assert pr.wait(timeout=180) == 0
    got = sorted((tmp_path / f"r{i}").read_text() for i in range(4))
    assert got == ["ok", "ok", "refused", "refused"]
    hist = PrivacyLedger(p).history()
    assert sum(h.spend for h in hist) == 1 and all(h.status == "released" for h in hist)


@pytest.mark.slow
def test_a_process_outside_hdp_holding_duckdb_makes_it_busy(tmp_path):
    p = str(tmp_path / "l.duckdb")
    led = PrivacyLedger(p, busy_timeout=0.5)
    ready = str(tmp_path / "ready")
    code = (
        f"import duckdb, time; c = duckdb.connect({p!r}); open({ready!r}, 'w').close(); "
        "time.sleep(30)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code])
    try:
        while not os.path.exists(ready):
            time.sleep(0.01)
        with pytest.raises(LedgerBusy):
            led.charge([FP_A], 0.5)
    finally:
        holder.kill()
        holder.wait()
    led.charge([FP_A], 0.5)
    assert led.remaining(FP_A) == Fraction(1, 2)


# ------------------------------------------------------------------------------ fingerprint
MASK = (1 << 31) - 1
LANES = ((0x1B873593, 0x7FEB352D, 0x045D9F3B), (0x5BD1E995, 0x2C1B3C6D, 0x297A2D39))


def _encode(x: float) -> tuple[int, int, int]:
    """(class, E, M) of a double from its IEEE bits (an oracle independent of log2/frexp)."""
    if math.isnan(x):
        return 0, 0, 0
    if x == 0:
        return 1, 0, 0
    if math.isinf(x):
        return (4 if x > 0 else 5), 0, 0
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    exp_field, frac = (bits >> 52) & 0x7FF, bits & ((1 << 52) - 1)
    if exp_field:
        m, e = frac | (1 << 52), exp_field - 1023
    else:  # subnormal: normalise
        m, e = frac, -1022
        while m < (1 << 52):
            m, e = m << 1, e - 1
    assert Fraction(m) * Fraction(2) ** (e - 52) == abs(Fraction(x))
    return (2 if x > 0 else 3), e, m


def _row_hash(v: float, e: float) -> tuple[int, int]:
    (kv, ev, mv), (ke, ee, me) = _encode(v), _encode(e)
    words = [
        ((kv * 4096 + ev + 1100) << 15) + (ke * 4096 + ee + 1100),
        mv >> 31,
        mv & MASK,
        me >> 31,
        me & MASK,
    ]
    out = []
    for seed, c1, c2 in LANES:
        h = seed
        for w in words:
            h ^= w
            h ^= h >> 16
            h = (h * c1) & MASK
        h ^= h >> 15
        h = (h * c2) & MASK
        h ^= h >> 16
        out.append(h)
    return out[0], out[1]


def _oracle(values, levels) -> str:
    rows = [(float(v), float(e)) for v, e in zip(values, levels, strict=True) if e != 0]
    hs = [_row_hash(v, e) for v, e in rows]
    return fingerprint_from_sums(len(rows), sum(h[0] for h in hs), sum(h[1] for h in hs))


TRICKY = [
    0.1, 1e-300, -0.0, 0.0, 1e308, math.inf, -math.inf, math.nan, 5e-324, 2.2250738585072014e-308,
    2.225073858507201e-308, 1.7976931348623157e308, 2.0**-1022, 2.0**1023, 1.0, 2.0, 0.5, 3.0,
    -1.5, 1 / 3, 7 * 2.0**-1074, 2.0**-1060, 123456789.0, -1e-5,
]  # fmt: skip


def _bits_sample(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64).view(np.float64)


def _tricky_pairs():
    x = np.array(TRICKY)
    return np.repeat(x, x.size), np.tile(x, x.size)  # every pair of tricky doubles


@pytest.mark.slow
def test_numpy_and_duckdb_match_the_bitwise_oracle():
    v, e = _tricky_pairs()
    for i in range(v.size):  # numpy row by row: every pair of tricky doubles
        want = _oracle(v[i : i + 1], e[i : i + 1])
        assert fingerprint_arrays(v[i : i + 1], e[i : i + 1]) == want, (v[i], e[i])
    con = duckdb.connect()
    for x in TRICKY:  # DuckDB: each tricky double as a value and as an eps
        df = pd.DataFrame({"v": [x, 1.0], "e": [1.0, x]})
        con.register("df", df)
        assert fingerprint_duckdb(con, "df", "v", "e") == _oracle(df.v, df.e), x
    df = pd.DataFrame({"v": v, "e": e})
    con.register("df", df)
    assert fingerprint_duckdb(con, "df", "v", "e") == _oracle(v, e)


def test_numpy_and_duckdb_agree_on_random_bit_patterns():
    v = _bits_sample(50_000, 1)
    e = _bits_sample(50_000, 2)
    df = pd.DataFrame({"v": v, "e": e})
    con = duckdb.connect()
    con.register("df", df)
    a = fingerprint_arrays(v, e)
    assert fingerprint_duckdb(con, "df", "v", "e") == a
    assert _oracle(v[:2000], e[:2000]) == fingerprint_arrays(v[:2000], e[:2000])


def test_zero_and_negative_zero_are_one_value_and_eps_0_rows_are_not_data():
    assert fingerprint_arrays([0.0, 1.0], [1.0, 2.0]) == fingerprint_arrays([-0.0, 1.0], [1, 2])
    base = fingerprint_arrays([1.0, 2.0], [0.5, math.inf])
    assert fingerprint_arrays([1.0, 2.0, 9.0], [0.5, math.inf, 0.0]) == base
    assert fingerprint_arrays([1.0, 2.0, 9.0], [0.5, math.inf, 1e-6]) != base
    assert fingerprint_arrays([], []) == fingerprint_arrays([5.0], [0.0])


def _write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return str(path)


def _duck_csv(path) -> str:
    con = duckdb.connect()
    rel = f"read_csv('{path}', header = true)"
    return fingerprint_duckdb(con, rel, "v", "e")


ROWS = [("12.5", "0.1"), ("0.30000000000000004", "inf"), ("-3", "2"), ("1e-300", "0.5")]
ROWS += [(f"{float(x)!r}", f"{1 + (i % 7) / 10!r}") for i, x in enumerate(np.linspace(0, 500, 200))]


def test_invariances_on_files(tmp_path):
    rng = np.random.default_rng(0)
    base = _write(tmp_path / "a.csv", ["v,e"] + [f"{v},{e}" for v, e in ROWS])
    want = _duck_csv(base)
    shuffled = [ROWS[i] for i in rng.permutation(len(ROWS))]
    same = {
        "rows shuffled": ["v,e"] + [f"{v},{e}" for v, e in shuffled],
        "columns swapped": ["e,v"] + [f"{e},{v}" for v, e in ROWS],
        "blank lines": ["v,e", ""] + [f"{v},{e}\n" for v, e in ROWS],
        "other column": ["id,v,e"] + [f"{i},{v},{e}" for i, (v, e) in enumerate(ROWS)],
        "eps = 0 rows added": ["v,e"] + [f"{v},{e}" for v, e in ROWS] + ["77,0", "5,0.0"],
        "spellings": ["v,e", "12.50,0.10", "0.30000000000000004,inf", "-3.0,2.0", "1E-300,5e-1"]
        + [f"{v},{e}" for v, e in ROWS[4:]],
    }
    for name, lines in same.items():
        other = _write(tmp_path / f"other name {len(name)}.csv", lines)
        assert _duck_csv(other) == want, name
        assert fingerprint_frame(pd.read_csv(other), "v", "e") == want, name
    renamed = tmp_path / "renamed.csv"
    os.rename(base, renamed)
    assert _duck_csv(renamed) == want
    v0 = float(ROWS[0][0])
    different = {
        "a value changed by one ulp": [(repr(math.nextafter(v0, 99)), ROWS[0][1]), *ROWS[1:]],
        "a value and its eps swapped": [(ROWS[0][1], ROWS[0][0]), *ROWS[1:]],
        "a row removed": ROWS[1:],
        "a row repeated": ROWS + ROWS[:1],
        "an eps changed": [(ROWS[0][0], "0.2"), *ROWS[1:]],
    }
    for name, rows in different.items():
        p = _write(tmp_path / "d.csv", ["v,e"] + [f"{v},{e}" for v, e in rows])
        assert _duck_csv(p) != want, name
        assert fingerprint_frame(pd.read_csv(p), "v", "e") != want, name


def test_tier_names_are_their_levels():
    menu = {"Strict": 0.1, "Open": "public"}
    named = pd.DataFrame({"v": [1.0, 2.0, 3.0], "e": ["strict ", "OPEN", "0.5"]})
    numeric = pd.DataFrame({"v": [1.0, 2.0, 3.0], "e": [0.1, math.inf, 0.5]})
    assert fingerprint_frame(named, "v", "e", tiers=menu) == fingerprint_frame(numeric, "v", "e")
    assert fingerprint_frame(named, "v", "e", tiers={"Strict": 0.2, "Open": "inf"}) != (
        fingerprint_frame(numeric, "v", "e")
    )


def test_fingerprint_sql_is_one_scan_query():
    q = fingerprint_sql("t", "v", "e")
    assert q.count("FROM t") == 1 and "GROUP BY" not in q and "ORDER BY" not in q


# ------------------------------------------------------------------------------ Spark


@pytest.mark.slow
def test_spark_agrees_with_duckdb_and_numpy(spark, tmp_path):
    from hdp_release.engines.spark_source import SparkSource
    from hdp_release.fingerprint import fingerprint_spark, levels_identity_spark

    v, e = _tricky_pairs()
    v = np.concatenate([v, _bits_sample(20_000, 3)])
    e = np.concatenate([e, _bits_sample(20_000, 4)])
    df = pd.DataFrame({"v": v, "e": e})
    want = fingerprint_arrays(v, e)
    assert fingerprint_spark(spark.createDataFrame(df), "v", "e") == want
    # the keyed level profile on the tricky pairs and 1,000 random bit patterns (a small
    # frame: three more Spark jobs): alone, and inside the ledger check's own aggregate (one
    # job with the cells' counts; none with an id column: the per-person ledger never uses it)
    key, part = bytes(range(7, 39)), df.iloc[: v.size - 19_000]
    pv, pe = part["v"].to_numpy(), part["e"].to_numpy()
    levels = levels_identity_arrays(pe, key)
    src = SparkSource(spark.createDataFrame(part))
    assert levels_identity_spark(src.df, "e", key) == levels
    n_bad = (int((np.isnan(pe) | (pe < 0)).sum()), int((~np.isfinite(pv)).sum()))
    assert src.precheck("v", "e", key)[:4] == (levels, pe.size, *n_bad)
    src.levels_identity = False
    assert src.precheck("v", "e", key)[:4] == ("", pe.size, *n_bad)
    # row by row on the tricky pairs, in one job: a fingerprint per row from its row hash
    p = _write(tmp_path / "a.csv", ["v,e"] + [f"{v},{e}" for v, e in ROWS])
    sdf = spark.read.option("header", True).option("inferSchema", True).csv(p)
    assert fingerprint_spark(sdf, "v", "e") == _duck_csv(p)
    swapped = _write(tmp_path / "b.csv", ["e,v", ""] + [f"{e},{v}" for v, e in ROWS[::-1]])
    sdf = spark.read.option("header", True).option("inferSchema", True).csv(swapped)
    assert fingerprint_spark(sdf, "v", "e") == _duck_csv(p)


def test_the_listing_command(tmp_path, capsys):
    import json

    from hdp_release.ledger.cli import main

    p = str(tmp_path / "l.duckdb")
    led = PrivacyLedger(p)
    t = led.charge(dataset_identities(FP_A, "Survey"), "1/4")
    led.record(t, {"engine": "duckdb", "estimate": 2.5, "ci95": [1.0, 4.0], "tiers": []})
    assert main([p, "--dataset", "survey", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["remaining"] == "3/4" and out["releases"][0]["estimate"] == 2.5
    assert main([p]) == 0 and "#1" in capsys.readouterr().out
    assert main([str(tmp_path / "no" / "l.duckdb")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_each_ledger_has_its_own_identity_and_secret_never_listed(tmp_path, capsys):
    """A new ledger gets a random identity and a 32-byte secret, kept across opens, different
    for another ledger, and never printed by the listing (text or JSON)."""
    from hdp_release.ledger.cli import main as list_ledger

    a = PrivacyLedger(tmp_path / "a.duckdb")
    b = PrivacyLedger(tmp_path / "b.duckdb")
    key, ident = a.secret_key(), a.ledger_id()
    assert len(key) == 32 and len(ident) == 32
    again = PrivacyLedger(tmp_path / "a.duckdb")
    assert again.secret_key() == key and again.ledger_id() == ident
    assert b.secret_key() != key and b.ledger_id() != ident
    for fmt in ("text", "json"):
        assert list_ledger([str(tmp_path / "a.duckdb"), "--format", fmt]) == 0
        out = capsys.readouterr()
        assert key.hex() not in out.out + out.err
