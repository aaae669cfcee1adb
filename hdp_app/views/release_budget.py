"""The Release page's privacy budget and release decision (no streamlit; split from
hdp_app.views.release, issue 27): the spend control's steps and help, the dataset's budget
from the server's ledger (issue 22) and its history, the ledger's refusals and problems, the
sentences around a release (which mean it estimates, what it spent) and why the Release
button is disabled."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hdp_app.views.formatting import plain
from hdp_app.views.release import TARGET_WORDS, in_units, target_of
from hdp_release.result import Release, not_recorded_note

__all__ = [
    "CHARGED_STATUS",
    "LEDGER_ENV",
    "NAME_HELP",
    "SPEND_HELP",
    "SPEND_STEPS",
    "Blocker",
    "budget_caption",
    "budget_refusal",
    "chosen_target",
    "history_frame",
    "ledger_problem",
    "level_metric",
    "not_recorded_warning",
    "percent",
    "preview_caption",
    "preview_target",
    "release_blocker",
    "released_sentence",
    "spend_of_percent",
    "spend_problem",
]


# ------------------------------------------------------------------------------ budget
SPEND_HELP = (
    "The fraction of each user's privacy level this release uses. A user's level is their "
    "total budget on this dataset, over all releases: a smaller spend leaves budget for "
    "later releases but adds noise (a larger 95% error)."
)

NAME_HELP = (
    "Optional. Every release is charged to the table's privacy levels (which levels, how many "
    "users at each; never the values: the same table in any row or column order, file or "
    "name draws on one budget) and, when you give one, to this name too: the dataset is used "
    "up when either is."
)

LEDGER_ENV = "HDP_LEDGER"
"""The environment variable naming the server's ledger file (hdp_release.ledger.store.ENV_VAR)."""


def percent(x: Any) -> str:
    """A fraction of every user's level (0 to 1, exact or float) as a percentage text."""
    return f"{float(x) * 100:.4g}%"


def budget_caption(remaining: Any, releases: int, named: bool) -> str:
    """The line under the budget metric: how many releases the name has had (``named``) and
    what remains (an exact fraction) of every user's level."""
    left = f"{percent(remaining)} of every user's level remains for later releases"
    if not named:
        return (
            f"No dataset name given: {left} of data with these privacy levels. Give a name "
            "to keep this dataset's history here."
        )
    if releases == 0:
        return f"No release under this name yet; {left}."
    times = "1 release" if releases == 1 else f"{releases:,} releases"
    return f"{times} under this name so far; {left}."


def spend_problem(remaining: Any, spend: Any) -> str | None:
    """None if a release at ``spend`` fits in what remains of the dataset's budget, else the
    sentence saying why not (the budget is spent, or how low the spend must go)."""
    from hdp_core.spend import as_spend

    if remaining <= 0:
        return (
            "This dataset's privacy budget is spent: every user's level has been used up by "
            "earlier releases, so nothing more can be released from it (under this name, or "
            "from a table with these privacy levels, whatever its file, name or row order)."
        )
    if as_spend(spend) > remaining:
        return (
            f"Only {percent(remaining)} of every user's level remains for this dataset: lower "
            f"the spend to at most {percent(remaining)} to release."
        )
    return None


def budget_refusal(err: Any) -> str:
    """The message of a release refused by the ledger (hdp_core.errors.BudgetExceeded), from
    its fields (identity, spent, remaining, requested), never from its text; a keyed identity
    is described, never shown."""
    from hdp_release.ledger.store import NAME_PREFIX

    ident = str(err.identity)
    name = ident[len(NAME_PREFIX) :]
    if name.startswith("[") and "] " in name:  # a signed-in user's scope: not shown
        name = name.split("] ", 1)[1]
    who = (
        f"the dataset named {name}"
        if ident.startswith(NAME_PREFIX)
        else "data with these privacy levels (the same number of users at each level)"
    )
    return plain(
        f"Nothing was released: {who} has spent {percent(err.spent)} of every user's "
        f"level; {percent(err.remaining)} remains and this release would spend "
        f"{percent(err.requested)}."
    )


_UNUSABLE_WORDS = {
    "corrupt": "it is damaged",
    "not-a-ledger": "the file is not a privacy ledger",
    "version": "it was written by another version",
    "directory": "its path is a folder",
    "no-parent": "its folder does not exist",
    "not-writable": "its folder is not writable",
    "create-failed": "it could not be created",
    "vanished": "its file disappeared while the app was running",
    "orphan-wal": "its write-ahead log exists without the ledger file",
    "not-a-file": "its path is not a regular file",
    "replaced": "another file took its place while the app was running",
    "missing": "its file does not exist",
    "upgrade": "it was written by an older version and must be opened once for writing",
}


def ledger_problem(err: Any) -> str:
    """The message for a ledger that cannot be used now (hdp_core.errors.LedgerBusy or
    LedgerUnusable), from the error's type and fields, never its text."""
    from hdp_core.errors import LedgerBusy, LedgerUnusable

    if isinstance(err, LedgerBusy):
        return (
            f"The privacy ledger is busy: other releases held it for {err.waited:.0f} s. "
            "Nothing was charged or released; try again in a moment."
        )
    why = "it cannot be opened"
    if isinstance(err, LedgerUnusable):
        why = _UNUSABLE_WORDS.get(str(err.reason), why)
    return (
        f"The server's privacy ledger cannot be used ({why}), so nothing can be released: "
        "a release without its budget record could spend more than users allowed. Ask "
        f"whoever runs this app to repair it or to set {LEDGER_ENV} to another file."
    )


def _target_of_entry(e: Any) -> str | None:
    """The target a ledger entry released: its summary's (Release.to_dict) or its own."""
    t = (e.summary or {}).get("target") if isinstance(e.summary, dict) else None
    return t if t in TARGET_WORDS else (e.target if e.target in TARGET_WORDS else None)


