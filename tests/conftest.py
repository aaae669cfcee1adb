"""Shared pytest fixtures: AppTest factories and hypothesis settings."""

from __future__ import annotations

import functools
import importlib.metadata
import os
from collections.abc import Iterator
from typing import Any

import pytest
from helpers import whole_app
from hypothesis import HealthCheck, settings


class _ParsedOnce(importlib.metadata.Distribution):
    """An installed distribution whose metadata file is parsed once (its files read through)."""

    def __init__(self, dist: importlib.metadata.Distribution) -> None:
        self._dist = dist

    def read_text(self, filename: str) -> str | None:
        return self._dist.read_text(filename)

    def locate_file(self, path: Any) -> Any:
        return self._dist.locate_file(path)

    @functools.cached_property
    def metadata(self) -> Any:  # type: ignore[override]
        return self._dist.metadata


def _distributions_listed_once() -> None:
    """Every AppTest (one per app test: about 300 a run) scans the installed distributions for
    Streamlit components, parsing each one's metadata file (about 340 parses, 0.15-0.25 s),
    which made a quarter of tests/app's time. Nothing is installed while the tests run, so in
    a test process the list of distributions and their parsed metadata are made once
    (importlib.metadata.distributions() without arguments; any other call is unchanged).
    Streamlit itself is untouched (tests/test_architecture.py)."""
    listed: list[importlib.metadata.Distribution] = []
    original = importlib.metadata.distributions

    def distributions(**kwargs: Any) -> Iterator[importlib.metadata.Distribution]:
        if kwargs:
            return original(**kwargs)
        if not listed:
            listed.extend(_ParsedOnce(d) for d in original())
        return iter(listed)

    importlib.metadata.distributions = distributions  # type: ignore[assignment]


_distributions_listed_once()

# The suite's profile is derandomized: the same examples on every run, so a green suite
# stays green (a flaky test is a failing test) and a failure reproduces. To hunt for new
# cases, run with HYPOTHESIS_PROFILE=explore (random examples, 10x as many).
settings.register_profile(
    "ci",
    deadline=None,
    max_examples=60,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore", deadline=None, max_examples=600, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def ledger_path(tmp_path_factory, monkeypatch):
    """No test writes to the home folder: HOME is a fresh temporary folder and HDP_LEDGER is
    unset, so every test's default privacy ledger (the server's ledger the Release page uses,
    and PrivacyLedger()'s default) is a fresh file under it, and the library and CLI release
    untracked unless a test gives a ledger (they use $HDP_LEDGER when it is set). The
    default folder is made here; tests/app/test_page_release_fresh_home.py starts from an
    empty HOME instead. Returns the ledger's path. (Browser tests' servers get their own:
    see tests/browser_support.Server.)"""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("HDP_LEDGER", raising=False)
    path = home / ".local" / "share" / "hdp-explorer" / "ledger.duckdb"
    path.parent.mkdir(parents=True)
    return path


@pytest.fixture
def app():
    """A fresh AppTest of the whole app (not yet run); caches cleared between tests."""
    import streamlit as st

    st.cache_data.clear()
    return whole_app(default_timeout=60)


SLOW_FIXTURES = frozenset({"app", "spark", "browser", "server", "page", "full_table", "agreement"})
"""Tests using these run the whole app (AppTest), Spark, a browser or a full Table 1 run: `slow`."""


PACKAGE_FOLDERS = ("core", "release", "app", "browser")
"""tests/<folder> mirrors hdp_core, hdp_release, hdp_app (views, figures, pages) and the whole app
in Chromium."""


UNTRACED_FOLDERS = ("app", "browser")
"""Coverage (`pytest --cov`) counts the lines of hdp_core and hdp_release that their own tests
run (tests/core, tests/release and the top-level tests): the app's tests (pytest-cov's
`no_cover` marker) run without the tracer, which made their in-process page runs 60% slower."""


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    """`pytest -m "not slow"` is the quick loop (the library and its views, under a minute):
    browser tests, whole-app AppTests and Spark tests are marked slow here, the heaviest
    library tests by their own marker. Each test is also marked by the package its folder
    mirrors (`core`, `release`, `app`, `browser`), so `pytest -m core` runs one package's tests."""
    for item in items:
        folder = item.path.parent.name
        if folder in PACKAGE_FOLDERS:
            item.add_marker(getattr(pytest.mark, folder))
        if folder in UNTRACED_FOLDERS:
            item.add_marker(pytest.mark.no_cover)
        params = getattr(getattr(item, "callspec", None), "params", {}).values()
        spark_param = any(isinstance(v, str) and v == "spark" for v in params)
        if (
            item.get_closest_marker("browser") is not None
            or SLOW_FIXTURES & set(item.fixturenames)
            or spark_param  # an engine parametrised as "spark" starts Spark
        ):
            item.add_marker(pytest.mark.slow)
        if spark_param or "spark" in item.fixturenames:
            # every Spark test on one xdist worker (pytest_xdist_make_scheduler below): one
            # JVM started and warmed per run instead of one per worker
            if not is_spark_test_id(item.nodeid):
                raise pytest.UsageError(
                    f"{item.nodeid} starts Spark: its name must say 'spark' (Spark tests are "
                    "sent to one worker by their names; see tests/conftest.py)"
                )
            item.add_marker(pytest.mark.xdist_group("spark"))
    # The longest work first (xdist hands out work in this order): the Spark group, then the
    # browser tests, then the rest fill in around them, so no worker idles at the end while
    # the other finishes a long group. A stable sort: each file's own order is kept.
    items.sort(key=_work_order)


def is_spark_test_id(nodeid: str) -> bool:
    """A test that starts Spark says so in its id (its file, name or parameters)."""
    return "spark" in nodeid.lower()


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` (pyproject.toml) with every Spark test in one group, sent to one
    worker. xdist's own loadgroup reads the group from an `@group` suffix it adds to each node
    id; since pytest 9.2 a node's id can no longer be rewritten, so that suffix never appears
    and the group was split over the workers (two JVMs). Here the controller, which sees only
    ids, groups by the id: every Spark test says 'spark' in its id (checked at collection)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SparkGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "spark" if is_spark_test_id(nodeid) else nodeid

    return SparkGroupScheduling(config, log)


def _work_order(item: pytest.Item) -> int:
    """0 for the Spark group, 1 for a browser test, 2 for any other (see above)."""
    if item.get_closest_marker("xdist_group") is not None:
        return 0
    return 1 if item.get_closest_marker("browser") is not None else 2


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for the whole run (the Spark tests of the release, the ledger's
    fingerprint and the engines' agreement). Without Java this skips with the reason, except
    in CI (HDP_REQUIRE_SPARK=1, set by .ci/run, which installs Java 17), where it fails."""
    import shutil

    if shutil.which("java") is None:
        reason = "Spark needs Java 17 (Debian: openjdk-17-jre-headless), not found on PATH"
        if os.environ.get("HDP_REQUIRE_SPARK") == "1":
            pytest.fail(f"HDP_REQUIRE_SPARK=1 but {reason}")
        pytest.skip(reason)
    from hdp_release.engines.spark_source import spark_session

    # The JVM's quick compiler only: the tests run many short jobs on small tables, where
    # the optimising compiler's work never pays back (the Spark tests' JVM used 40% less CPU)
    return spark_session("local[2]", java_options="-XX:TieredStopAtLevel=1")
