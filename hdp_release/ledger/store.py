"""A privacy budget that outlives the session: the ledger of releases (issues 22, 32).

**Semantics.** A user's requested level eps is their total budget on a dataset, over all
releases. A release spends a fraction ``spend`` in (0, 1] of every user's level: it runs at
levels ``spend_levels(eps, spend)`` (at most spend x eps, exactly), so ADPM and OpenDP's
privacy map (which checks each level's loss <= its run level) hold per release, and basic
composition gives each user a total loss <= sum of spends x eps <= eps. The cumulative spend
of a dataset never exceeds 1: spends are exact fractions (a float is read as the decimal it
prints as, so ten releases of 0.1 spend exactly 1), summed exactly.

**Identities (issue 32: no oracle on values).** A release is charged to every identity of
its dataset: ``name:<name>`` when a name is given (trimmed, NFC, case-folded; with a
``scope``, e.g. a signed-in user of the app, ``name:[scope] <name>``, so one user's names
are not another's) and ``lv1:...``, the *keyed level profile*
(hdp_release.fingerprint.levels_identity_*): an HMAC under this ledger's secret of the
multiset of privacy levels, i.e. which levels and how many users at each. A dataset is
exhausted when *any* of its identities is. Why not the content (the values)? Any check by
content answers "is this candidate table the data released earlier?": a refusal, a budget or
a history shown for a candidate then reveals another person's value (the probe of issue 32
found a salary among 6,000 candidates that way, through the page), and an unkeyed content
hash in the file is searchable offline. So nothing the ledger decides, shows or stores
depends on a value:

* the same data always has the same level profile, so a second release of it, under any
  name, file, order or engine, is charged to the same ``lv1`` identity and stopped when that
  is spent: every double release the content fingerprint stopped is still stopped;
* two tables that differ only in values get the same identities, hence the same budget,
  history, refusal or release (identical output until a release is made);
* the levels are public by this project's convention (every receipt publishes the levels
  and their user counts), and the identity is keyed, so the file alone tells nothing;
* the cost: unrelated data with exactly the same level profile shares one budget (fails
  safe: refused, never overspent), and an edit that adds or drops a row is a new profile.
  Per-person ids (the per-person ledger, issue 30) charge each person instead.

**Names are shared.** Without a scope, a name is the server's: anyone who types it sees its
budget and history and spends from it (the app says so and scopes names per signed-in user
when Streamlit authentication is configured). Nothing in a listing or a message shows an
identity in full (:func:`shown_identity`), and the secret (meta ``secret``) is never printed.

**Order of use** (fail closed)::

    ids = datasetcheck_identities(levels_id, name)         # levels_id computed in the engine
    ticket = ledger.charge(ids, spend)                # check-and-charge, one transaction
    rel = <release at spend_levels(eps, ticket.spend)>
    ledger.record(ticket, rel, target=rel.target)   # or ledger.record_failure(ticket, exc)

A release that fails after charging keeps its charge (never overspend).

**Storage.** An embedded DuckDB file: tables ``meta`` (format, version, release count,
ledger_id, secret), ``datasets`` (identities), ``releases`` (time, spend, status, engine,
target, the noisy estimate, its interval, the receipt and the release's public summary as
JSON), ``charges`` (release x identity) and ``totals`` (per identity: the exact running
total spent and the number of releases; a charge reads and updates one row per identity, so
its cost does not grow with history). Path: the argument, else ``$HDP_LEDGER``, else
:data:`DEFAULT_PATH`; it must be a regular file (a dangling symlink, a device or a folder is
refused before anything is created).

**Concurrency.** Every operation opens the file (attached to the process's in-memory DuckDB
database: hdp_release.ledger.files.attach), works in one transaction and closes it.
Threads of one process are serialised by a lock per file (device and inode, whatever path
names it); processes by an exclusive ``flock`` on ``<real path>.lock`` and by DuckDB's own
single-writer lock. Waiting is bounded (``busy_timeout``, 10 s, with backoff); then
:class:`LedgerBusy`. Every DuckDB error becomes a LedgerError.

**Failure.** A file that DuckDB cannot open, that is not a ledger, or whose tables disagree
(release count, charges and totals, a spend outside (0, 1], an unknown status, a total over
1) refuses every operation with :class:`LedgerUnusable`; it is never replaced or started
empty. Verification is a handful of aggregate queries run inside DuckDB (no Python loop over
charges). Only a missing file is created (the documented start), only by a writable
PrivacyLedger object (``read_only=True``, used by every listing, refuses a missing file),
and only on its first open: an object remembers its ledger's random id and refuses a file
that disappeared or was replaced at its path (a server's ledger never silently restarts
empty).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import random
import secrets
import stat
import time
from collections.abc import Iterable, Iterator
from fractions import Fraction
from typing import Any

from hdp_core.errors import BudgetExceeded, LedgerBusy, LedgerError, LedgerUnusable, ReleaseError
from hdp_core.spend import as_spend, spend_factor, spend_levels
from hdp_release.ledger.files import (
    as_float,
    attach_when_free,
    detach,
    file_key,
    first_line,
    flock_within,
    thread_lock,
)
from hdp_release.ledger.history import history_page, spent_of
from hdp_release.ledger.identity import (
    NAME_PREFIX,
    ChargeTicket,
    LedgerEntry,
    check_identities,
    dataset_identities,
    describe,
    name_identity,
    shown_identity,
)
from hdp_release.ledger.modes import check_datasets_allowed
from hdp_release.ledger.verify import TABLES, build_totals, verify_tables

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
    "shown_identity",
    "spend_factor",
    "spend_levels",
]

ENV_VAR = "HDP_LEDGER"
DEFAULT_PATH = "~/.local/share/hdp-explorer/ledger.duckdb"
"""Where the ledger lives when neither a path nor $HDP_LEDGER is given (its folder is
created, private to the user, on first use)."""
BUSY_TIMEOUT = 10.0
"""Seconds an operation waits for another session or process before LedgerBusy."""
_MAGIC = "hdp-explorer privacy ledger"
_VERSION = "1"
_MAX_DIGITS = 30

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
CREATE TABLE totals (identity VARCHAR PRIMARY KEY, spent VARCHAR NOT NULL,
                     releases BIGINT NOT NULL);
"""


