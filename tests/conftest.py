"""Shared pytest fixtures: AppTest factories and hypothesis settings."""

from __future__ import annotations

import pathlib
import sys

import pytest
from hypothesis import HealthCheck, settings

ROOT = pathlib.Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import hdp_core as hdp  # noqa: E402  (after the repository root is on sys.path)

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


def open_page(at, page: str):
    """Run ``at`` once (default page) and switch to ``pages/<page>.py``; returns ``at``."""
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    return at


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
        # Set before the original runs too: it would set True (there is a pages/ folder), and
        # an AppTest running in another thread at that moment would run its page alone.
        PagesManager.uses_pages_directory = False
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


# ---- helpers for page tests (AppTest) ---------------------------------------------------
INF = float("inf")

PROFILE_KINDS = {
    "per_user": lambda: hdp.paper_profile("high", 400, seed=1),
    "tiered_huge": lambda: hdp.EpsilonProfile.from_tiers(
        [0.1, 1.0, INF], [10**12, 10**11, 10**6], ["Strict", "Relaxed", "Public"]),
    "two_groups": lambda: hdp.preset("two_groups"),
    "all_public": lambda: hdp.EpsilonProfile.from_values([INF] * 20),
    "with_zeros": lambda: hdp.EpsilonProfile.from_values(
        [0.0, 0.0, 0.05, 0.2, 1.0, 5.0, INF]),
    "all_zero": lambda: hdp.EpsilonProfile.from_values([0.0, 0.0, 0.0]),
}
"""Kinds of profile every page must handle, built fresh for each test."""


def show(at, prof, page: str):
    """Run the app, make ``prof`` current through session state, open ``pages/<page>.py``."""
    from pages.common import PROFILE, PROFILE_LABEL, PROFILE_SPEC

    at.run()
    at.session_state[PROFILE] = prof
    at.session_state[PROFILE_SPEC] = None
    at.session_state[PROFILE_LABEL] = "test profile"
    at.switch_page(f"pages/{page}.py").run()
    return at


def ok(at) -> None:
    """No exception and no error message on the page."""
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def metric(at, label: str) -> str:
    """The value of the metric labelled ``label`` (fails listing the labels if absent)."""
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r} among {[m.label for m in at.metric]}"
    return found[0]


def widget(at, kind: str, key: str):
    """The widget of element type ``kind`` with key ``key``."""
    found = [w for w in at.get(kind) if w.key == key]
    assert found, f"no {kind} {key!r}"
    return found[0]


def shown(text: str) -> str:
    """What markdown displays for ``text``: backslash escapes (hdp_core.views.formatting.plain)
    removed, so tests can look for the words a user reads."""
    import re

    return re.sub(r"\\(.)", r"\1", text)
