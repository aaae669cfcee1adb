"""Release safety (issue 19): the exact column or a refusal, no raw cell in any message, no
traceback, one range of levels, noise independent of where the range sits, engines and plans
that decide alike, one way to compare tier names, a quiet CLI.

Oracles: hdp.adpm on the per-user levels (the noise scale R / ||r||_1), numpy weighted means,
the issue's own examples, and Python's unicodedata for the tier-name normalisation. The Spark
half of these checks is tests/test_release_spark_safety.py.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hdp_core as hdp
import hdp_release
import hdp_release.cli
import hdp_release.engines.base
import hdp_release.finish
from hdp_core.errors import BadCellError, ColumnNameError, HdpError, ReleaseError
from hdp_core.validate import reason_words, tier_key
from hdp_release import release as R
from hdp_release.cli import main as cli_main
from hdp_release.release import release_mean

ROOT = Path(__file__).resolve().parents[2]
SECRETS = ("123-45-6789", "$120 000 (John Smith)", "secret-token-123", "1,234,567", "12.5%")


# ------------------------------------------------------------------------------ helpers
def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def dup_eps_csv(tmp_path: Path, n: int = 1000) -> str:
    """The issue's file: header value,eps,EPS and n rows of 50,10,0.01."""
    return write(tmp_path, "dup.csv", "value,eps,EPS\n" + "50,10,0.01\n" * n)


def late_bad_csv(tmp_path: Path, secret: str = "secret-token-123", at: int = 25_000) -> str:
    """30,000 rows of numbers with one text cell in the value column after DuckDB's first
    20,480 sniffed rows (data row ``at`` + 1)."""
    lines = ["v,e"] + [f"{secret if i == at else 5},1" for i in range(30_000)]
    return write(tmp_path, "late.csv", "\n".join(lines) + "\n")


class NoNoise:
    """OpenDP's real measurement for the privacy map, but returns its input."""

    def __init__(self, scale):
        self.real = REAL(scale)
        self.scale = scale

    def map(self, d):
        return self.real.map(d)

    def __call__(self, x):
        return x


REAL = hdp_release.finish.measurement


@pytest.fixture
def no_noise(monkeypatch):
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)


