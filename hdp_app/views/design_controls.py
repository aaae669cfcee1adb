"""The Tier designer's texts beside its controls (no streamlit): its introduction, the help
of every control (keyed by the widget's key, or its key's stem for the per-tier widgets)
and the short notes it shows. Moved out of pages/tier_designer.py (issue 27); the numbers,
tables and cards are hdp_app.views.design's."""

from __future__ import annotations

from hdp_app.views import whatif as wv
from hdp_app.views.design import SHARE_HELP
from hdp_app.views.fields import NumberField
from hdp_app.views.limits import Limit
from hdp_core.menu import MAX_USERS

INTRO = (
    "Design the menu of privacy levels your product offers and see what each tier **really** "
    "gets. Each tier promises a privacy level eps: *smaller eps = more privacy*, *public = no "
    "privacy*. The mean of your users' data is then estimated with ADPM, the paper's optimal "
    "method, and the page tells you how accurate it is in your data's own units."
)


def apply_button(target: str) -> dict[str, str]:
    """Label, key and help of section 3's "Apply this to the menu" button of ``target``'s
    answer ("population" or "table")."""
    key = {"population": "td_apply", "table": "td_apply_table"}[target]
    return {"label": "Apply this to the menu", "key": key, "help": HELP["td_apply"]}


TARGET_INTRO = "Set the error you need, in your data's units, and ask what it takes."
ENTER_TARGET = "Enter a positive target error to get an answer."
ONE_TIER = "Add a second tier to explore moving users between tiers."
SAME_TIERS = "Choose two different tiers."
USED = "This menu is now the current profile: the other pages show it."
LINK_LABEL = "**Shareable link** (opens this menu; the address bar already holds it):"
RELEASE_LINK = "Release a private mean with this menu on your own table"
DEFAULT_UNIT = "data units"
"""What the target's label calls the unit when the menu has none."""

HELP = {
    "td_load_profile": "Replace the menu below by the tiers of the profile built on the "
    "Profile page (names, levels and shares; the data range stays).",
    "td_template": "Ready-made menus. Loading one replaces the tiers (your number of users "
    "and data range stay).",
    "td_load_template": "Replace the tiers below by the chosen template.",
    "td_name": "What your users see, e.g. 'Strict' or 'Open'. Each tier needs its own name.",
    "td_n": "How many users will choose among the tiers (up to 10^15). Tiers are never "
    "expanded user by user, so any size is instant.",
    "td_lo": "Smallest value a user's data can take, in real units (e.g. 0 dollars of "
    "monthly spend). Errors are reported in these units.",
    "td_hi": "Largest value a user's data can take (e.g. 500 dollars). Privacy noise is "
    "proportional to the width of the range.",
    "td_unit": "Label for the data's unit, e.g. USD, minutes, km.",
    "td_sd": "Standard deviation of one user's value, in real units; at most half the range.",
    "td_view": "The 95% half-width is the '±' people quote; the RMSE is the typical size of "
    "the error.",
    "td_metric": "95% half-width: the estimate is within ± this 95% of the time. RMSE: the "
    "typical size of the error.",
    "td_target": "The largest error of the mean you accept, in real units. It must be "
    "positive and less than half the data range.",
    "td_solve_tier": "The tier whose level you want to make as strict as possible; the other "
    "tiers stay as they are.",
    "td_move_from": "The stricter tier users would leave.",
    "td_move_to": "The looser tier (larger eps or public) they would join.",
    "td_apply": "Change the menu above to this answer.",
    "td_wi_a": "The slider sets this tier's share of all users.",
    "td_wi_b": "This tier gets what tier A gives up (their total stays the same).",
    "td_dl_json": "The menu and every number on this page; import it back below.",
    "td_dl_csv": "One row per tier (name, eps, count, granted eps, ...); the Profile page can "
    "read it as a tiered profile.",
    "td_use": "Make these tiers (with their numbers of users) the profile every other page shows.",
    "release_link": "Opens the Release page with this menu: an eps column may then hold your "
    "tier names, and the menu's range, unit and spread fill its settings.",
}
"""The help beside each control of the Tier designer, by widget key."""


TIER_PICKS = {
    "td_solve_tier": "Tier",
    "td_move_from": "Move users from",
    "td_move_to": "to the looser tier",
    "td_wi_a": "Tier A",
    "td_wi_b": "Tier B (takes the rest)",
}
"""The labels of the selectboxes that pick a tier, by widget key."""


def remove_help(i: int) -> str:
    """The help of tier ``i``'s remove button (0-based)."""
    return f"Remove tier {i + 1} (the other shares are scaled to 100%)."


def share_slider_help(name_a: str, name_b: str) -> str:
    """The help of the what-if's share slider (tier names as plain text)."""
    return (
        f"Move users between {name_a} and {name_b}; the chart marks this point (dashed line). "
        "The diamond is the menu as it is."
    )


def target_label(unit: str) -> str:
    """The target error's label, in the menu's unit (plain text) or 'data units'."""
    return f"Target error ({unit or DEFAULT_UNIT})"


def import_label(max_bytes: int) -> str:
    """The importer's label with its size limit in KB."""
    return f"Import a menu (JSON or CSV, at most {max_bytes // 1024} KB)"


# the number inputs (their values are seeded by hdp_app.design_state from the menu) ----------
USERS = NumberField(
    "Total number of users",
    "td_n",
    limit=Limit(1, int(MAX_USERS), integer=True),
    step=1000,
    help=HELP["td_n"],
)
LO = NumberField("Data range: lowest value", "td_lo", step=1.0, format="%g", help=HELP["td_lo"])
HI = NumberField("Data range: highest value", "td_hi", step=1.0, format="%g", help=HELP["td_hi"])
SD = NumberField(
    "Data standard deviation", "td_sd", limit=Limit(0.0), format="%g", help=HELP["td_sd"]
)
RELEASES = NumberField(
    "Releases (k)", "td_releases", limit=wv.RELEASES, step=1, help=wv.RELEASES_HELP
)


def share_field(i: int) -> NumberField:
    """Tier ``i``'s share of the users in % (0-based ``i``; 0 to 100, two decimals)."""
    return NumberField(
        f"Share % of tier {i + 1}",
        f"td_share_{i}",
        limit=Limit(0.0, 100.0),
        step=1.0,
        format="%.2f",
        help=SHARE_HELP,
    )


def target_field(unit: str) -> NumberField:
    """The target error in the menu's ``unit`` (plain text): not negative (a positive one is
    needed for an answer)."""
    return NumberField(
        target_label(unit), "td_target", limit=Limit(0.0), format="%g", help=HELP["td_target"]
    )


def name_label(i: int) -> str:
    """Tier ``i``'s name input (0-based ``i``)."""
    return f"Tier {i + 1} name"


def eps_label(i: int) -> str:
    """Tier ``i``'s eps slider (0-based ``i``)."""
    return f"eps of tier {i + 1}"


def share_slider_max(both: float) -> float:
    """The what-if share slider's top: both tiers' total share (%), or 1 when they hold no
    users (the slider is then disabled, and a slider needs a range)."""
    return float(both) if both > 0 else 1.0
