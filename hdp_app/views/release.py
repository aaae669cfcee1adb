"""The Release page's tables, sentences and choices (no streamlit): column guessing, the
"Before releasing" preview, which mean to release (issue 21), the privacy receipt, the
settings' bounds and the downloads of a release. The privacy budget from the ledger (issue 22)
and the sentences around a release are in hdp_app.views.release_budget.

Speed: the preview of a table with k distinct levels costs O(k log k) (one sort) and formats
only the rows shown (at most :data:`PREVIEW_ROWS`); :func:`telling_levels` compares a level
with its two neighbours among the sorted levels only, which gives the same text as comparing
it with every level (rounding to d significant digits is monotone, so a level that reads like
some other level reads like its neighbour on that side).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdp_app.views.formatting import count_noun, frame_to_csv, plain, short_eps, telling_eps
from hdp_app.views.limits import REAL_MAX
from hdp_core.errors import HdpError
from hdp_core.profile import MAX_UPLOAD_BYTES
from hdp_core.validate import tier_key
from hdp_release.preview import tier_levels, tier_names_of
from hdp_release.result import Release

__all__ = [
    "CHOOSE_COLUMNS",
    "EPS_COLUMN_HELP",
    "EPS_NAMES",
    "ERROR_HELP",
    "HI_HELP",
    "LO_HELP",
    "MENU_TOGGLE_HELP",
    "MIDRANGE_WARNING",
    "NOISE_HELP",
    "PAGE_INTRO",
    "PREVIEW_ROWS",
    "RANGE_FIRST",
    "RANGE_MAX",
    "SAME_COLUMN",
    "SD_HELP",
    "SD_MIN_RELATIVE",
    "SD_TOGGLE_HELP",
    "SIDEBAR_TEXT",
    "TARGET_ANSWERS",
    "TARGET_HELP",
    "TARGET_WORDS",
    "UPLOAD_HELP",
    "VALUE_COLUMN_HELP",
    "VALUE_NAMES",
    "Preview",
    "TargetChoice",
    "excluded_help",
    "guess_columns",
    "in_units",
    "is_stale",
    "loaded_caption",
    "menu_caption",
    "menu_range_note",
    "off_menu_note",
    "preview_table",
    "range_problem",
    "receipt_csv",
    "receipt_table",
    "released_caption",
    "result_csv",
    "result_dict",
    "result_json",
    "sd_bounds",
    "spend_errors",
    "table_hint",
    "target_answer_caption",
    "target_choices",
    "target_of",
    "technical_details",
    "telling_levels",
    "upload_hint",
]

PREVIEW_ROWS = 200
"""Most rows of the "Before releasing" table (the strictest levels)."""

RANGE_MAX = REAL_MAX
"""Largest magnitude of the public range's ends the page accepts (the data-range validator's
limit, hdp_app.views.limits.REAL_MAX): the range widgets are bounded by it."""

SD_MIN_RELATIVE = 1e-6
"""Smallest declared standard deviation, as a fraction of the range's width."""

VALUE_NAMES = ("value", "values", "x", "data", "amount", "spend", "salary", "income")
EPS_NAMES = ("eps", "epsilon", "tier", "tiers", "level", "privacy", "privacy_level")

ERROR_HELP = (
    "The released interval is the private mean ± this much (cut to the range): it contains "
    "the mean being estimated (the population's or this table's own, values clamped to the "
    "range) in at least 95% of releases. For the table's own mean that holds for every "
    "table in the range; for the population mean, for every population in the range (with "
    "the spread you declared, if any) whose privacy choices are unrelated to values."
)

MENU_HINT = " To read tier names, turn on 'Read the eps column with this menu' above."

_NOT_A_NUMBER = frozenset(
    {"text", "thousands_separator", "decimal_comma", "currency_or_unit", "date"}
)
"""Reasons (hdp_core.validate.cell_reason) of a cell that might be a tier's name."""


