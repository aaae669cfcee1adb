"""The README's Table 1 is exactly what the CLI prints at the default seed."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BEGIN = "<!-- table1:"
END = "<!-- /table1 -->"


def _readme_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(BEGIN)
    start = text.index("\n", start) + 1
    return text[start : text.index(END, start)].rstrip("\n")


@pytest.mark.slow  # about 5 s: two profiles x 20,000 trials, as the README states
def test_readme_table1_is_the_cli_output():
    out = subprocess.run(
        [sys.executable, "-m", "hdp_core.experiments", "table1", "--format", "markdown"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.rstrip("\n")
    assert "20,000 trials" in out and "| ADPM |" in out
    assert _readme_block() == out
