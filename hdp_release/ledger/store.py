"""A privacy budget that outlives the session: the ledger of releases (issue 22).

**Semantics.** A user's requested level eps is their total budget on a dataset, over all
releases. A release spends a fraction ``spend`` in (0, 1] of every user's level: it runs at
levels ``spend_levels(eps, spend)`` (at most spend x eps, exactly), so ADPM and OpenDP's
privacy map (which checks each level's loss <= its run level) hold per release, and basic
composition gives each user a total loss <= sum of spends x eps <= eps. The cumulative spend
of a dataset never exceeds 1: spends are exact fractions (a float is read as the decimal it
prints as, so ten releases of 0.1 spend exactly 1), summed exactly.

**Identities.** A release is charged to every identity of its dataset: ``name:<name>`` when a
name is given (trimmed, case-folded) and the content fingerprint ``fp1:...``
(hdp_release.fingerprint). A dataset is exhausted when *any* of its identities is.

**Order of use** (fail closed)::

    ids = dataset_identities(fingerprint, name)      # fingerprint computed in the engine
    ticket = ledger.charge(ids, spend)                # check-and-charge, one transaction
    rel = <release at spend_levels(eps, ticket.spend)>
    ledger.record(ticket, rel, target=rel.target)   # or ledger.record_failure(ticket, exc)

A release that fails after charging keeps its charge (never overspend).

**Storage.** An embedded DuckDB file: tables ``meta`` (format, version, release count),
``datasets`` (identities), ``releases`` (time, spend, status, engine, target, the noisy
estimate, its interval, the receipt and the release's public summary as JSON) and
``charges`` (release x identity). Nothing computed from raw data is stored beyond the
fingerprint. Path: the argument, else ``$HDP_LEDGER``, else :data:`DEFAULT_PATH`.

**Concurrency.** Every operation opens the file, works in one transaction and closes it.
Threads of one process are serialised by a lock per file; processes by an exclusive
``flock`` on ``<ledger>.lock`` and by DuckDB's own single-writer lock. Waiting is bounded
(``busy_timeout``, 10 s, with backoff); then :class:`LedgerBusy`.

**Failure.** A file that DuckDB cannot open, that is not a ledger, or whose tables disagree
(release count, spends over 1) refuses every operation with :class:`LedgerUnusable`; it is
never replaced or started empty. Only a missing file is created (the documented start), and
only when a PrivacyLedger object is made: if the file disappears later, that object refuses
(a server's ledger never silently restarts empty).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import random
import secrets
import threading
import time
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hdp_core.errors import BudgetExceeded, LedgerBusy, LedgerError, LedgerUnusable, ReleaseError
from hdp_core.spend import as_spend, spend_factor, spend_levels
from hdp_release.fingerprint import FINGERPRINT_PREFIX

__all__ = [
    "BUSY_TIMEOUT",
    "DEFAULT_PATH",
    "ENV_VAR",
    "ChargeTicket",
    "LedgerEntry",
    "PrivacyLedger",
    "as_spend",
    "dataset_identities",
    "default_ledger_path",
    "name_identity",
    "spend_factor",
    "spend_levels",
]

ENV_VAR = "HDP_LEDGER"
DEFAULT_PATH = "~/.local/share/hdp-explorer/ledger.duckdb"
"""Where the ledger lives when neither a path nor $HDP_LEDGER is given (its folder is
created, private to the user, on first use)."""
BUSY_TIMEOUT = 10.0
"""Seconds an operation waits for another session or process before LedgerBusy."""
NAME_PREFIX = "name:"
_MAGIC = "hdp-explorer privacy ledger"
_VERSION = "1"
_MAX_NAME = 200

_SCHEMA = """
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE datasets (identity VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL,
                       first_seen TIMESTAMP NOT NULL);
