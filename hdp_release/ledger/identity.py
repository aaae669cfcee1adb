"""Dataset identities and records of the privacy ledger (issue 32): names, optionally scoped
to a user, and keyed level profiles ('lv1:...', hdp_release.fingerprint); never a value,
never shown in full (see hdp_release.ledger.store for why); ChargeTicket and LedgerEntry."""

from __future__ import annotations

import datetime as _dt
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hdp_core.errors import ReleaseError
from hdp_release.fingerprint import LEVELS_PREFIX

__all__ = [
    "NAME_PREFIX",
    "ChargeTicket",
    "LedgerEntry",
    "check_identities",
    "check_identity",
    "dataset_identities",
    "describe",
    "name_identity",
    "shown_identity",
]

NAME_PREFIX = "name:"
_MAX_NAME = 200
_MAX_SCOPE = 64


def name_identity(name: str, scope: str | None = None) -> str:
    """The identity of a dataset name: 'name:' + the name trimmed, NFC-normalised and
    case-folded ('Sales 2026 ' and 'sales 2026' are one dataset); with ``scope`` (e.g. a
    keyed hash of the app's signed-in user) 'name:[scope] ' + that, so scoped names never
    meet another scope's or an unscoped one."""
    if not isinstance(name, str) or not name.strip():
        raise ReleaseError("a dataset name must be non-empty text")
    key = unicodedata.normalize("NFC", name.strip()).casefold()
    if len(key) > _MAX_NAME:
        raise ReleaseError(f"a dataset name has at most {_MAX_NAME} characters")
    if scope is not None:
        if not isinstance(scope, str) or not scope.isalnum() or len(scope) > _MAX_SCOPE:
            raise ReleaseError(f"a name scope is at most {_MAX_SCOPE} letters or digits")
        return f"{NAME_PREFIX}[{scope}] {key}"
    return NAME_PREFIX + key


def dataset_identities(
    levels_id: str, name: str | None = None, scope: str | None = None
) -> tuple[str, ...]:
    """The identities a release is charged to: the keyed level profile ('lv1:...', from
    hdp_release.fingerprint.levels_identity_*) and, when given, the dataset's name (in
    ``scope``)."""
    ids = [check_identity(levels_id)]
    if name is not None:
        ids.append(name_identity(name, scope))
    return tuple(ids)


def shown_identity(identity: str) -> str:
    """An identity as a listing may show it: a name in full (the user typed it), a keyed
    identity by its first 8 hex digits only."""
    if identity.startswith(NAME_PREFIX):
        return identity
    return identity[:12] + "..."


def check_identity(identity: Any) -> str:
    """``identity`` if it is a keyed level profile or a name identity; else ReleaseError."""
    if not isinstance(identity, str) or not (
        (identity.startswith(LEVELS_PREFIX) and len(identity) == len(LEVELS_PREFIX) + 32)
        or (identity.startswith(NAME_PREFIX) and len(identity) > len(NAME_PREFIX))
    ):
        raise ReleaseError(
            "a ledger identity is 'lv1:' + 32 hex digits (a keyed level profile) or 'name:' + "
            "a name"
        )
    return identity


def check_identities(identities: Any) -> tuple[str, ...]:
    """One identity or several, checked, deduplicated and sorted (at least one)."""
    if isinstance(identities, str):
        identities = [identities]
    ids = tuple(sorted({check_identity(i) for i in identities}))
    if not ids:
        raise ReleaseError("a release must be charged to at least one dataset identity")
    return ids


def describe(identity: str) -> str:
    """Words for an identity in a message: a name as typed (case-folded), never a keyed
    identity's digits."""
    if identity.startswith(NAME_PREFIX):
        return f"the dataset named {identity[len(NAME_PREFIX) :]!r}"
    return "data with the same privacy levels (the same number of users at each level)"


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
