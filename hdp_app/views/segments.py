"""The Release page's "a mean per segment" (issue 28): the choices, the table of segments,
the sentences, the downloads and the "Reproduce in Python" code. No streamlit.

Also the Tier designer's planning for segments before any data exists (segment sizes ->
each segment's 95% error, and the smallest segment that meets a target error)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hdp_app.views.codegen import menu_lines, scope_line
from hdp_app.views.formatting import frame_to_csv, plain, utc_timestamp
from hdp_release.grouped_result import PRIVACY_MODEL, GroupedRelease, key_text

MODES = ("One mean", "A mean per segment")
"""The Release page's choice: one mean of the whole table, or a mean per segment."""

MAX_PAGE_BY = 2
"""At most this many segment columns on the page (the library takes up to four)."""

TOO_FEW = "too few users to say much"
"""The mark of a segment whose 95% interval covers more than half the range."""

MODE_HELP = (
    "A mean per segment releases one private mean for every value of the segment columns "
    "(say, per region). Each person's value is used in exactly one segment, so each person "
    "spends their own level once, whatever the number of segments."
)


def segment_columns(
    columns: Sequence[str], value: str, eps: str, ident: str | None = None
) -> list[str]:
    """The columns a segment can be taken from: every column but the value, eps and person
    id columns."""
    return [str(c) for c in columns if str(c) not in (value, eps, ident)]


def by_problem(by: Sequence[str]) -> str | None:
    """Why the chosen segment columns cannot be used (None when they can)."""
    if not by:
        return "Choose one or two columns that name each row's segment (say, region)."
    if len(by) > MAX_PAGE_BY:
        return f"Choose at most {MAX_PAGE_BY} segment columns."
    return None


def segment_label(key: Sequence[Any]) -> str:
    """A segment's key as one label ('north / pro'), as plain text."""
    return " / ".join(key_text(x) for x in key)


def too_few(rel: Any) -> bool:
    """True when the segment's 95% interval covers more than half the range."""
    return (rel.ci95[1] - rel.ci95[0]) > 0.5 * (rel.hi - rel.lo)


def segments_table(g: GroupedRelease) -> Any:
    """One row per segment, sorted by estimate (then label): segment, users, private mean,
    95% interval (low, high), 95% error (±), the table target's bias bound (table target
    only), and a note ('too few users to say much', 'not in the table')."""
    import pandas as pd

    rows = []
    for k, r, here in zip(g.keys, g.releases, g.present, strict=True):
        note = "not in the table" if not here else (TOO_FEW if too_few(r) else "")
        row = {
            "segment": segment_label(k),
            "users": int(r.n_users),
            "private mean": float(r.estimate),
            "95% low": float(r.ci95[0]),
            "95% high": float(r.ci95[1]),
            "95% error ±": float(r.half_width95),
        }
        if g.target == "table":
            row["bias bound ±"] = float(r.bias_bound)
        row["note"] = note
        rows.append(row)
    df = pd.DataFrame(rows)
    if len(df):
        df = df.sort_values(["private mean", "segment"], kind="stable").reset_index(drop=True)
    return df


def segments_sentence(g: GroupedRelease, unit: str = "") -> str:
    """What was released, in one paragraph (markdown-safe)."""
    n = len(g.keys)
    few = sum(1 for r, p in zip(g.releases, g.present, strict=True) if p and too_few(r))
    absent = sum(1 for p in g.present if not p)
    which = (
        "the population mean (ADPM)"
        if g.target == "population"
        else "the table's own mean (TableMean; each interval includes its bias bound)"
    )
    parts = [
        f"Released a private mean of {which} for each of {n:,} segments of "
        f"{plain(', '.join(g.by))}, each with its own 95% interval."
    ]
    if few:
        parts.append(
            f"{few:,} segment{'s' if few != 1 else ''} have an interval wider than half the "
            f"range: {TOO_FEW}."
        )
    if absent:
        parts.append(f"{absent:,} segments asked for are not in the table (no data).")
    if g.n_left_out:
        parts.append(f"{g.n_left_out:,} segments in the table were left out.")
    parts.append(PRIVACY_MODEL)
    return " ".join(parts)


