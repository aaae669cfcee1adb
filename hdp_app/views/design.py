"""Tier designer: the page's numbers, tables, sentences and labels (no streamlit, no plotly).

The page (pages/tier_designer.py) only lays these out. The menu's arithmetic is in
hdp_core.design (Menu.add_tier, Menu.remove_tier, DesignAnswer.apply, solve); the link's goal
and the "whose numbers" sentence in :mod:`.design_link`; explanations in :mod:`.explain`.

Widget values are a flat mapping keyed like the page's widgets (``td_k``, ``td_name_0``, ...):
:func:`widget_values` writes a menu into it and :func:`menu_from_inputs` reads one back, so the
round trip is tested here without Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from hdp_app.views import explain
from hdp_app.views import tour as tone
from hdp_app.views.cards import Metric
from hdp_app.views.formatting import count_noun, plain, short_eps, telling_eps
from hdp_app.views.profile_controls import GRID
from hdp_core.design import MenuReport
from hdp_core.errors import ProfileError
from hdp_core.menu import EPS_MIN, MAX_MENU_TIERS, TEMPLATES, Menu, make_menu, shares_note
from hdp_core.profile import EpsilonProfile
from hdp_core.solvers import TABLE_METRIC, DesignAnswer

EPS_GRID: list[float] = list(GRID)
"""Levels offered by the eps sliders: ten per decade from 0.001 to 1000, log spaced (the same
grid as the Profile page's sliders)."""
METRIC_LABELS = {"half_width": "95% error half-width", "rmse": "RMSE (root-mean-squared error)"}
SPREAD_LABELS = {
    "worst": "Worst case (as spread out as the range allows)",
    "sd": "I know the data's standard deviation",
}
QUESTION_LABELS = {
    "users": "How many users does this menu need?",
    "level": "How strict can one tier be?",
    "move": "How many users must move to a looser tier?",
}
EPS_HELP = (
    "The privacy level this tier promises. Smaller eps = more privacy (0.1 is strict, "
    "1 is moderate, 5 or more is loose); 'public' = no privacy at all. The scale is "
    "logarithmic: each step multiplies eps by about 1.25."
)
SHARE_HELP = (
    "Percent of your users you expect to pick this tier. The shares should add up "
    "to 100%; if they do not, they are scaled so that they do."
)
ADD_HELP = f"Add a tier (at most {MAX_MENU_TIERS}); it starts with 0% of the users."
METHOD_CARDS = (
    ("ADPM", "ADPM (this page's numbers)", "The paper's optimal weights."),
    (
        "UNI",
        "Everyone at the strictest tier (UNI)",
        "Simplest design: give every user the strictest tier's privacy and take the plain mean.",
    ),
    (
        "PropDPM",
        "Weights proportional to eps (PropDPM)",
        "Weight each user by their eps; a few public users then take almost all the weight.",
    ),
)
"""(method, card label, one-line hint) of the three methods compared in section 2."""


def fmt_err(x: float, unit: str) -> str:
    """An error in real units as markdown (the user's unit shown as plain text)."""
    return f"{x:.3g} {plain(unit)}".strip()


def tier_label(menu: Menu, i: int) -> str:
    """Option label for choosing tier ``i`` of ``menu`` (plain text: selectbox options)."""
    return f"{menu.tiers[i].name} (eps {short_eps(menu.tiers[i].eps)})"


# widget values <-> menu -----------------------------------------------------------------------
def eps_options(menu: Menu) -> list[float]:
    """The eps sliders' options: EPS_GRID, the menu's own finite levels, then inf (public)."""
    extra = {float(t.eps) for t in menu.tiers if math.isfinite(t.eps)}
    return [*sorted(set(EPS_GRID) | extra), math.inf]


def widget_values(menu: Menu) -> dict[str, Any]:
    """The value of every menu widget for ``menu``: td_k, td_n, td_lo, td_hi, td_unit,
    td_spread ('worst' or 'sd'), td_sd (real units; a quarter of the range when the menu has
    none) and, per tier i, td_name_i, td_eps_i and td_share_i (percent, at most 100)."""
    vals: dict[str, Any] = {
        "td_k": menu.k,
        "td_n": int(menu.n_users),
        "td_lo": float(menu.low),
        "td_hi": float(menu.high),
        "td_unit": menu.unit,
        "td_spread": "worst" if menu.data_sd is None else "sd",
        "td_sd": float(menu.data_sd) if menu.data_sd is not None else float(menu.width / 4),
    }
    for i, t in enumerate(menu.tiers):
        vals[f"td_name_{i}"] = t.name
        vals[f"td_eps_{i}"] = float(t.eps)
        vals[f"td_share_{i}"] = min(float(t.share_percent), 100.0)
    return vals


def stale_tier_keys(k: int, old_k: int) -> list[str]:
    """Widget keys of tiers k and above (up to max(old_k, MAX_MENU_TIERS)): to drop on a new
    menu."""
    return [
        f"td_{f}_{i}"
        for i in range(k, max(old_k, MAX_MENU_TIERS))
        for f in ("name", "eps", "share")
    ]


def menu_from_inputs(values: Mapping[str, Any]) -> tuple[Menu | None, str | None, str | None]:
    """(menu, note about the shares, error) from the widget values (keys as in
    :func:`widget_values`); menu is None and error says what is wrong when the input is
    invalid. Shares not adding up to 100 are scaled, with a note."""
    k = values["td_k"]
    names = [values.get(f"td_name_{i}", "") for i in range(k)]
    eps = [values.get(f"td_eps_{i}", 1.0) for i in range(k)]
    shares = [values.get(f"td_share_{i}", 0.0) for i in range(k)]
    sd = values["td_sd"] if values["td_spread"] == "sd" else None
    note = shares_note(shares)
    try:
        menu = make_menu(
            names,
            eps,
            shares,
            values["td_n"],
            values["td_lo"],
            values["td_hi"],
            values["td_unit"] or "",
            sd,
            normalise=True,
        )
    except (ProfileError, ValueError) as e:
        return None, None, str(e)
    return menu, note, None


def input_error_text(error: str) -> str:
    """The message shown when the menu's inputs are invalid (markdown)."""
    return f"Please fix the menu: {plain(error)}. The results below are for the last valid menu."


# notes about the menu -------------------------------------------------------------------------
def template_note(template: str) -> str:
    """The note after loading a template."""
    return f"Loaded the template: {TEMPLATES[template]}."


def removed_note(name: str) -> str:
    """The note after removing the tier ``name``."""
    return f"Removed the tier {plain(name)}; the other shares were scaled to 100%."


LINK_OPENED_NOTE = "Opened the menu from the link."
PROFILE_LOADED_NOTE = "Loaded the current profile's tiers from the Profile page."


def bad_link_note(error: object) -> str:
    """The note when the link's menu could not be read."""
    return f"The link's menu could not be used ({plain(error)}). Showing the default menu instead."


def bad_profile_note(error: object) -> str:
    """The note when the current profile cannot become a menu."""
    return f"The current profile cannot be loaded here: {error}."


def import_messages(menu: Menu | None, file_name: str, error: object = None) -> tuple[str, str]:
    """(kind, text) after importing a menu file: ('success', ...) with the tiers imported, or
    ('error', ...) saying why and that the current menu is unchanged."""
    if menu is None:
        return (
            "error",
            f"Could not import {plain(file_name)}: {plain(error)}. The current menu is unchanged.",
        )
    return ("success", f"Imported {count_noun(menu.k, 'tier')} from {plain(file_name)}.")


def imported_note(file_name: str) -> str:
    """The note about the menu after an import."""
    return f"Imported the menu from {plain(file_name)}."


def too_big_text(size: int, max_bytes: int) -> str:
    """Why a menu file is refused for its size."""
    return f"the file is {size / 1024:.0f} KB; a menu file is at most {max_bytes // 1024} KB"


def as_profile(menu: Menu) -> tuple[EpsilonProfile, dict[str, Any], str]:
    """(profile, link spec, label) making ``menu`` the current profile: its tiers with their
    numbers of users."""
    prof = menu.to_profile()
    spec = {
        "kind": "tiers",
        "levels": [float(x) for x in prof.levels],
        "counts": [int(c) for c in prof.counts],
        "names": list(prof.names or menu.names),
    }
    label = (
        f"Tier menu: {count_noun(menu.k, 'tier')} "
        f"({', '.join(menu.names)}), {count_noun(menu.n_users, 'user')}"
    )
    return prof, spec, label


# section 2: what each tier really gets --------------------------------------------------------
def headline_metrics(menu: Menu, report: MenuReport) -> list[Metric]:
    """The four cards: ADPM's 95% error, its RMSE, tau* (the loosest level worth offering)
    and the number of users capped at tau*."""
    unit = menu.unit
    adpm_err = report.errors["ADPM"]
    capped = (
        "Some tiers are capped now."
        if math.isfinite(report.tau_star)
        else "No tier is capped now: this is where a new looser tier would be capped."
    )
    return [
        Metric(
            "Error of the mean (95%)",
            f"± {fmt_err(adpm_err.half_width, unit)}",
            "With ADPM, the estimated mean is within this distance of the population mean in "
            "at least 95% of releases, for any data in the range (or any data with at most "
            "the standard deviation you gave), at every number of users: a proven bound.",
        ),
        Metric(
            "RMSE of the mean",
            fmt_err(adpm_err.rmse, unit),
            "Root-mean-squared error of ADPM's estimate of the mean, in real units, for "
            "worst-case data (or the standard deviation you gave).",
        ),
        Metric(
            "Loosest tier worth offering (tau*)",
            telling_eps(report.worth_offering, menu.levels),  # 0.10003 is not the tier's 0.1
            "Any tier looser than this is capped at it: its users get this privacy "
            "instead, and offering it adds no accuracy. " + capped,
        ),
        Metric(
            "Users capped at tau*",
            f"{report.n_saturated:,}",
            "Users whose tier is looser than tau*: they get tau*, more privacy than "
            "they asked for, at no cost in accuracy.",
        ),
    ]


def saturation_message(menu: Menu, report: MenuReport) -> tuple[str, str]:
    """('info', which tiers are saturated and what they are granted) or ('info', no tier is
    saturated and where a new looser one would be capped); markdown. Both are facts about
    the menu, neither good nor bad news, so neither is a success box."""
    tau = report.tau_star
    if math.isfinite(tau):
        sat_names = [t.name for t, s in zip(menu.tiers, report.saturated) if s]
        return (
            "info",
            f"**Saturated: {plain(', '.join(sat_names))}.** Every tier looser than tau* = "
            f"{telling_eps(tau, menu.levels)} gets tau*: offering a looser tier adds no "
            f"accuracy. Their users are granted eps = {telling_eps(tau, menu.levels)} "
            "whatever they chose.",
        )
    if not math.isfinite(report.worth_offering):  # e.g. every tier public: nothing is looser
        return (
            "info",
            "No tier is saturated: every tier gets exactly the privacy it promises, and no "
            "level, however loose, would be capped in this menu.",
        )
    return (
        "info",
        f"No tier is saturated: every tier gets exactly the privacy it promises. A new "
        f"tier looser than {telling_eps(report.worth_offering, menu.levels)} would be "
        "capped at that level.",
    )


def tier_table(menu: Menu, report: MenuReport) -> pd.DataFrame:
    """One row per tier: name, offered eps, users, share %, granted eps, saturated, and the
    tier's share of the estimate % (every column text as shown; percents to 4 digits)."""
    rows = report.rows()
    return pd.DataFrame(
        {
            "tier": [r["tier"] for r in rows],
            "offers eps": [short_eps(r["eps asked"]) for r in rows],
            "users": [f"{r['users']:,}" for r in rows],
            "share %": [f"{r['share %']:.4g}" for r in rows],
            "granted eps": [telling_eps(r["eps granted"], menu.levels) for r in rows],
            "saturated": ["yes, capped at tau*" if r["saturated"] else "no" for r in rows],
            "share of the estimate %": [f"{r['share of the estimate %']:.4g}" for r in rows],
        }
    )


def method_metrics(
    report: MenuReport, metric: str, unit: str, colors: Mapping[str, str]
) -> list[Metric]:
    """ADPM, UNI and PropDPM's error (``metric``: 'half_width' or 'rmse', real units), the
    others with their difference to ADPM in percent; ``colors`` names each method's colour."""
    ref = report.errors["ADPM"].get(metric)
    out = []
    for m, label, hint in METHOD_CARDS:
        v = report.errors[m].get(metric)
        delta = None if m == "ADPM" or ref <= 0 else f"{explain.approx_percent(v, ref)} vs ADPM"
        out.append(
            Metric(
                label,
                fmt_err(v, unit),
                f"{hint} Colour on every chart: {colors[m]}.",
                delta,
                tone.delta_color(v, ref),  # '≈ 0%' grey, not red
            )
        )
    return out


def half_width_note(menu: Menu, report: MenuReport) -> str:
    """The sentence under the methods' 95% errors: how ADPM's was found (explain.half_width_note
    with the menu's range and whether a standard deviation was given)."""
    return explain.half_width_note(
        report.errors["ADPM"], menu.unit, width=menu.width, spread=menu.data_sd is not None
    )


def all_public_caption(report: MenuReport, metric: str, unit: str) -> str:
    """The error if every user were public: the floor no menu beats."""
    return (
        f"For reference, if every user were public the {METRIC_LABELS[metric]} would "
        f"be {fmt_err(report.all_public.get(metric), unit)}: no menu can do better."
    )


# sections 3 to 6: drawn only when opened ---------------------------------------------------
SECTIONS: dict[str, str] = {
    "target": "3. Accuracy first: what does a target error take?",
    "whatif": "4. What if users move between two tiers?",
    "releases": "5. Which mean, and how many releases?",
    "save": "6. Save, share and use the menu",
}
"""The titles of the page's sections 3 to 6 (each opens on a click; a closed section is not
computed, so a slider step redraws only sections 1 and 2)."""

SECTIONS_INTRO = (
    "Open a section below to go further: a target error, users moving between tiers, "
    "repeated releases, or saving and sharing the menu. Several may be open at once; the "
    "link in the address bar remembers which."
)


# section 3: accuracy first --------------------------------------------------------------------
def default_target(report: MenuReport) -> float:
    """The target error offered first: half ADPM's 95% half-width to two digits (1 if 0)."""
    return float(f"{report.errors['ADPM'].half_width / 2:.2g}") or 1.0


def rescaled_target(target: float, old_width: float, new_width: float) -> float:
    """The accuracy-first target after the data range's width changed from ``old_width`` to
    ``new_width`` (data units): the same fraction of the range, to three significant digits
    (a target of 0.34 set for a 0-1 range is 170 for 0-500). Unchanged when a width is not
    positive and finite."""
    if not (math.isfinite(old_width) and math.isfinite(new_width)):
        return target
    if old_width <= 0 or new_width <= 0 or old_width == new_width:
        return target
    return float(f"{target * new_width / old_width:.3g}")


def solver_tier_defaults(menu: Menu) -> dict[str, int]:
    """Default tiers of the solver's choices: the first tier, and the loosest as destination."""
    return {"td_solve_tier": 0, "td_move_from": 0, "td_move_to": int(menu.levels.argmax())}


def answer_box(answer: DesignAnswer, menu: Menu) -> str:
    """The message box of an answer (views.tour.answer_tone): 'success' only when the menu
    meets the target as it is; 'warning' when it needs a change (more users, users to move;
    also when fewer users meet the target but the menu as it is does not: the table's mean is
    not monotone in users); 'error' when the target cannot be met; 'info' otherwise."""
    misses_now = answer.now_error is not None and answer.now_error > answer.target
    if answer.question == "users" and answer.status == "ok" and misses_now:
        return "warning"
    return tone.answer_tone(answer, answer.question, menu.n_users)


def solver_metrics(metric: str) -> dict[str, str]:
    """The solver metric of each target answered (views.whatif.TARGET_LABELS' keys) for the
    section's "Target measured as" choice: the population mean (ADPM) in that metric; the
    table's own mean (TableMean) in its proven 95% error (solvers.TABLE_METRIC) for a 95%
    error target only (an RMSE target: not answered, TABLE_RMSE_NOTE says so)."""
    return {"population": metric} | ({"table": TABLE_METRIC} if metric == "half_width" else {})


TABLE_RMSE_NOTE = (
    "An RMSE target is answered for the population mean only. Choose "
    f"'{METRIC_LABELS['half_width']}' above for the table's own mean's answer."
)


def answer_metrics(answer: DesignAnswer, menu: Menu) -> list[Metric]:
    """The answer's cards (the value, then the error there), or none when the answer has no
    value to show (status not 'ok'/'already')."""
    if answer.status not in ("ok", "already") or answer.value is None:
        return []
    q = answer.question
    if q == "users":
        n = int(answer.value)
        first = Metric(
            "Minimum number of users",
            f"{n:,}",
            "The fewest users for which this menu (same tiers and shares) meets the target.",
            f"{n - menu.n_users:+,} vs now",
            tone.delta_color(n, menu.n_users),  # fewer users needed is good news
        )
    elif q == "level":
        first = Metric(
            f"Strictest eps for {plain(menu.tiers[answer.tiers[0]].name)}",
            short_eps(answer.value),
            "Any smaller eps (more privacy) for this tier misses the target.",
        )
    else:
        m = int(answer.value)
        first = Metric(
            "Users who must move",
            f"{m:,}",
            "The fewest users moving from the first tier to the second that meets the target.",
            f"{100 * m / menu.n_users:.3g}% of all users",
            "off",
        )
    there = Metric(
        "Error there",
        fmt_err(answer.error, menu.unit),
        "The error at the answer (it meets the target; one step less does not).",
    )
    return [first, there]


def table_target_card(table_error: float, target: float, metric: str, unit: str) -> Metric:
    """Section 3's card above the table's own mean's answer: its (TableMean's) proven 95% error with
    the menu as it is, one release (section 5's figure, data units), and whether it is
    within a 95%-error ``target`` (an RMSE target is another measure: no verdict, the help
    says so)."""
    if metric == "rmse":
        verdict = None
        rmse = " The target is an RMSE, another measure: no verdict against it."
    else:
        verdict = "within the target" if table_error <= target else "above the target"
        rmse = ""
    return Metric(
        "95% error now",
        "± " + fmt_err(table_error, unit),
        "The table's own mean (TableMean) with this menu as it is, one release spending every "
        "user's whole budget: its proven 95% error (section 5's figure)." + rmse,
        verdict,
        "off",
    )


def applied_note(answer: DesignAnswer, menu: Menu) -> str:
    """The note shown after applying ``answer`` to ``menu`` (what changed)."""
    v = answer.value
    if answer.question == "users":
        return f"Set the number of users to {int(v or 0):,}."
    if answer.question == "level":
        return f"Set {plain(menu.tiers[answer.tiers[0]].name)} to eps = {short_eps(float(v or 0))}."
    a, b = answer.tiers
    return (
        f"Moved {count_noun(int(v or 0), 'user')} from "
        f"{plain(menu.tiers[a].name)} to {plain(menu.tiers[b].name)}."
    )


def can_apply(answer: DesignAnswer, menu: Menu) -> bool:
    """Whether the answer offers "Apply this to the menu" (status 'ok', something to apply)."""
    if answer.status != "ok" or answer.value is None:
        return False
    return answer.question != "level" or (
        math.isinf(float(answer.value)) or float(answer.value) >= EPS_MIN
    )


# section 4: what if users move ----------------------------------------------------------------
def whatif_tiers(menu: Menu, a: object, b: object) -> tuple[int, int]:
    """The what-if pair to show: ``a`` and ``b`` when they are two tiers of the menu, else
    tier A the strictest tier and tier B the last other tier."""
    idx = range(menu.k)
    if a not in idx:
        a = int(menu.levels.argmin())
    if b not in idx or b == a:
        b = next(j for j in reversed(idx) if j != a)
    return int(a), int(b)  # type: ignore[call-overload]


def whatif_share(menu: Menu, a: int, b: int) -> tuple[float, float]:
    """(A's share now rounded to 0.1 when that stays within both, A's and B's share together)
    in percent: the slider's start and its maximum."""
    both = menu.tiers[a].share_percent + menu.tiers[b].share_percent
    cur = menu.tiers[a].share_percent
    return (float(round(cur, 1)) if round(cur, 1) <= both else float(cur)), both


def whatif_metrics(
    menu: Menu,
    report: MenuReport,
    moved: MenuReport,
    metric: str,
    a: int,
    b: int,
    chosen: float,
) -> list[Metric]:
    """The cards at the slider's point: ADPM's error there (with its change when it shows),
    tau* there, and the two tiers' shares."""
    unit = menu.unit
    e_new, e_cur = moved.errors["ADPM"].get(metric), report.errors["ADPM"].get(metric)
    both = menu.tiers[a].share_percent + menu.tiers[b].share_percent
    delta = (
        f"{e_new - e_cur:+.3g} {plain(unit)} vs now".replace("  ", " ")
        if f"{e_new:.3g}" != f"{e_cur:.3g}"
        else None
    )  # not rounding noise
    na, nb = plain(menu.tiers[a].name), plain(menu.tiers[b].name)
    return [
        Metric(
            f"{METRIC_LABELS[metric].split(' (')[0]} at this point",
            fmt_err(e_new, unit),
            "ADPM's error of the mean with the shares set by the slider.",
            delta,
            tone.delta_color(e_new, e_cur),
        ),
        Metric(
            "tau* at this point",
            telling_eps(moved.worth_offering, menu.levels),
            "The loosest level worth offering with these shares.",
        ),
        Metric(
            f"{na} / {nb}",
            f"{chosen:.1f}% / {both - chosen:.1f}%",
            "Shares of all users in the two tiers at the slider's point.",
        ),
    ]


# section 5 ------------------------------------------------------------------------------------
def shareable_link(url: str | None, page_path: str, query: Sequence[tuple[str, str]]) -> str:
    """The page's address (``url`` without its query, else /page_path) with ``query``."""
    base = url.split("?")[0] if url else f"/{page_path}"
    return base + "?" + "&".join(f"{k}={v}" for k, v in query)


def import_help(max_bytes: int) -> str:
    """Help of the menu file uploader."""
    return (
        f"A menu file exported from this page, or written by hand: tiers with name, eps "
        f'(a number or "public") and share_percent adding up to 100, and n_users. At most '
        f"{MAX_MENU_TIERS} tiers and {max_bytes // 1024} KB. A bad file leaves the current "
        "menu unchanged."
    )
