"""Shared pytest fixtures: AppTest factories and hypothesis settings."""

from __future__ import annotations

import pytest
from helpers import APP
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci")


@pytest.fixture
def app():
    """A fresh AppTest of the whole app (not yet run); caches cleared between tests."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    return AppTest.from_file(APP, default_timeout=60)


@pytest.fixture(autouse=True)
def _apptest_without_legacy_pages_mode(monkeypatch):
    """Run AppTest like the served app: app.py around every page, on every run.

    Streamlit enters its legacy multipage mode when the entry script has a sibling folder
    called ``pages/`` and leaves it once st.navigation has run. The served app leaves it for
    good on its first run (see pages/common.py), but AppTest resets the mode before every
    run, so without this every run after the first executed the page alone: no app.py, so no
    sidebar summary and no URL sync (the "sidebar missing after switch_page" quirk).
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a Streamlit without the legacy mode: nothing to do
        return

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)