def default_ledger_path() -> str:
    """$HDP_LEDGER if set (and not empty), else DEFAULT_PATH, with ~ expanded."""
    return os.path.expanduser(os.environ.get(ENV_VAR) or DEFAULT_PATH)


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC).replace(tzinfo=None)


class PrivacyLedger:
    """The privacy ledger in the DuckDB file at ``path`` (None: $HDP_LEDGER, else
    DEFAULT_PATH). A missing file is created (never with ``read_only=True``: listing and
    inspection refuse it); a parent folder that does not exist is an error (except for
    DEFAULT_PATH's own folder). Raises LedgerUnusable if the file exists but is not a
    readable ledger, or the path is not a regular file."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        busy_timeout: float = BUSY_TIMEOUT,
        read_only: bool = False,
    ):
        default = path is None and not os.environ.get(ENV_VAR)
        raw = default_ledger_path() if path is None else os.path.expanduser(os.fspath(path))
        self.path = os.path.abspath(raw)
        self.busy_timeout = float(busy_timeout)
        self.read_only = bool(read_only)
        parent = os.path.dirname(self.path)
        if default and not self.read_only:
            with contextlib.suppress(OSError):
                os.makedirs(parent, mode=0o700, exist_ok=True)
        self._id: str | None = None
        self._secret: bytes | None = None
        self._seen = False
        with self._open(write=not self.read_only):
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
        """Refuse, before anything is created, a path that is not (or cannot become) a
        regular file: a missing folder, a folder, a dangling symlink, a device or pipe."""
        parent = os.path.dirname(self.path)
        if not os.path.isdir(parent):
            raise self._unusable("no-parent", f"its folder {parent!r} does not exist")
        if os.path.isdir(self.path):
            raise self._unusable("directory", "the path is a folder, not a ledger file")
        if os.path.lexists(self.path):
            try:
                st = os.stat(self.path)
            except OSError:
                raise self._unusable(
                    "not-a-file", "the path is a symbolic link to nothing"
                ) from None
            if not stat.S_ISREG(st.st_mode):
                raise self._unusable("not-a-file", "the path is not a regular file")
        elif self.read_only or self._seen:
            raise self._unusable(
                "vanished" if self._seen else "missing",
                "the file disappeared after it was opened; a new empty ledger would reset "
                "every budget"
                if self._seen
                else "the file does not exist (listing never creates a ledger)",
            )
        if not self.read_only and not os.access(parent, os.W_OK | os.X_OK):
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
            os.chmod(tmp, 0o600)  # it holds the secret
            with contextlib.suppress(FileExistsError):
                os.link(tmp, self.path)
        except OSError as exc:
            raise self._unusable(
                "create-failed", f"it could not be created: {exc.strerror}"
            ) from None
        except duckdb.Error as exc:
            raise self._unusable(
                "create-failed", f"it could not be created: {first_line(exc)}"
            ) from None
        finally:
            for f in (tmp, tmp + ".wal"):
                with contextlib.suppress(OSError):
                    os.unlink(f)

    @contextlib.contextmanager
    def _open(self, write: bool) -> Iterator[Any]:
        """A checked connection, held exclusively (threads and processes) for one operation.
        Every DuckDB error inside becomes a LedgerError."""
        import duckdb

        if write and self.read_only:
            raise LedgerError(
                f"the privacy ledger {self.path!r} was opened read-only (a listing): "
                "nothing can be charged through it",
                path=self.path,
            )
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

        self._check_place()
        lock = thread_lock(file_key(self.path))
        if not lock.acquire(timeout=max(self.busy_timeout, 0.0)):
            raise busy()
        try:
            self._check_place()
            real = os.path.realpath(self.path)
            try:
                fd = os.open(real + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                raise self._unusable("lock-file", f"its lock file: {exc.strerror}") from None
            try:
                flock_within(fd, deadline, busy)
                self._check_place()
                if not os.path.lexists(self.path):
                    self._create()
                con, name = attach_when_free(
                    real, write, deadline, busy, lambda e: self._unusable("corrupt", e)
                )
                try:
                    try:
                        self._verify(con, write)
                    except duckdb.Error as exc:
                        raise self._unusable("corrupt", first_line(exc)) from None
                    self._seen = True
                    try:
                        yield con
                    except duckdb.Error as exc:
                        raise LedgerError(
                            f"the privacy ledger {self.path!r} failed ({type(exc).__name__}); "
                            "nothing was charged in the failed operation",
                            path=self.path,
                        ) from None
                finally:
                    detach(con, name)
            finally:
                os.close(fd)  # releases the flock
        finally:
            lock.release()

    def _verify(self, con: Any, write: bool) -> None:
        """Refuse a file that is not a ledger, that is not the one this object opened first,
        or whose tables disagree (hdp_release.ledger.verify)."""
        # the file's own tables only (the filter keeps DuckDB from listing every catalog:
        # about 4 ms of each open, issue 30)
        tables = {
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
            ).fetchall()
        }
        if not TABLES - {"totals"} <= tables:
            raise self._unusable("not-a-ledger", "the file is not an hdp-explorer ledger")
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("format") != _MAGIC:
            raise self._unusable("not-a-ledger", "the file is not an hdp-explorer ledger")
        if self._id is not None and meta.get("ledger_id") != self._id:
            raise self._unusable(
                "replaced",
                "another file took its place after it was opened; its budgets are not this "
                "ledger's",
            )
        missing = [k for k in ("ledger_id", "secret") if k not in meta]
        if write and (missing or "totals" not in tables):
            # a ledger made before ledgers had an identity, a secret and running totals
            con.execute("BEGIN TRANSACTION")
            for k in missing:
                meta[k] = secrets.token_hex(16 if k == "ledger_id" else 32)
                con.execute("INSERT INTO meta VALUES (?, ?)", [k, meta[k]])
            if "totals" not in tables:
                build_totals(con)
            con.execute("COMMIT")
            tables.add("totals")
        if "totals" not in tables:
            raise self._unusable(
                "upgrade",
                "it was written before running totals: open it once for writing (e.g. "
                "PrivacyLedger(path)) to add them",
            )
        verify_tables(con, meta, _VERSION, self._unusable, write)
        self._id = meta.get("ledger_id", self._id)
        if "secret" in meta:
            self._secret = bytes.fromhex(meta["secret"])

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
        stores. Read with the ledger's id on every open (the object refuses another file)."""
        if self._secret is None:  # an older ledger opened read-only: none yet
            with self._open(write=not self.read_only):
                pass
        if self._secret is None:
            raise self._unusable("upgrade", "it has no secret yet: open it once for writing")
        return self._secret

    def ledger_id(self) -> str:
        """The ledger's random identity (32 hex digits, made with the ledger)."""
        if self._id is None:
            raise self._unusable("upgrade", "it has no identity yet: open it once for writing")
        return self._id

    # ---------------------------------------------------------------- operations
    def charge(self, identities: Iterable[str] | str, spend: Any = 1) -> ChargeTicket:
        """Check and charge ``spend`` (see :func:`as_spend`) to every identity in one
        transaction. Raises BudgetExceeded (nothing charged) if any identity's cumulative
        spend would pass 1; LedgerBusy / LedgerUnusable if the ledger cannot be used. Reads
        and writes one running total per identity: its cost does not grow with history."""
        ids = check_identities(identities)
        s = as_spend(spend)
        if max(len(str(s.numerator)), len(str(s.denominator))) > _MAX_DIGITS:
            raise ReleaseError(f"a spend is written with at most {_MAX_DIGITS} digits")
        factor = spend_factor(s)
        with self._open(write=True) as con:
            con.execute("BEGIN TRANSACTION")
            try:
                check_datasets_allowed(con, s)  # one kind of budget per ledger
                spent = spent_of(con, ids)
                worst = max(ids, key=lambda i: (spent.get(i, Fraction(0)), i))
                used = spent.get(worst, Fraction(0))
                if used + s > 1:
                    raise BudgetExceeded(
                        f"the dataset's privacy budget does not allow this release: "
                        f"{describe(worst)} has spent {pct(used)} of every user's level, "
                        f"{pct(1 - used)} remains and this release would spend {pct(s)}; "
                        "nothing was released",
                        identity=worst,
                        spent=used,
                        remaining=1 - used,
                        requested=s,
                    )
                (rid,) = con.execute(
                    "SELECT CAST(value AS BIGINT) + 1 FROM meta WHERE key = 'releases'"
                ).fetchone()
                rid = int(rid)
                now = _now()
                con.execute(
                    "INSERT INTO releases (release_id, charged_at, spend, status) "
                    "VALUES (?, ?, ?, 'charged')",
                    [rid, now, str(s)],
                )
                # one statement per table for every identity (executemany prepares and runs
                # one statement per row: ~3 ms each, issue 30)
                con.execute(
                    f"INSERT INTO charges VALUES {_rows(len(ids), 2)}",
                    [x for i in ids for x in (rid, i)],
                )
                con.execute(
                    f"INSERT INTO datasets VALUES {_rows(len(ids), 3)} ON CONFLICT DO NOTHING",
                    [
                        x
                        for i in ids
                        for x in (i, "name" if i.startswith(NAME_PREFIX) else "levels", now)
                    ],
                )
                con.execute(
                    f"INSERT INTO totals VALUES {_rows(len(ids), 3)} ON CONFLICT (identity) DO "
                    "UPDATE SET spent = excluded.spent, releases = totals.releases + 1",
                    [x for i in ids for x in (i, str(spent.get(i, Fraction(0)) + s), 1)],
                )
                con.execute("UPDATE meta SET value = ? WHERE key = 'releases'", [str(rid)])
                # this release is valid by construction: keep the verified mark current
                con.execute(
                    "UPDATE meta SET value = ? WHERE key = 'verified' AND value = ?",
                    [str(rid), str(rid - 1)],
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
                as_float(d.get("estimate")),
                as_float(ci[0]),
                as_float(ci[1]),
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
        """The largest cumulative spend (exact, 0 to 1) among the given identities (from the
        running totals: one row per identity)."""
        ids = check_identities(identity)
        with self._open(write=False) as con:
            spent = spent_of(con, ids)
        return max((spent.get(i, Fraction(0)) for i in ids), default=Fraction(0))

    def remaining(self, identity: Iterable[str] | str) -> Fraction:
        """What remains (exact, 0 to 1) of the budget of a dataset with these identities: the
        smallest remainder among them (exhausted when any identity is)."""
        return 1 - self.spent(identity)

    def release_count(self, identity: Iterable[str] | str | None = None) -> int:
        """How many releases were charged to any of the identities (None: all releases)."""
        return self.overview(identity, limit=1)[1]

    def history(
        self,
        identity: Iterable[str] | str | None = None,
        *,
        limit: int | None = None,
        before: int | None = None,
    ) -> list[LedgerEntry]:
        """The releases charged to any of the identities (None: all), oldest first. Paged:
        with ``limit``, only the ``limit`` newest releases whose id is below ``before`` (None:
        the newest), still oldest first; the next page is ``before=page[0].release_id``."""
        return self.overview(identity, limit=limit, before=before)[0]

    def overview(
        self,
        identity: Iterable[str] | str | None = None,
        *,
        limit: int | None = None,
        before: int | None = None,
    ) -> tuple[list[LedgerEntry], int, Fraction | None]:
        """In one open: :meth:`history`'s page, the number of releases charged to the
        identities (None: all) and what remains of their budget (None without identities)."""
        ids = None if identity is None else check_identities(identity)
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise ReleaseError("a history page holds at least one release")
        with self._open(write=False) as con:
            return history_page(con, ids, limit, before)


# ------------------------------------------------------------------------------ helpers
def _rows(n: int, width: int) -> str:
    """SQL placeholders of ``n`` rows of ``width`` parameters: '(?, ?), (?, ?)'."""
    return ", ".join(["(" + ", ".join(["?"] * width) + ")"] * n)


def pct(x: Fraction) -> str:
    """A fraction of every user's level as a percent with 4 significant digits."""
    return f"{float(x) * 100:.4g}%"
