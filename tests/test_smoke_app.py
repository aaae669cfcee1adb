"""The app starts and every page in the navigation renders without an exception."""

import pytest
from conftest import open_page

PAGES = ["profile", "saturation", "bounds", "simulation", "tier_designer"]


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_without_exception(app, page):
    at = open_page(app, page)
    assert not at.exception, at.exception
    # AppTest drops app.py-level sidebar elements after switch_page (checked in the browser test)
