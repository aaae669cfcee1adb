"""The Profile page's control values, tier rows, cards and sentences (no streamlit).

pages/profile.py keeps a mirror of its controls (a dict keyed like the widgets, ``prof_*``);
this module says what those values are for a profile spec (:func:`ui_from_spec`), what the
tiers editor's rows are for a profile (:func:`rows_from_profile`), how rows change between
counts and shares (:func:`convert_rows`), and what the summary cards and notes say.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from hdp_app.views import links
from hdp_app.views.cards import Metric
from hdp_app.views.explain import two_group_verdict
from hdp_app.views.formatting import count_noun, plain
from hdp_app.views.limits import Limit
from hdp_core.adpm import ADPMSolution
from hdp_core.errors import ProfileError
from hdp_core.profile import MAX_UPLOAD_BYTES, EpsilonProfile
from hdp_core.validate import parse_level

MODES = ("Preset", "Generator", "Tiers", "Upload")
"""The four ways of building a profile (the mode radio's options)."""
DISTS = {
    "log_uniform": "Log-uniform",
    "two_groups": "Two groups",
    "mixture": "Mixture with public users",
}
"""The generator's distributions (spec kind -> label)."""
_STEPS = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)
GRID = (*(float(f"{m * 10.0**k:.6g}") for k in range(-3, 3) for m in _STEPS), 1000.0)
"""Log-scale grid of the eps sliders: 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 per decade, 0.001
to 1000."""
LEVEL_HELP = (
    "Smaller eps = more privacy (the user's data can change the result less). "
    "∞ (public) = public data, used as is. 0 = the user's data is not used at all."
)
DEFAULT_ROWS = [
    {"name": "Strict", "eps": "0.1", "count": 600.0, "share": 60.0},
    {"name": "Balanced", "eps": "1", "count": 300.0, "share": 30.0},
    {"name": "Public", "eps": "public", "count": 100.0, "share": 10.0},
]
"""The tiers editor's first rows."""
SPEC_KINDS = ("preset", "log_uniform", "two_groups", "mixture", "tiers")
"""Spec kinds the page's controls can show (others are files or come from elsewhere)."""


def default_ui() -> dict[str, Any]:
    """Every control's first value (the paper's high-variance preset selected)."""
    return {
        "prof_mode": "Preset",
        "prof_preset": "paper_high",
        "prof_preset_seed": 0,
        "prof_dist": "log_uniform",
        "prof_lu_n": 1000,
        "prof_lu_range": (0.02, 8.0),
        "prof_lu_seed": 0,
        "prof_tg_n": 1000,
        "prof_tg_frac": 0.9,
        "prof_tg_eps1": 0.1,
        "prof_tg_eps2": 1.0,
        "prof_mx_n": 1000,
        "prof_mx_range": (0.05, 1.0),
        "prof_mx_public": 0.1,
        "prof_mx_seed": 0,
        "prof_tiers_units": "count",
        "prof_tiers_total": 1000,
    }


def fmt_level(x: float) -> str:
    """A level as the sliders and the tiers editor show it: 'public' for inf, else %g."""
    return "public" if math.isinf(x) else f"{x:g}"


def level_options(*extra: float | None, public: bool = False) -> list[float]:
    """The slider grid plus any exact finite values a link or preset brought in (sorted),
    then inf when ``public``."""
    vals = set(GRID) | {float(x) for x in extra if x is not None and math.isfinite(x)}
    out = sorted(vals)
    return [*out, math.inf] if public else out


def rows_from_profile(prof: EpsilonProfile) -> list[dict[str, Any]] | None:
    """Editor rows (name, eps text, count, share %) for a profile with few levels (tiers, or
    a per-user list with at most 10 distinct levels), else None."""
    if prof.is_tiered and prof.k <= links.MAX_SPEC_TIERS:
        lv, ct = prof.levels, prof.counts
        names = list(prof.names) if prof.names else [""] * prof.k
    elif not prof.is_tiered and prof.n_distinct <= 10:
        lv, ct = prof.grouped()
        names = [""] * lv.size
    else:
        return None
    n = int(ct.sum())
    return [
        {"name": nm, "eps": fmt_level(float(e)), "count": float(c), "share": 100.0 * c / n}
        for nm, e, c in zip(names, lv, ct)
    ]


def ui_from_spec(
    spec: Any, prof: EpsilonProfile
) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
    """(control values that describe ``spec``, the mode too; tier rows to load into the
    editor or None). A spec the controls cannot show selects Upload and leaves the rest."""
    try:
        s = links.normalize_spec(spec)
    except (ProfileError, ValueError):
        return {"prof_mode": "Upload"}, None
    k = s["kind"]
    if k == "preset":
        return {
            "prof_mode": "Preset",
            "prof_preset": s["name"],
            "prof_preset_seed": s["seed"],
        }, None
    if k == "log_uniform":
        return {
            "prof_mode": "Generator",
            "prof_dist": k,
            "prof_lu_n": s["n"],
            "prof_lu_range": (s["lo"], s["hi"]),
            "prof_lu_seed": s["seed"],
        }, None
    if k == "two_groups":
        return {
            "prof_mode": "Generator",
            "prof_dist": k,
            "prof_tg_n": s["n"],
            "prof_tg_frac": s["frac"],
            "prof_tg_eps1": s["eps1"],
            "prof_tg_eps2": s["eps2"],
        }, None
    if k == "mixture":
        return {
            "prof_mode": "Generator",
            "prof_dist": k,
            "prof_mx_n": s["n"],
            "prof_mx_range": (s["lo"], s["hi"]),
            "prof_mx_public": s["public"],
            "prof_mx_seed": s["seed"],
        }, None
    if k == "tiers":
        ui = {
            "prof_mode": "Tiers",
            "prof_tiers_units": "count",
            "prof_tiers_total": int(sum(s["counts"])),
        }
        return ui, rows_from_profile(prof) or DEFAULT_ROWS
    return {"prof_mode": "Upload"}, None


