"""The release's command line reads files and numbers as the app does (issue 32): the app's
header rule (at most hdp_core.tables.MAX_COLUMNS columns, a headerless file refused, no cell
quoted), its number reader ('1_0' is not a number), and a clear refusal of an unbounded
range. Oracle: hdp_core.tables.read_upload_csv (the app's one reader) on the same bytes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hdp_core.errors import ProfileError, ReleaseError
from hdp_core.tables import MAX_COLUMNS, read_upload_csv
from hdp_release.cli import main as cli

RANGE = ["--range", "0", "100"]


def _run(tmp_path: Path, text: str, capsys, *args: str) -> tuple[int, str]:
    p = tmp_path / "t.csv"
    p.write_text(text)
    code = cli([str(p), *args])
    out = capsys.readouterr()
    return code, out.err


def _app_reason(text: str) -> str | None:
    try:
        read_upload_csv(text.encode(), text=False, min_columns=2, error=ReleaseError)
    except (ReleaseError, ProfileError) as e:
        return e.reason
    return None


@pytest.mark.parametrize(
    "text, reason",
    [
        ("73412,1\n5,2\n", "header_is_data"),  # no header: its first row is data
        (",".join(f"c{i}" for i in range(MAX_COLUMNS + 1)) + "\n" + "1," * MAX_COLUMNS + "1\n",
         "too_many_columns"),
    ],
)  # fmt: skip
def test_the_cli_refuses_what_the_app_refuses_without_quoting_a_cell(
    tmp_path, capsys, text, reason
):
    assert _app_reason(text) == reason  # the oracle: the app's reader
    code, err = _run(tmp_path, text, capsys, "--value", "c0", "--eps", "c1", *RANGE)
    assert code == 2 and "73412" not in err and "Traceback" not in err
    assert ("columns" if reason == "too_many_columns" else "name the columns") in err


def test_a_very_wide_csv_is_refused_at_once(tmp_path, capsys):
    cols = 200_000
    text = ",".join(f"c{i}" for i in range(cols)) + "\n" + ",".join("1" * cols) + "\n"
    t = time.monotonic()
    code, err = _run(tmp_path, text, capsys, "--value", "c0", "--eps", "c1", *RANGE)
    assert code == 2 and "columns" in err and time.monotonic() - t < 10


def test_underscores_are_not_digits(tmp_path, capsys):
    table = "v,e\n1_0,1\n5,1\n7,2\n"
    assert "1_0" in table
    code, err = _run(tmp_path, table, capsys, "--value", "v", "--eps", "e", *RANGE)
    assert code == 2 and "row 1" in err and "1_0" not in err
    ok = "v,e\n10,1\n5,1\n7,2\n"
    for args in (["--range", "1_0", "100"], ["--range", "0", "100", "--spend", "1_0"],
                 ["--range", "0", "100", "--data-sd", "1_0"]):  # fmt: skip
        code, err = _run(tmp_path, ok, capsys, "--value", "v", "--eps", "e", *args)
        assert code == 2 and "error:" in err, args
    assert _run(tmp_path, ok, capsys, "--value", "v", "--eps", "e", *RANGE)[0] == 0


def test_range_spellings(tmp_path, capsys):
    ok = "v,e\n10,1\n5,1\n7,2\n"
    assert _run(tmp_path, ok, capsys, "--value", "v", "--eps", "e", "--range=-10,100")[0] == 0
    assert _run(tmp_path, ok, capsys, "--value", "v", "--eps", "e", "--range", "-10", "100")[0] == 0
    for spelling in (["--range=-inf,inf"], ["--range", "0", "inf"], ["--range=0,1e400"]):
        code, err = _run(tmp_path, ok, capsys, "--value", "v", "--eps", "e", *spelling)
        assert code == 2 and ("finite" in err or "outside" in err), (spelling, err)
    code, err = _run(tmp_path, ok, capsys, "--value", "v", "--eps", "e", "--range=1,2,3")
    assert code == 2 and "two numbers" in err
