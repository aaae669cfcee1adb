"""Non-finite and out-of-range cells on every release path (DuckDB side; the Spark side is
tests/test_release_nonfinite_spark.py, the Release page tests/test_page_release_nonfinite.py).

For each hostile cell, in the value column and in the eps column, and for each way a table
reaches hdp_release.release.release_mean (a pandas DataFrame of text or of float64, a CSV file
and a Parquet file through DuckDB, the table the Release page reads, the CLI), the release is
either

* refused before any noise is drawn (OpenDP's measurement is never applied to a value) and
  before anything is charged to the ledger, with an error carrying ``row``, ``column`` and
  ``reason`` fields that never quotes the cell; or
* released by the documented rule, identically on every path: a value outside the public
  range [lo, hi] is clamped to it (release_mean's docstring; the paper's mechanism takes
  values in the public range), and an eps of +inf (the word 'inf', or the float inf of a
  numeric column) is a public user.

The table of hostile cells (tests/hostile_cells.py) is checked whole once per engine, on one
path (DuckDB: a CSV file; Spark: a Spark DataFrame, in the Spark file); every other path, and
the ledger's check before charging, gets one representative cell (the classifier is the
engine's and the path only decides how the cells reach it; the union of the lines these tests
run in hdp_core and hdp_release is the same as with every cell on every path).

Oracles: the documented clamping, checked against a release of the same table with the cell
replaced by lo or hi (the engine's answer for an in-range cell, with the noise switched off),
and numpy's mean of the clamped values.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hostile_cells import (
    BAD_ROW,
    EPS_PUBLIC,
    EPS_REFUSED,
    FLOAT_EPS_REFUSED,
    FLOAT_VALUE_REFUSED,
    GOOD_LEVELS,
    GOOD_VALUES,
    HI,
    LO,
    TEXT_KINDS,
    TIERS,
    VALUE_CLAMPED,
    VALUE_REFUSED,
    N,
    csv_text,
    float_frame,
    install_spy,
    source,
    text_frame,
)

import hdp_release
import hdp_release.cli
import hdp_release.engines.base
import hdp_release.finish
from hdp_core.errors import ReleaseError
from hdp_core.tables import read_upload_csv
from hdp_core.validate import REASON_WORDS
from hdp_release.cli import main as cli_main
from hdp_release.ledger.store import PrivacyLedger
from hdp_release.release import release_mean


@pytest.fixture
def spy(monkeypatch):
    return install_spy(monkeypatch)


def assert_cell_error(err: BaseException, column: str, reason: str, cell: str, row: int):
    assert isinstance(err, ReleaseError), type(err)
    assert err.column == column, (err.column, str(err))
    assert err.row == row, (err.row, str(err))
    assert err.reason == reason, (err.reason, str(err))
    assert err.reason in REASON_WORDS or err.reason == "out_of_range"
    msg = str(err)
    assert f"{column!r}" in msg and (f"row {row}" in msg if row else True)
    for quoted in (f"'{cell}'", f'"{cell}"'):
        assert quoted not in msg
    if any(ch.isdigit() for ch in cell):  # a number's text is never repeated
        assert cell not in msg and cell.lstrip("-") not in msg


FULL_KIND = "csv"
"""The path on which DuckDB's classifier sees every hostile cell."""


def cases(cells, rep, kinds=TEXT_KINDS, full=FULL_KIND):
    """(cell, kind, ledger): every cell on ``full`` without a ledger; the representative cell
    ``rep`` on every other path, and with a ledger on every path."""
    return (
        [(c, full, False) for c in cells]
        + [(rep, k, False) for k in kinds if k != full]
        + [(rep, k, True) for k in kinds]
    )


def refuse(src, tmp_path: Path, *, ledger: bool, spy: list, **kw) -> BaseException:
    """Release ``src`` expecting a refusal; checks that no noise was drawn and (with a
    ledger) nothing was charged. Returns the error."""
    led = PrivacyLedger(tmp_path / "ledger.duckdb") if ledger else None
    with pytest.raises(ReleaseError) as ei:
        release_mean(src, value="value", eps="eps", lo=LO, hi=HI, ledger=led, **kw)
    assert spy == [], "noise was drawn for a refused release"
    if led is not None:
        assert led.history() == [], "a refused release was charged"
    return ei.value


# ------------------------------------------------------------------------------ value column
@pytest.mark.parametrize("cell, kind, ledger", cases(list(VALUE_REFUSED), "1e400"))
def test_a_non_finite_value_is_refused(tmp_path, spy, cell, kind, ledger):
    src = source(kind, text_frame(value_cell=cell), tmp_path)
    tiers = TIERS if kind == "csv_with_tier_names" else None
    err = refuse(src, tmp_path, ledger=ledger, spy=spy, tiers=tiers)
    assert_cell_error(err, "value", VALUE_REFUSED[cell], cell, BAD_ROW)


