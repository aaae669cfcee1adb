"""The ledger file's plumbing: one lock per file (device and inode) for threads, a bounded
flock wait for processes, the file attached to the process's one in-memory DuckDB database
for one operation, and small conversions (hdp_release.ledger.store uses them)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import random
import secrets
import threading
import time
from typing import Any

__all__ = [
    "as_float",
    "attach",
    "attach_when_free",
    "detach",
    "file_key",
    "first_line",
    "flock_within",
    "held_by_another_process",
    "open_operations",
    "pause_step",
    "thread_lock",
]

_LOCKS: dict[Any, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()
_HOST: Any = None  # the process's in-memory DuckDB database that ledger files attach to
_HOST_OF: dict[str, Any] = {}  # attach name -> the database it was attached to
_USERS: dict[int, int] = {}  # id(database) -> operations using it now (attach to detach)


def thread_lock(key: Any) -> threading.Lock:
    """The process's one threading lock for a file key (:func:`file_key`)."""
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.Lock())


def file_key(path: str) -> Any:
    """What names one file whatever the path: (device, inode) when it exists, else its real
    path (before it is created)."""
    try:
        st = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    return (st.st_dev, st.st_ino)


def flock_within(fd: int, deadline: float, busy: Any) -> None:
    """Take an exclusive flock on ``fd``, waiting with backoff; raise busy() at deadline."""
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pause = pause_step(pause, deadline, busy)


def held_by_another_process(path: str) -> bool:
    """Whether another process holds a POSIX lock on the file at ``path`` that an exclusive
    lock would conflict with (DuckDB locks its database file so): told by the lock call's
    errno, never by an error's text. A probe that gets the lock releases it at once. False
    when the file cannot be opened. Only for a file this process has not attached: closing
    the probe releases every POSIX lock this process holds on the file."""
    try:
        fd, kind = os.open(path, os.O_RDWR), fcntl.LOCK_EX
    except OSError:
        try:  # a file we may only read: a shared probe meets another process's write lock
            fd, kind = os.open(path, os.O_RDONLY), fcntl.LOCK_SH
        except OSError:
            return False
    try:
        try:
            fcntl.lockf(fd, kind | fcntl.LOCK_NB)
        except OSError as exc:
            return exc.errno in (errno.EACCES, errno.EAGAIN)
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def pause_step(pause: float, deadline: float, busy: Any) -> float:
    """Sleep a jittered backoff step (never past the deadline); raise busy() at the
    deadline. Returns the next step (doubling, at most 0.25 s)."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise busy() from None
    time.sleep(min(pause * (0.5 + random.random()), left))
    return min(pause * 2, 0.25)


def first_line(exc: BaseException) -> str:
    """The first line of an error's text (at most 200 characters), or its type's name."""
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def as_float(x: Any) -> float | None:
    """``x`` as a float, None for None or anything that is not a number."""
    try:
        return None if x is None else float(x)
    except (TypeError, ValueError):
        return None


def attach(path: str, write: bool) -> tuple[Any, str]:
    """A new cursor of the process's one in-memory DuckDB database (made on first use) with
    the ledger file ``path`` attached under a fresh name (read-only unless ``write``) and in
    use, so unqualified table names are the ledger's; and that name. Attaching costs ~2 ms
    where opening the file as its own database costs ~15 ms (DuckDB builds its catalog of
    functions per database; issue 30). The file is locked (DuckDB's own lock) until
    :func:`detach`, which checkpoints it as closing a connection does. DuckDB's errors are
    the caller's."""
    import duckdb

    global _HOST
    name = f"hdp_ledger_{secrets.token_hex(8)}"
    with _LOCKS_GUARD:
        if _HOST is None:
            _HOST = duckdb.connect(":memory:")
        host = _HOST
        cur = host.cursor()
        _HOST_OF[name] = host
        _USERS[id(host)] = _USERS.get(id(host), 0) + 1
    mode = "" if write else ", READ_ONLY"
    quoted = "'" + path.replace("'", "''") + "'"
    try:
        cur.execute(f"ATTACH {quoted} AS {name} (TYPE duckdb{mode})")
        cur.execute(f"USE {name}")
    except BaseException:
        with contextlib.suppress(Exception):
            cur.execute(f"DETACH DATABASE IF EXISTS {name}")
        cur.close()
        _release(name, failed=False)
        raise
    return cur, name


def attach_when_free(
    path: str, write: bool, deadline: float, busy: Any, corrupt: Any
) -> tuple[Any, str]:
    """:func:`attach`, waiting (backoff, raise busy() at ``deadline``) while DuckDB's lock on
    the file is held by a process outside hdp (ours take the flock first) or the file is
    open as its own database elsewhere in this process. Any other DuckDB error raises
    corrupt(first line of its text). Whether the lock is held is told by probing it
    (:func:`held_by_another_process`), never by the error's text; an IO error with no lock
    held twice running (the holder may have just let go) is the file's own."""
    import duckdb

    pause, unexplained = 0.005, 0
    while True:
        try:
            return attach(path, write)
        except duckdb.IOException as exc:
            if not held_by_another_process(path):
                unexplained += 1
                if unexplained >= 2:
                    raise corrupt(first_line(exc)) from None
                continue  # at once: a deadline is no reason to call a file corrupt
            unexplained = 0  # held: only two unexplained errors running mean corrupt
            pause = pause_step(pause, deadline, busy)
        except duckdb.ResourceInUseException:
            pause = pause_step(pause, deadline, busy)
        except duckdb.Error as exc:
            raise corrupt(first_line(exc)) from None


def detach(cur: Any, name: str) -> None:
    """Undo :func:`attach`: roll back an unfinished transaction, detach the file (checkpoint,
    DuckDB's lock released) and close the cursor. If DuckDB refuses, the in-memory database
    is retired: later operations attach to a new one, and the retired one is closed (which
    closes every file attached to it, so a ledger file is never left locked by this process)
    as soon as no other operation uses it; never under another thread's operation. Until
    then the file stays attached there, and an attach of it elsewhere in this process waits
    (DuckDB's ResourceInUse: busy), as for any file open twice."""
    with contextlib.suppress(Exception):
        cur.execute("ROLLBACK")  # an error when no transaction is open: nothing to undo
    failed = False
    try:
        cur.execute("USE memory")
        cur.execute(f"DETACH DATABASE {name}")
    except Exception:
        failed = True
    finally:
        with contextlib.suppress(Exception):
            cur.close()
        _release(name, failed)


def open_operations() -> int:
    """How many ledger operations of this process are between :func:`attach` and
    :func:`detach` now; for tests and audits."""
    with _LOCKS_GUARD:
        return sum(_USERS.values())


def _release(name: str, failed: bool) -> None:
    """One file fewer attached to its database (``failed``: it could not be detached: the
    database is retired); a retired database with none left is closed."""
    global _HOST
    with _LOCKS_GUARD:
        host = _HOST_OF.pop(name, None)
        if host is None:
            return
        left = _USERS.get(id(host), 1) - 1
        if left:
            _USERS[id(host)] = left
        else:
            _USERS.pop(id(host), None)
        if failed and host is _HOST:
            _HOST = None  # retired: the next operation makes a new database
        close = host is not _HOST and left == 0
    if close:
        with contextlib.suppress(Exception):
            host.close()