def in_units(x: float, unit: str = "") -> str:
    """A number in data units: 4 significant digits, scientific beyond 1e9, '—' if not finite;
    the unit (user text) escaped for markdown."""
    if not math.isfinite(x):
        return "—"
    if abs(x) >= 1e9:
        s = f"{x:.4g}"
    else:
        s = f"{x:,.4g}" if abs(x) < 1e5 else f"{x:,.0f}"
    return f"{s} {plain(unit)}".strip()


def upload_hint(menu: Any) -> str:
    """The sentence under an empty uploader: example columns (plain text, no markdown)."""
    if menu is not None:
        first = plain(menu.tiers[0].name)
        return f"Upload a CSV to start. Example columns: value,tier with rows like 120,{first}."
    return "Upload a CSV to start. Example columns: value,eps with rows like 120,0.5."


def menu_caption(menu: Any, where: str) -> str:
    """The line under "Your tier menu": where it came from, its tiers and range (plain)."""
    tiers = " · ".join(
        f"{t.name}: " + ("public" if math.isinf(t.eps) else f"eps {short_eps(t.eps)}")
        for t in menu.tiers
    )
    unit = f" {menu.unit}" if menu.unit else ""
    return plain(f"From {where}: {tiers}. Range {menu.low:g} to {menu.high:g}{unit}.")


def loaded_caption(file: str, df: Any) -> str:
    """The line under the uploader: the file's name, rows and columns (never its cells)."""
    return f"Loaded {plain(file)}: {len(df):,} rows, {df.shape[1]} columns (not displayed)."


def menu_range_note(lo: float, hi: float, menu: Any) -> str | None:
    """A note when the range set differs from the menu's (None otherwise, or without a menu)."""
    if menu is None or (lo, hi) == (menu.low, menu.high):
        return None
    return plain(
        f"Your range differs from the menu's ({menu.low:g} to {menu.high:g}): the numbers "
        "below are for the range you set."
    )


def released_caption(settings: Mapping[str, Any], file: str, when: str) -> str:
    """The line under a release: when, from which file, columns and range (plain)."""
    s = settings
    return plain(
        f"Released at {when} from {file}: value column {s['value']}, privacy-level column "
        f"{s['eps']}, range {s['lo']:g} to {s['hi']:g} {s.get('unit', '')}".strip()
        + "."
    )


def is_stale(last: Mapping[str, Any], current: tuple[str, Mapping[str, Any]] | None) -> bool:
    """True if the file or the settings on the page differ from those of the last release."""
    return current is not None and (
        current[0] != last["table"] or dict(current[1]) != dict(last["settings"])
    )


def excluded_help(rel: Release) -> str:
    """The help of the "Users used" metric: how many users with eps = 0 were left out."""
    return f"{count_noun(rel.n_excluded, 'user')} with eps = 0 not used."


def technical_details(rel: Release, unit: str) -> str:
    """The release's noise, privacy-loss rule, plan and its level (tau* for the population
    mean; the cap level for the table's own mean, never called tau*) in one paragraph."""
    tau = "none" if math.isinf(rel.saturation_level) else f"{rel.saturation_level}"
    level = (
        f"tau* = {tau}."
        if rel.target == "population"
        else f"Cap level = {tau} (users asking for at least it get the same weight, 1/n)."
    )
    return plain(
        f"Noise: Laplace, scale {in_units(rel.noise_scale)} {unit}, drawn by OpenDP. "
        "Privacy loss of a user: OpenDP's privacy map of that measurement at the most one "
        "user's value can move the weighted mean (their weight × the range, plus twice the "
        f"rounding bound {rel.rounding_bound:.3g}). Plan: {rel.plan}. {level}"
    )


# ------------------------------------------------------------------------------ columns
def _by_name(cols: Sequence[str], names: tuple[str, ...], skip: int | None) -> int | None:
    low = [c.strip().lower() for c in cols]
    for n in names:
        for i, c in enumerate(low):
            if c == n and i != skip:
                return i
    return None


