"""The Tier designer's session state: the current menu, the widgets seeded from it, and the
callbacks of its buttons (they run before the script, so they may rewrite widget values).

Every decision is in hdp_core: the menu's changes in hdp_core.design (Menu.add_tier,
Menu.remove_tier, DesignAnswer.apply, template_menu), the widget values and every note in
hdp_app.views.design. Here they are only read from and written to ``st.session_state``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import streamlit as st

import hdp_core as hdp
from hdp_app.common import MENU_LINK_KEY, TD_MENU, get_profile, set_profile
from hdp_app.views import design as V
from hdp_app.views import design_link, links
from hdp_core import design as D
from hdp_core import design_io as menu_io
from hdp_core import menu as M
from hdp_core.errors import ProfileError

MENU = TD_MENU  # the current validated Menu (not a widget)
NOTE = "td_note"  # a message about the menu (bad link, import result), shown until replaced
NOTE_KIND = NOTE + "_kind"  # "info" or "warning"
IMPORT_MSG = "td_import_msg"  # (kind, text) from the last import attempt
EPS_OPTS = "td_eps_opts"  # options of the eps sliders (a log grid plus the menu's own levels)
USED = "td_used"  # set by "Use this menu as the current profile", shown once
FROM_PROFILE = "td_from_profile"  # set by the Profile page's "open in the Tier designer"
LINK_KEY = MENU_LINK_KEY  # query-string parameter holding the encoded menu
TARGET_WIDTH = "td_target_width"  # the range width (data units) the target was set for


def load_menu(menu: M.Menu, note: str | None = None, kind: str | None = None) -> None:
    """Make ``menu`` current and write it into every widget (call before widgets render);
    ``note`` (of ``kind`` 'info' or 'warning', when given) is shown above the menu."""
    ss = st.session_state
    old_k = ss.get("td_k", 0)
    ss[MENU] = menu
    ss[EPS_OPTS] = V.eps_options(menu)
    ss.update(V.widget_values(menu))
    for key in V.stale_tier_keys(menu.k, old_k):
        ss.pop(key, None)
    ss[NOTE] = note
    ss.pop(IMPORT_MSG, None)
    if kind is not None:
        ss[NOTE_KIND] = kind


def init_menu() -> None:
    """First visit of the session: the ?menu= link's menu, else the default menu (with a
    note when the link could not be read). Later visits re-seed widgets Streamlit dropped."""
    ss = st.session_state
    if MENU not in ss:
        token = st.query_params.get(LINK_KEY)
        if not token:
            load_menu(M.default_menu())
            return
        try:
            menu = links.decode_menu_link(token)
        except (ProfileError, ValueError) as e:
            load_menu(M.default_menu(), V.bad_link_note(e), "warning")
            return
        load_menu(menu, V.LINK_OPENED_NOTE, "info")
        return
    if EPS_OPTS not in ss:
        ss[EPS_OPTS] = V.eps_options(ss[MENU])
    for key, v in V.widget_values(ss[MENU]).items():
        if key not in ss:
            ss[key] = v


def init_goal() -> None:
    """First visit: the accuracy-first target from the link (?goal=metric~value); a later
    visit keeps the session's own target (keep_section_state)."""
    ss = st.session_state
    if "td_target" in ss or "td_target" in ss.get(_KEPT_COPY, {}):
        return
    text = st.query_params.get(design_link.GOAL_KEY)
    if text:
        try:
            ss["td_metric"], ss["td_target"] = design_link.decode_goal(text)
        except ValueError:
            pass  # a bad target falls back to the default; the menu still opens


def menu_from_widgets() -> tuple[M.Menu | None, str | None, str | None]:
    """(menu, note, error) built from the widgets (hdp_app.views.design.menu_from_inputs)."""
    return V.menu_from_inputs(cast(Mapping[str, Any], st.session_state))


def keep_menu(menu: M.Menu) -> None:
    """Make a menu edited in the widgets current (clears the note and the import message)."""
    ss = st.session_state
    if menu != ss[MENU]:
        ss[MENU] = menu
        ss[NOTE] = None
        ss.pop(IMPORT_MSG, None)


# sections 3 to 6 (drawn only when open) -------------------------------------------------------
LAZY_TITLES = dict(V.SECTIONS)
"""The parts of the page drawn only when opened: sections 3 to 6 (section 2's chart is drawn
on arrival, issue 31)."""
OPEN = {name: f"td_open_{name}" for name in LAZY_TITLES}
"""Session-state key (and link parameter, 'td_open_<name>=true') of each lazy part's
expander: open or closed."""

KEPT = (
    "td_view",
    "td_metric",
    "td_target",
    "td_question",
    "td_solve_tier",
    "td_move_from",
    "td_move_to",
    "td_wi_a",
    "td_wi_b",
    "td_wi_share",
    "td_releases",
)
"""Widgets inside the lazy sections (and section 2's error measure): Streamlit forgets a
widget's value after a run that did not draw it (a closed section, another page), so they would
come back at their defaults; :func:`keep_section_state` keeps them."""

