"""A pandas categorical column reaches DuckDB as an ENUM whose type lists every category: the
column's cells. The refusals that name a column's type (a value or eps column that is not
numbers, an id column that is not integers or text) showed that type, so the message held
every id (upper-cased) or cell (found by helper attack11, session 11). Now the type shows as
'ENUM (categorical)'. Oracle: the categories themselves, none of which may appear in the
message, in any case."""

from __future__ import annotations

import pandas as pd
import pytest

from hdp_core.errors import ReleaseError
from hdp_release import release_mean
from hdp_release.grouped import release_means
from hdp_release.ledger.store import PrivacyLedger

SECRETS = ["alice@example.org", "bob-0042", "0.25x", "carol"]


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "uid": pd.Categorical(SECRETS),
            "x": [0.1, 0.2, 0.3, 0.4],
            "xc": pd.Categorical(SECRETS),
            "eps": [1.0] * 4,
            "ec": pd.Categorical(SECRETS),
            "g": [0, 0, 1, 1],
        }
    )


def _refusal(call) -> str:
    with pytest.raises(ReleaseError) as err:
        call()
    text = str(err.value)
    for s in SECRETS:
        assert s.lower() not in text.lower(), text
    assert "ENUM (categorical)" in text
    return text


def test_a_categorical_columns_refusal_shows_no_category(tmp_path):
    df = _frame()
    kw = {"lo": 0.0, "hi": 1.0}
    led = PrivacyLedger(tmp_path / "l.duckdb")
    t = _refusal(lambda: release_mean(df, value="x", eps="eps", **kw, ledger=led, id="uid"))
    assert "id column 'uid'" in t
    assert "value column 'xc'" in _refusal(lambda: release_mean(df, value="xc", eps="eps", **kw))
    assert "eps column 'ec'" in _refusal(lambda: release_mean(df, value="x", eps="ec", **kw))
    g = _refusal(lambda: release_means(df, value="xc", eps="eps", by="g", **kw, ledger=False))
    assert "'xc'" in g