def history_frame(entries: Sequence[Any], unit: str = "") -> Any:
    """The ledger's releases of a dataset (hdp_release.ledger.store.LedgerEntry), oldest first: time
    (UTC), spend, what was estimated, the private mean and its 95% interval, and the status
    (a failed release keeps its charge)."""
    import pandas as pd

    def interval(e: Any) -> str:
        if e.ci95 is None:
            return "—"
        return f"[{in_units(e.ci95[0])}, {in_units(e.ci95[1])}]"

    return pd.DataFrame(
        {
            "time (UTC)": [e.charged_at.strftime("%Y-%m-%d %H:%M:%S") for e in entries],
            "spend": [percent(e.spend) for e in entries],
            "estimated": [TARGET_WORDS.get(_target_of_entry(e) or "", "—") for e in entries],
            "private mean": [
                "—" if e.estimate is None else in_units(e.estimate, unit) for e in entries
            ],
            "95% interval": [interval(e) for e in entries],
            "status": [
                {"released": "released", "failed": "failed (charge kept)"}.get(
                    e.status, CHARGED_STATUS
                )
                for e in entries
            ],
        }
    )


CHARGED_STATUS = "charged, no result recorded"
"""The history's status of a release that was charged but whose result is not (yet) in the
ledger: one in progress, or one whose result could not be recorded (not_recorded_warning)."""


def not_recorded_warning(rel: Release) -> str | None:
    """The warning above a release whose result the ledger could not record in its history
    (``rel.recorded is False``; hdp_release.release.not_recorded_note, the CLI's words), with
    what to do on this page; None when the history holds it or nothing is tracked."""
    if rel.recorded is not False:
        return None
    note = not_recorded_note(rel)
    return (
        f"{note[0].upper()}{note[1:]} Download the result and receipt below now: this page "
        f"keeps them only until you leave it. The ledger's history lists this release as "
        f"'{CHARGED_STATUS}'."
    )


def released_sentence(rel: Release) -> str:
    """The line above a release's numbers: which mean it estimates, what it spent and what
    remains of the dataset's budget (from the Release's own fields)."""
    left = rel.budget_remaining
    tail = "" if left is None else f"; {percent(left)} of this dataset's budget remains"
    return (
        f"This release estimates {TARGET_WORDS[rel.target]}, spending {percent(rel.spend)} of "
        f"every user's level{tail}."
    )


def release_arguments(
    settings: Mapping[str, Any], menu: Any, answer: str | None, budget: tuple, spend: Any
) -> dict[str, Any]:
    """The keyword arguments the page passes to ``release_mean`` and ``release_means`` alike:
    the columns, range, declared spread, menu, target (:func:`chosen_target`), the server's
    ledger, spend, dataset name and scope (``budget`` is (ledger, dataset, remaining, scope))
    and the person id column."""
    led, dataset, _, scope = budget
    s = settings
    return dict(
        value=s["value"],
        eps=s["eps"],
        lo=s["lo"],
        hi=s["hi"],
        data_sd=s["data_sd"],
        tiers=menu,
        target=chosen_target(answer),
        ledger=led,
        spend=spend,
        dataset=dataset,
        id=s.get("id"),
        dataset_scope=scope,
    )


def chosen_target(answer: str | None) -> str:
    """The target of a release: the answer's (:func:`target_of`). Raises ValueError before an
    answer: a release never falls back to a default target."""
    target = target_of(answer)
    if target is None:
        raise ValueError("answer the question first: it decides which mean is released")
    return target


def preview_target(answer: str | None) -> str:
    """The target the "Before releasing" preview shows: the answer's, or the population mean
    (ADPM, the library's default) before an answer."""
    return target_of(answer) or "population"


def preview_caption(target: str, spend: Any) -> str:
    """The line under the preview's heading: for which mean and at which spend."""
    return (
        f"For {TARGET_WORDS[target]}, at a spend of {percent(spend)} of every user's level "
        "(the levels the release runs at)."
    )


def level_metric(target: str) -> tuple[str, str]:
    """(label, help) of the preview's level metric: tau* for the population mean, the cap
    level for the table's own mean (hdp_release.release.TierPreview.saturation_level)."""
    if target == "table":
        return (
            "Cap level",
            "Every user whose run level is at least this gets the same weight, 1/n (their "
            "share of the table); stricter users get less.",
        )
    return (
        "tau* (saturation level)",
        "Every user whose run level is at least tau* is granted tau*: more privacy than "
        "asked, at no cost in accuracy.",
    )


SPEND_STEPS = (1, 100)
"""The spend control's range in percent of every user's level (whole percents: exact
fractions p/100 for the ledger)."""


def spend_of_percent(p: Any) -> Fraction:
    """The exact spend (a fraction of every user's level) of the control's percent ``p``."""
    lo, hi = SPEND_STEPS
    q = int(p)
    if not lo <= q <= hi:
        raise ValueError(f"the spend is a whole percent from {lo} to {hi}, got {p!r}")
    return Fraction(q, 100)


@dataclass(frozen=True)
class Blocker:
    """Why the Release button is disabled: the sentence and how to show it ("info": a step
    left to do, "error": the budget refuses)."""

    text: str
    kind: str


def release_blocker(answer: str | None, remaining: Any, spend: Any) -> Blocker | None:
    """None if the page may release, else why not: the budget is spent or too small for the
    spend (:func:`spend_problem`, an error), or the question is not answered yet (info)."""
    problem = spend_problem(remaining, spend)
    if problem:
        return Blocker(problem, "error")
    if answer is None:
        return Blocker(
            "Answer the question above to release: it decides which mean is released.", "info"
        )
    return None