def _menu_column(df: Any, menu: Any, skip: int | None) -> int | None:
    """The column whose first 1,000 cells are mostly the menu's tier names, if any."""
    if menu is None:
        return None
    names = set(tier_levels(menu))
    for i, c in enumerate(df.columns):
        if i == skip or df[c].dtype.kind in "biufc":
            continue
        cells = df[c].head(1000).dropna().astype(str).map(tier_key)  # the release's rule
        if len(cells) and cells.isin(names).mean() >= 0.5:
            return i
    return None


def guess_columns(df: Any, menu: Any = None) -> tuple[int | None, int | None]:
    """(value column, eps column) positions to preselect in a pandas DataFrame, or None each:
    the eps column by name (:data:`EPS_NAMES`) or as the column of the menu's tier names; the
    value column by name (:data:`VALUE_NAMES`), or, in a two-column table whose eps column is
    recognised, the other column. Never the same column twice."""
    cols = [str(c) for c in df.columns]
    eps_i = _by_name(cols, EPS_NAMES, None)
    if eps_i is None:
        eps_i = _menu_column(df, menu, None)
    value_i = _by_name(cols, VALUE_NAMES, eps_i)
    if value_i is None and eps_i is not None and len(cols) == 2:
        value_i = 1 - eps_i
    return value_i, eps_i


# ------------------------------------------------------------------------------ settings
def range_problem(lo: float, hi: float) -> str | None:
    """None if [lo, hi] is a usable public range, else the sentence to show: lo < hi, both
    ends within ±:data:`RANGE_MAX` (the bound of the range widgets and of the data-range
    validator, hdp_app.views.limits.REAL_MAX)."""
    if not lo < hi:
        return "The lowest possible value must be below the highest possible value."
    if not (math.isfinite(lo) and math.isfinite(hi)) or max(abs(lo), abs(hi)) > RANGE_MAX:
        return f"Each end of the range must be between -{RANGE_MAX:g} and {RANGE_MAX:g}."
    return None


def sd_bounds(lo: float, hi: float) -> tuple[float, float]:
    """(smallest, largest) declared standard deviation on [lo, hi], in data units: from
    :data:`SD_MIN_RELATIVE` of the width up to half the width (data in the range cannot
    spread more; the release's own check)."""
    w = float(hi) - float(lo)
    return w * SD_MIN_RELATIVE, w / 2


def table_hint(err: HdpError, eps_column: str, menu_off: bool) -> str:
    """A sentence to add to a table problem: how to read tier names, when the eps column has a
    cell that is not a number while a menu is available but not used (from the error's fields,
    never its text)."""
    if menu_off and err.column == eps_column and err.reason in _NOT_A_NUMBER:
        return MENU_HINT
    return ""


# ------------------------------------------------------------------------------ preview
def telling_levels(xs: Any, levels: Any) -> list[str]:
    """For each x in ``xs``, :func:`telling_eps` (x, levels): enough digits to read unlike
    every other level, found from x's two neighbours in the sorted levels (O(log k) each, the
    same text as the O(k) comparison; see the module docstring)."""
    lv = np.asarray(levels, dtype=float).ravel()
    lv = np.unique(lv[np.isfinite(lv)])
    out = []
    for x in np.asarray(xs, dtype=float).ravel():
        if not math.isfinite(x):
            out.append(short_eps(x))
            continue
        i = int(np.searchsorted(lv, x, "left"))
        j = int(np.searchsorted(lv, x, "right"))
        near = ([lv[i - 1]] if i > 0 else []) + ([lv[j]] if j < lv.size else [])
        out.append(telling_eps(float(x), near))
    return out


def _tier_column(levels: Any, menu: Any) -> dict[str, list[str]]:
    """The "tier" column (the menu's names at each level) when a menu is used."""
    if menu is None:
        return {}
    names = tier_names_of(levels, menu)
    lv = np.asarray(levels, dtype=float).ravel()
    return {
        "tier": [
            n or ("—" if x == 0 else "not on the menu") for n, x in zip(names, lv, strict=True)
        ]
    }


