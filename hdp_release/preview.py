"""What a release of given level counts would give before any data exists
(:func:`preview_tiers`), and the tier-name helpers shared by the page, the CLI and the release."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdp_core.errors import ReleaseError
from hdp_core.intervals import (
    TARGETS,
)
from hdp_core.profile import out_of_range
from hdp_core.table_mean import table_mean
from hdp_core.tables import out_of_range_words
from hdp_core.validate import (
    parse_level,
    tier_key,
)
from hdp_release.checks import check_range, check_sd, column_floats
from hdp_release.plan import run_profile, tiers_solution


# ------------------------------------------------------------------------------ preview
@dataclass(frozen=True)
class TierPreview:
    """What each level gets before releasing (public: from the levels and counts only)."""

    tiers: Any  # DataFrame: eps, users, granted_eps, weight_share
    saturation_level: float  # tau* (population) or the cap level 1/(n eta) (table)
    noise_scale: float  # data units
    half_width95: float  # data units
    outputs_midrange: bool
    target: str = "population"
    bias_bound: float = 0.0  # data units (table target)


def preview_tiers(
    levels: Any,
    counts: Any,
    lo: float,
    hi: float,
    data_sd: float | None = None,
    target: str = "population",
    spend: Any = 1,
) -> TierPreview:
    """What each level gets and the expected ±95% (data units) of a release of levels and
    user counts on [lo, hi], before releasing, for ``target`` "population" (hdp.adpm) or
    "table" (hdp.table_mean), at ``spend`` of every level (levels eps x spend, as the
    ledger's releases run). The half-width is the release's proven interval
    (hdp_core.intervals.release_error_95). eps = 0 tiers get 0."""
    import pandas as pd

    from hdp_core.intervals import release_error_95
    from hdp_core.spend import as_spend, spend_levels

    if target not in TARGETS:
        raise ReleaseError(f"target must be one of {', '.join(TARGETS)}, got {str(target)[:40]!r}")
    lo_f, hi_f = check_range(lo, hi)
    sd_norm = check_sd(data_sd, lo_f, hi_f)
    lv = np.asarray(levels, dtype=float)
    ct = np.asarray(counts, dtype=np.int64)
    run = spend_levels(lv, as_spend(spend))
    use = lv > 0
    if not (use & (ct > 0)).any():
        raise ReleaseError("no usable user: every level is 0 (data not to be used)")
    R = hi_f - lo_f
    hw = release_error_95(lv, ct, lo_f, hi_f, target, data_sd, spend)
    if target == "table":
        sol = table_mean(run_profile(run[ct > 0], ct[ct > 0]))
        rr = np.zeros(lv.size)
        rr[ct > 0] = sol.granted_eps
        rr = np.where(use, rr, 0.0)
        w = np.zeros(lv.size)
        w[ct > 0] = sol.weights
        df = pd.DataFrame({"eps": lv, "users": ct, "granted_eps": rr, "weight_share": w * ct})
        return TierPreview(
            df, sol.cap_level, sol.noise_scale * R, hw, False, target, sol.bias_bound * R
        )
    r, tau = tiers_solution(run[use], ct[use], sd_norm)
    rr = np.zeros(lv.size)
    rr[use] = r
    var = 0.25 if sd_norm is None else sd_norm * sd_norm
    if np.isinf(rr[use]).all():
        s1, b = float(ct[use].sum()), 0.0
        share = np.where(use, ct / s1, 0.0)
        mid = False
    else:
        s1 = float(np.dot(rr, ct))
        ssq = float(np.dot(rr * rr, ct)) / (s1 * s1)
        b = R / s1
        share = rr * ct / s1
        mid = (var * ssq * s1 * s1 + 2.0) / (s1 * s1) > 0.25
        if mid:
            b = 0.0
    df = pd.DataFrame({"eps": lv, "users": ct, "granted_eps": rr, "weight_share": share})
    return TierPreview(df, tau, b, hw, mid, target)


def _tier_pairs(tiers: Any) -> list[tuple[Any, Any]]:
    """(name, level) of each tier of a Tier designer menu or a mapping of names to levels."""
    if hasattr(tiers, "names") and hasattr(tiers, "levels"):
        return list(zip(tiers.names, (float(x) for x in tiers.levels), strict=True))
    if isinstance(tiers, Mapping):
        return list(tiers.items())
    raise ReleaseError(
        f"tiers must be a Tier designer menu or a mapping of names to levels, got "
        f"{type(tiers).__name__}"
    )


def tier_levels(tiers: Any) -> dict[str, float]:
    """Tier names -> privacy levels, from a Tier designer menu (hdp_core.design.Menu) or a
    mapping of names to levels (None: no names). Names are keyed by
    :func:`hdp_core.validate.tier_key` (NFKC, casefold, trimmed), the one form in which the
    release's engines match eps cells too. Raises ReleaseError for a bad level or for two
    names that are the same in that form (e.g. 'Straße' and 'STRASSE')."""
    if tiers is None:
        return {}
    out: dict[str, float] = {}
    first: dict[str, str] = {}
    for name, level in _tier_pairs(tiers):
        if not isinstance(name, str) or not tier_key(name):
            raise ReleaseError(f"a tier name must be non-empty text, got {name!r}")
        key = tier_key(name)
        if key in out:
            raise ReleaseError(
                f"two tiers, {first[key]!r} and {name.strip()!r}, are the same name once case, "
                "width and spaces are ignored; rename one"
            )
        first[key] = name.strip()
        out[key] = parse_level(level, f"the level of tier {name.strip()!r}", error=ReleaseError)
    return out


def tier_names_of(levels: Any, tiers: Any) -> list[str]:
    """For each level, the names of the menu's tiers at that level (joined by ' / '; '' for a
    level not on the menu). ``tiers`` as in :func:`release_mean`."""
    if tiers is None:
        return ["" for _ in np.asarray(levels).ravel()]
    by_key = tier_levels(tiers)  # validated; keyed by tier_key
    pairs = [(name.strip(), by_key[tier_key(name)]) for name, _ in _tier_pairs(tiers)]
    return [
        " / ".join(n for n, level in pairs if level == x)
        for x in np.asarray(levels, dtype=float).ravel()
    ]


def level_counts(df: Any, eps: str, tiers: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct privacy levels of column ``eps`` of a pandas DataFrame and their user counts
    (public, like the levels themselves; for a preview). ``tiers`` as in :func:`release_mean`
    (tier names in the column take their tier's level). Raises ReleaseError naming the row
    (1-based) of the first bad level."""
    x = column_floats(df, eps, "eps", tier_levels(tiers), "iufc")
    if x.size == 0:
        raise ReleaseError("the table is empty: no users, nothing to release", reason="no_rows")
    lv, first, ct = np.unique(x, return_index=True, return_counts=True)  # NaN sorts last
    bad = np.isnan(lv) | (lv < 0) | out_of_range(lv)
    if bad.any():
        i = int(first[bad].min())  # the first bad row of the table, found in O(n log n)
        v = x[i]
        reason = "empty" if np.isnan(v) else ("negative" if v < 0 else "out_of_range")
        what = {
            "empty": "the cell is empty (or NaN); privacy levels must be numbers >= 0 "
            "(inf = public)",
            "negative": "the level is negative; privacy levels must be numbers >= 0 (inf = public)",
        }.get(reason) or f"the level is {out_of_range_words(v)}"
        raise ReleaseError(
            f"eps column {eps!r}, row {i + 1}: {what}", row=i + 1, column=eps, reason=reason
        )
    return lv, ct