@pytest.mark.parametrize(
    "name, kind, ledger",
    cases(list(FLOAT_VALUE_REFUSED), "np.nan", ["pandas_float", "parquet_float"], "parquet_float"),
)
def test_a_non_finite_float_value_is_refused(tmp_path, spy, name, kind, ledger):
    x, reason = FLOAT_VALUE_REFUSED[name]
    df = float_frame(value=x)
    src: object = df
    if kind == "parquet_float":
        src = str(tmp_path / "f.parquet")
        df.to_parquet(src)
    err = refuse(src, tmp_path, ledger=ledger, spy=spy)
    assert_cell_error(err, "value", reason, name, BAD_ROW)


def _released(src, **kw):
    return release_mean(src, value="value", eps="eps", lo=LO, hi=HI, **kw)


@pytest.mark.parametrize(
    "cell, kind",
    [(c, k) for c in VALUE_CLAMPED for k in (FULL_KIND, "float")]
    + [("1e308", k) for k in TEXT_KINDS if k != FULL_KIND],
)
def test_a_value_outside_the_range_is_clamped_identically(tmp_path, spy, cell, kind):
    """The documented rule (release_mean: values are clamped to [lo, hi], by design): the
    release equals the release of the table with the cell replaced by the bound, exactly."""
    bound = VALUE_CLAMPED[cell]
    tiers = TIERS if kind == "csv_with_tier_names" else None
    if kind == "float":
        out = _released(float_frame(value=float(cell)), tiers=tiers)
        ref = _released(float_frame(value=bound), tiers=tiers)
    else:
        out = _released(source(kind, text_frame(value_cell=cell), tmp_path), tiers=tiers)
        ref = _released(source(kind, text_frame(value_cell=repr(bound)), tmp_path), tiers=tiers)
    assert out.estimate == ref.estimate
    assert out.noise_scale == ref.noise_scale and out.ci95 == ref.ci95
    # and it is the weighted mean of the clamped values (independent of the engine)
    v = np.array(GOOD_VALUES)
    v[BAD_ROW - 1] = bound
    e = np.array([float(x) for x in GOOD_LEVELS])
    if kind == "csv_with_tier_names":
        e[-1] = TIERS["gold"]
    r = np.minimum(e, out.saturation_level)
    assert out.estimate == pytest.approx(
        float(np.dot(r, v) / r.sum()), abs=2 * HI / hdp_release.engines.base.Q
    )
    assert all(math.isfinite(x) for x in spy)


# ------------------------------------------------------------------------------ eps column
@pytest.mark.parametrize("cell, kind, ledger", cases(list(EPS_REFUSED), "1e400"))
def test_a_bad_level_is_refused(tmp_path, spy, cell, kind, ledger):
    src = source(kind, text_frame(eps_cell=cell), tmp_path)
    tiers = TIERS if kind == "csv_with_tier_names" else None
    err = refuse(src, tmp_path, ledger=ledger, spy=spy, tiers=tiers)
    assert_cell_error(err, "eps", EPS_REFUSED[cell], cell, BAD_ROW)


@pytest.mark.parametrize(
    "name, kind, ledger",
    cases(list(FLOAT_EPS_REFUSED), "np.nan", ["pandas_float", "parquet_float"], "parquet_float"),
)
def test_a_non_finite_float_level_is_refused(tmp_path, spy, name, kind, ledger):
    x, reason = FLOAT_EPS_REFUSED[name]
    df = float_frame(eps=x)
    src: object = df
    if kind == "parquet_float":
        src = str(tmp_path / "f.parquet")
        df.to_parquet(src)
    err = refuse(src, tmp_path, ledger=ledger, spy=spy)
    assert_cell_error(err, "eps", reason, name, BAD_ROW)


@pytest.mark.parametrize(
    "cell, kind",
    [(c, FULL_KIND) for c in EPS_PUBLIC]
    + [("public", k) for k in TEXT_KINDS if k != FULL_KIND]
    + [("inf", "float"), ("inf", "parquet_float")],  # a float column holds the number inf
)
def test_an_infinite_level_is_a_public_user_on_every_path(tmp_path, spy, cell, kind):
    """The documented rule (eps = inf, 'inf' or 'public': a public user), the same release on
    every path: one public user, the rest as without it."""
    if kind in ("float", "parquet_float"):
        src: object = float_frame(eps=math.inf)
        if kind == "parquet_float":
            src = str(tmp_path / "f.parquet")
            float_frame(eps=math.inf).to_parquet(src)
    else:
        src = source(kind, text_frame(eps_cell=cell), tmp_path)
    tiers = TIERS if kind == "csv_with_tier_names" else None
    out = _released(src, tiers=tiers)
    assert out.n_public == 1 and out.n_users == N
    ref = _released(float_frame(eps=math.inf), tiers=None)
    if kind != "csv_with_tier_names":
        assert out.estimate == ref.estimate and out.noise_scale == ref.noise_scale
    assert spy and all(math.isfinite(x) for x in spy)