def segments_csv(g: GroupedRelease) -> bytes:
    """The segments table as CSV (formula-safe text cells, numbers as numbers)."""
    f = g.to_frame()
    f["too_few_users"] = [too_few(r) for r in g.releases]
    return frame_to_csv(f)


def receipt_csv(g: GroupedRelease) -> bytes:
    """The receipt per segment and level as CSV (formula-safe)."""
    return frame_to_csv(g.receipt())


def segments_json(
    g: GroupedRelease, settings: Mapping[str, Any], file: str, when: str | None = None
) -> bytes:
    """The whole result (segments, receipts, model, settings) as JSON bytes; ``released_at``
    is ``when`` (ISO 8601 UTC, e.g. '2026-11-27T08:30:12Z'), or now."""
    d = g.to_dict()
    d["released_at"] = utc_timestamp() if when is None else str(when)
    d["file"] = str(file)
    d["value_column"] = str(settings.get("value"))
    d["eps_column"] = str(settings.get("eps"))
    d["unit"] = str(settings.get("unit") or "")
    return json.dumps(d, indent=2, allow_nan=False, default=str).encode()


def segments_code(
    settings: Mapping[str, Any],
    file: str,
    by: Sequence[str],
    target: str,
    g: Any = None,
    menu: Any = None,
    scope: str | None = None,
) -> str:
    """The page's call as Python: ``hdp_release.release_means`` on the uploaded file (read from
    the current folder) with the page's columns, range, spread, target and segment columns;
    with the release ``g`` also what it did: spend (exact), the person id column, the ledger
    (the server's ledger file: running it on the same machine charges the same ledger), the
    dataset name and a signed-in user's ``scope`` (codegen.scope_line); with the Tier
    designer ``menu`` it is rebuilt and passed as ``tiers``."""
    sd = settings.get("data_sd")
    lines = [
        "import hdp_release",
        "",
        *menu_lines(menu),
        "g = hdp_release.release_means(",
        f"    {str(file)!r},",
        f"    value={str(settings['value'])!r},",
        f"    eps={str(settings['eps'])!r},",
        f"    by={[str(b) for b in by]!r},",
        f"    lo={float(settings['lo'])!r},",
        f"    hi={float(settings['hi'])!r},",
        f"    target={str(target)!r},",
        f"    data_sd={None if sd is None else float(sd)!r},",
    ]
    if menu is not None:
        lines.append("    tiers=menu,")
    if g is not None:
        ledger = g.ledger_path
        lines += [
            f"    spend={float(g.spend)!r},",
            f"    id={g.id_column!r},",
            f"    ledger={ledger!r},  # the privacy ledger charged (False: not tracked)"
            if ledger is not None
            else "    ledger=False,  # NOT TRACKED, as on the page",
            f"    dataset={g.dataset!r},",
            *scope_line(scope),
        ]
    lines += [
        ")",
        "print(g.text())  # every segment's private mean, 95% interval and receipt",
        "",
    ]
    return "\n".join(lines)


def people_sentence(g: GroupedRelease) -> str | None:
    """With a person id column: how each person was charged (once, what they lost in their
    own segment), how many were capped and keep the rest, and the segments refused because
    everyone there had spent their level. None without an id."""
    df = g.people
    if df is None:
        return None
    n = int(df.persons.sum())
    capped = int(df.saturated.sum())
    parts = [
        f"Each of the {n:,} people was charged once, what they lost in their own segment "
        f"(each asked {g.spend:.3g} of their level)."
    ]
    if capped:
        kept = float(df.kept_min[df.saturated > 0].min())
        parts.append(
            f"{capped:,} people were capped (saturated) in their segment: they keep at least "
            f"{kept:.3g} of their level for later releases."
        )
    gone = int(df.exhausted.sum())
    if gone:
        parts.append(f"{gone:,} people had nothing left: they took part with weight 0.")
    if g.n_spent_segments:
        parts.append(
            f"Refused in {g.n_spent_segments:,} segments: every person there has already spent "
            "their level (the mid-range, from no data)."
        )
    return " ".join(parts)


