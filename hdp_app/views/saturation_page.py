"""The Saturation page's sentences, case analyses and control seeds (no streamlit): what the
page says about the r-versus-eps curve, the free-privacy table, the phase diagram's starting
point and the step-by-step walk. The numbers are hdp_app.views.saturation's and tour's."""

from __future__ import annotations

import math
from typing import Any

from hdp_app.views.fields import NumberField
from hdp_app.views.formatting import count_noun
from hdp_app.views.limits import SPREAD, SPREAD_START, Limit
from hdp_app.views.saturation import FreePrivacy, RCurve, level_text, trace_table
from hdp_app.views.tour import PhaseState, nearest, weights_column
from hdp_core.adpm import AlgorithmTrace
from hdp_core.validate import format_eps

TRACE_MAX = 50
"""The step-by-step walk is for profiles of at most this many users (else the example)."""

STEP_LIMIT = Limit(1, 10**9, integer=True)
"""What the walk's step accepts in a link."""

PHASE_N = Limit(2, 10**15, integer=True)
"""The phase diagram's number of users."""

PHASE_F = Limit(0.01, 1.0)
"""The phase diagram's share f of users in the stricter group (in steps of 0.01)."""

PHASE_F_STEP = 0.01
"""The share slider's step (the seed is rounded to it)."""

INTRO = (
    "ADPM, the optimal estimator, does not simply follow each user's request. Users who ask "
    "for little privacy (a large eps; smaller eps = more privacy, ∞ = public) are all granted "
    "the same level **tau\\***: beyond it, trusting their data more would not make the "
    "estimate more accurate, so they get extra privacy for free."
)
NO_DATA = (
    "Every user has eps = 0: no data may be used, so ADPM outputs 0 and there is no "
    "saturation to show. Change the profile on the Profile page."
)
OUTPUTS_ZERO = (
    "ADPM's worst-case error bound f(r) exceeds 1/4 for this profile, so ADPM outputs 0 "
    "instead of using the data; the levels below are what its weights would grant."
)
PHASE_INTRO = (
    "A share f of n users asks for eps1 and the rest for a looser eps2. The looser group is "
    "capped (saturates) exactly when **eps2 ≥ eps1 + 8/(n f eps1)**; below that line "
    "weights proportional to eps are optimal. Move the two groups' levels to see where a "
    "profile falls."
)
TRACE_EMPTY = (
    "Every user has eps = 0: no data may be used, so there is nothing to walk through "
    "(ADPM outputs 0)."
)
EXAMPLE_NAME = "the 50-user teaching example"
EXAMPLE_HELP = (
    "A 50-user example (levels 0.2 to 8 and three public users) in the spirit of the paper's "
    "r-versus-eps figure."
)
SPREAD_FIELD = NumberField(
    "Assumed standard deviation s (on [−0.5, 0.5])",
    "sat_spread",
    default=SPREAD_START,
    limit=SPREAD,
    step=0.01,
    format="%.3f",
    help="From 0.001 to 0.5: data in [−0.5, 0.5] cannot spread more than 0.5, so a larger "
    "value is not accepted. ADPM assumes that worst case, s = 0.5. Tuned to a smaller known "
    "spread (Algorithm 1 with 8 replaced by 2/s²), it caps later.",
)
TABLE_FORMATS = {
    "requested": "%.4g",
    "granted": "%.4g",
    "weight": "%.3e",
    "share of total weight": "percent",
    "users": "localized",
}
"""Number formats of the free-privacy table's columns, by the start of their names."""

TRACE_TEXT_COLUMNS = ("step k", "saturated", "εₖ asked")
"""The walk's table columns that are not shown as numbers with 4 significant digits."""


def trace_columns(trace: AlgorithmTrace, step: int, with_weights: bool) -> dict[str, Any]:
    """The walk's table at ``step`` (views.saturation.trace_table, latest step first), a
    public level as 'public (∞)', and each user's weight now beside what they were granted
    when ``with_weights``."""
    table = trace_table(trace, step)
    cols: dict[str, Any] = {}
    for i, (name, values) in enumerate(table.items()):
        if i == 3 and with_weights:
            cols["weight wₖ now"] = weights_column(trace, step)
        cols[name] = [level_text(float(x)) for x in values] if name == "εₖ asked" else values
    return cols


