"""hdp_release.ledger.files: whether a ledger file is busy is told by probing its lock, never by
an error's text: a POSIX lock held by another process (as DuckDB holds its database file) makes
the file busy; a file nobody holds, or that does not exist, is not; an attach error with no lock
held is the file's own (corrupt), reported at once whatever the deadline."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import duckdb
import pytest

from hdp_release.ledger import files


def _holder(path: str, ready: str, how: str) -> subprocess.Popen:
    code = (
        "import fcntl, os, sys, time; "
        f"fd = os.open({path!r}, os.O_RDWR if {how!r} == 'EX' else os.O_RDONLY); "
        f"fcntl.lockf(fd, fcntl.LOCK_{how}); open({ready!r}, 'w').close(); time.sleep(30)"
    )
    return subprocess.Popen([sys.executable, "-c", code])


@pytest.mark.parametrize("how", ["EX", "SH"])
def test_a_lock_held_by_another_process_is_seen_and_a_free_file_is_not(tmp_path, how):
    path, ready = str(tmp_path / "f.duckdb"), str(tmp_path / "ready")
    with open(path, "wb") as f:
        f.write(b"x" * 64)
    assert not files.held_by_another_process(path)
    assert not files.held_by_another_process(str(tmp_path / "absent.duckdb"))
    p = _holder(path, ready, how)
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(ready) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert files.held_by_another_process(path)
        assert files.held_by_another_process(path)  # the probe took nothing from the holder
    finally:
        p.kill()
        p.wait()
    assert not files.held_by_another_process(path)


def test_an_attach_error_with_no_lock_held_is_corrupt_at_once(tmp_path, monkeypatch):
    """An IO error while nobody holds the file: tried again at once, then corrupt, even with
    the deadline already passed (never reported as busy)."""
    calls: list[str] = []

    def failing(path: str, write: bool):
        calls.append(path)
        raise duckdb.IOException("any text at all")

    monkeypatch.setattr(files, "attach", failing)

    class Corrupt(Exception):
        pass

    def busy() -> Exception:
        return AssertionError("reported busy")

    with pytest.raises(Corrupt):
        files.attach_when_free(str(tmp_path / "x"), True, time.monotonic() - 1, busy, Corrupt)
    assert len(calls) == 2


def test_an_attach_error_while_another_process_holds_the_lock_waits_then_is_busy(
    tmp_path, monkeypatch
):
    calls: list[str] = []

    def failing(path: str, write: bool):
        calls.append(path)
        raise duckdb.IOException("no word of the text is read")

    monkeypatch.setattr(files, "attach", failing)
    monkeypatch.setattr(files, "held_by_another_process", lambda path: True)

    class Busy(Exception):
        pass

    with pytest.raises(Busy):
        files.attach_when_free(str(tmp_path / "x"), True, time.monotonic() + 0.2, Busy, ValueError)
    assert len(calls) >= 2  # it waited and tried again before the deadline


def test_two_unexplained_errors_apart_while_another_process_comes_and_goes_are_busy(
    tmp_path, monkeypatch
):
    """A holder outside hdp that keeps opening and closing the file: the probe sometimes
    finds it gone (it let go just after the attach failed). Only two unexplained errors
    running (the docstring's "twice running") mean corrupt; unexplained ones with a held lock
    between them are a busy file, reported busy at the deadline, never corrupt."""
    probes = iter([False, True, False, True, False, True] + [True] * 10_000)

    def failing(path: str, write: bool):
        raise duckdb.IOException("no word of the text is read")

    monkeypatch.setattr(files, "attach", failing)
    monkeypatch.setattr(files, "held_by_another_process", lambda path: next(probes))

    class Busy(Exception):
        pass

    class Corrupt(Exception):
        pass

    with pytest.raises(Busy):
        files.attach_when_free(str(tmp_path / "x"), True, time.monotonic() + 0.2, Busy, Corrupt)


def test_a_failure_after_the_per_person_commit_says_the_charge_stands(tmp_path):
    """The per-person charge commits, then reads the granted levels back: if that read fails
    the error must not say "nothing was charged" (the spends stand, never undone); it says the
    release was charged and nothing released, and the ledger holds the charge."""
    from fractions import Fraction

    import pandas as pd

    from hdp_core.errors import LedgerError, ReleaseError
    from hdp_release.ledger.people import person_spent_units
    from hdp_release.ledger.person_charge import run_charge
    from hdp_release.ledger.store import PrivacyLedger

    led = PrivacyLedger(tmp_path / "l.duckdb")
    people = pd.DataFrame({"x": [11, 22, 33], "e": [1.0, 1.0, 0.5]})

    def before(con) -> None:
        con.register("hdp_t", people)

    def after(con) -> None:
        raise duckdb.IOException("the read-back failed")

    inp = "(SELECT CAST(x AS UHUGEINT) AS h, e, CAST(0 AS BIGINT) AS g FROM hdp_t)"
    with pytest.raises(ReleaseError) as info:
        run_charge(led, inp, Fraction(1, 2), "population", None, before=before, after=after)
    assert not isinstance(info.value, LedgerError)  # LedgerError means nothing was charged
    text = str(info.value)
    assert "charged this release" in text and "nothing was released" in text
    assert "nothing was charged" not in text and "read-back failed" not in text
    spent = person_spent_units(led)
    assert len(spent) == 3 and all(v > 0 for v in spent.values())


class _NoDetach:
    """A ledger cursor whose DETACH fails (as DuckDB may refuse one); anything else is the
    cursor's own."""

    def __init__(self, cur) -> None:
        self._cur = cur

    def execute(self, sql: str, *args):
        if sql.startswith("DETACH"):
            raise duckdb.IOException("refused")
        return self._cur.execute(sql, *args)

    def __getattr__(self, name: str):
        return getattr(self._cur, name)


def test_a_refused_detach_never_closes_the_database_under_another_operation(tmp_path):
    """One operation's file cannot be detached while another thread's operation runs on the
    same in-memory database: that one goes on; later operations use a new database; the file
    stays attached (an attach of it elsewhere in this process waits: ResourceInUse) until the
    other operation ends, and then it is free."""
    paths = [str(tmp_path / f"{k}.duckdb") for k in "ab"]
    for p in paths:
        duckdb.connect(p).execute("CREATE TABLE meta (x INTEGER)").close()
    cur_a, name_a = files.attach(paths[0], True)  # another thread's operation, under way
    cur_b, name_b = files.attach(paths[1], True)
    files.detach(_NoDetach(cur_b), name_b)
    assert files.open_operations() == 1  # b's ended (its file not detached); a's goes on
    cur_a.execute("INSERT INTO meta VALUES (1)")  # the other operation goes on
    with pytest.raises(duckdb.ResourceInUseException):
        files.attach(paths[1], True)  # still attached to the retired database
    files.detach(cur_a, name_a)  # the last operation on it: the retired database is closed
    cur, name = files.attach(paths[1], True)  # free again
    files.detach(cur, name)
    cur, name = files.attach(paths[0], True)
    assert cur.execute("SELECT count(*) FROM meta").fetchall() == [(1,)]
    files.detach(cur, name)
    assert files.open_operations() == 0
