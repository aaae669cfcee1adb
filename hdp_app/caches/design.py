"""The Tier designer's cached core calls and figures (shared by every session; a menu is
hashed by its key, the digest of its canonical JSON, so equal menus share an entry).

The report, the sweep and the figures are kept as objects shared by every session (they are
never modified): st.cache_data pickles its results and unpickles them on every hit, which
rebuilt and revalidated the three plotly figures on every rerun (issue 11).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from hdp_app.figures.design import menu_figure, whatif_figure
from hdp_core import design as D
from hdp_core import menu as M
from hdp_core import solvers as S

_HASH: dict[str | type[Any], Callable[[Any], Any]] = {M.Menu: lambda m: m.key}


@st.cache_resource(hash_funcs=_HASH, max_entries=64, show_spinner=False)
def cached_report(menu: M.Menu) -> D.MenuReport:
    """hdp_core.design.evaluate_menu(menu), cached."""
    return D.evaluate_menu(menu)


@st.cache_data(hash_funcs=_HASH, max_entries=64, show_spinner=False)
def cached_solve(
    menu: M.Menu, question: str, target: float, metric: str, a: int, b: int
) -> S.DesignAnswer:
    """hdp_core.design.solve (the accuracy-first answer), cached."""
    return S.solve(menu, question, target, metric, a, b)


def cached_answers(
    menu: M.Menu, question: str, target: float, metric: str, a: int, b: int
) -> dict[str, S.DesignAnswer]:
    """Section 3's answers, one per target answered (views.design.solver_metrics: the
    population mean in ``metric``, the table's own mean for a 95% error target), cached."""
    from hdp_app.views.design import solver_metrics

    return {
        key: cached_solve(menu, question, target, met, int(a), int(b))
        for key, met in solver_metrics(metric).items()
    }


@st.cache_resource(hash_funcs=_HASH, max_entries=32, show_spinner=False)
def cached_sweep(menu: M.Menu, a: int, b: int) -> D.ShareSweep:
    """hdp_core.design.share_sweep over 41 shares of tier a (b takes the rest), cached."""
    return D.share_sweep(menu, a, b, points=41)


@st.cache_resource(hash_funcs=_HASH, max_entries=32, show_spinner=False)
def cached_whatif_figure(menu: M.Menu, a: int, b: int, metric: str, chosen: float) -> Any:
    """The what-if chart for tiers a and b with the slider at ``chosen`` (cached)."""
    cur = menu.tiers[a].share_percent
    e_cur = cached_report(menu).errors["ADPM"].get(metric)
    return whatif_figure(
        cached_sweep(menu, a, b),
        metric,
        (menu.tiers[a].name, menu.tiers[b].name),
        menu.unit,
        cur,
        e_cur,
        chosen,
    )


@st.cache_resource(hash_funcs=_HASH, max_entries=32, show_spinner=False)
def cached_menu_figure(menu: M.Menu, metric: str) -> Any:
    """The menu figure (its two panels; plotly figures are slow to build: cached per menu)."""
    return menu_figure(cached_report(menu), metric)


@st.cache_data(hash_funcs=_HASH, max_entries=64, show_spinner=False)
def cached_release_errors(menu: M.Menu, releases: int) -> Any:
    """views.whatif.menu_release_errors: both targets' 95% errors of each of ``releases``
    releases of the menu (data units), cached."""
    from hdp_app.views.whatif import menu_release_errors

    return menu_release_errors(menu, releases)


def export_targets(menu: M.Menu, k: int) -> dict[str, Any]:
    """The JSON export's block of section 5 for ``k`` releases (views.whatif.targets_to_dict
    of the cached errors of one release and of each of k)."""
    from hdp_app.views.whatif import targets_to_dict

    return targets_to_dict(cached_release_errors(menu, 1), cached_release_errors(menu, k), k)
