"""The ledger keeps its own secrets and refuses what it cannot honour (issue 32), through the
library's public calls (the page's side: tests/app/test_page_release_secrets.py).

Oracles: the candidate-file attack of the issue (tables that differ only in one user's value
must get byte-identical answers), the raw bytes of the ledger file searched for every unkeyed
hash of the data, hand-made ledgers with broken rows, exact fractions for budgets, and file
system facts (what exists after a refusal).
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import threading
from fractions import Fraction

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hdp_core.errors import BudgetExceeded, LedgerError, LedgerUnusable, ReleaseError
from hdp_release.cli import main as release_cli
from hdp_release.fingerprint import (
    fingerprint_frame,
    levels_identity_arrays,
)
from hdp_release.ledger.cli import main as list_ledger
from hdp_release.ledger.store import PrivacyLedger, dataset_identities, name_identity
from hdp_release.release import release_mean

LO, HI = 0.0, 200_000.0


def salaries(user0: float = 73412.0, n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    v = rng.uniform(20_000, 150_000, n).round()
    v[0] = user0
    return pd.DataFrame({"salary": v, "eps": rng.choice([0.5, 1.0, 2.0], n)})


def _release(df, led, **kw):
    return release_mean(df, value="salary", eps="eps", lo=LO, hi=HI, ledger=led, **kw)


# ------------------------------------------------------------------------------ no oracle
@pytest.mark.parametrize("spent", ["1", "1/2"])
@pytest.mark.slow
def test_the_candidate_file_attack_through_the_library_finds_nothing(tmp_path, spent):
    """Session A releases the salaries; session B tries candidates that differ only in user
    0's value. Every public answer (refusal text and fields, remaining budget, history,
    listing) is identical for every candidate, the true one included."""
    path = tmp_path / "l.duckdb"
    _release(salaries(), PrivacyLedger(path), spend=spent, dataset="payroll")
    b = PrivacyLedger(path)  # another session's object on the same server ledger
    key = b.secret_key()
    answers = []
    for guess in (73411.0, 73412.0, 73413.0):
        cand = salaries(guess)
        ids = dataset_identities(levels_identity_arrays(cand["eps"], key))
        seen = [str(b.remaining(ids)), [(h.release_id, h.spend) for h in b.history(ids)]]
        try:
            rel = _release(cand, b, spend="1/2")
            seen.append(("released", rel.budget_remaining))
        except BudgetExceeded as e:
            seen.append(("refused", str(e), e.identity, e.spent, e.remaining, e.requested))
        answers.append(seen)
    if spent == "1":
        assert answers[0] == answers[1] == answers[2]
        assert answers[0][2][0] == "refused"
        assert "lv1:" not in answers[0][2][1] and key.hex() not in answers[0][2][1]
    else:  # the first candidate's release spends the rest: the next two are refused alike
        assert answers[0][2] == ("released", 0.0)
        assert answers[1] == answers[2]


@pytest.mark.slow
def test_the_ledger_file_holds_no_unkeyed_data_derived_value(tmp_path, capsys):
    path = tmp_path / "l.duckdb"
    led = PrivacyLedger(path)
    df = salaries()
    _release(df, led, spend="1/4", dataset="payroll")
    release_cli(
        [
            _csv(df, tmp_path),
            "--value",
            "salary",
            "--eps",
            "eps",
            "--range",
            "0",
            "200000",
            "--ledger",
            str(path),
            "--spend",
            "1/4",
        ]
    )
    capsys.readouterr()
    PrivacyLedger(path).history()  # checkpointed on close: the file holds every row
    data = path.read_bytes() + (path.with_suffix(".duckdb.wal").read_bytes() if
                                path.with_suffix(".duckdb.wal").exists() else b"")  # fmt: skip
    unkeyed = [
        fingerprint_frame(df, "salary", "eps"),  # the old content fingerprint
        levels_identity_arrays(df["eps"], b"\0" * 32),  # the level profile under another key
    ]
    for u in unkeyed:
        assert u[4:].encode() not in data and u[4:12].encode() not in data
    keyed = levels_identity_arrays(df["eps"], led.secret_key())
    con = duckdb.connect(str(path), read_only=True)
    stored = {r[0] for r in con.execute("SELECT identity FROM datasets").fetchall()}
    con.close()
    assert stored == {keyed, name_identity("payroll")}
    # the listing shows a keyed identity by its first digits only, never the secret
    for fmt in ("text", "json"):
        assert list_ledger([str(path), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert keyed[:12] in out and keyed[12:] not in out and led.secret_key().hex() not in out


def _csv(df: pd.DataFrame, tmp_path: pathlib.Path) -> str:
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False)
    return str(p)


def test_names_are_scoped_per_user():
    a, b = name_identity("Payroll", scope="u1"), name_identity("payroll ", scope="u2")
    assert a != b and a != name_identity("payroll") and a == name_identity(" PAYROLL", "u1")
    for bad in ("", "a b", "x" * 65, "../"):
        with pytest.raises(ReleaseError):
            name_identity("x", scope=bad)


# ------------------------------------------------------------------------------ never empty
def test_vanish_inspect_release_is_refused(tmp_path, capsys):
    """The server's ledger file is moved away; the operator lists the path (both listing
    commands); the long-lived server object then refuses to release: nothing was created."""
    path = tmp_path / "l.duckdb"
    server = PrivacyLedger(path)
    _release(salaries(), server, spend=1)
    os.rename(path, tmp_path / "moved.duckdb")
    assert list_ledger([str(path)]) == 2
    assert release_cli(["--list-ledger", str(path)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not path.exists()
    with pytest.raises(LedgerUnusable) as info:
        _release(salaries(), server, spend=1)
    assert info.value.reason == "vanished" and not path.exists()
    # someone makes a fresh ledger at the path: the server still refuses it (another id)
    PrivacyLedger(path)
    with pytest.raises(LedgerUnusable) as info:
        server.remaining(name_identity("x"))
    assert info.value.reason == "replaced"
    # the moved file, put back, is the server's again
    os.replace(tmp_path / "moved.duckdb", path)
    assert server.remaining(dataset_identities(_lv(server), None)) == 0


def _lv(led: PrivacyLedger) -> str:
    return levels_identity_arrays(salaries()["eps"], led.secret_key())


def test_read_only_never_creates_and_never_charges(tmp_path):
    path = tmp_path / "l.duckdb"
    with pytest.raises(LedgerUnusable) as info:
        PrivacyLedger(path, read_only=True)
    assert info.value.reason == "missing" and not path.exists()
    PrivacyLedger(path)
    ro = PrivacyLedger(path, read_only=True)
    with pytest.raises(LedgerError):
        ro.charge([name_identity("x")], 1)
    assert ro.history() == [] and ro.remaining(name_identity("x")) == 1


# ------------------------------------------------------------------------------ refusals
def _nan_parquet(path: pathlib.Path, column: str = "salary", x: float = np.nan) -> str:
    df = salaries()
    cols = {c: df[c].to_numpy().copy() for c in ("salary", "eps")}
    cols[column][5] = x  # a true NaN (pyarrow keeps it; pandas would write a null)
    pq.write_table(pa.table({c: pa.array(v) for c, v in cols.items()}), path)
    return str(path)


@pytest.mark.parametrize(
    "column, x", [("salary", np.nan), ("eps", np.nan), ("salary", np.inf), ("salary", -np.inf)]
)
def test_a_non_finite_float_parquet_cell_is_refused_before_any_charge(tmp_path, column, x):
    """Parquet column statistics omit NaN: the check must not be answered from them."""
    led = PrivacyLedger(tmp_path / "l.duckdb")
    with pytest.raises(ReleaseError) as info:
        _release(_nan_parquet(tmp_path / "nan.parquet", column, x), led)
    assert info.value.column == column and info.value.row == 6
    assert led.history() == []


@pytest.mark.slow
def test_a_nan_in_a_float_parquet_column_is_refused_on_spark(tmp_path, spark):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    with pytest.raises(ReleaseError) as info:
        _release(_nan_parquet(tmp_path / "nan.parquet"), led, engine="spark")
    assert info.value.column == "salary"
    assert led.history() == []


@pytest.mark.parametrize("spend", [1e-300, "1e-4000", Fraction(1, 10**40), 1e-13, 1e-7])
def test_a_spend_too_small_for_the_levels_is_refused_before_charging(tmp_path, spend):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    with pytest.raises(ReleaseError) as info:
        _release(salaries(), led, spend=spend)
    assert info.value.reason == "spend_too_small" and led.history() == []
    with pytest.raises(ReleaseError, match="spend is too small"):  # without a ledger too
        release_mean(salaries(), value="salary", eps="eps", lo=LO, hi=HI, spend=spend)
    if spend != 1e-7:  # below 1e-6 / 1e6: refused before the table is read
        assert "spend at least 1.01e-12" in str(info.value)
        return
    # the least spend it names (above 1e-6 / 0.5: the factor is a hair below the spend) works
    assert "spend at least 2.01e-06" in str(info.value)
    assert _release(salaries(), led, spend="2.01e-6").spend == 2.01e-6


@pytest.mark.parametrize(
    "sql, why",
    [
        ("UPDATE releases SET spend = '-5'", "spend outside"),
        ("UPDATE releases SET spend = '3/2'", "spend outside"),
        ("UPDATE releases SET spend = '0'", "spend outside"),
        ("UPDATE releases SET status = 'bogus'", "unknown status"),
        ("UPDATE totals SET spent = '7/5'", "spent more"),
        ("UPDATE totals SET releases = 5", "totals disagree"),
        ("DELETE FROM totals", "totals disagree"),
    ],
)
def test_a_hand_made_ledger_with_a_broken_row_is_refused(tmp_path, sql, why):
    path = str(tmp_path / "l.duckdb")
    PrivacyLedger(path).charge([name_identity("x")], "1/2")
    con = duckdb.connect(path)
    con.execute(sql)
    con.close()
    for ro in (False, True):
        with pytest.raises(LedgerUnusable, match=why) as info:
            PrivacyLedger(path, read_only=ro)
        assert info.value.reason == "corrupt"


def test_non_regular_paths_are_refused_before_anything_is_created(tmp_path):
    target = tmp_path / "elsewhere" / "made.duckdb"
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "dangling.duckdb"
    os.symlink(target, link)
    for p in (link, pathlib.Path("/dev/null")):
        with pytest.raises(LedgerUnusable) as info:
            PrivacyLedger(p)
        assert info.value.reason == "not-a-file"
    assert not target.exists() and not os.path.exists("/dev/null.lock")
    assert sorted(os.listdir(tmp_path)) == ["dangling.duckdb", "elsewhere"]


@pytest.mark.slow
def test_two_paths_to_one_ledger_under_threads_raise_only_ledger_errors(tmp_path):
    real = tmp_path / "d" / "l.duckdb"
    real.parent.mkdir()
    PrivacyLedger(real)
    os.symlink(real, tmp_path / "link.duckdb")
    paths = [real, tmp_path / "link.duckdb", tmp_path / "d" / ".." / "d" / "l.duckdb"]
    ledgers = [PrivacyLedger(p) for p in paths]
    errors: list[BaseException] = []
    ok: list[int] = []
    go = threading.Event()

    def work(led: PrivacyLedger) -> None:
        go.wait()
        for _ in range(4):
            try:
                led.charge([name_identity("shared")], "1/10")
                ok.append(1)
            except BudgetExceeded:
                pass
            except BaseException as exc:  # anything else must be a LedgerError
                errors.append(exc)

    threads = [threading.Thread(target=work, args=(ledgers[i % 3],)) for i in range(6)]
    for t in threads:
        t.start()
    go.set()
    for t in threads:
        t.join(timeout=120)
    assert all(isinstance(e, LedgerError) for e in errors), [type(e) for e in errors]
    assert len(ok) == 10  # exactly the budget (24 tries of 1/10)
    assert ledgers[1].remaining(name_identity("shared")) == 0


# ------------------------------------------------------------------------------ paging
def test_history_pages_newest_last_and_counts(tmp_path):
    led = PrivacyLedger(tmp_path / "l.duckdb")
    for i in range(7):
        led.charge([name_identity("a" if i % 2 else "b")], "1/10")
    page = led.history(limit=3)
    assert [h.release_id for h in page] == [5, 6, 7]
    assert [h.release_id for h in led.history(limit=3, before=page[0].release_id)] == [2, 3, 4]
    assert [h.release_id for h in led.history(name_identity("a"), limit=2)] == [4, 6]
    assert led.release_count() == 7 and led.release_count(name_identity("a")) == 3
    with contextlib.suppress(ReleaseError), pytest.raises(ReleaseError):
        led.history(limit=0)


def test_a_ledger_without_running_totals_gets_them_on_its_first_write_open(tmp_path):
    """A ledger written before issue 32 (no totals table): a listing refuses it until a
    write-open builds the totals from its charges (exactly)."""
    path = str(tmp_path / "l.duckdb")
    led = PrivacyLedger(path)
    led.charge([name_identity("a")], "1/3")
    led.charge([name_identity("a"), name_identity("b")], "1/6")
    con = duckdb.connect(path)
    con.execute("DROP TABLE totals")
    con.execute("DELETE FROM meta WHERE key = 'verified'")
    con.close()
    with pytest.raises(LedgerUnusable) as info:
        PrivacyLedger(path, read_only=True)
    assert info.value.reason == "upgrade"
    again = PrivacyLedger(path)
    assert again.remaining(name_identity("a")) == Fraction(1, 2)
    assert again.remaining(name_identity("b")) == Fraction(5, 6)
    assert PrivacyLedger(path, read_only=True).release_count(name_identity("a")) == 2