def num_or_none(x: Any) -> float | None:
    """``x`` as a float, or None when it is not a number (or NaN: an empty editor cell)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def convert_rows(
    rows: Sequence[dict[str, Any]], units: str, total: int
) -> tuple[list[dict[str, Any]], int | None]:
    """The tiers as ``units`` ('share': each count's percent of their sum; 'count': whole
    users adding up to ``total``, None where shares cannot be apportioned) and the new total
    of users to show (the counts' sum, at most TIER_MAX_USERS, when it is at least 1), or None
    to keep it."""
    out = [dict(r) for r in rows]
    new_total = None
    if units == "share":
        counts = [num_or_none(r.get("count")) or 0.0 for r in out]
        s = sum(counts)
        for r, c in zip(out, counts):
            r["share"] = 100.0 * c / s if s > 0 else None
        if s >= 1:
            new_total = int(min(s, links.TIER_MAX_USERS))
    else:
        shares = [num_or_none(r.get("share")) or 0.0 for r in out]
        try:
            cts: Any = links.counts_from_shares(shares, total)
        except ProfileError:
            cts = [None] * len(out)
        for r, c in zip(out, cts):
            r["count"] = None if c is None else float(c)
    return out, new_total


def tier_pick_labels(rows: Sequence[dict[str, Any]]) -> list[str]:
    """'1. Strict', '2. Tier 2' (unnamed), ...: the labels of the tier-to-slide choice."""
    return [f"{i + 1}. {r.get('name') or f'Tier {i + 1}'}" for i, r in enumerate(rows)]


def level_or_one(text: Any) -> float:
    """The level typed in a tier's eps cell, or 1 when it is not a level (the slider's start)."""
    try:
        return parse_level(text)
    except (ProfileError, ValueError):
        return 1.0


def users_error(v: float, max_n: int) -> str | None:
    """Why ``v`` is not a number of users from 1 to ``max_n`` (None when it is one)."""
    if math.isfinite(v) and v == math.floor(v) and 1 <= v <= max_n:
        return None
    shown = f"{v:,.0f}" if math.isfinite(v) and abs(v) < 1e21 else f"{v:.4g}"
    return (
        f"{shown} users is more than this generator makes (at most {max_n:,})"
        if v > max_n
        else f"{v:g} is not a whole number of users"
    )


def summary_metrics(
    prof: EpsilonProfile, sol: ADPMSolution, count_fmt: Callable[[int], str]
) -> list[Metric]:
    """The three cards beside the chart: tau*, users capped (``count_fmt`` shortens the
    count) and ADPM's worst-case MSE (Theorem 2) for data in [-0.5, 0.5]."""
    tau = sol.saturation_level
    return [
        Metric(
            "tau*",
            "none" if math.isinf(tau) else f"{tau:.4g}",
            "Saturation level: every user who asked for eps ≥ tau* is granted tau* "
            "(more privacy than asked) at no cost in accuracy.",
        ),
        Metric(
            "Users capped",
            count_fmt(sol.n_saturated),
            f"{sol.n_saturated:,} users ({100 * sol.n_saturated / prof.n:.3g}%) are "
            "granted tau* instead of their looser level.",
        ),
        Metric(
            "Worst-case MSE",
            f"{sol.worst_case_mse:.2e}",
            "ADPM's worst-case mean squared error for the mean of data in "
            f"[-0.5, 0.5] (Theorem 2); its root is ±{math.sqrt(sol.worst_case_mse):.3g}.",
        ),
    ]


def not_shareable_text(error: object) -> str:
    """Why the profile has no link, and what to do instead."""
    return (
        f"This profile can't be put in a link: {plain(error)}. Download it as CSV instead and "
        "share the file; it can be uploaded on this page."
    )


def upload_label(file_name: str, n_users: int) -> str:
    """The profile's label after reading a file."""
    return f"File {file_name}: {count_noun(n_users, 'user')}"


