"""Two parts of the Tier designer page (pages/tier_designer.py), kept here so the page stays
short: the checks of the menu its controls describe (drawn first in the page's outputs
fragment, issue 29) and section 5 (which mean, and k releases). Widgets only: numbers and
sentences from hdp_app.views, state in hdp_app.design_state.
"""

from __future__ import annotations

import streamlit as st

from hdp_app import design_state as S
from hdp_app.caches import design as cache
from hdp_app.views import design_controls as T
from hdp_app.views import slack as SL
from hdp_app.views import tuned as tview
from hdp_app.views import whatif as wv
from hdp_app.widgets import number, show_metric
from hdp_core import menu as M


def menu_checks() -> M.Menu:
    """The menu the page is about (the last valid one when the inputs have a problem), with
    the note on its spread and the inputs' problem under the controls; keeps the link in
    sync."""
    menu, error, warning = S.current_menu()
    spread_note = tview.designer_spread_note(menu)
    if spread_note:
        st.caption(spread_note)
    if error:
        st.error(error, icon=":material/block:")
    elif warning:
        st.warning(warning, icon=":material/balance:")
    S.sync_link(menu)
    return menu


def targets_section(menu: M.Menu) -> None:
    """5. Which mean, and k releases: the 95% error under each target (population: ADPM;
    table: TableMean) of each of k releases at eps / k."""
    k = int(number(st, T.RELEASES, **S.tracking("td_releases"), bind="query-params"))
    single, each = cache.cached_release_errors(menu, 1), cache.cached_release_errors(menu, k)
    st.markdown(wv.releases_caption(k))
    for col, target, m in zip(
        st.columns(2), wv.TARGET_LABELS, wv.target_metrics(single, each, k, menu.unit)
    ):
        show_metric(col, m)
        col.caption(wv.TARGET_TEXTS[target])
        col.caption(SL.slack_caption(SL.menu_slack(menu, k, target), menu.unit))