def curve_text(curve: RCurve, fp: FreePrivacy) -> str:
    """What the r-versus-eps curve shows (markdown): who is capped from which rank on
    (Lemma 3's saturation index), or why nobody is."""
    if math.isfinite(fp.tau) and fp.n_saturated:
        return (
            f"Users 1 to {curve.k_unsaturated:,} (sorted by the eps they asked for) get exactly "
            f"what they asked for; from user {curve.k_unsaturated + 1:,} on (the **saturation "
            f"index**), asking for more stops helping the estimate, so ADPM grants every one of "
            f"them **tau\\* = {fp.tau:.4g}**, stricter than they asked, at no cost in accuracy."
        )
    if curve.n_usable and not math.isfinite(fp.tau) and fp.n_public == fp.n_usable:
        return (
            "Every usable user is public: ADPM is the plain sample mean, nobody is capped and "
            "there is no noise."
        )
    return (
        "Nobody is capped: the levels are close together, so weights proportional to eps are "
        "optimal and every user gets exactly what they asked for."
    )


def curve_notes(curve: RCurve, fp: FreePrivacy) -> str:
    """The caption under the curve: tiers as segments, downsampling, public and excluded
    users ('' when there is nothing to say)."""
    notes = []
    if curve.per_tier:
        notes.append("Each tier is drawn as a flat segment over its users.")
    if curve.downsampled:
        notes.append(
            f"{curve.rank_start.size:,} of {curve.n_usable:,} users are drawn "
            "(evenly in rank and in eps; the saturation point is exact)."
        )
    if fp.n_public:
        notes.append("Public users (eps = ∞) are drawn on the line at the top.")
    if curve.n_excluded:
        notes.append(
            f"{curve.n_excluded:,} users with eps = 0 are not drawn: their data is not used "
            "(weight 0)."
        )
    return " ".join(notes)


_GROUPING = {
    "tier": "one row per tier",
    "level": "one row per distinct level",
    "bin": "levels grouped into bins on a log scale (split at tau*)",
}


def table_caption(grouping: str) -> str:
    """The caption of the free-privacy table for its ``grouping`` ('tier', 'level', 'bin')."""
    return (
        f"{_GROUPING[grouping].capitalize()}. 'Weight of one user' is that user's share of the "
        "estimate; 'share of total weight' sums to 1 over all users. A saturated group is "
        "granted tau* whatever it asked for."
    )


def capped_text(fp: FreePrivacy) -> str:
    """Who is capped and what they hold (markdown; '' when nobody is)."""
    if not fp.n_saturated:
        return ""
    return (
        f"**{fp.n_saturated:,} users** ({100 * fp.saturated_share:.3g}%) are capped: they hold "
        f"{100 * fp.weight_share:.3g}% of the total weight and each gets tau* = {fp.tau:.4g} "
        "instead of the looser level they asked for."
    )


def excluded_text(n_excluded: int) -> str:
    """The page's last line: users with eps = 0 are excluded ('' when there are none)."""
    return (
        f"{n_excluded:,} users with eps = 0 ({format_eps(0.0)}) are excluded." if n_excluded else ""
    )


def phase_controls(base: PhaseState, grid: tuple[float, ...]) -> tuple[int, float, float, float]:
    """(n, f, eps1, eps2) the phase diagram's controls start from for a profile: its point
    with f rounded to the slider's step within PHASE_F, the levels on the sliders' grid (a
    public eps2 stays public)."""
    f = float(min(max(round(base.frac, 2), PHASE_F.lo), PHASE_F.hi))
    e2 = math.inf if math.isinf(base.eps2) else nearest(grid, base.eps2)
    return int(base.n), f, nearest(grid, base.eps1), e2


def point_name(state: PhaseState) -> str:
    """The phase chart's name of its point: the current profile or what-if levels."""
    return "current profile" if state.from_profile else "what-if levels"


def trace_too_large(n: int) -> str:
    """Why the walk shows the teaching example: the profile has more than TRACE_MAX users."""
    return (
        f"The walk-through is for profiles of at most {TRACE_MAX} users; the current one has "
        f"{n:,}, so here is a 50-user teaching example (levels 0.2 to 8 and three public users)."
    )


def trace_excluded(n_excluded: int) -> str:
    """The walk's note on users with eps = 0 ('' when there are none)."""
    if not n_excluded:
        return ""
    return (
        f"{count_noun(n_excluded, 'user')} with eps = 0 left out before the recursion starts "
        "(their data is not used)."
    )


def jump_help(jump: int | None) -> str:
    """The help of 'Jump to the saturation step' (``jump`` None: nobody is capped)."""
    if jump:
        return "Go straight to the step where the first user is capped at tau*."
    return "Nobody is capped here: every user gets the eps they asked for."
