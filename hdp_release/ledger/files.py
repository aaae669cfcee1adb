"""The ledger file's plumbing: one lock per file (device and inode) for threads, a bounded
flock wait for processes, and small conversions (hdp_release.ledger.store uses them)."""

from __future__ import annotations

import fcntl
import os
import random
import threading
import time
from typing import Any

__all__ = ["as_float", "file_key", "first_line", "flock_within", "pause_step", "thread_lock"]

_LOCKS: dict[Any, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


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