@dataclass(frozen=True)
class Preview:
    """The "Before releasing" table and its words: ``frame`` (at most PREVIEW_ROWS rows),
    ``caption`` (None when every level is shown) and ``tau`` (tau* as text)."""

    frame: Any
    caption: str | None
    tau: str


def preview_table(pv: Any, menu: Any = None, rows: int = PREVIEW_ROWS) -> Preview:
    """The preview (hdp_release.release.TierPreview) as the page shows it: the ``rows`` strictest
    levels, each with its tier (with a menu), requested eps, users, granted eps and share of
    the weight; only those rows are formatted."""
    import pandas as pd

    t = pv.tiers
    k = len(t)
    head = t.iloc[:rows]
    eps = head["eps"].to_numpy(dtype=float)
    granted = head["granted_eps"].to_numpy(dtype=float)
    all_eps = t["eps"].to_numpy(dtype=float)
    told = telling_levels(granted, all_eps)
    frame = pd.DataFrame(
        {
            **_tier_column(eps, menu),
            "requested eps": [short_eps(x) if x > 0 else "0 (not used)" for x in eps],
            "users": head["users"].to_numpy(),
            "granted eps": [g if x > 0 else "—" for g, x in zip(told, granted, strict=True)],
            "share of the weight": [f"{100 * w:.3g}%" for w in head["weight_share"]],
        }
    )
    caption = f"{k:,} distinct levels: showing the {rows} strictest." if k > rows else None
    tau = pv.saturation_level
    tau_text = "none" if math.isinf(tau) else telling_levels([tau], all_eps)[0]
    return Preview(frame, caption, tau_text)


def off_menu_note(levels: Any, counts: Any, menu: Any) -> str | None:
    """The warning for levels in the table that are not on the menu (None if there are none):
    the first five with their user counts, and how many more (vectorised over the levels)."""
    if menu is None:
        return None
    lv = np.asarray(levels, dtype=float)
    ct = np.asarray(counts)
    on = np.asarray(list(tier_levels(menu).values()), dtype=float)
    off = np.flatnonzero((lv > 0) & ~np.isin(lv, on))
    if off.size == 0:
        return None
    n = int(off.size)
    listed = ", ".join(f"{short_eps(lv[i])} ({count_noun(int(ct[i]), 'user')})" for i in off[:5])
    more = f" and {n - 5:,} more" if n > 5 else ""
    return (
        f"{count_noun(n, 'level')} in the table {'is' if n == 1 else 'are'} not on your "
        f"menu: {listed}{more}. Their users are treated like everyone else: granted the level "
        "they asked for or tau*, whichever is smaller. Check the column if you did not expect "
        "them."
    )


# ------------------------------------------------------------------------------ receipt
def receipt_table(rel: Release, menu: Any = None) -> Any:
    """The privacy receipt as shown: per row (a level or an interval of levels) the tier (with
    a menu), requested eps, users, granted eps and OpenDP's privacy loss."""
    import pandas as pd

    t = rel.tiers
    eps = t["eps"].to_numpy(dtype=float)
    return pd.DataFrame(
        {
            **_tier_column(eps, menu),
            "requested eps": [short_eps(x) for x in eps],
            "users": t["users"].to_numpy(),
            "granted eps": telling_levels(t["granted_eps"], eps),
            "privacy loss": [short_eps(x) for x in t["privacy_loss"]],
        }
    )


# ------------------------------------------------------------------------------ downloads
def _num(x: Any) -> Any:
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if not math.isfinite(x):
            return "inf" if x > 0 else ("-inf" if x < 0 else None)
        return x
    if isinstance(x, np.integer):
        return int(x)
    return x


