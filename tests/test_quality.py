"""Code quality gates, run with the suite (and so in CI): ruff's lint rules, ruff's formatter
(the code is formatted), and mypy with check_untyped_defs on hdp_core, hdp_release, hdp_app,
pages and app.py, and strict on hdp_core (pyproject.toml lists them; the type hints hold).

The same checks run as pre-commit hooks (.pre-commit-config.yaml). Each runs the tool from the
interpreter's own environment, so the suite needs nothing installed beyond requirements-dev.txt.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import ROOT


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_ruff_lint_is_clean():
    r = _run("ruff", "check", "--no-cache", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_code_is_formatted():
    r = _run("ruff", "format", "--check", "--no-cache", ".")
    assert r.returncode == 0, "run `ruff format .`:\n" + r.stdout + r.stderr


@pytest.mark.slow
def test_mypy_is_clean():
    """mypy on pyproject.toml's files, with its cache (.mypy_cache): a fresh clone writes it
    (about 4 s less than a run without one), a later run reads it."""
    r = _run("mypy")
    assert r.returncode == 0, r.stdout + r.stderr


STRICT_FLAGS = (
    "disallow_any_generics",
    "disallow_subclassing_any",
    "disallow_untyped_calls",
    "disallow_untyped_defs",
    "disallow_incomplete_defs",
    "disallow_untyped_decorators",
    "warn_return_any",
    "no_implicit_reexport",
    "strict_equality",
    "extra_checks",
)
"""mypy --strict's flags that can be set per module (issue 27: strict on hdp_core)."""


def test_mypy_is_strict_on_the_core():
    """pyproject.toml's override turns on every per-module flag of --strict for hdp_core (the
    mypy run above then holds the core to them)."""
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    core = [o for o in conf.get("overrides", []) if "hdp_core.*" in o["module"]]
    assert len(core) == 1 and "hdp_core" in core[0]["module"]
    assert all(core[0].get(flag) is True for flag in STRICT_FLAGS), core[0]
