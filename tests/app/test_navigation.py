"""How every run reaches the app's pages through app.py, tested through Streamlit's public API.

A folder named ``pages/`` beside app.py starts a fresh server in Streamlit's pages-directory
mode (until ``st.navigation`` runs); hdp_app.navigation.run_through_app brings a page opened
on its own back through app.py, and .streamlit/config.toml hides the file list that mode
sends. The browser tests (tests/test_browser.py) check first loads and deep links on fresh
servers; the AppTests here start from app.py itself, beside pages/, as a fresh server does.
"""

from __future__ import annotations

import pathlib
import tomllib

import pytest
from browser_support import app_pages

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_config_hides_streamlits_navigation():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showSidebarNavigation"] is False


def test_pages_folder_holds_only_pages():
    """Every .py file in pages/ is a page of app.py: no helper module can be opened by URL
    (the pages-directory mode would serve any file there as a page)."""
    pages = {path for path, _ in app_pages()}
    files = {f"pages/{f.name}" for f in (ROOT / "pages").glob("*.py") if f.name != "__init__.py"}
    assert files == pages


def test_every_page_calls_run_through_app_first():
    """A page opened on its own (a deep link on a fresh server) must reach app.py before it
    draws anything: run_through_app is the first statement after the imports."""
    import ast

    for path, _ in app_pages():
        body = ast.parse((ROOT / path).read_text()).body
        calls = [
            n
            for n in body
            if not isinstance(n, (ast.Import, ast.ImportFrom))
            and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
        ]
        first_call = next(n for n in calls if isinstance(n, ast.Expr))
        assert isinstance(first_call.value, ast.Call), path
        assert getattr(first_call.value.func, "id", None) == "run_through_app", path
        # nothing before it draws: only definitions and assignments
        before = calls[: calls.index(first_call)]
        assert not [n for n in before if isinstance(n, ast.Expr)], path


@pytest.mark.slow
@pytest.mark.parametrize(("path", "title"), app_pages())
def test_a_page_opened_directly_runs_through_app(path, title):
    """AppTest from app.py starts every run in the pages-directory mode, as a fresh server's
    first run does: a page opened directly (a deep link) must still get app.py around it (the
    sidebar summary)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    app.run()
    app.switch_page(path).run()
    assert not app.exception, app.exception
    labels = [m.label for m in app.sidebar.get("metric")]
    assert "Users n" in labels, f"{title}: no sidebar summary, so app.py did not run"
