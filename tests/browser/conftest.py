"""The browser tests' shared fixtures: one Chromium and one app server per test process (an
xdist worker), shared by every browser test module it runs, and a fresh page per test. Tests
that need a fresh server start their own (tests/browser_support.Server). Skipped when
/usr/bin/chromium or playwright is missing, unless HDP_REQUIRE_BROWSER=1 (set by .ci/run),
where that fails."""

from __future__ import annotations

import os

import pytest
from browser_support import CHROMIUM, Server, chromium, new_page


def _unavailable(reason: str):
    if os.environ.get("HDP_REQUIRE_BROWSER") == "1":
        pytest.fail(f"HDP_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        _unavailable(f"{CHROMIUM} is absent (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable("the playwright package is not installed")
    with chromium() as b:
        yield b


@pytest.fixture(scope="session")
def server(browser, tmp_path_factory):
    """The app on a free local port, shared by the tests (of every module) that do not need a
    fresh process."""
    srv = Server(log_dir=tmp_path_factory.mktemp("server"))
    try:
        yield srv.ready()
    finally:
        srv.stop()


@pytest.fixture
def page(browser):
    ctx, pg = new_page(browser)
    yield pg
    ctx.close()
