"""The one piece of Streamlit internals the app relies on, pinned, and what it buys.

A folder named ``pages/`` beside app.py starts every fresh server process in Streamlit's legacy
multipage mode (``PagesManager.uses_pages_directory``). hdp_app.common.run_through_app turns it
off from a page run on its own and reruns through app.py; .streamlit/config.toml hides the file
list that mode sends. If an upgrade changes any of this, ``test_legacy_pages_mode_internal``
fails: then re-check run_through_app (it may simply no longer be needed).
"""

from __future__ import annotations

import inspect
import pathlib
import tomllib

import pytest
from browser_support import app_pages

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def legacy_flag():
    """Save and restore Streamlit's process-wide legacy flag around a test."""
    from streamlit.runtime.pages_manager import PagesManager

    saved = PagesManager.uses_pages_directory
    yield PagesManager
    PagesManager.uses_pages_directory = saved


def test_legacy_pages_mode_internal(legacy_flag):
    import streamlit as st
    from streamlit.runtime.scriptrunner import script_runner

    PagesManager = legacy_flag
    # Decided once per process, by the first session, from a sibling folder called pages/.
    assert "uses_pages_directory" in vars(PagesManager)
    PagesManager.uses_pages_directory = None
    PagesManager(str(ROOT / "app.py"))
    assert PagesManager.uses_pages_directory is True
    PagesManager(str(ROOT / "app.py"))  # a later session does not decide again
    PagesManager.uses_pages_directory = False
    PagesManager(str(ROOT / "app.py"))
    assert PagesManager.uses_pages_directory is False
    # Every run reads the flag: on, it runs the legacy navigation instead of app.py ...
    run_source = inspect.getsource(script_runner.ScriptRunner._run_script)
    assert "PagesManager.uses_pages_directory" in run_source
    assert "_mpa_v1(" in run_source
    # ... which lists the files of pages/ unless client.showSidebarNavigation is false ...
    mpa_source = inspect.getsource(script_runner._mpa_v1)
    assert 'config.get_option("client.showSidebarNavigation") is False' in mpa_source
    assert '"hidden"' in mpa_source
    # ... and st.navigation (app.py) turns it off.
    nav_source = inspect.getsource(st.navigation)
    assert "PagesManager.uses_pages_directory = False" in nav_source


def test_config_hides_streamlits_navigation():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showSidebarNavigation"] is False


def test_pages_folder_holds_only_pages():
    """Every .py file in pages/ is a page of app.py: no helper module can be opened by URL
    (the legacy mode would serve any file there as a page)."""
    pages = {path for path, _ in app_pages()}
    files = {f"pages/{f.name}" for f in (ROOT / "pages").glob("*.py") if f.name != "__init__.py"}
    assert files == pages


@pytest.mark.parametrize(("path", "title"), app_pages())
def test_a_page_opened_directly_runs_through_app(app, legacy_flag, path, title):
    """AppTest starts every run in the legacy mode, as a fresh server does: a page opened
    directly (a deep link) must still get app.py around it (the sidebar summary)."""
    app.run()
    legacy_flag.uses_pages_directory = None  # what AppTest does before each run
    app.switch_page(path).run()
    assert not app.exception, app.exception
    labels = [m.label for m in app.sidebar.get("metric")]
    assert "Users n" in labels, f"{title}: no sidebar summary, so app.py did not run"
