"""The library's error family: every invalid input raises a subclass of :class:`HdpError`.

``HdpError`` is a ``ValueError``, so ``except ValueError`` catches every one of them. Each
message says which entry is wrong and why, in words a person can act on.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BudgetExceeded",
    "HdpError",
    "LedgerBusy",
    "LedgerError",
    "LedgerUnusable",
    "LinkError",
    "MenuError",
    "NotShareable",
    "ProfileError",
    "ReleaseError",
    "UnknownMethod",
]


class HdpError(ValueError):
    """Base of every error hdp_core raises on bad input."""


class ProfileError(HdpError):
    """An invalid privacy profile (levels, counts, a table or a CSV file)."""


class LinkError(HdpError):
    """A link (query string) or profile spec that cannot be read or written."""


class NotShareable(LinkError):
    """The profile exists but cannot be put in a link (too large, or carries data values)."""


class MenuError(HdpError):
    """An invalid tier menu (a tier, a share, the data range, a menu file or link)."""


class ReleaseError(HdpError):
    """A private release that cannot be made (bad table, columns, range or privacy check);
    nothing was released."""


class UnknownMethod(HdpError):
    """A method name that is not in the registry; the message lists the known names."""


class LedgerError(ReleaseError):
    """The privacy ledger at ``path`` cannot be used; nothing was charged and nothing may be
    released (the ledger fails closed)."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class LedgerUnusable(LedgerError):
    """The ledger file is corrupt, unreadable, not a ledger, or cannot be created where asked
    (``reason``: a short code such as 'corrupt', 'not-a-ledger', 'directory', 'no-parent')."""

    def __init__(self, message: str, *, path: str, reason: str) -> None:
        super().__init__(message, path=path)
        self.reason = reason


class LedgerBusy(LedgerError):
    """Another session or process held the ledger for ``waited`` seconds (the bounded wait);
    nothing was charged."""

    def __init__(self, message: str, *, path: str, waited: float) -> None:
        super().__init__(message, path=path)
        self.waited = waited


class BudgetExceeded(ReleaseError):
    """A release would pass a dataset's privacy budget: ``identity`` has spent ``spent`` of 1,
    ``remaining`` is left (exact fractions) and ``requested`` was asked; nothing was charged."""

    def __init__(
        self, message: str, *, identity: str, spent: Any, remaining: Any, requested: Any
    ) -> None:
        super().__init__(message)
        self.identity = identity
        self.spent = spent
        self.remaining = remaining
        self.requested = requested
