"""The library's error family: every invalid input raises a subclass of :class:`HdpError`.

``HdpError`` is a ``ValueError``, so ``except ValueError`` catches every one of them. Each
message says which entry is wrong and why, in words a person can act on.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BadCellError",
    "BudgetExceeded",
    "ColumnNameError",
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
    """Base of every error hdp_core raises on bad input.

    Besides its message, an error may carry fields so that callers never read the text:
    ``row`` (1-based data row, header excluded), ``column`` (the column's name) and ``reason``
    (a short code of what is wrong, e.g. 'text', 'empty', 'too_many_columns')."""

    def __init__(
        self,
        *args: object,
        row: int | None = None,
        column: str | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(*args)
        self.row = row
        self.column = column
        self.reason = reason


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


class BadCellError(ReleaseError):
    """A cell of the release table that cannot be used. Its fields say where and what kind of
    thing is wrong (never the cell's content): ``row`` (1-based, 0 when the engine cannot
    order rows), ``column`` (the column's name) and ``reason`` (e.g. "text", "empty",
    "a number with a thousands separator")."""

    def __init__(self, message: str, *, row: int, column: str, reason: str):
        super().__init__(message)
        self.row = row
        self.column = column
        self.reason = reason


class ColumnNameError(ReleaseError):
    """Column names that cannot be told apart (equal, or equal ignoring case), or a column
    the engine would read under another name; ``columns`` holds the names concerned."""

    def __init__(self, message: str, *, columns: tuple[str, ...]):
        super().__init__(message)
        self.columns = columns


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
