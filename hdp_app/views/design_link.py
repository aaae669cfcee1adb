"""Tier designer helpers: the accuracy-first target in the page's link, a menu from the current
(tiered) profile, and the sentence that says which numbers the page shows.
"""

from __future__ import annotations

import math

import numpy as np

from hdp_app.views.formatting import count_noun, plain
from hdp_core.errors import LinkError, MenuError
from hdp_core.menu import MAX_MENU_TIERS, METRICS, Menu, make_menu
from hdp_core.profile import EpsilonProfile

__all__ = ["GOAL_KEY", "decode_goal", "encode_goal", "menu_from_profile", "whose_numbers"]

GOAL_KEY = "goal"
"""Query-string parameter holding the accuracy-first target: '<metric>~<target>'."""


def encode_goal(metric: str, target: float) -> str:
    """'half_width~12.5': the target's metric ('rmse' or 'half_width') and value (data units)."""
    if metric not in METRICS:
        raise LinkError(f"the target's metric must be one of {METRICS}, got {metric!r}")
    t = float(target)
    if not (math.isfinite(t) and t >= 0):
        raise LinkError(f"the target error must be a finite number >= 0, got {target!r}")
    return f"{metric}~{t:.12g}"


def decode_goal(text: object) -> tuple[str, float]:
    """(metric, target) from a link's goal parameter; LinkError naming what is wrong."""
    if not isinstance(text, str) or "~" not in text:
        raise LinkError("the link's target is not of the form metric~value")
    metric, _, value = text.strip().partition("~")
    if metric not in METRICS:
        raise LinkError(f"the link's target metric {metric[:20]!r} is not one of {METRICS}")
    try:
        t = float(value)
    except ValueError:
        raise LinkError(f"the link's target value {value[:20]!r} is not a number") from None
    if not (math.isfinite(t) and t >= 0):
        raise LinkError(f"the link's target value {value[:20]!r} must be finite and >= 0")
    return metric, t


def menu_from_profile(prof: EpsilonProfile, like: Menu) -> Menu:
    """A menu with the tiers of a tiered profile (names, levels, shares = counts / n) and
    ``like``'s data range, unit and spread. MenuError if the profile is not tiered, has more
    than MAX_MENU_TIERS tiers, or has a tier at eps = 0 (not a level a menu can offer)."""
    if not prof.is_tiered:
        raise MenuError(
            "the current profile has one row per user, not tiers; build a tiers "
            "profile on the Profile page (Tiers or a tier preset)"
        )
    lv = np.asarray(prof.levels, dtype=np.float64)
    ct = np.asarray(prof.counts, dtype=np.float64)
    if lv.size > MAX_MENU_TIERS:
        raise MenuError(
            f"the current profile has {lv.size} tiers; a menu has at most {MAX_MENU_TIERS}"
        )
    if np.any(lv <= 0):
        raise MenuError(
            "the current profile has a tier at eps = 0 (data not used); a menu "
            "offers positive levels or public"
        )
    names = list(prof.names) if prof.names else [f"Tier {i + 1}" for i in range(lv.size)]
    shares = list(100.0 * ct / ct.sum())
    eps = ["public" if math.isinf(x) else float(x) for x in lv]
    return make_menu(
        names,
        eps,
        shares,
        int(ct.sum()),
        like.low,
        like.high,
        like.unit,
        like.data_sd,
        normalise=True,
    )


def whose_numbers(menu: Menu, menu_tau: float, profile_label: str, profile_tau: float) -> str:
    """One sentence: this page's numbers are for its own menu, not the sidebar's profile."""

    def t(x: float) -> str:
        return "none" if math.isinf(x) else f"{x:.4g}"

    return (
        f"Every number on this page is for the menu above ({count_noun(menu.k, 'tier')}, "
        f"{count_noun(menu.n_users, 'user')}; τ* = {t(menu_tau)}), not for the current "
        f"profile in the sidebar ({plain(profile_label)}; τ* = {t(profile_tau)})."
    )
