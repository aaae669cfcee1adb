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
