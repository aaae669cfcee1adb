"""Reading profiles from CSV files and DataFrames: good files, every kind of bad file (each
message names what is wrong and where), limits, and the to_csv -> from_csv round trip."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_core.tables import example_csv

INF = math.inf
EP = hdp.EpsilonProfile


# --------------------------------------------------------------------------------------------
# good files
# --------------------------------------------------------------------------------------------
def test_per_user_file():
    prof = hdp.profile_from_csv(b"eps\n0.1\n0.5\n2\n0\ninf\n")
    assert not prof.is_tiered
    assert prof.levels.tolist() == [0.1, 0.5, 2.0, 0.0, INF]
    assert prof.counts.tolist() == [1] * 5 and prof.data is None
    # and the numbers are usable right away
    assert hdp.adpm(prof).weights.size == 5


def test_tier_file_with_count_and_names():
    prof = hdp.profile_from_csv(
        b"name,eps,count\nStrict,0.1,600\nBalanced,1,300\nOpen,public,100\n"
    )
    assert prof.is_tiered
    assert prof.levels.tolist() == [0.1, 1.0, INF]
    assert prof.counts.tolist() == [600, 300, 100]
    assert prof.names == ("Strict", "Balanced", "Open")
    big = hdp.profile_from_csv(b"eps,count\n0.1,1000000000000\n1,1e12\n")
    assert big.n == 2 * 10**12


@pytest.mark.parametrize("header", ["eps", "Epsilon", " EPS ", "EPSILON", "ε", "epsilon "])
def test_eps_header_spellings(header):
    prof = hdp.profile_from_csv(f"{header},Count\n0.2,3\n".encode())
    assert prof.levels.tolist() == [0.2] and prof.counts.tolist() == [3]


@pytest.mark.parametrize("word", ["inf", "INF", "+inf", "Infinity", "public", "Public", "∞"])
def test_public_words(word):
    assert hdp.profile_from_csv(f"eps\n0.3\n{word}\n".encode()).levels.tolist() == [0.3, INF]


def test_value_column():
    prof = hdp.profile_from_csv(b"eps,value\n0.1,12.5\ninf,-3\n1,0\n")
    assert prof.levels.tolist() == [0.1, INF, 1.0]
    assert prof.data.tolist() == [12.5, -3.0, 0.0]
    assert hdp.profile_from_csv(b" Value ,EPS\n7,0.5\n").data.tolist() == [7.0]


def test_separators_bom_crlf_blank_lines_and_text_input():
    assert hdp.profile_from_csv(b"eps;count\n0.1;3\n").counts.tolist() == [3]
    assert hdp.profile_from_csv(b"eps\tcount\n0.1\t3\n").counts.tolist() == [3]
    assert hdp.profile_from_csv("\ufeffeps\n0.1\n".encode()).levels.tolist() == [0.1]  # Excel's BOM
    assert hdp.profile_from_csv(b"eps\r\n0.1\r\n0.2\r\n").levels.tolist() == [0.1, 0.2]
    assert hdp.profile_from_csv(b"\neps\n0.1\n\n0.2\n\n").levels.tolist() == [0.1, 0.2]
    assert hdp.profile_from_csv("eps\n0.4\n").levels.tolist() == [0.4]  # str is accepted too
    assert hdp.profile_from_csv(b'"eps"\n"0.1"\n').levels.tolist() == [0.1]


def test_example_files_read_back():
    tiers = hdp.profile_from_csv(example_csv("tiers"))
    assert tiers.is_tiered and tiers.n == 1000
    values = hdp.profile_from_csv(example_csv("values"))
    assert values.n == 20 and values.data is not None and values.n_public == 2


def test_from_frame():
    df = pd.DataFrame({"Epsilon": [0.1, 0.2, np.inf], "VALUE": [1.0, 2.0, 3.0]})
    prof = hdp.profile_from_frame(df)
    assert prof.levels.tolist() == [0.1, 0.2, INF] and prof.data.tolist() == [1.0, 2.0, 3.0]
    tiers = hdp.profile_from_frame(pd.DataFrame({"eps": ["0.1", "inf"], "count": [5, 6]}))
    assert tiers.is_tiered and tiers.counts.tolist() == [5, 6]
    with pytest.raises(hdp.ProfileError, match=r"row 2, column 'eps'"):
        hdp.profile_from_frame(pd.DataFrame({"eps": [0.1, np.nan]}))
    with pytest.raises(hdp.ProfileError, match="DataFrame"):
        hdp.profile_from_frame([0.1, 0.2])
    with pytest.raises(hdp.ProfileError, match="more than 2 rows"):
        hdp.profile_from_frame(pd.DataFrame({"eps": [0.1, 0.2, 0.3]}), max_rows=2)


# --------------------------------------------------------------------------------------------
# bad files: each message says what and where
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "words"),
    [
        # not UTF-8: read as Windows-1252 (issue 12), then the cell is not a number
        (b"eps\n0.1\n\xff\xfe0.2\n", ["row 2", "text", "not a number"]),
        ("eps\n0.1\n".encode("utf-16"), ["not a"]),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["binary"]),
        (b"", ["empty"]),
        (b"  \n\n \n", ["empty"]),
        (b"eps\n", ["header but no data rows"]),
        (b"eps,count\n", ["header but no data rows"]),
        (b"level,count\n0.1,3\n", ["no column named 'eps'", "'level'", "'count'"]),
        (b"0.1\n0.2\n", ["the first row must name the columns"]),
        (b"eps\n0.1\nabc\n0.3\n", ["row 2", "line 3", "'eps'", "text", "not a number"]),
        (b"eps\n0.1\n\nabc\n", ["row 2", "line 4", "text"]),  # blank lines are counted
        (b"eps,value\n0.1,1\n0.2,x\n", ["row 2", "line 3", "'value'", "text"]),
        (b"eps\n0.1\n-2\n", ["row 2", "line 3", "negative", "≥ 0"]),
        (b"eps\n0.1\n-inf\n", ["row 2", "line 3", "negative"]),
        (b"eps\n0.1\nnan\n", ["row 2", "line 3", "empty or NaN"]),
        (b"eps,value\n0.1,1\n,2\n", ["row 2", "line 3", "'eps'", "empty or NaN"]),
        (b"eps,value\n0.1,1\n0.2\n", ["row 2", "line 3", "'value'", "empty"]),
        (b"eps,count\n0.1,3\n0.2,2.5\n", ["row 2", "line 3", "'count'", "whole"]),
        (b"eps,count\n0.1,-3\n", ["row 1", "line 2", "'count'", "negative"]),
        (b"eps,count\n0.1,inf\n", ["row 1", "'count'", "not a finite number"]),
        (b"eps,count\n0.1,many\n", ["row 1", "'count'", "text"]),
        (b"eps,count\n0.1,\n", ["row 1", "'count'", "empty"]),
        (b"eps,count,value\n0.1,3,1.0\n", ["'count'", "'value'", "drop one"]),
        (b"eps,epsilon\n0.1,0.2\n", ["more than one", "eps"]),
        (b"eps,value\n0.1,1,3\n", ["more cells than the header"]),
        (b"eps\n0.1\n0.2,5\n", ["could not read", "line 3"]),
        (b"eps,value\n0.1,inf\n", ["row 1", "'value'", "finite"]),
        (b"eps\n0,1\n", ["more cells"]),
    ],
)
def test_bad_files(content, words):
    with pytest.raises(hdp.ProfileError) as info:
        hdp.profile_from_csv(content)
    msg = str(info.value)
    for w in words:
        assert w in msg, (w, msg)


def test_more_rows_than_max_rows():
    content = b"eps\n" + b"0.1\n" * 6
    assert hdp.profile_from_csv(content, max_rows=6).n == 6
    with pytest.raises(hdp.ProfileError, match="more than 5 rows"):
        hdp.profile_from_csv(content, max_rows=5)
    with pytest.raises(hdp.ProfileError, match="count column"):  # says what to do instead
        hdp.profile_from_csv(content, max_rows=5)


def test_bigger_than_max_bytes():
    content = b"eps\n" + b"0.123\n" * 100
    assert hdp.profile_from_csv(content, max_bytes=len(content)).n == 100
    with pytest.raises(hdp.ProfileError, match="limit"):
        hdp.profile_from_csv(content, max_bytes=len(content) - 1)
    with pytest.raises(hdp.ProfileError, match="limit"):
        hdp.profile_from_csv(content.decode(), max_bytes=100)


def test_not_bytes_or_text():
    with pytest.raises(hdp.ProfileError, match="expected CSV text or bytes"):
        hdp.profile_from_csv(12345)


# --------------------------------------------------------------------------------------------
# round trip
# --------------------------------------------------------------------------------------------
def test_round_trip_per_user_with_inf_zero_and_values():
    prof = EP.from_values([0.1, INF, 1 / 3, 0.0, 1e-6, 1e6], data=[1.5, -2, 0, 1 / 7, 3, 4])
    back = hdp.profile_from_csv(prof.to_csv())
    assert back.levels.tolist() == prof.levels.tolist()
    assert back.data.tolist() == prof.data.tolist()
    assert back.key == prof.key


def test_round_trip_tiers_with_names():
    prof = EP.from_tiers(
        [0.1, 1 / 3, INF, 0.0], [600, 10**12, 5, 7], names=["Strict", "a, b", 'say "hi"', "Ø"]
    )
    back = hdp.profile_from_csv(prof.to_csv())
    assert back.is_tiered
    assert back.levels.tolist() == prof.levels.tolist()
    assert back.counts.tolist() == prof.counts.tolist()
    assert back.names == prof.names
    assert back.key == prof.key
    unnamed = EP.from_tiers([0.5, INF], [3, 4])
    assert hdp.profile_from_csv(unnamed.to_csv()).key == unnamed.key


@given(
    st.lists(
        st.one_of(st.just(INF), st.just(0.0), st.floats(1e-6, 1e6)),
        min_size=1,
        max_size=40,
    )
)
@pytest.mark.slow
def test_round_trip_is_exact(levels):
    prof = EP.from_values(levels)
    back = hdp.profile_from_csv(prof.to_csv())
    assert back.levels.tolist() == prof.levels.tolist()
    assert back.key == prof.key


def test_overflowing_number_is_not_read_as_public():
    """'1e400' overflows float64 to inf; only the words inf/public mean a public user."""
    with pytest.raises(hdp.ProfileError, match=r"row 2 \(line 3.*a number too large"):
        hdp.profile_from_csv(b"eps\n0.5\n1e400\n")
    with pytest.raises(
        hdp.ProfileError, match=r"column 'count'.*too large to be a floating-point number$"
    ):
        hdp.profile_from_csv(b"eps,count\n1,1e400\n")