def result_dict(
    rel: Release, settings: Mapping[str, Any], file: str, when: str, menu: Any = None
) -> dict[str, Any]:
    """The release and its receipt as a JSON-ready dict: what was released from which file,
    columns, range and unit, the result (Release.to_dict) and, with a menu, each receipt row's
    tier names."""
    d = rel.to_dict()
    if menu is not None:
        names = tier_names_of(rel.tiers["eps"].to_numpy(dtype=float), menu)
        for row, name in zip(d["tiers"], names, strict=True):
            row["tier"] = name
    return {
        "file": file,
        "released_at": when,
        "value_column": settings["value"],
        "eps_column": settings["eps"],
        "unit": settings.get("unit", ""),
        **{k: _num(v) for k, v in d.items() if k != "tiers"},
        "tiers": [{k: _num(v) for k, v in r.items()} for r in d["tiers"]],
    }


def result_json(
    rel: Release, settings: Mapping[str, Any], file: str, when: str, menu: Any = None
) -> bytes:
    """:func:`result_dict` as indented UTF-8 JSON."""
    d = result_dict(rel, settings, file, when, menu)
    return json.dumps(d, indent=2, ensure_ascii=False, allow_nan=False).encode()


def result_csv(
    rel: Release, settings: Mapping[str, Any], file: str, when: str, menu: Any = None
) -> bytes:
    """The result as a one-row CSV (no receipt); text cells cannot start a formula
    (hdp_core.validate.csv_safe), numbers are written as numbers."""
    import pandas as pd

    d = result_dict(rel, settings, file, when, menu)
    row = {k: v for k, v in d.items() if k not in ("tiers", "notes", "ci95", "range")}
    row["ci95_low"], row["ci95_high"] = d["ci95"]
    row["lo"], row["hi"] = d["range"]
    row["notes"] = " ".join(d["notes"])
    return frame_to_csv(pd.DataFrame([row]))


def receipt_csv(rel: Release, menu: Any = None) -> bytes:
    """The privacy receipt as CSV, one row per receipt row, with numbers in full precision
    ('inf' = public) and, with a menu, the tier names (formula-safe)."""
    import pandas as pd

    t = rel.tiers.copy()
    if menu is not None:
        t.insert(0, "tier", tier_names_of(t["eps"].to_numpy(dtype=float), menu))
    return frame_to_csv(pd.DataFrame(t))


# ------------------------------------------------------------------------------ which mean
TARGET_ANSWERS = ("Yes, or maybe", "No")
"""The answers to :data:`hdp_app.views.explain.TARGET_QUESTION`, in the order shown (the page
preselects none)."""

_TARGET_OF_ANSWER = {"Yes, or maybe": "table", "No": "population"}

TARGET_WORDS = {
    "population": "the population mean (ADPM)",
    "table": "this table's own mean (TableMean)",
}
"""What a release of each target estimates, in a few words (for the result and history)."""


def target_of(answer: str | None) -> str | None:
    """The release's target for an answer to the question: "table" (no assumption) for "Yes,
    or maybe", "population" (ADPM) for "No"; None before an answer."""
    if answer is None:
        return None
    if answer not in _TARGET_OF_ANSWER:
        raise ValueError(f"not an answer to the question: {str(answer)[:40]!r}")
    return _TARGET_OF_ANSWER[answer]


@dataclass(frozen=True)
class TargetChoice:
    """One answer as the page shows it before a release: the answer, its target, that
    target's 95% error (data units) and the sentence saying what it estimates and assumes."""

    answer: str
    target: str
    error: float
    text: str


def spend_errors(
    levels: Any,
    counts: Any,
    lo: float,
    hi: float,
    data_sd: float | None = None,
    spend: Any = 1,
) -> Any:
    """Both targets' 95% errors (data units; hdp_app.views.whatif.TargetErrors) of one
    release of a table with ``counts[j]`` users at ``levels[j]`` on [lo, hi] that spends
    ``spend`` of every user's level: hdp_core.intervals.release_error_95, the function the
    release's own interval and the Tier designer use."""
    from hdp_app.views.whatif import TargetErrors
    from hdp_core.intervals import release_error_95

    args = (levels, counts, lo, hi)
    return TargetErrors(
        release_error_95(*args, target="population", data_sd=data_sd, spend=spend),
        release_error_95(*args, target="table", spend=spend),
    )