def people_segments_table(g: GroupedRelease, table: Any) -> Any:
    """The per-person receipt per segment and level, as shown: Segment, then ``table``'s
    columns (``table``: hdp_app.views.people.people_frame of the receipt's level columns)."""
    kc = [c for c in g.people.columns[: len(g.by)]]
    labels = [segment_label(k) for k in g.people[kc].itertuples(index=False, name=None)]
    out = table.copy()
    out.insert(0, "Segment", labels)
    return out


# ------------------------------------------------------------------ planning (Tier designer)
def planning_table(
    levels: Any,
    shares: Any,
    segments: Sequence[tuple[str, int]],
    lo: float,
    hi: float,
    data_sd: float | None = None,
) -> Any:
    """Per planned segment (name, users): its 95% error (data units) for the population
    mean (ADPM) and for the table's own mean (TableMean), the menu's levels split by
    ``shares`` (percent or fractions)."""
    import pandas as pd

    from hdp_core.segments import segment_errors_95

    sizes = [int(n) for _, n in segments]
    pop = segment_errors_95(levels, shares, sizes, lo, hi, "population", data_sd)
    tab = segment_errors_95(levels, shares, sizes, lo, hi, "table")
    return pd.DataFrame(
        {
            "segment": [str(s) for s, _ in segments],
            "users": sizes,
            "95% error, population mean (ADPM) ±": pop,
            "95% error, table's own mean (TableMean) ±": tab,
            "note": [TOO_FEW if 2 * e > 0.5 * (hi - lo) else "" for e in np.minimum(pop, tab)],
        }
    )


def smallest_segment_sentence(
    levels: Any, shares: Any, error: float, lo: float, hi: float, unit: str = ""
) -> str:
    """'The smallest segment that meets ±error': for both targets, in one sentence."""
    from hdp_core.segments import smallest_segment

    parts = []
    for target, name in (("population", "the population mean"), ("table", "the table's mean")):
        n = smallest_segment(levels, shares, error, lo, hi, target)
        parts.append(
            f"{name}: {n:,} users" if n is not None else f"{name}: no segment size reaches it"
        )
    err = f"{error:,.4g} {plain(unit)}".strip()
    return f"The smallest segment whose 95% error is at most ±{err}: " + "; ".join(parts) + "."


def parse_sizes(text: str) -> list[tuple[str, int]]:
    """Segment sizes typed as 'name, users' lines or a CSV of segment,users (a header line
    is skipped). Raises ValueError naming the line of a bad entry (never quoting it)."""
    out = []
    for i, line in enumerate(str(text).splitlines(), start=1):
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != 2:
            raise ValueError(f"line {i}: write 'segment, users'")
        try:
            n = int(float(cells[1]))
        except ValueError:
            if i == 1:
                continue  # a header
            raise ValueError(f"line {i}: the number of users is not a number") from None
        if not (0 <= n <= 10**12) or not math.isfinite(float(cells[1])):
            raise ValueError(f"line {i}: users must be a whole number from 0 to 10^12")
        out.append((cells[0], n))
    if len(out) > 1000:
        raise ValueError("at most 1,000 segments")
    return out


PLANNING_TITLE = "Segments: each segment's 95% error before any data"
PLANNING_INTRO = (
    "Releasing a mean per segment (per region, per plan)? Each segment is its own table: "
    "its error depends on its own users. Type each segment's expected users (one "
    "'segment, users' per line, or paste a CSV of segment,users); each segment's users are "
    "split over your menu's tiers by its shares."
)
PLANNING_EXAMPLE = "segment,users\nnorth,12000\nsouth,3000\nislands,150\n"