PROFILE_HELP = {
    "preset": (
        "Profiles from the paper and worked examples. The paper's "
        "profiles draw 1000 levels at random (log eps uniform), so the "
        "seed picks the draw."
    ),
    "prof_preset_draw": "A new random draw: the next seed.",
    "seed": "Which random draw (same seed = same profile).",
    "material_casino_redraw": "A new random draw: the next seed.",
    "distribution": (
        "Log-uniform: levels spread evenly on a log scale. Two groups: a "
        "strict group and a looser one (the paper's two-group remark). "
        "Mixture: log-uniform private users plus a share of public users."
    ),
    "share_of_public_users_eps": "This fraction of users is public: their data is used as is.",
    "prof_tier_pick": "Pick a tier to set its eps on a log scale.",
    "prof_upload": (
        "Your file is read in this session only. A larger file is refused before it is read."
    ),
    "prof_mode": (
        "Preset: the paper's profiles and worked examples. Generator: "
        "draw levels from a distribution. Tiers: a menu of levels with "
        "their users. Upload: your CSV."
    ),
    "prof_download": (
        "eps per user (with value if the file had one), or name, eps and count per tier."
    ),
    "share_of_users_in_group_1": "Fraction f of the n users in group 1.",
    "total_users_n": "Shares are turned into whole users adding up to n.",
    "prof_to_designer": ("Carry this tiers profile into the Tier designer (its menu is replaced)."),
    "users": "How many users choose this tier.",
    "share": ("Share of the n users in this tier (shares are rescaled to add up to 100%)."),
}
"""The help text beside each control of the page, keyed by the widget's key (or its
label): plain language, smaller eps = more privacy (moved out of the page, issue 20)."""


# the page's texts (issue 27: moved out of pages/profile.py) --------------------------------
INTRO = (
    "Who asks for how much privacy? Each user picks a level **eps**: smaller eps = more "
    "privacy, **∞ = public** data, **0** = the data is not used. Shape the profile on the "
    "left; every page of the app uses it."
)
TIERS_CAPTION = (
    "One row per tier. **eps**: a number like 0.5, or `public` for ∞; smaller eps = more "
    "privacy; 0 = the data is not used. Add or delete rows at the table's edge."
)
UPLOAD_MB = MAX_UPLOAD_BYTES // 2**20
"""The largest upload in MB (the uploader's limit, named in its label)."""
UPLOAD_CAPTION = (
    "A CSV file with a column **eps** (or epsilon): one row per user, or one row per tier "
    "with a **count** column; optional **value** (each user's data) and **name** columns. "
    f"`inf` or `public` means public data; 0 means the data is not used. Up to {UPLOAD_MB} MB."
)
UPLOAD_LABEL = f"CSV file (at most {UPLOAD_MB} MB)"
LINK_CAPTION = "The link (also in the address bar) reopens this exact profile."


def excluded_caption(n_excluded: int) -> str:
    """The note under the chart on users who chose 0 ('' when none did)."""
    return f"{n_excluded:,} users chose 0: their data is not used." if n_excluded else ""


def download_caption(n: int, tiered: bool) -> str:
    """What the profile's CSV holds: its users, as tiers or one row per user."""
    return f"{count_noun(n, 'user')}, {'tiers' if tiered else 'one row per user'}."


def two_group_note(spec: dict[str, Any]) -> str:
    """The paper's two-group remark on a two_groups spec being built ('' when it does not
    apply: one group empty, or group 2 stricter than group 1)."""
    n, f, e1, e2 = spec["n"], spec["frac"], spec["eps1"], spec["eps2"]
    return two_group_verdict(n, f, e1, e2).text if 0 < f < 1 and e2 >= e1 else ""


TIER_COLUMNS: dict[str, tuple[str, dict[str, Any]]] = {
    # defaults: a new row starts as a usable tier, not as empty "None" cells
    # widths (px) that fit the left column at 1024 x 768 (tests/browser/test_browser_truncation)
    "name": ("text", {"label": "Tier", "help": "A name (optional).", "max_chars": 40,
                      "default": "New tier", "width": 80}),
    "eps": ("text", {"label": "eps", "help": "Privacy level: a number like 0.5 or `public` "
                     "(∞). " + LEVEL_HELP, "required": True, "max_chars": 30, "default": "1"}),
    "count": ("number", {"label": "Users", "help": PROFILE_HELP["users"], "min_value": 0,
                         "max_value": links.TIER_MAX_USERS, "step": 1, "format": "%d",
                         "default": 100}),
    "share": ("number", {"label": "Share (%)", "help": PROFILE_HELP["share"], "min_value": 0.0,
                         "max_value": 100.0, "format": "%.4g", "default": 10.0}),
}  # fmt: skip
"""The tiers editor's columns: ('text' or 'number', the column's settings: label, help,
bounds, format and the value a new row starts with)."""

SHARE = Limit(0.0, 1.0)
"""A share of the users (group 1 of two groups, the public users of a mixture)."""
SHARE_STEP = 0.01
TIER_TOTAL = Limit(1, links.TIER_MAX_USERS, integer=True)
"""The total number of users n when tiers are given as shares of n."""
USERS_MIN = 1.0
"""The fewest users a generator makes (the most: links.GEN_MAX_N, links.TIER_MAX_USERS)."""


def pick_index(i: Any, n_rows: int) -> int:
    """The tier the log slider edits: the chosen index (0 when none) within the table's
    ``n_rows`` rows (a row deleted since the choice)."""
    return min(int(i or 0), n_rows - 1)
