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


def test_a_signed_in_users_scope_is_in_both_snippets(tmp_path, monkeypatch):
    """A signed-in user's releases charge their scope of dataset names: the snippets pass the
    same dataset_scope as the page's call (every argument of the two calls equal), so running
    one charges the same name's budget; without a scope they pass none (the default)."""
    import inspect
    from fractions import Fraction

    import pandas as pd

    import hdp_release.grouped
    import hdp_release.release
    from hdp_app.views import release_budget as B
    from hdp_app.views import segments as S
    from hdp_app.views.ledger_texts import name_scope
    from hdp_core.spend import as_spend
    from hdp_release.ledger.store import PrivacyLedger

    rng = np.random.default_rng(2)
    pd.DataFrame(
        {"v": rng.uniform(0, 9, 60), "e": rng.choice([0.5, 2.0], 60), "r": ["a", "b"] * 30}
    ).to_csv(tmp_path / "t.csv", index=False)
    monkeypatch.chdir(tmp_path)
    led = PrivacyLedger(tmp_path / "l.duckdb")
    scope = name_scope(led.secret_key(), "teacher@example.org")
    assert scope is not None and "teacher" not in scope
    s = {"value": "v", "eps": "e", "lo": 0.0, "hi": 9.0, "data_sd": None}
    for fn, mod in (("release_mean", hdp_release.release), ("release_means", hdp_release.grouped)):
        seen: list[dict] = []
        real = getattr(hdp_release, fn)

        def spy(source, _real=real, _seen=seen, **kw):
            _seen.append({"source": source, **kw})
            return _real(source, **kw)

        monkeypatch.setattr(hdp_release, fn, spy)
        kw = B.release_arguments(s, None, "No", (led, "Wages", 1.0, scope), "1/4")
        extra = {"by": ["r"]} if fn == "release_means" else {}
        out = spy("t.csv", **extra, **kw)
        if fn == "release_mean":
            code = codegen.release_code(s, "t.csv", None, out, scope)
            assert codegen.release_code(s, "t.csv", None, out).count("dataset_scope") == 0
        else:
            code = S.segments_code(s, "t.csv", ["r"], out.target, out, None, scope)
        exec(compile(code.replace("print(", "(").replace(".text())", ")"), "<s>", "exec"), {})
        page, snippet = seen
        full = {k: p.default for k, p in inspect.signature(getattr(mod, fn)).parameters.items()}
        page, snippet = {**full, **page}, {**full, **snippet}
        assert set(page) == set(snippet)
        for k in page:
            a, b = page[k], snippet[k]
            if k == "ledger":
                assert a.path == b
            elif k == "spend":
                assert as_spend(a) == as_spend(b) == Fraction(1, 4)
            else:
                assert a == b, (fn, k)
        assert snippet["dataset_scope"] == scope
    # the two calls of each kind charged the same scoped name: four releases in its history
    assert len(led.history()) == 4
