"""What the pages import, re-exported from the modules that hold it (kept while the pages
move to importing from those modules directly):

- hdp_app.state: session keys, the current profile and menu, init_state
- hdp_app.url: the link (query parameters through st.query_params only)
- hdp_app.cache: every st.cache_* wrapper and its hash functions
- hdp_app.sidebar: the sidebar summary and the note above the page
- hdp_app.widgets: shared page furniture (metric row, guarded sections)
- hdp_app.navigation: the app's pages and run_through_app
"""

from __future__ import annotations

from hdp_app import url as _url
from hdp_app.cache import PROFILE_HASH, cached_adpm, cached_summary, profile_from_spec
from hdp_app.navigation import run_through_app
from hdp_app.sidebar import render_note, render_sidebar
from hdp_app.state import (
    DEFAULT_PRESET,
    DEFAULT_SPEC,
    PROFILE,
    PROFILE_LABEL,
    PROFILE_NOTE,
    PROFILE_SPEC,
    PROFILE_VERSION,
    SIDEBAR_NOTE,
    TD_MENU,
    default_state,
    get_menu,
    get_profile,
    get_spec,
    init_state,
    profile_version,
    set_menu,
    set_profile,
)
from hdp_app.url import MENU_LINK_KEY, drop_bad_query_params
from hdp_app.views.formatting import compact_count
from hdp_app.widgets import guarded, metric_row

__all__ = [
    "DEFAULT_PRESET",
    "DEFAULT_SPEC",
    "MENU_LINK_KEY",
    "PROFILE",
    "PROFILE_HASH",
    "PROFILE_LABEL",
    "PROFILE_NOTE",
    "PROFILE_SPEC",
    "PROFILE_VERSION",
    "SIDEBAR_NOTE",
    "TD_MENU",
    "cached_adpm",
    "cached_summary",
    "compact_count",
    "default_state",
    "drop_bad_query_params",
    "get_menu",
    "get_profile",
    "get_spec",
    "guarded",
    "init_state",
    "link_params",
    "metric_row",
    "profile_from_spec",
    "profile_version",
    "render_note",
    "render_sidebar",
    "run_through_app",
    "set_menu",
    "set_profile",
    "sync_url",
]


def link_params(spec: dict | None = None) -> dict[str, str | list[str]]:
    """The query parameters of the current profile (or of ``spec``); hdp_app.url.link_params.

    Raises hdp.NotShareable (with a reason a person can read) when it cannot be linked.
    """
    return _url.link_params(get_spec() if spec is None else spec)


def sync_url() -> None:
    """Write the current profile into the URL (hdp_app.url.sync_url)."""
    _url.sync_url(get_spec())