CREATE TABLE releases (release_id BIGINT PRIMARY KEY, charged_at TIMESTAMP NOT NULL,
                       spend VARCHAR NOT NULL, status VARCHAR NOT NULL, recorded_at TIMESTAMP,
                       engine VARCHAR, target VARCHAR, estimate DOUBLE, ci_low DOUBLE,
                       ci_high DOUBLE, receipt VARCHAR, summary VARCHAR, failure VARCHAR);
CREATE TABLE charges (release_id BIGINT NOT NULL, identity VARCHAR NOT NULL,
                      PRIMARY KEY (release_id, identity));
"""


# ------------------------------------------------------------------------------ semantics
def name_identity(name: str) -> str:
    """The identity of a dataset name: 'name:' + the name trimmed, NFC-normalised and
    case-folded ('Sales 2026 ' and 'sales 2026' are one dataset)."""
    if not isinstance(name, str) or not name.strip():
        raise ReleaseError(f"a dataset name must be non-empty text, got {str(name)[:40]!r}")
    key = unicodedata.normalize("NFC", name.strip()).casefold()
    if len(key) > _MAX_NAME:
        raise ReleaseError(f"a dataset name has at most {_MAX_NAME} characters")
    return NAME_PREFIX + key


def dataset_identities(fingerprint: str, name: str | None = None) -> tuple[str, ...]:
    """The identities a release is charged to: the content fingerprint and, when given, the
    dataset's name."""
    ids = [_check_identity(fingerprint)]
    if name is not None:
        ids.append(name_identity(name))
    return tuple(ids)


def _check_identity(identity: Any) -> str:
    if not isinstance(identity, str) or not (
        (identity.startswith(FINGERPRINT_PREFIX) and len(identity) == len(FINGERPRINT_PREFIX) + 32)
        or (identity.startswith(NAME_PREFIX) and len(identity) > len(NAME_PREFIX))
    ):
        raise ReleaseError(
            f"a ledger identity is 'fp1:' + 32 hex digits or 'name:' + a name, got "
            f"{str(identity)[:60]!r}"
        )
    return identity


def _identities(identities: Any) -> tuple[str, ...]:
    if isinstance(identities, str):
        identities = [identities]
    ids = tuple(sorted({_check_identity(i) for i in identities}))
    if not ids:
        raise ReleaseError("a release must be charged to at least one dataset identity")
    return ids


def default_ledger_path() -> str:
    """$HDP_LEDGER if set (and not empty), else DEFAULT_PATH, with ~ expanded."""
    return os.path.expanduser(os.environ.get(ENV_VAR) or DEFAULT_PATH)


# ------------------------------------------------------------------------------ records
@dataclass(frozen=True)
class ChargeTicket:
    """A charge made before a release: its id in the ledger, the identities charged, the
    exact spend, the factor the release must run at (levels eps x factor) and what remains
    of the tightest identity's budget after it (exact)."""

    release_id: int
    identities: tuple[str, ...]
    spend: Fraction
    factor: float
    remaining: Fraction
    path: str


@dataclass(frozen=True)
class LedgerEntry:
    """One release in the ledger (times in UTC; ``status``: 'charged' (no outcome recorded
    yet: the charge stands), 'released' or 'failed'; ``receipt``: the release's per-level
    receipt rows as returned, ``summary``: its public to_dict())."""

    release_id: int
    charged_at: _dt.datetime
    identities: tuple[str, ...]
    spend: Fraction
    status: str
    recorded_at: _dt.datetime | None
    engine: str | None
    target: str | None
    estimate: float | None
    ci95: tuple[float, float] | None
    receipt: list[dict[str, Any]] | None
    summary: dict[str, Any] | None
    failure: str | None


# ------------------------------------------------------------------------------ locking
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _thread_lock(path: str) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(path, threading.Lock())


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC).replace(tzinfo=None)