def test_a_too_large_level_is_never_read_as_public_by_the_page_reader():
    """pandas reads '1e400' as the float inf, which a numeric eps column means 'public': the
    upload reader keeps such a column's text so the preview and the release refuse it."""
    table = read_upload_csv(
        csv_text(text_frame(value_cell="1e400", eps_cell="1e400")).encode(),
        text=False,
        min_columns=2,
    ).frame
    for col in ("value", "eps"):
        assert table[col].dtype.kind not in "f"
        assert table[col].iloc[BAD_ROW - 1].strip() == "1e400"
    ok = read_upload_csv(csv_text(text_frame(eps_cell="inf")).encode(), text=False).frame
    assert ok["eps"].dtype.kind == "f" and ok["eps"].iloc[BAD_ROW - 1] == math.inf
    from hdp_release.checks import check_values
    from hdp_release.preview import level_counts

    with pytest.raises(ReleaseError) as ei:
        level_counts(table, "eps")
    assert_cell_error(ei.value, "eps", "too_large", "1e400", BAD_ROW)
    with pytest.raises(ReleaseError) as ei:
        check_values(table, "value")
    assert_cell_error(ei.value, "value", "too_large", "1e400", BAD_ROW)


@pytest.mark.parametrize(
    "column, cell, kind",
    [("value", c, "upload_reader") for c in VALUE_REFUSED]
    + [("eps", c, "upload_reader") for c in EPS_REFUSED]
    + [("value", "1e400", "pandas_text"), ("eps", "1e400", "pandas_text")],
)
def test_the_preview_and_the_release_name_the_same_row_column_and_reason(
    tmp_path, spy, column, cell, kind
):
    """What the Release page shows before releasing (level_counts, check_values) and what
    release_mean refuses with: the same row, column and reason."""
    from hdp_release.checks import check_values
    from hdp_release.preview import level_counts

    df = source(kind, text_frame(**{f"{column}_cell": cell}), tmp_path)
    with pytest.raises(ReleaseError) as ei:
        level_counts(df, "eps")
        check_values(df, "value")
    want = EPS_REFUSED[cell] if column == "eps" else VALUE_REFUSED[cell]
    assert_cell_error(ei.value, column, want, cell, BAD_ROW)
    assert_cell_error(refuse(df, tmp_path, ledger=False, spy=spy), column, want, cell, BAD_ROW)


# ------------------------------------------------------------------------------ the CLI
CLI_CASES = [("value", c) for c in VALUE_REFUSED] + [("eps", c) for c in EPS_REFUSED]


@pytest.mark.parametrize(
    "column, cell, fmt",
    [(c, x, "csv") for c, x in CLI_CASES]
    + [("value", "1e400", "parquet"), ("eps", "nan", "parquet")],
)
def test_the_cli_refuses_with_one_line_and_charges_nothing(
    tmp_path, spy, capsys, column, cell, fmt
):
    df = text_frame(**({"value_cell": cell} if column == "value" else {"eps_cell": cell}))
    if fmt == "csv":
        path = source("csv", df, tmp_path)
    else:
        path = source("parquet_text", df, tmp_path)
    ledger = tmp_path / "cli-ledger.duckdb"
    code = cli_main(
        [path, "--value", "value", "--eps", "eps", "--range", "0", "10", "--ledger", str(ledger)]
    )
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert f"{column} column '{column}', row {BAD_ROW}" in lines[0]
    if any(ch.isdigit() for ch in cell):
        assert cell not in err and cell.lstrip("-") not in err
    assert spy == []
    assert PrivacyLedger(ledger).history() == []


@pytest.mark.parametrize("cell", list(VALUE_CLAMPED)[:2])
def test_the_cli_clamps_like_the_library(tmp_path, spy, capsys, cell):
    path = source("csv", text_frame(value_cell=cell), tmp_path)
    args = [path, "--value", "value", "--eps", "eps", "--range", "0", "10", "--format", "json"]
    assert cli_main(args) == 0
    import json

    got = json.loads(capsys.readouterr().out)["estimate"]
    ref = _released(float_frame(value=VALUE_CLAMPED[cell]))
    assert got == ref.estimate


def test_the_noise_step_refuses_anything_but_a_finite_value_in_range(monkeypatch, spy):
    """The guards before OpenDP's sampler (fail closed): a scale that is not finite never
    reaches it, whatever went wrong before."""
    df = float_frame()
    _released(df)
    assert len(spy) == 1 and 0 <= spy[0] <= HI - LO
    monkeypatch.setattr(hdp_release.finish, "noise_scale", lambda *a: math.inf)
    with pytest.raises(ReleaseError, match="not a finite positive number"):
        _released(df)
    assert len(spy) == 1  # nothing more was noised