def run_cli(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "hdp_release", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


# ------------------------------------------------------------------------------ critical
@pytest.mark.parametrize("kind", ["csv", "parquet", "pandas"])
def test_duplicate_eps_column_is_refused_never_swapped(tmp_path, kind):
    """value,eps,EPS with rows 50,10,0.01 and eps='EPS': never released with the eps column
    (the old code released every user at loss 10 when they asked for 0.01)."""
    df = pd.DataFrame({"value": [50] * 1000, "eps": [10.0] * 1000, "EPS": [0.01] * 1000})
    if kind == "csv":
        src = dup_eps_csv(tmp_path)
    elif kind == "parquet":
        src = str(tmp_path / "dup.parquet")
        df.to_parquet(src)
    else:
        src = df
    with pytest.raises(ColumnNameError) as ei:
        release_mean(src, value="value", eps="EPS", lo=0, hi=100)
    assert set(ei.value.columns) == {"eps", "EPS"}
    assert "'eps'" in str(ei.value) and "'EPS'" in str(ei.value)
    with pytest.raises(ColumnNameError):
        release_mean(src, value="value", eps="eps", lo=0, hi=100)


def test_duplicate_value_column_is_refused(tmp_path):
    """The same path could swap the value column: v,e,V with value='V'."""
    p = write(tmp_path, "v.csv", "v,e,V\n" + "1,1,99\n" * 50)
    with pytest.raises(ColumnNameError) as ei:
        release_mean(p, value="V", eps="e", lo=0, hi=100)
    assert set(ei.value.columns) == {"v", "V"}
    exact = pd.DataFrame({"v": [1.0] * 5, "e": [1.0] * 5})
    with pytest.raises(ReleaseError, match="no value column 'V'"):  # no fallback to 'v'
        release_mean(exact, value="V", eps="e", lo=0, hi=100)
    with pytest.raises(ColumnNameError):  # exact duplicates in a pandas frame
        release_mean(
            pd.DataFrame([[1.0, 1.0, 2.0]] * 5, columns=["v", "e", "e"]),
            value="v",
            eps="e",
            lo=0,
            hi=100,
        )


def test_the_named_column_is_released_exactly(tmp_path, no_noise):
    """Columns that only look alike (E2, e_2) do not block: the exact one is released. A
    header name with spaces around (which DuckDB trims) is released under its own name."""
    p = write(tmp_path, "ok.csv", "v,e,E2,e_2\n" + "50,10,0.01,3\n" * 10 + "0,10,0.01,3\n" * 10)
    rel = release_mean(p, value="v", eps="e", lo=0, hi=100)
    assert rel.tiers["eps"].tolist() == [10.0]
    rel = release_mean(p, value="v", eps="E2", lo=0, hi=100)
    assert rel.tiers["eps"].tolist() == [0.01]
    rel = release_mean(p, value="v", eps="e_2", lo=0, hi=100)
    assert rel.tiers["eps"].tolist() == [3.0]
    sp = write(tmp_path, "sp.csv", "v, e \n" + "50,0.5\n" * 10)
    assert release_mean(sp, value="v", eps=" e ", lo=0, hi=100).tiers["eps"].tolist() == [0.5]
    with pytest.raises(ReleaseError, match="no eps column 'e'"):
        release_mean(sp, value="v", eps="e", lo=0, hi=100)
    clash = write(tmp_path, "cl.csv", "v,e, E\n" + "50,0.5,10\n" * 10)
    with pytest.raises(ColumnNameError):  # DuckDB would read ' E' as 'E': a clash with 'e'
        release_mean(clash, value="v", eps=" E", lo=0, hi=100)


def test_glob_of_files_with_different_headers_is_refused(tmp_path):
    """DuckDB maps a glob's files by position: b.csv's first column would be read as v."""
    write(tmp_path, "a.csv", "v,e\n1,0.5\n")
    write(tmp_path, "b.csv", "e,v\n0.5,90\n")
    with pytest.raises(ColumnNameError, match="do not all have the same columns"):
        release_mean(str(tmp_path / "*.csv"), value="v", eps="e", lo=0, hi=100)
    rc = run_cli(str(tmp_path / "*.csv"), "--value", "v", "--eps", "e", "--range", "0", "100")
    assert rc.returncode == 2 and rc.stdout == ""
    assert rc.stderr.count("\n") == 1 and rc.stderr.startswith("error: ")


# ------------------------------------------------------------------------------ medium 2
@pytest.mark.parametrize(
    "column, secret, reason",
    [
        ("e", "123-45-6789", "text"),
        ("v", "$120 000 (John Smith)", "text"),
        ("v", "1,234,567", "thousands_separator"),
        ("e", "12.5%", "currency_or_unit"),
        ("v", "secret-token-123", "text"),
    ],
)
def test_messages_never_quote_a_cell(tmp_path, column, secret, reason):
    df = pd.DataFrame({"v": ["5"] * 20, "e": ["1"] * 20})
    df.loc[13, column] = secret
    p = tmp_path / "s.csv"
    df.to_csv(p, index=False)
    for src in (str(p), df):
        with pytest.raises(BadCellError) as ei:
            release_mean(src, value="v", eps="e", lo=0, hi=10)
        e = ei.value
        assert (e.row, e.column, e.reason) == (14, column, reason)
        assert secret not in str(e) and secret not in repr(e.args)
        assert "row 14" in str(e) and reason_words(reason) in str(e)


@pytest.mark.slow
def test_a_late_bad_cell_names_row_and_column_without_quoting_it(tmp_path):
    """After DuckDB's first 20,480 rows a text cell raised ConversionException with
    'Original Line: ...' (the old code let it out as a traceback)."""
    p = late_bad_csv(tmp_path)
    with pytest.raises(BadCellError) as ei:
        release_mean(p, value="v", eps="e", lo=0, hi=10)
    assert (ei.value.row, ei.value.column, ei.value.reason) == (25_001, "v", "text")
    assert "secret" not in str(ei.value)
    rc = run_cli(p, "--value", "v", "--eps", "e", "--range", "0", "10", "--format", "json")
    assert rc.returncode == 2 and rc.stdout == ""
    assert "secret" not in rc.stderr and "Traceback" not in rc.stderr
    assert rc.stderr.strip() == "error: value column 'v', row 25001: text, which is not a number"


def test_bad_level_kinds_not_values(tmp_path):
    p = write(tmp_path, "n.csv", "v,e\n1,0.5\n2,-7.25\n")
    with pytest.raises(BadCellError) as ei:
        release_mean(p, value="v", eps="e", lo=0, hi=10)
    assert (ei.value.row, ei.value.reason) == (2, "negative") and "7.25" not in str(ei.value)


# ------------------------------------------------------------------------------ medium 3 + 4
@pytest.mark.parametrize(
    "levels",
    [
        [1e-7] * 5 + [1.0] * 5,  # the tiers plan (the old code raised ProfileError)
        [1e7] * 5 + [1.0] * 5,
        [*np.exp(np.linspace(-3, 1, 400)), 1e-7],  # per-user levels: level bins
        [*np.exp(np.linspace(-3, 1, 400)), 2e6],
        [1e-300, 2e-300, 3e-300, 0.5],  # ZeroDivisionError in the old code
        [*np.exp(np.linspace(-3, 1, 60_000)), 1e-9],  # the fast bracket plan
    ],
)
def test_levels_outside_the_supported_range_are_refused_on_every_plan(tmp_path, levels):
    n = len(levels)
    df = pd.DataFrame({"v": np.linspace(0, 10, n), "e": levels})
    for src in (df, str(tmp_path / "l.parquet")):
        if isinstance(src, str):
            df.to_parquet(src)
        with pytest.raises(BadCellError) as ei:
            release_mean(src, value="v", eps="e", lo=0, hi=10)
        bad = int(np.flatnonzero((df["e"] < hdp.LEVEL_MIN) | (df["e"] > hdp.LEVEL_MAX))[0])
        assert ei.value.row == bad + 1 and ei.value.column == "e"
        assert "supported level" in str(ei.value)


def test_public_and_zero_are_still_allowed(no_noise):
    df = pd.DataFrame({"v": [1.0, 2.0, 3.0, 4.0], "e": [0.0, math.inf, 1e-6, 1e6]})
    rel = release_mean(df, value="v", eps="e", lo=0, hi=10)
    assert rel.n_users == 3 and rel.n_excluded == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--data-sd", "1e-300", "--range", "0", "1"],  # ZeroDivisionError in the old code
        ["--data-sd", "1", "--range", "-1e308", "1e308"],
        ["--range", "0", "1", "--data-sd", "5e-324"],
    ],
)
def test_cli_one_line_no_traceback(tmp_path, capsys, args):
    p = write(tmp_path, "ok.csv", "v,e\n0.5,1\n0.25,2\n")
    assert cli_main([p, "--value", "v", "--eps", "e", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_tiny_data_sd_is_a_release_error():
    df = pd.DataFrame({"v": [0.5, 0.25], "e": [1.0, 2.0]})
    with pytest.raises(ReleaseError, match="data_sd"):
        release_mean(df, value="v", eps="e", lo=0, hi=1, data_sd=1e-300)
    with pytest.raises(ReleaseError, match="range"):
        release_mean(df, value="v", eps="e", lo=-1e308, hi=1e308, data_sd=1.0)


def test_levels_out_of_range_through_the_cli(tmp_path):
    p = write(tmp_path, "l.csv", "v,e\n1,1e-7\n2,1e7\n3,1\n")
    rc = run_cli(p, "--value", "v", "--eps", "e", "--range", "0", "10")
    assert rc.returncode == 2 and "Traceback" not in rc.stderr
    assert rc.stderr.strip() == (
        "error: eps column 'e', row 1: a level below the smallest supported level, 1e-06"
    )


def test_engine_failure_is_a_release_error(monkeypatch):
    """Any engine exception becomes a ReleaseError naming only its type."""

    def boom(*a, **k):
        raise RuntimeError("Original Line: 5,secret-token-123")

    import hdp_release.engines.duckdb_source as D

    monkeypatch.setattr(D.DuckSource, "histogram", boom)
    monkeypatch.setattr(R, "fast_histogram", lambda *a, **k: (None, 0, ""))
    df = pd.DataFrame({"v": [0.5, 0.25], "e": [1.0, 2.0]})
    with pytest.raises(ReleaseError) as ei:
        release_mean(df, value="v", eps="e", lo=0, hi=1)
    assert "secret" not in str(ei.value) and "RuntimeError" in str(ei.value)


# ------------------------------------------------------------------------------ medium 5
@pytest.mark.parametrize("lo, hi", [(1e12, 1e12 + 1000), (1e15 - 1, 1e15), (-5e14, -5e14 + 3)])
def test_noise_scale_does_not_depend_on_where_the_range_sits(lo, hi, no_noise):
    levels = np.array([1.0] * 10_000 + [1e-3])
    rng = np.random.default_rng(3)
    v = lo + rng.uniform(0, 1, levels.size) * (hi - lo)
    df = pd.DataFrame({"v": v, "e": levels})
    rel = release_mean(df, value="v", eps="e", lo=lo, hi=hi)
    r = hdp.adpm(levels).r  # the oracle: ADPM's granted levels
    adpm_scale = (hi - lo) / float(np.sum(r))
    assert rel.noise_scale == pytest.approx(adpm_scale, rel=0.01)
    assert rel.noise_inflation < 1e-6
    # the value the noise is added to is the weighted clamped mean (no-noise measurement)
    w = r / r.sum()
    y = np.round((np.clip(v, lo, hi) - lo) / (hi - lo) * 2**30) / 2**30
    assert rel.estimate == pytest.approx(lo + (hi - lo) * float(np.dot(w, y)), abs=1e-9 * (hi - lo))


def test_noise_is_added_relative_to_lo(monkeypatch):
    """The measurement's input lies in [0, R] (post-processing adds lo)."""
    seen = []

    class Spy(NoNoise):
        def __call__(self, x):
            seen.append(x)
            return x

    monkeypatch.setattr(hdp_release.finish, "measurement", Spy)
    df = pd.DataFrame({"v": [1e15 - 0.5] * 20, "e": [1.0] * 20})
    rel = release_mean(df, value="v", eps="e", lo=1e15 - 1, hi=1e15)
    assert seen and 0 <= seen[0] <= 1 and rel.estimate == pytest.approx(1e15 - 0.5, abs=1e-3)


# ------------------------------------------------------------------------------ medium 6
EDGE = [0.5, 16.49999999998432, 16.5164999999843]


def test_edge_levels_released_by_both_plans(monkeypatch, no_noise):
    """The issue's example: DuckDB released (fast tiers plan), Spark refused with loss 16.5 >
    16.5 (level bins plan granting tau*). Both plans grant min(eps, tau*) now."""
    df = pd.DataFrame({"v": [0.1, -0.2, 0.3], "e": EDGE})
    fast = release_mean(df, value="v", eps="e", lo=-0.5, hi=0.5)
    monkeypatch.setattr(R, "fast_histogram", lambda *a, **k: (None, 0, ""))
    general = release_mean(df, value="v", eps="e", lo=-0.5, hi=0.5)
    # the two edge levels share a level bin: DuckDB's fast tiers pass steps aside (session
    # 11), so both runs take the level bins plan and release the same numbers, bit for bit
    assert fast.plan.startswith("level bins") and general.plan.startswith("level bins")
    for rel in (fast, general):
        t = rel.tiers
        assert (t["granted_eps"] <= t["eps"]).all() and (t["privacy_loss"] <= t["eps"]).all()
        assert (t["granted_eps_max"] <= t["eps_max"]).all()
        assert (t["privacy_loss_max"] <= t["eps_max"]).all()
    assert general.saturation_level == fast.saturation_level
    assert general.estimate == fast.estimate and general.noise_scale == fast.noise_scale
    pd.testing.assert_frame_equal(general.tiers, fast.tiers)


def test_receipt_rows_span_what_the_docstring_says(no_noise):
    """Per-user levels on the fast plan: an unsaturated receipt row spans at most 1/8 decade
    plus one bin (the old fast plan put every level below its bracket in one row: a factor
    4 and more)."""
    rng = np.random.default_rng(5)
    n = 200_000
    df = pd.DataFrame({"v": rng.uniform(0, 100, n), "e": np.exp(rng.uniform(-5, 1, n))})
    rel = release_mean(df, value="v", eps="e", lo=0, hi=100)
    assert "level bins" in rel.plan and "bracket missed" not in rel.plan
    t = rel.tiers[~rel.tiers["saturated"]]
    assert len(t) >= 3
    bound = 10 ** (1 / 8) * math.exp(1 / 64) * (1 + 1e-12)
    assert (t["eps_max"] / t["eps"] <= bound).all()
    assert "1/8 decade" in R.__doc__ and "e^(1/64)" in R.__doc__


# ------------------------------------------------------------------------------ medium 7
TRICKY = {
    "İx": 0.01,  # Turkish dotted capital I: casefold 'i̇x', not 'ix'
    "ix": 10.0,
    "Straße": 0.5,
    "ﬁx": 2.0,  # the ligature: NFKC 'fix'
    "ΣΟΦΙΑ": 0.2,
    "Ｇｏｌｄ": 0.3,  # full width: NFKC 'Gold'
}
CELLS = [
    "İx",
    "ix",
    "IX",
    " ix\u00a0",
    "STRASSE",
    "strasse",
    "Straße",
    "fix",
    "FIX",
    "ﬁx",
    "σοφια",
    "ΣΟΦΙΑ",
    "gold",
    "GOLD",
    "\u3000Ｇｏｌｄ",
    "public",
    " Public\t",
    "3",
]


def expected_level(cell: str) -> float:
    """The rule, from unicodedata directly: NFKC, casefold, strip."""
    import unicodedata

    key = unicodedata.normalize("NFKC", cell).casefold().strip()
    names = {unicodedata.normalize("NFKC", k).casefold().strip(): v for k, v in TRICKY.items()}
    if key in names:
        return names[key]
    if key in ("public", "inf"):
        return math.inf
    return float(cell)


def tricky_frame() -> pd.DataFrame:
    return pd.DataFrame({"v": np.arange(len(CELLS), dtype=float), "tier": CELLS})


def check_tricky(rel, df: pd.DataFrame) -> None:
    want = pd.Series([expected_level(c) for c in df["tier"]]).value_counts()
    got = rel.tiers.set_index("eps")["users"]
    assert {float(k): int(v) for k, v in got.items()} == {float(k): int(v) for k, v in want.items()}


def test_tier_names_compare_one_way_on_duckdb(tmp_path, no_noise):
    assert hdp_release.tier_levels(TRICKY)[tier_key("İx")] == 0.01
    df = tricky_frame()
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False, encoding="utf-8")
    for src in (df, str(p)):
        rel = release_mean(src, value="v", eps="tier", lo=0, hi=100, tiers=TRICKY)
        check_tricky(rel, df)
    only = pd.DataFrame({"v": [1.0] * 4, "tier": ["İx"] * 4})  # the issue: read as 'ix'
    rel = release_mean(only, value="v", eps="tier", lo=0, hi=10, tiers={"İx": 0.01, "ix": 10})
    assert rel.tiers["eps"].tolist() == [0.01]


@pytest.mark.parametrize(
    "a, b", [("Straße", "STRASSE"), ("Gold", "Ｇｏｌｄ"), ("fix", "ﬁx"), ("Gold", " gold\u00a0")]
)
def test_tier_names_colliding_after_normalisation_are_refused(a, b):
    with pytest.raises(ReleaseError, match="same name"):
        hdp_release.tier_levels({a: 0.1, b: 1.0})


# ------------------------------------------------------------------------------ low
def test_module_cli_prints_no_runtime_warning(tmp_path):
    rc = run_cli("--help")
    assert rc.returncode == 0 and "usage:" in rc.stdout
    assert "RuntimeWarning" not in rc.stderr and rc.stderr == ""


@pytest.mark.slow
def test_cli_json_receipt_names_the_tiers(tmp_path):
    from hdp_core.design_io import menu_to_json
    from hdp_core.menu import make_menu

    menu = make_menu(["Strict", "Open"], [0.1, 2.0], [50, 50], n_users=100, low=0, high=10)
    mp = tmp_path / "m.json"
    text = menu_to_json(menu)
    mp.write_bytes(text if isinstance(text, bytes) else text.encode())
    p = write(tmp_path, "t.csv", "v,tier\n" + "1,Strict\n2,open\n" * 30)
    rc = run_cli(p, "--value", "v", "--eps", "tier", "--menu", str(mp), "--format", "json")
    assert rc.returncode == 0, rc.stderr
    out = json.loads(rc.stdout)
    assert {r["tier"] for r in out["tiers"]} == {"Strict", "Open"}
    assert "RuntimeWarning" not in rc.stderr


def test_every_failure_is_in_the_hdp_family():
    assert issubclass(BadCellError, ReleaseError) and issubclass(ColumnNameError, HdpError)