_KEPT_COPY = "td_kept_values"  # a copy of KEPT's values that outlives visits to other pages


def keep_section_state() -> None:
    """Give the lazy sections' widgets back their values at the start of every run of the
    page's body: a section closed or another page visited meanwhile made Streamlit forget
    them (or show a stale value set earlier through the Session State API). The copy is
    updated by :func:`changed` (the widgets' on_change) and :func:`put`."""
    ss = st.session_state
    copy = ss.setdefault(_KEPT_COPY, {})
    for key in KEPT:
        if key in copy:
            ss[key] = copy[key]
        elif key in ss:  # seeded before this run's body (e.g. from the link)
            copy[key] = ss[key]


def changed(key: str) -> None:
    """on_change of a kept widget (KEPT): remember the value the user just chose."""
    ss = st.session_state
    ss.setdefault(_KEPT_COPY, {})[key] = ss[key]


def keep_eps_option(i: int) -> None:
    """Tier ``i``'s eps slider holds one of its options: a value Streamlit lost falls back to
    the menu's level of that tier (1 for a tier the menu does not have yet)."""
    ss = st.session_state
    if ss.get(f"td_eps_{i}") not in ss[EPS_OPTS]:
        ss[f"td_eps_{i}"] = float(ss[MENU].tiers[i].eps) if i < ss[MENU].k else 1.0


def seed_solver_tiers(menu: M.Menu) -> None:
    """The accuracy-first solver's tier pickers hold tiers of ``menu`` (else their defaults,
    views.design.solver_tier_defaults)."""
    for key, default in V.solver_tier_defaults(menu).items():
        if st.session_state.get(key) not in range(menu.k):
            put(key, default)


def seed_whatif_tiers(menu: M.Menu) -> None:
    """The what-if's tiers A and B (views.design.whatif_tiers: the chosen ones while they
    exist, else the menu's defaults)."""
    ss = st.session_state
    seed_a, seed_b = V.whatif_tiers(menu, ss.get("td_wi_a"), ss.get("td_wi_b"))
    put("td_wi_a", seed_a)
    put("td_wi_b", seed_b)


def seed_whatif_share(menu: M.Menu, wa: int, wb: int) -> float:
    """Seed the what-if's share slider for tiers ``wa`` and ``wb`` (tier A's share as it is
    when the pair or the menu changed, or when the kept value is out of range); returns the
    largest share A can take (both tiers' total, in %)."""
    ss = st.session_state
    start, both = V.whatif_share(menu, wa, wb)
    pair = (wa, wb, round(both, 9), menu.key)
    v = ss.get("td_wi_share")
    if ss.get("td_wi_pair") != pair or not isinstance(v, float) or not 0 <= v <= both:
        put("td_wi_share", start)
        ss["td_wi_pair"] = pair
    return float(both)


def current_menu() -> tuple[M.Menu, str | None, str | None]:
    """(menu, error, warning): the menu the widgets describe, kept as the current one, with
    a note on its shares (warning); or, when the widgets have a problem, the last valid menu
    and the problem (error, views.design.input_error_text)."""
    menu, shares_msg, input_error = menu_from_widgets()
    if menu is None:
        return st.session_state[MENU], V.input_error_text(input_error or ""), None
    keep_menu(menu)
    return menu, None, shares_msg


def sync_link(menu: M.Menu) -> str:
    """Write ``menu`` into the page's link (when it changed); returns its token."""
    token = links.encode_menu_link(menu)
    if st.query_params.get(LINK_KEY) != token:
        st.query_params[LINK_KEY] = token
    return token


def sync_goal(report: D.MenuReport) -> str:
    """Write the accuracy goal (its metric and target, :func:`goal`) into the page's link
    (when it changed); returns its token."""
    token = design_link.encode_goal(*goal(report))
    if st.query_params.get(design_link.GOAL_KEY) != token:
        st.query_params[design_link.GOAL_KEY] = token
    return token


def tracked(key: str) -> dict[str, Any]:
    """Keyword arguments of a kept widget (KEPT): its key and the callback that remembers
    the value the user chooses (:func:`changed`)."""
    return {"key": key, **tracking(key)}


def tracking(key: str) -> dict[str, Any]:
    """:func:`tracked` without the key (for a widget drawn from a field that has it)."""
    return {"on_change": changed, "args": (key,)}


def put(key: str, value: Any) -> None:
    """Set a kept widget's value (KEPT) from the page's code, before the widget is drawn."""
    ss = st.session_state
    ss[key] = value
    ss.setdefault(_KEPT_COPY, {})[key] = value


def init_sections() -> None:
    """First visit: seed 'Releases (k)' from the link (the value was checked by
    drop_bad_query_params) and open section 5 when the link carries one."""
    ss = st.session_state
    if "td_releases" in ss:
        return
    raw = st.query_params.get("td_releases")
    put("td_releases", int(float(raw)) if raw else 1)
    if raw:
        ss[OPEN["releases"]] = True


