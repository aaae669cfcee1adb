"""hdp_app.views.codegen: every "Reproduce in Python" snippet runs and prints the page's numbers.

Each snippet is executed in a fresh namespace (and a scratch folder holding profile.csv when the
snippet reads it back), and what it prints is compared with the same numbers computed here by
direct hdp_core calls.
"""

from __future__ import annotations

import contextlib
import io
import math
import os

import numpy as np
import pytest

import hdp_core as hdp
import hdp_release
from hdp_app.views import codegen

PROFILES = {
    "preset": (hdp.preset("two_groups"), {"kind": "preset", "name": "two_groups", "seed": 0}),
    "tiers": (hdp.EpsilonProfile.from_tiers([0.1, 1.0, math.inf], [600, 300, 100]), None),
    "values": (hdp.EpsilonProfile.from_values([0.5, 0.2, 3.0, math.inf, 0.0]), None),
    "big": (hdp.EpsilonProfile.from_values(np.linspace(0.05, 2.0, 300)), None),
}


def _run(code: str, folder, prof: hdp.EpsilonProfile) -> list[str]:
    """Execute ``code`` in ``folder`` (with profile.csv there) and return its printed lines."""
    (folder / "profile.csv").write_bytes(prof.to_csv())
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<snippet>", "exec"), {"__name__": "__snippet__"})
    finally:
        os.chdir(cwd)
    return out.getvalue().splitlines()


@pytest.mark.parametrize("kind", list(PROFILES))
def test_profile_code_rebuilds_the_profile(kind, tmp_path):
    prof, spec = PROFILES[kind]
    code = "import math\nimport hdp_core as hdp\nimport hdp_core.presets\n" + codegen.profile_code(
        prof, spec
    )
    ns: dict = {}
    (tmp_path / "profile.csv").write_bytes(prof.to_csv())
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(code, ns)
    finally:
        os.chdir(cwd)
    got = ns["prof"]
    assert np.array_equal(got.levels, prof.levels) and np.array_equal(got.counts, prof.counts)
    assert ("profile.csv" in code) == (kind == "big")


@pytest.mark.parametrize("kind", list(PROFILES))
def test_saturation_snippet_prints_tau_star(kind, tmp_path):
    prof, spec = PROFILES[kind]
    lines = _run(codegen.saturation_code(prof, spec), tmp_path, prof)
    assert float(lines[0]) == hdp.adpm(prof).saturation_level
    assert float(lines[2]) == pytest.approx(0.1 + 8 / (1000 * 0.9 * 0.1))  # the two-group rule
    assert lines[3].startswith("Step 10:")


@pytest.mark.parametrize("mode", ["scale", "n"])
def test_bounds_snippet_prints_the_bounds(mode, tmp_path):
    prof, spec = PROFILES["tiers"]
    lines = _run(codegen.bounds_code(prof, spec, mode), tmp_path, prof)
    assert float(lines[0]) == hdp.upper_bound(prof)
    assert float(lines[1]) == hdp.lower_bound(prof)
    assert float(lines[2]) == hdp.optimality_ratio(prof)
    assert "rmse=" in lines[3]


def test_bounds_snippet_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="mode"):
        codegen.bounds_code(PROFILES["tiers"][0], None, "width")


@pytest.mark.parametrize("with_menu", [False, True])
def test_release_snippet_runs_and_prints_the_release(with_menu, tmp_path):
    import pandas as pd

    from hdp_core.menu import make_menu

    rng = np.random.default_rng(4)
    menu = None
    if with_menu:
        menu = make_menu(
            ["Strict", "Balanced", "Open"], [0.1, 1.0, "public"], [40, 40, 20], 1000, 0, 500, "USD"
        )
        eps = rng.choice(["Strict", "balanced", "OPEN", "0.3"], 400)
    else:
        eps = rng.choice(["0.1", "1", "public", "0"], 400)
    name = "my users's file.csv"
    pd.DataFrame({"spend": rng.uniform(0, 500, 400), "my eps": eps}).to_csv(
        tmp_path / name, index=False
    )
    settings = {"value": "spend", "eps": "my eps", "lo": 0.0, "hi": 500.0, "data_sd": 80.0}
    code = codegen.release_code(settings, name, menu)
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<snippet>", "exec"), {"__name__": "__snippet__"})
        want = hdp_release.release_mean(
            name, value="spend", eps="my eps", lo=0, hi=500, data_sd=80.0, tiers=menu
        )
    finally:
        os.chdir(cwd)
    lines = out.getvalue().splitlines()
    # everything but the noisy estimate is the same as a direct call's
    assert lines[1:] == want.text().splitlines()[1:]
    assert lines[0].startswith("private mean: ")
