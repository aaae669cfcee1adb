"""Installs that reproduce: the locks pin every package the loose requirements name, within
their ranges, and CI installs the dev lock (README, Set up; .ci/lock refreshes the locks)."""

from __future__ import annotations

import pathlib
import re

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _loose(name: str) -> list[Requirement]:
    """The requirements of ``name`` (following ``-r``), without ``-e .``."""
    out = []
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line or line.startswith("-e"):
            continue
        if line.startswith("-r"):
            out += _loose(line[2:].strip())
            continue
        out.append(Requirement(line))
    return out


def _pins(name: str) -> dict[str, str]:
    text = (ROOT / name).read_text()
    pinned = re.finditer(r"^([A-Za-z0-9_.\-]+)==(\S+)", text, re.M)
    return {canonicalize_name(m[1]): m[2] for m in pinned}


@pytest.mark.parametrize(
    ("loose", "lock"),
    [("requirements.txt", "requirements.lock"), ("requirements-dev.txt", "requirements-dev.lock")],
)
def test_the_lock_pins_every_requirement_within_its_range(loose, lock):
    pins = _pins(lock)
    for req in _loose(loose):
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not pinned in {lock}"
        assert req.specifier.contains(pins[name], prereleases=True), (req, pins[name])
    text = (ROOT / lock).read_text()
    assert re.search(r"^-e \.$", text, re.M), f"{lock} must install hdp_core in place (-e .)"
    assert ".ci/lock" in text.splitlines()[1], "the lock says how it was made"


def test_the_dev_lock_holds_the_app_lock():
    """The test environment runs the same versions as the app."""
    app, dev = _pins("requirements.lock"), _pins("requirements-dev.lock")
    assert {k: v for k, v in dev.items() if k in app} == app


def test_ci_installs_the_dev_lock():
    """.ci/run ends with the README's test command, verbatim."""
    run = (ROOT / ".ci" / "run").read_text()
    last = run.strip().splitlines()[-1]
    assert "pip install --no-compile -r requirements-dev.lock" in last
    assert "requirements-dev.txt" not in last
    readme = [line.strip() for line in (ROOT / "README.md").read_text().splitlines()]
    assert last in readme, "the last line of .ci/run is not the README's test command"