def goal(report: D.MenuReport) -> tuple[str, float]:
    """The accuracy-first target (metric, value in data units) the page's link and export
    carry: the section 3 widgets' values, seeded as they would be when the section was never
    opened (the first metric, V.default_target)."""
    ss = st.session_state
    if ss.get("td_metric") not in V.METRIC_LABELS:
        put("td_metric", next(iter(V.METRIC_LABELS)))
    width = float(report.menu.width)
    if "td_target" not in ss:
        put("td_target", V.default_target(report))
    elif ss.get(TARGET_WIDTH, width) != width:  # the range changed: the target follows it
        put("td_target", V.rescaled_target(float(ss["td_target"]), ss[TARGET_WIDTH], width))
    ss[TARGET_WIDTH] = width
    return ss["td_metric"], float(ss["td_target"])


def releases() -> int:
    """The 'Releases (k)' value (section 5's control, kept while the section is closed)."""
    return int(st.session_state.get("td_releases", 1))


# what a step of the menu's inputs reruns (issue 29) -------------------------------------------
BODY = "td_body"
"""Key of the page's fragment (sections 1 to 6): a control whose callback returns normally
reruns it."""
OUTPUTS = "td_outputs"
"""Key of the fragment inside it that reads the menu from the inputs and draws what it gives
(its notes, section 2): an edit of a tier's name, eps or share, of the users, the range, the
unit or the spread reruns only this (:func:`cb_menu_input`), not the 20 controls above it."""
SEGMENTS_OPEN = "td_open_segments"  # the segments planning expander (hdp_app.segments_planning)


def outputs_only() -> bool:
    """True when an edit of the menu's inputs changes nothing on the page but the outputs
    fragment: no note above the menu (an edit clears it), no import or "used" message, and
    sections 3 to 6 and the segments closed (open, they follow the menu too)."""
    ss = st.session_state
    if ss.get(NOTE) or ss.get(IMPORT_MSG) or ss.get(USED):
        return False
    return not any(ss.get(key) for key in (*OPEN.values(), SEGMENTS_OPEN))


def cb_menu_input() -> None:
    """on_change of the menu's inputs (a tier's name, eps and share; users, range, unit, sd):
    rerun only the outputs fragment when :func:`outputs_only`, else the page's fragment (the
    control's own, as before). An edit giving a new valid menu makes it current here, before
    the rerun (:func:`keep_menu`: clears the note above the menu and the import message), so
    the page's fragment, which draws the note before the outputs, no longer shows it: else
    the note stayed on the page after the next steps, which rerun only the outputs."""
    only = outputs_only()  # before keep_menu: with a note shown, the page's fragment reruns
    menu = menu_from_widgets()[0]
    if menu is not None:
        keep_menu(menu)
    if only:
        st.rerun(OUTPUTS)


def cb_view() -> None:
    """on_change of section 2's error measure (in the outputs fragment): remember it
    (:func:`changed`); with a section open (section 4 draws in that measure) rerun the page's
    fragment, not only the outputs."""
    changed("td_view")
    if not outputs_only():
        st.rerun(BODY)


# callbacks ------------------------------------------------------------------------------------
def cb_template() -> None:
    ss = st.session_state
    cur = ss[MENU]
    name = ss["td_template"]
    load_menu(
        M.template_menu(name, cur.n_users, cur.low, cur.high, cur.unit),
        V.template_note(name),
        "info",
    )


def cb_add_tier() -> None:
    try:
        load_menu(st.session_state[MENU].add_tier())
    except hdp.MenuError:
        return  # the button is disabled at MAX_TIERS


def cb_remove_tier(i: int) -> None:
    cur = st.session_state[MENU]
    try:
        menu = cur.remove_tier(i)
    except (hdp.MenuError, IndexError):
        return  # the button is disabled for the only tier
    load_menu(menu, V.removed_note(cur.tiers[i].name), "info")


def cb_import() -> None:
    ss = st.session_state
    up = ss.get("td_upload")
    if up is None:
        return
    try:
        if up.size > menu_io.MAX_MENU_BYTES:
            raise hdp.MenuError(V.too_big_text(up.size, menu_io.MAX_MENU_BYTES))
        menu = menu_io.menu_from_upload(up.name, up.getvalue(), ss.get(MENU))
    except (ProfileError, ValueError) as e:
        ss[IMPORT_MSG] = V.import_messages(None, up.name, e)
        return
    load_menu(menu, V.imported_note(up.name), "info")
    ss[IMPORT_MSG] = V.import_messages(menu, up.name)


def cb_apply(menu: M.Menu, note: str) -> None:
    load_menu(menu, note, "info")


def cb_use_profile(menu: M.Menu) -> None:
    set_profile(*V.as_profile(menu))
    st.session_state[USED] = True


def cb_load_profile_tiers() -> None:
    """Load the current (tiered) profile's tiers into the designer (issue 13)."""
    ss = st.session_state
    try:
        menu = design_link.menu_from_profile(get_profile(), ss[MENU])
    except (ProfileError, ValueError) as e:
        ss[NOTE], ss[NOTE_KIND] = V.bad_profile_note(e), "warning"
        return
    load_menu(menu, V.PROFILE_LOADED_NOTE, "info")
