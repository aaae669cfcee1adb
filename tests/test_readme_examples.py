"""Every ```python block of the README runs, from a folder outside the repository (the
library is installed, not found on the path by accident). The release example reads a
users.parquet made here (with the region and plan columns the per-segment example groups by)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from helpers import ROOT

BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_the_readme_has_library_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_readme_example_runs_from_any_folder(i, tmp_path):
    rng = np.random.default_rng(0)
    pd.DataFrame(
        {
            "spend": rng.uniform(0, 600, 2000),
            "eps": rng.choice([0.1, 1.0, np.inf], 2000),
            "tier": rng.choice(["Strict", "balanced", "OPEN "], 2000),
            "region": rng.choice(["north", "south", "east"], 2000),
            "plan": rng.choice(["free", "pro"], 2000),
        }
    ).to_parquet(tmp_path / "users.parquet")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run(
        [sys.executable, "-c", BLOCKS[i]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-3000:]