class PrivacyLedger:
    """The privacy ledger in the DuckDB file at ``path`` (None: $HDP_LEDGER, else
    DEFAULT_PATH). A missing file is created; a parent folder that does not exist is an
    error (except for DEFAULT_PATH's own folder). Raises LedgerUnusable if the file exists
    but is not a readable ledger."""

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, busy_timeout: float = BUSY_TIMEOUT
    ):
        default = path is None and not os.environ.get(ENV_VAR)
        raw = default_ledger_path() if path is None else os.path.expanduser(os.fspath(path))
        self.path = os.path.abspath(raw)
        self.busy_timeout = float(busy_timeout)
        parent = os.path.dirname(self.path)
        if default:
            with contextlib.suppress(OSError):
                os.makedirs(parent, mode=0o700, exist_ok=True)
        self._lock = _thread_lock(self.path)
        self._seen = False
        with self._open(write=True):
            pass  # creates a missing ledger, checks an existing one

    def __repr__(self) -> str:
        return f"PrivacyLedger({self.path!r})"

    # ---------------------------------------------------------------- errors
    def _unusable(self, reason: str, why: str) -> LedgerUnusable:
        return LedgerUnusable(
            f"the privacy ledger {self.path!r} cannot be used ({why}); nothing is released "
            "until it is repaired or another ledger is given",
            path=self.path,
            reason=reason,
        )

    # ---------------------------------------------------------------- opening
    def _check_place(self) -> None:
        parent = os.path.dirname(self.path)
        if not os.path.isdir(parent):
            raise self._unusable("no-parent", f"its folder {parent!r} does not exist")
        if os.path.isdir(self.path):
            raise self._unusable("directory", "the path is a folder, not a ledger file")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise self._unusable("not-writable", f"its folder {parent!r} is not writable")

    def _create(self) -> None:
        """A new, empty ledger, made under a temporary name and linked into place (so the
        path never holds a half-made ledger; a concurrent creator wins harmlessly)."""
        import duckdb

        if os.path.lexists(self.path + ".wal"):
            raise self._unusable(
                "orphan-wal", "its write-ahead log exists but the ledger file does not"
            )
        tmp = f"{self.path}.new-{os.getpid()}-{random.getrandbits(32):08x}"
        try:
            con = duckdb.connect(tmp)
            try:
                con.execute("BEGIN TRANSACTION")
                con.execute(_SCHEMA)
                con.execute(
                    "INSERT INTO meta VALUES ('format', ?), ('version', ?), ('releases', '0'), "
                    "('ledger_id', ?), ('secret', ?)",
                    [_MAGIC, _VERSION, secrets.token_hex(16), secrets.token_hex(32)],
                )
                con.execute("COMMIT")
                con.execute("CHECKPOINT")
            finally:
                con.close()
            with contextlib.suppress(FileExistsError):
                os.link(tmp, self.path)
        except OSError as exc:
            raise self._unusable(
                "create-failed", f"it could not be created: {exc.strerror}"
            ) from None
        except duckdb.Error as exc:
            raise self._unusable(
                "create-failed", f"it could not be created: {_first(exc)}"
            ) from None
        finally:
            for f in (tmp, tmp + ".wal"):
                with contextlib.suppress(OSError):
                    os.unlink(f)

    @contextlib.contextmanager
    def _open(self, write: bool) -> Iterator[Any]:
        """A checked connection, held exclusively (threads and processes) for one operation."""
        import duckdb

        start = time.monotonic()
        deadline = start + self.busy_timeout

        def busy() -> LedgerBusy:
            waited = time.monotonic() - start
            return LedgerBusy(
                f"the privacy ledger {self.path!r} is busy (another session or process held "
                f"it for {waited:.1f} s); nothing was charged, try again",
                path=self.path,
                waited=waited,
            )

        if not self._lock.acquire(timeout=max(self.busy_timeout, 0.0)):
            raise busy()
        try:
            self._check_place()
            try:
                fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                raise self._unusable("lock-file", f"its lock file: {exc.strerror}") from None
            try:
                _flock(fd, deadline, busy)
                if not os.path.lexists(self.path):
                    if self._seen:  # a long-lived ledger (a server's) never restarts empty
                        raise self._unusable(
                            "vanished",
                            "the file disappeared after it was opened; a new empty ledger "
                            "would reset every budget",
                        )
                    self._create()
                pause = 0.005
                while True:
                    try:
                        con = duckdb.connect(self.path, read_only=not write)
                        break
                    except duckdb.IOException as exc:
                        # DuckDB's single-writer lock held by a process outside hdp (ours take
                        # the flock first): the only IO error that is worth waiting for
                        if "lock" not in str(exc).lower():
                            raise self._unusable("corrupt", _first(exc)) from None
                        pause = _pause(pause, deadline, busy)
                    except duckdb.Error as exc:
                        raise self._unusable("corrupt", _first(exc)) from None
                try:
                    try:
                        self._verify(con, write)
                    except duckdb.Error as exc:
                        raise self._unusable("corrupt", _first(exc)) from None
                    self._seen = True
                    yield con
                finally:
                    con.close()
            finally:
                os.close(fd)  # releases the flock
        finally:
            self._lock.release()

    def _verify(self, con: Any, write: bool) -> None:
        """Refuse a file that is not a ledger or whose tables disagree."""
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if not {"meta", "datasets", "releases", "charges"} <= tables:
            raise self._unusable("not-a-ledger", "the file is not an hdp-explorer ledger")
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("format") != _MAGIC:
            raise self._unusable("not-a-ledger", "the file is not an hdp-explorer ledger")
        if meta.get("version") != _VERSION:
            raise self._unusable(
                "version", f"its format version {meta.get('version')!r} is not {_VERSION!r}"
            )
        n = con.execute("SELECT count(*) FROM releases").fetchone()[0]
        if str(n) != meta.get("releases"):
            raise self._unusable(
                "corrupt", f"it lists {n} releases but recorded {meta.get('releases')}"
            )
        orphans = con.execute(
            "SELECT count(*) FROM charges c ANTI JOIN releases r USING (release_id)"
        ).fetchone()[0]
        if orphans:
            raise self._unusable("corrupt", "a charge names a release that is not there")
        for ident, total in _spent(con, None).items():
            if total > 1:
                raise self._unusable("corrupt", f"{ident!r} has spent more than its budget")
        missing = [k for k in ("ledger_id", "secret") if k not in meta]
        if missing and write:  # a ledger made before ledgers had an identity and a secret
            con.execute(
                "INSERT INTO meta VALUES " + ", ".join("(?, ?)" for _ in missing),
                [
                    x
                    for k in missing
                    for x in (k, secrets.token_hex(16 if k == "ledger_id" else 32))
                ],
            )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """A checked write connection to the ledger file, held exclusively (threads and
        processes) for one operation: for hdp_release.ledger.people, whose tables live in the
        same file. The caller begins and commits its own transaction."""
        with self._open(write=True) as con:
            yield con

    def secret_key(self) -> bytes:
        """The ledger's own secret (32 random bytes made with the ledger, never printed or
        listed): the key of every keyed hash derived from data or ids that the ledger
        stores."""
        with self._open(write=True) as con:
            (value,) = con.execute("SELECT value FROM meta WHERE key = 'secret'").fetchone()
        return bytes.fromhex(value)

    def ledger_id(self) -> str:
        """The ledger's random identity (32 hex digits, made with the ledger)."""
        with self._open(write=True) as con:
            (value,) = con.execute("SELECT value FROM meta WHERE key = 'ledger_id'").fetchone()
        return str(value)

    # ---------------------------------------------------------------- operations
    def charge(self, identities: Iterable[str] | str, spend: Any = 1) -> ChargeTicket:
        """Check and charge ``spend`` (see :func:`as_spend`) to every identity in one
        transaction. Raises BudgetExceeded (nothing charged) if any identity's cumulative
        spend would pass 1; LedgerBusy / LedgerUnusable if the ledger cannot be used."""
        ids = _identities(identities)
        s = as_spend(spend)
        factor = spend_factor(s)
        with self._open(write=True) as con:
            con.execute("BEGIN TRANSACTION")
            try:
                spent = _spent(con, ids)
                worst = max(ids, key=lambda i: (spent.get(i, Fraction(0)), i))
                used = spent.get(worst, Fraction(0))
                if used + s > 1:
                    raise BudgetExceeded(
                        f"the dataset's privacy budget does not allow this release: "
                        f"{_describe(worst)} has spent {pct(used)} of every user's level, "
                        f"{pct(1 - used)} remains and this release would spend {pct(s)}; "
                        "nothing was released",
                        identity=worst,
                        spent=used,
                        remaining=1 - used,
                        requested=s,
                    )
                rid = int(
                    con.execute("SELECT coalesce(max(release_id), 0) + 1 FROM releases").fetchone()[
                        0
                    ]
                )
                now = _now()
                con.execute(
                    "INSERT INTO releases (release_id, charged_at, spend, status) "
                    "VALUES (?, ?, ?, 'charged')",
                    [rid, now, str(s)],
                )
                con.executemany("INSERT INTO charges VALUES (?, ?)", [[rid, i] for i in ids])
                con.executemany(
                    "INSERT INTO datasets VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                    [[i, "name" if i.startswith(NAME_PREFIX) else "fingerprint", now] for i in ids],
                )
                con.execute(
                    "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS VARCHAR) "
                    "WHERE key = 'releases'"
                )
                con.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    con.execute("ROLLBACK")
                raise
        return ChargeTicket(rid, ids, s, factor, 1 - used - s, self.path)

    def record(self, ticket: ChargeTicket, release: Any, *, target: str | None = None) -> None:
        """Store what a charged release returned: its engine, noisy estimate, 95% interval,
        receipt and public summary (``release``: a Release or its to_dict()). ``target``:
        what was released (e.g. the value column), if wanted."""
        d = release.to_dict() if hasattr(release, "to_dict") else dict(release)
        try:
            receipt = json.dumps(d.get("tiers"), allow_nan=False)
            summary = json.dumps(d, allow_nan=False, default=str)
        except (TypeError, ValueError):
            raise ReleaseError("the release summary cannot be stored as JSON") from None
        ci = d.get("ci95") or (None, None)
        self._finish(
            ticket,
            "released",
            [
                d.get("engine"),
                target,
                _num(d.get("estimate")),
                _num(ci[0]),
                _num(ci[1]),
                receipt,
                summary,
                None,
            ],
        )

    def record_failure(self, ticket: ChargeTicket, error: BaseException | str) -> None:
        """Mark a charged release as failed; its charge stays (never overspend). Only the
        error's type is stored (a message may quote a cell)."""
        kind = error if isinstance(error, str) else type(error).__name__
        self._finish(ticket, "failed", [None, None, None, None, None, None, None, str(kind)[:80]])

    def _finish(self, ticket: ChargeTicket, status: str, values: list[Any]) -> None:
        with self._open(write=True) as con:
            row = con.execute(
                "SELECT status FROM releases WHERE release_id = ?", [ticket.release_id]
            ).fetchone()
            if row is None or os.path.abspath(ticket.path) != self.path:
                raise LedgerError(
                    f"release {ticket.release_id} was not charged in this ledger", path=self.path
                )
            if row[0] != "charged":
                raise LedgerError(
                    f"release {ticket.release_id} is already recorded ({row[0]})", path=self.path
                )
            con.execute(
                "UPDATE releases SET status = ?, recorded_at = ?, engine = ?, target = ?, "
                "estimate = ?, ci_low = ?, ci_high = ?, receipt = ?, summary = ?, failure = ? "
                "WHERE release_id = ?",
                [status, _now(), *values, ticket.release_id],
            )

    def spent(self, identity: Iterable[str] | str) -> Fraction:
        """The largest cumulative spend (exact, 0 to 1) among the given identities."""
        ids = _identities(identity)
        with self._open(write=False) as con:
            spent = _spent(con, ids)
        return max((spent.get(i, Fraction(0)) for i in ids), default=Fraction(0))

    def remaining(self, identity: Iterable[str] | str) -> Fraction:
        """What remains (exact, 0 to 1) of the budget of a dataset with these identities: the
        smallest remainder among them (exhausted when any identity is)."""
        return 1 - self.spent(identity)

    def history(self, identity: Iterable[str] | str | None = None) -> list[LedgerEntry]:
        """The releases charged to any of the identities (None: all), oldest first."""
        ids = None if identity is None else _identities(identity)
        with self._open(write=False) as con:
            where = ""
            args: list[Any] = []
            if ids is not None:
                where = (
                    "WHERE release_id IN (SELECT release_id FROM charges WHERE identity IN "
                    f"({', '.join('?' for _ in ids)}))"
                )
                args = list(ids)
            rows = con.execute(
                "SELECT release_id, charged_at, spend, status, recorded_at, engine, target, "
                f"estimate, ci_low, ci_high, receipt, summary, failure FROM releases {where} "
                "ORDER BY release_id",
                args,
            ).fetchall()
            charged: dict[int, list[str]] = {}
            for rid, ident in con.execute(
                "SELECT release_id, identity FROM charges ORDER BY identity"
            ).fetchall():
                charged.setdefault(int(rid), []).append(ident)
        out = []
        for r in rows:
            out.append(
                LedgerEntry(
                    int(r[0]),
                    r[1],
                    tuple(charged.get(int(r[0]), [])),
                    Fraction(r[2]),
                    r[3],
                    r[4],
                    r[5],
                    r[6],
                    r[7],
                    None if r[8] is None else (float(r[8]), float(r[9])),
                    None if r[10] is None else json.loads(r[10]),
                    None if r[11] is None else json.loads(r[11]),
                    r[12],
                )
            )
        return out