def target_choices(errors: Any) -> list[TargetChoice]:
    """The two answers in the order shown, each with its target's 95% error (``errors``: a
    TargetErrors in data units) and its sentence (explain.TARGET_TABLE_TEXT /
    TARGET_POPULATION_TEXT)."""
    from hdp_app.views.explain import TARGET_POPULATION_TEXT, TARGET_TABLE_TEXT

    text = {"table": TARGET_TABLE_TEXT, "population": TARGET_POPULATION_TEXT}
    out = []
    for a in TARGET_ANSWERS:
        t = _TARGET_OF_ANSWER[a]
        out.append(TargetChoice(a, t, errors.get(t), text[t]))
    return out


def target_answer_caption(answer: str) -> str:
    """The line under an answer's heading: which mean that answer releases."""
    return f"Releases {TARGET_WORDS[_TARGET_OF_ANSWER[answer]]}."


# ------------------------------------------------------------------------------ the page's texts
# The Release page's fixed sentences: widget helps, hints and warnings (pages/release.py).
MENU_TOGGLE_HELP = (
    "A cell holding a tier's name (case and spaces ignored) takes that tier's "
    "level; numbers are read as levels. The menu's range, unit and declared spread fill "
    "the settings below (you can still change them)."
)

UPLOAD_MB = MAX_UPLOAD_BYTES // 2**20
"""The largest table the page takes, in MiB (the server's maxUploadSize says the same)."""
UPLOAD_LABEL = f"Your table (CSV, one row per user, at most {UPLOAD_MB} MB)"

UPLOAD_HELP = (
    "Needs a column of values (e.g. a salary) and a column with the privacy level "
    "each user asked for (0 = do not use my data, 'inf' or 'public' = no privacy), or the "
    "name of their tier on your menu. The file is sent to this app's server and kept only "
    "in your session's memory until you leave: it is never shown, written to disk or put "
    "in a link."
)

VALUE_COLUMN_HELP = "The numbers whose mean you want to release."

EPS_COLUMN_HELP = (
    "Each user's privacy level (smaller = more privacy), or their tier's name when "
    "the menu is used."
)

CHOOSE_COLUMNS = "Choose the value column and the privacy-level column."

SAME_COLUMN = (
    "The value column and the privacy-level column are the same column: choose the "
    "column that holds each user's privacy level (or tier)."
)

LO_HELP = (
    "The public range must be fixed in advance from what you know about the data (not read "
    "off this table). Values outside it are clamped to it (by design)."
)

HI_HELP = "Together with the lowest value this sets the privacy noise: a wider range, more noise."

RANGE_FIRST = (
    "Set the lowest and highest possible values first: the public range of the "
    "data, from what you know about it (not read off the table)."
)

SD_TOGGLE_HELP = (
    "Tunes ADPM to a declared spread. It must come from outside the data "
    "(never estimated from this table); off = the worst case."
)

SD_HELP = (
    "At most half the range: data inside the range cannot spread more. Empty = the worst case."
)

NOISE_HELP = "Scale of the Laplace noise added to the weighted mean."

MIDRANGE_WARNING = (
    "With these levels the noise would swamp the answer: the release will be "
    "the middle of the range, which uses no data."
)

TARGET_HELP = (
    "Answer 'No' only if you are sure a person's privacy choice is unrelated to "
    "their value; otherwise the table's own mean is the honest answer."
)

SIDEBAR_TEXT = (
    "This page releases your uploaded table; the profile below (its tau* and other "
    "numbers) is what the other pages show, not this table's."
)

PAGE_INTRO = (
    "Go from a tier menu to a real answer: upload your table, check what each privacy "
    "level gets, and release the mean with ADPM's weights and OpenDP's Laplace noise. "
    "Before each release, every user's privacy loss in it is checked against the level "
    "they asked for, and the server's privacy ledger keeps each user's level as their "
    "total budget on the dataset over all releases."
)
