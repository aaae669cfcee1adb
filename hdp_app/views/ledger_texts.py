"""The Release page's words on who can see and spend a dataset's budget (issue 32): the
notice that names are shared server-wide (or scoped to the signed-in user), the scope of a
user's names, and why the budget shown never depends on a value. No streamlit."""

from __future__ import annotations

__all__ = ["HISTORY_ROWS", "LEVELS_NOTICE", "name_scope", "names_notice"]

HISTORY_ROWS = 20
"""The newest releases of a name the page lists (the ledger's history is paged)."""

LEVELS_NOTICE = (
    "The budget shown is the smaller of two, both independent of the values: the name's "
    "(if you give one) and that of any table with exactly these privacy levels and user "
    "counts (levels are public, as in every receipt). So a table that differs from another "
    "only in its values shows the same budget; unrelated data with exactly the same levels "
    "shares it too."
)


def names_notice(scoped: bool) -> str:
    """Who can see and spend a dataset name on this server: the signed-in user alone
    (``scoped``: Streamlit authentication configured and signed in), else everyone."""
    if scoped:
        return (
            "You are signed in: your dataset names, their budgets and histories are yours "
            "alone; another user's same name is another dataset."
        )
    return (
        "Dataset names are shared by everyone using this server: anyone who types a name "
        "sees its budget and history here and spends from it. Choose a name others would "
        "not guess, or ask whoever runs this app to turn on sign-in (Streamlit "
        "authentication), which keeps each user's names apart."
    )


def name_scope(secret: bytes, user: str | None) -> str | None:
    """The ledger scope of a signed-in user's dataset names: 16 hex digits of an HMAC of the
    user's id under the ledger's secret (never the id itself); None when nobody is signed in
    (names are then the server's)."""
    import hashlib
    import hmac

    if not user:
        return None
    return hmac.new(secret, f"hdp-user|{user}".encode(), hashlib.sha256).hexdigest()[:16]
