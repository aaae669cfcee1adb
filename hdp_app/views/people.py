"""The Release page's per-person ledger (issue 30): the id column choice, what a release with an
id did to each level (asked, run at, lost, kept) in sentences and a table, and the plain words
for a release without an id. No Streamlit: numbers, tables and sentences only."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from hdp_app.views.formatting import plain
from hdp_app.views.release_budget import budget_refusal as dataset_refusal
from hdp_app.views.release_budget import ledger_problem
from hdp_core.errors import BudgetExceeded, LedgerError
from hdp_release.ledger.modes import MODE_IDENTITY
from hdp_release.ledger.people import PERSONS
from hdp_release.result import DATASET_LEDGER_NOTE, Release

__all__ = [
    "ID_HELP",
    "ID_LABEL",
    "ID_NAMES",
    "NO_ID",
    "NO_ID_NOTE",
    "budget_for",
    "budget_refusal",
    "guess_id",
    "id_of",
    "id_options",
    "id_problem",
    "kept_sentences",
    "people_frame",
    "people_table",
]

ID_LABEL = "Person id column (recommended)"
NO_ID = "(none: one budget for this dataset's name and levels)"
ID_NAMES = ("id", "user_id", "userid", "user", "person_id", "person", "customer_id", "uid")
ID_HELP = (
    "The column naming each row's person. With it the privacy ledger charges each person what "
    "they actually lose, across every column, subset and file of the same people, and a "
    "person whose weight was capped keeps the rest for later releases. Ids are stored only "
    "as keyed hashes, never shown. One row per person."
)
NO_ID_NOTE = (
    DATASET_LEDGER_NOTE
    + " A subset of these rows, an edited copy or another column of the same people would be "
    "charged as a different dataset: choose a person id column if the table has one."
)


PER_PERSON_LABEL = "Budget"
PER_PERSON_VALUE = "per person"
PER_PERSON_TEXT = (
    "With an id column the ledger keeps each person's own budget: a release runs each person at "
    "the smaller of the spend times their level and what they have left (a person with "
    "nothing left takes part with weight 0), and charges them what they actually lose. The "
    "receipt after the release says, per level, what was lost and what is kept."
)


def _norm(name: str) -> str:
    return "".join(ch for ch in name.strip().lower() if ch.isalnum() or ch == "_")


def guess_id(cols: Sequence[str]) -> int:
    """Index into :func:`id_options` of the column named like an id ('id', 'user_id',
    'customer_id', ... or anything ending in '_id'), else 0 (no id)."""
    names = [_norm(str(c)) for c in cols]
    for want in ID_NAMES:
        if want in names:
            return names.index(want) + 1
    for i, n in enumerate(names):
        if n.endswith("_id"):
            return i + 1
    return 0


def id_options(cols: Sequence[str]) -> list[str]:
    """The id selectbox's options: no id first, then the table's columns."""
    return [NO_ID, *(str(c) for c in cols)]


def id_of(choice: str | None) -> str | None:
    """The id column chosen (None for no id)."""
    return None if choice in (None, NO_ID) else choice


def id_problem(ident: str | None, value: str, eps: str) -> str | None:
    """Why the id choice cannot be used, or None."""
    if ident is not None and ident in (value, eps):
        role = "value" if ident == value else "privacy-level"
        return (
            f"The person id column is the {role} column: choose the column that names each "
            "row's person (or no id)."
        )
    return None


def budget_for(ident: str | None, remaining: Any) -> Any:
    """The dataset budget that gates the Release button: with an id each person is checked
    against their own level by the ledger at release time (a spent person is refused there,
    or takes part with weight 0), so the per-dataset remainder does not gate it (1)."""
    return 1 if ident is not None else remaining


def _num(x: float) -> str:
    """A level in nats, 3 significant digits, at least one decimal ('1.0', '0.04')."""
    if math.isinf(x):
        return "public"
    s = f"{x:.3g}"
    return s if any(ch in s for ch in ".e") else s + ".0"


def kept_sentences(rel: Release) -> list[str]:
    """Per level of a release with an id: what saturated people lost and keep ("23,130
    people lost 0.04 of their 1.0; they keep 0.96 for later releases"), who had nothing
    left, and who took part at less than asked. Empty without an id."""
    df = getattr(rel, "people", None)
    if df is None:
        return []
    out = []
    for r in df.itertuples(index=False):
        lvl = _num(float(r.eps)) if r.eps == r.eps_max else f"{_num(r.eps)}-{_num(r.eps_max)}"
        if r.saturated:
            lost = _num(r.lost_max) if r.lost_min == r.lost_max else f"up to {_num(r.lost_max)}"
            kept = _num(r.kept_min) if r.kept_min == r.kept_max else f"at least {_num(r.kept_min)}"
            out.append(
                f"{int(r.saturated):,} people lost {lost} of their {lvl}; they keep {kept} "
                "for later releases."
            )
        if r.exhausted:
            out.append(
                f"{int(r.exhausted):,} people at level {lvl} had nothing left: they took part "
                "with weight 0 (no loss)."
            )
    return out


def people_table(rel: Release) -> Any:
    """The per-level receipt of a release with an id, as shown (levels in nats): level,
    people, asked, ran at, lost, kept, capped (saturated), with nothing left."""
    return people_frame(rel.people)


def people_frame(df: Any) -> Any:
    """:func:`people_table` of a per-person receipt frame (hdp_release.ledger.people; one
    row per level, or per segment and level for a release per segment)."""
    import pandas as pd

    def span(lo: float, hi: float) -> str:
        return _num(lo) if lo == hi else f"{_num(lo)} to {_num(hi)}"

    return pd.DataFrame(
        {
            "Level": [span(a, b) for a, b in zip(df.eps, df.eps_max, strict=True)],
            "People": [f"{int(n):,}" for n in df.persons],
            "Asked": [_num(x) for x in df.asked],
            "Ran at": [span(a, b) for a, b in zip(df.run_min, df.run_max, strict=True)],
            "Lost": [span(a, b) for a, b in zip(df.lost_min, df.lost_max, strict=True)],
            "Kept": [span(a, b) for a, b in zip(df.kept_min, df.kept_max, strict=True)],
            "Capped": [f"{int(n):,}" for n in df.saturated],
            "Nothing left": [f"{int(n):,}" for n in df.exhausted],
        }
    )


def budget_refusal(err: Any) -> str:
    """The message of a release refused by the ledger (BudgetExceeded), from its fields: no
    person left (the per-person ledger) or the dataset's budget (hdp_app.views.release_budget)."""
    if str(err.identity) == MODE_IDENTITY:  # the ledger keeps the other kind of budget
        return plain(f"Nothing was released: {err}")
    if str(err.identity) == PERSONS:
        return (
            "Nothing was released: every person in this table has already spent their whole "
            "privacy level in earlier releases (of any column, subset or file of them)."
        )
    return dataset_refusal(err)


def refusal_text(err: Exception) -> str:
    """The page's sentence for a release (one mean or per segment) that raised ``err``: a
    budget refusal from its fields (:func:`budget_refusal`), a ledger that cannot be used
    (release_budget.ledger_problem), any other refusal as 'Nothing was released: ...'."""
    if isinstance(err, BudgetExceeded):
        return budget_refusal(err)
    if isinstance(err, LedgerError):
        return ledger_problem(err)
    return f"Nothing was released: {plain(err)}."
