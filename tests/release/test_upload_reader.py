"""hdp_core.tables.read_upload_csv: the one reader of every upload (profiles, menus, release
tables), with the README's limits checked before the body is parsed, and messages that name
the row, the column and the kind of problem, never a cell's content."""

from __future__ import annotations

import pandas as pd
import pytest

import hdp_core as hdp
from hdp_core.errors import ProfileError, ReleaseError
from hdp_core.profile import MAX_ROWS, MAX_UPLOAD_BYTES
from hdp_core.tables import MAX_COLUMNS, read_upload_csv
from hdp_core.validate import cell_reason
from hdp_release.checks import check_values
from hdp_release.preview import level_counts


def _refused(content, reason, **kw):
    with pytest.raises(ProfileError) as info:
        read_upload_csv(content, **kw)
    assert info.value.reason == reason, str(info.value)
    return str(info.value)


def test_the_readme_limits_are_the_readers_defaults():
    assert (MAX_UPLOAD_BYTES, MAX_ROWS, MAX_COLUMNS) == (20 * 2**20, 1_000_000, 16)


def test_a_wide_header_is_refused_before_the_body_is_parsed(monkeypatch):
    content = (",".join(f"c{i}" for i in range(200_000)) + "\n" + "1," * 199_999 + "1\n").encode()
    assert 1.5e6 < len(content) < 2.5e6

    def never(*a, **k):
        raise AssertionError("the body was parsed")

    monkeypatch.setattr(pd, "read_csv", never)
    msg = _refused(content, "too_many_columns")
    assert "200,000 columns" in msg and f"at most {MAX_COLUMNS}" in msg
    _refused(
        ",".join(f"c{i}" for i in range(17)) + "\n" + ",".join("1" * 17) + "\n", "too_many_columns"
    )


def test_sixteen_columns_are_read():
    up = read_upload_csv(",".join(f"c{i}" for i in range(16)) + "\n" + ",".join("1" * 16) + "\n")
    assert up.frame.shape == (1, 16)


@pytest.mark.parametrize("head", ["1,2", "0.5", " 3 , 4e5 ", "inf,1"])
def test_a_first_row_of_numbers_is_refused(head):
    msg = _refused(f"{head}\n1,2\n", "header_is_data")
    assert "the first row must name the columns" in msg
    with pytest.raises(ProfileError, match="the first row must name the columns"):
        hdp.profile_from_csv(f"{head}\n1,2\n")


def test_rows_and_bytes_limits():
    rows = b"value,eps\n" + b"1,1\n" * (MAX_ROWS + 1)
    assert "more than 1,000,000 rows" in _refused(rows, "too_many_rows")
    assert read_upload_csv(b"value,eps\n" + b"1,1\n" * 5, max_rows=5).frame.shape == (5, 2)
    _refused(b"value,eps\n" + b"1,1\n" * 6, "too_many_rows", max_rows=5)
    big = b"value,eps\n" + b"1" * MAX_UPLOAD_BYTES
    assert "the limit is 20 MB" in _refused(big, "too_many_bytes")


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"", "empty_file"),
        (b" \n\n", "empty_file"),
        (b"value,eps\n", "no_rows"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "binary"),
        (b"value,eps,EPS\n50,10,0.01\n", "duplicate_column"),
        (b"value, Value\n1,2\n", "duplicate_column"),
        (b"value\n1\n", "too_few_columns"),
    ],
)
def test_files_refused_with_a_reason(content, reason):
    kw = {"min_columns": 2} if reason == "too_few_columns" else {}
    _refused(content, reason, **kw)


def test_the_error_class_is_the_callers():
    with pytest.raises(ReleaseError) as info:
        read_upload_csv(b"1,2\n3,4\n", error=ReleaseError)
    assert info.value.reason == "header_is_data"


def test_text_or_typed_cells():
    assert read_upload_csv(b"value,eps\n1,\n").frame["eps"].tolist() == [""]
    typed = read_upload_csv(b"value,eps\n1,\n2,0.5\n", text=False).frame
    assert typed["value"].dtype.kind == "i" and typed["eps"].isna().tolist() == [True, False]


SECRETS = {
    "123-45-6789": "text",
    "$120 000 (John Smith)": "text",
    "secret-token-123": "text",
    "1,234,567": "thousands_separator",
    "120 000": "thousands_separator",
    "12,5": "decimal_comma",
    "€120": "currency_or_unit",
    "120 EUR": "currency_or_unit",
    "45%": "currency_or_unit",
    "2024-01-31": "date",
    "": "empty",
    "NaN": "empty",
    "1e400": "too_large",
}


@pytest.mark.parametrize("cell", list(SECRETS))
def test_cell_kinds(cell):
    assert cell_reason(cell) == SECRETS[cell]


@pytest.mark.parametrize("cell", [c for c in SECRETS if len(c) > 3])
def test_no_message_quotes_a_cell(cell):
    quoted = '"' + cell.replace('"', '""') + '"'
    # the profile reader (value and eps columns)
    for content in (f"eps,value\n0.5,1\n0.5,{quoted}\n", f"eps,value\n0.5,1\n{quoted},2\n"):
        with pytest.raises(ProfileError) as info:
            hdp.profile_from_csv(content)
        e = info.value
        assert cell not in str(e) and e.row == 2 and "row 2" in str(e)
        assert e.reason in (SECRETS[cell], "not_finite")
    # the release preview (eps and value columns)
    df = pd.DataFrame({"value": ["1", cell], "ssn": ["0.5", cell]})
    for check in (lambda: level_counts(df, "ssn"), lambda: check_values(df, "value")):
        with pytest.raises(ReleaseError) as info:
            check()
        e = info.value
        assert cell not in str(e) and (e.row, "row 2") == (2, "row 2")
        assert e.column in ("ssn", "value") and e.column in str(e)


def test_the_issues_message_is_gone():
    df = pd.DataFrame({"value": [1.0], "ssn": ["123-45-6789"]})
    with pytest.raises(ReleaseError) as info:
        level_counts(df, "ssn")
    assert str(info.value) == "eps column 'ssn', row 1: the cell is text, not a number"


def test_menu_csv_round_trip_and_errors():
    from hdp_core import design_io as menu_io
    from hdp_core.design import evaluate_menu
    from hdp_core.errors import MenuError
    from hdp_core.menu import make_menu

    m = make_menu(["=A", "B", "Open"], [0.1, 1.0, "public"], [40, 35, 25], 5000, 0, 500, "USD", 80)
    back = menu_io.menu_from_upload("x.csv", menu_io.report_to_csv(evaluate_menu(m)), m)
    assert back == m
    counts = menu_io.menu_from_csv(b"name,eps,count\nS,0.1,600\nO,public,400\n")
    assert [t.share_percent for t in counts.tiers] == [60.0, 40.0] and counts.n_users == 1000
    with pytest.raises(MenuError) as info:
        menu_io.menu_from_csv(b'name,eps,share_percent\nS,0.1,"1,234 (John)"\n')
    e = info.value
    assert (e.row, e.column, e.reason) == (1, "share_percent", "text") and "John" not in str(e)
    with pytest.raises(MenuError, match="the first row must name the columns"):
        menu_io.menu_from_csv(b"0.1,40\n1,60\n")
    with pytest.raises(MenuError, match="at most 16"):
        menu_io.menu_from_csv(",".join(f"c{i}" for i in range(17)) + "\n")
