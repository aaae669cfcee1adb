"""Code quality gates, run with the suite (and so in CI): ruff's lint rules, ruff's formatter
(the code is formatted), and mypy with check_untyped_defs on hdp_core, hdp_app, pages and
app.py (pyproject.toml lists them; the type hints hold).

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
    r = _run("mypy", "--no-incremental", "--cache-dir", "/dev/null")
    assert r.returncode == 0, r.stdout + r.stderr
