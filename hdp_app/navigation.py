"""The app's pages and how every run gets to them through app.py (Streamlit's public API only).

``PAGE_FILES`` is the one list of pages: app.py builds its ``st.navigation`` from it, and the
tests read it. Paths are absolute (resolved from this file), so the same pages open whichever
script starts the app.

A folder named ``pages/`` beside app.py makes Streamlit start a fresh server process in its
documented pages-directory mode, until ``st.navigation`` is first called. In that mode a deep
link (``/saturation?...``) runs the page file on its own: no navigation, no sidebar summary, no
URL sync. ``run_through_app`` (every page calls it first) notices that app.py is not around
this run, calls ``st.navigation`` with the app's pages (which ends that mode, as documented)
and reruns at once, before anything is drawn; the rerun runs app.py, which opens the same page
(the URL's path is kept). Streamlit's own list of files is never shown:
.streamlit/config.toml sets ``client.showSidebarNavigation = false`` and app.py draws the
navigation itself.
"""

from __future__ import annotations

import contextlib
import pathlib
import threading
from collections.abc import Iterator
from typing import NamedTuple

import streamlit as st

ROOT = pathlib.Path(__file__).resolve().parents[1]


class PageFile(NamedTuple):
    """One page of the app: its file (relative to the repository), title and icon."""

    path: str
    title: str
    icon: str
    default: bool = False


PAGE_FILES: tuple[PageFile, ...] = (
    PageFile("pages/profile.py", "Profile", ":material/tune:", default=True),
    PageFile("pages/saturation.py", "Saturation", ":material/show_chart:"),
    PageFile("pages/bounds.py", "Bounds", ":material/straighten:"),
    PageFile("pages/simulation.py", "Simulation", ":material/casino:"),
    PageFile("pages/tier_designer.py", "Tier designer", ":material/explore:"),
    PageFile("pages/release.py", "Release", ":material/lock_open:"),
    PageFile("pages/tour.py", "Tour", ":material/school:"),
)


def app_pages() -> list[st.Page]:
    """The app's pages as ``st.Page`` objects, in navigation order (absolute paths)."""
    return [app_page(p.path) for p in PAGE_FILES]


def app_page(path: str) -> st.Page:
    """The page at ``path`` (as in PAGE_FILES, "pages/release.py"), for ``st.page_link`` and
    ``st.switch_page`` (which otherwise resolve a path against the script that started the
    app)."""
    (p,) = [p for p in PAGE_FILES if p.path == path]
    return st.Page(ROOT / p.path, title=p.title, icon=p.icon, default=p.default)


_run = threading.local()  # one script run at a time per thread: is app.py around this run?


@contextlib.contextmanager
def through_app() -> Iterator[None]:
    """app.py runs the page inside this block, so the page knows app.py is around it."""
    _run.active = True
    try:
        yield
    finally:
        _run.active = False


def run_through_app() -> None:
    """Make sure this run goes through app.py; every page file calls it first (see the module
    docstring). A run that came through app.py returns at once."""
    if getattr(_run, "active", False):
        return
    # Ends the pages-directory mode. No icons: a page's ":material/...:" icon would become
    # the tab's icon for this run, fetched from a font server (app.py sets the app's own).
    st.navigation(
        [st.Page(ROOT / p.path, title=p.title, default=p.default) for p in PAGE_FILES],
        position="hidden",
    )
    st.rerun()
