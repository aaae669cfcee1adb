"""Text number cells that DuckDB and Spark read differently (found by helper attack11, session
11; fixed the same session: Spark reads a text cell as a number only when it is a plain decimal
number or inf/infinity/nan after trimming Unicode's spaces, engines.base.NUMBER_TEXT). Before,
the engines' own text-to-double casts differed. DuckDB's parse (trim of Unicode
space separators, then TRY_CAST; a letter after the number is a unit) is the reference (the
general plan, the preview); Spark's F.trim (' ' only) then cast (Java's parseDouble after
trimming ASCII control characters) accepted '0.5d' and '0.5f' (a release of a column holding
non-numbers) and '0.5\\x1f', and refused '0.5\\u00a0' (which DuckDB reads as 0.5) as
'not_finite' without a row (the row finder reads it with DuckDB, which finds nothing bad).
Each case: the same table, one hostile cell in row 3 of a CSV, must be released by both
engines with the same estimate or refused by both with the same (row, column, reason)."""

from __future__ import annotations

import pytest
from helpers import NoNoise

import hdp_release.finish
from hdp_core.errors import BadCellError
from hdp_release import release_mean


def _outcome(path: str, engine: str) -> tuple:
    try:
        return (
            "released",
            release_mean(path, value="x", eps="eps", lo=0, hi=1, engine=engine).estimate,
        )
    except BadCellError as e:
        return ("refused", e.row, e.column, e.reason)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cell", "col"),
    [
        ("0.5d", "x"),
        ("0.5\u00a0", "x"),
        ("0.5\x1f", "x"),
        ("0x1p-1", "x"),
        ("\u3000+.5e0", "x"),
        ("0.5f", "eps"),
        ("0.5\u00a0", "eps"),
        ("0.5\x1f", "eps"),
        ("0X1P0", "eps"),
    ],
)
def test_a_text_number_cell_is_read_alike_on_duckdb_and_spark(
    tmp_path, spark, monkeypatch, cell, col
):
    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    p = tmp_path / "t.csv"
    rows = [("0.25", "1")] * 5
    rows[2] = (cell, "1") if col == "x" else ("0.25", cell)
    p.write_text("x,eps\n" + "".join(f'"{a}","{b}"\n' for a, b in rows), encoding="utf-8")
    assert _outcome(str(p), "duckdb") == _outcome(str(p), "spark")
