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


