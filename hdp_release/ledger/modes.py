"""One ledger keeps one kind of budget: per person or per dataset.

Per-person budgets (hdp_release.ledger.people) know every person a release touched;
per-dataset budgets (hdp_release.ledger.store) only which dataset. Mixing them would let a
person's losses of one kind go unseen by the other: a release with an id after releases
without one (or the reverse) could take a person past their level. So a ledger that has
charged persons refuses a release without an id, and a ledger that has charged a dataset
refuses one with an id: a per-person ledger starts from a new file. Both refusals come inside
the charge's transaction, before anything is computed from the values."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hdp_core.errors import BudgetExceeded

__all__ = [
    "MODE_IDENTITY",
    "check_datasets_allowed",
    "check_persons_allowed",
    "has_people_table",
]

MODE_IDENTITY = "ledger-mode"
"""BudgetExceeded.identity of a release refused by the ledger's kind of budget."""


def has_people_table(con: Any) -> bool:
    """Whether the ledger behind ``con`` (its own database, not others attached beside it)
    has a person table."""
    found = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'hdp_people' "
        "AND database_name = current_database()"
    ).fetchone()[0]
    return bool(found)


def _keeps_persons(con: Any) -> bool:
    return has_people_table(con) and bool(
        con.execute("SELECT count(*) > 0 FROM hdp_people").fetchone()[0]
    )


def _refusal(text: str, spend: Fraction) -> BudgetExceeded:
    return BudgetExceeded(
        text, identity=MODE_IDENTITY, spent=Fraction(0), remaining=Fraction(0), requested=spend
    )


def check_datasets_allowed(con: Any, spend: Fraction) -> None:
    """Refuse (BudgetExceeded, identity MODE_IDENTITY) a release without an id on the ledger
    behind ``con`` when it keeps a budget per person."""
    if _keeps_persons(con):
        raise _refusal(
            "this ledger keeps a budget per person (its releases named an id column): a "
            "release without an id cannot be charged to the persons it touches; name the id "
            "column (id=..., --id, the page's id choice); nothing was charged",
            spend,
        )


def check_persons_allowed(con: Any, spend: Fraction) -> None:
    """Refuse (BudgetExceeded, identity MODE_IDENTITY) a release with an id on the ledger
    behind ``con`` when it keeps a budget per dataset."""
    if con.execute("SELECT count(*) > 0 FROM charges").fetchone()[0]:
        raise _refusal(
            "this ledger keeps a budget per dataset (its releases named no id column), so it "
            "does not know which persons those releases touched: per-person budgets need a new "
            "ledger file (ledger=..., --ledger); nothing was charged",
            spend,
        )