# ------------------------------------------------------------------------------ helpers
def _spent(con: Any, ids: tuple[str, ...] | None) -> dict[str, Fraction]:
    """Exact cumulative spend per identity (all identities when ``ids`` is None)."""
    sql = "SELECT c.identity, r.spend FROM charges c JOIN releases r USING (release_id)"
    args: list[Any] = []
    if ids is not None:
        sql += f" WHERE c.identity IN ({', '.join('?' for _ in ids)})"
        args = list(ids)
    out: dict[str, Fraction] = {}
    for ident, spend in con.execute(sql, args).fetchall():
        out[ident] = out.get(ident, Fraction(0)) + Fraction(spend)
    return out


def _flock(fd: int, deadline: float, busy: Any) -> None:
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pause = _pause(pause, deadline, busy)


def _pause(pause: float, deadline: float, busy: Any) -> float:
    """Sleep a jittered backoff step (never past the deadline); raise busy() at the
    deadline. Returns the next step (doubling, at most 0.25 s)."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise busy() from None
    time.sleep(min(pause * (0.5 + random.random()), left))
    return min(pause * 2, 0.25)


def _first(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def _num(x: Any) -> float | None:
    try:
        return None if x is None else float(x)
    except (TypeError, ValueError):
        return None


def pct(x: Fraction) -> str:
    """A fraction of every user's level as a percent with 4 significant digits."""
    return f"{float(x) * 100:.4g}%"


def _describe(identity: str) -> str:
    if identity.startswith(NAME_PREFIX):
        return f"the dataset named {identity[len(NAME_PREFIX) :]!r}"
    return f"data with this content ({identity[:12]}...)"
