"""Page-shaped numbers and sentences of issue 21 (hdp_app.views.whatif and the sentences
appended to views.explain), checked against the core functions and independent arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.views import explain
from hdp_app.views import whatif as wv
from hdp_core.estimators import METHOD_CLASSES
from hdp_core.intervals import expected_error_95

INF = math.inf
PENGUIN = [0.1] * 151 + [1.0] * 68 + [INF] * 123
LO, HI = 2700.0, 6300.0


def test_rows_in_data_units_and_every_method():
    rows = wv.whatif_rows(PENGUIN, hdp.Beta(2, 3), 0.5, -900.0, LO, HI)
    assert [r["method"] for r in rows][:6] == list(hdp.METHODS)
    assert {r["method"] for r in rows} == set(METHOD_CLASSES)
    core = hdp.whatif(PENGUIN, hdp.Beta(2, 3), 0.5, -900.0 / (HI - LO))
    for r in rows:
        c = core[r["method"]]
        if c.bias_table is None:
            assert r["Bias vs the table's mean"] is None
            continue
        assert r["Bias vs the table's mean"] == pytest.approx(c.bias_table * (HI - LO))
        assert r["RMSE vs the table's mean"] == pytest.approx(c.rmse_table * (HI - LO))


def test_sentence_numbers_and_direction():
    s = wv.whatif_sentence(PENGUIN, hdp.Beta(2, 3), 0.5, -900.0, LO, HI, unit="g")
    core = hdp.whatif(PENGUIN, hdp.Beta(2, 3), 0.5, -900.0 / (HI - LO), ["ADPM", "TableMean"])
    a = core["ADPM"].bias_table * (HI - LO)
    # independent: ADPM's weights by hand, strict users 900 g lower
    w = hdp.adpm(PENGUIN).weights
    mu = np.where(np.array(PENGUIN) < 0.5, -900.0, 0.0)
    assert a == pytest.approx(float(np.dot(w - 1 / len(PENGUIN), mu)))
    assert f"{a:+.3g} g" in s and explain.WHATIF_WHY in s
    assert a > 0  # the strict users are lower, ADPM leans towards the others: above the mean


def test_target_errors_same_function():
    te = wv.target_errors(PENGUIN, LO, HI)
    assert te.population == pytest.approx(expected_error_95(PENGUIN, "population") * (HI - LO))
    assert te.table == pytest.approx(expected_error_95(PENGUIN, "table") * (HI - LO))
    assert te.get("table") == te.table
    with pytest.raises(ValueError):
        te.get("sample")
    sd = wv.target_errors(PENGUIN, LO, HI, data_sd=500.0)
    assert sd.population == pytest.approx(
        expected_error_95(PENGUIN, "population", 500.0 / (HI - LO)) * (HI - LO)
    )


def test_adpm_lenient_users_get_more_than_their_share():
    """The claim in WHATIF_WHY: ADPM's most lenient users get more than 1/n."""
    sol = hdp.adpm(PENGUIN)
    assert sol.weights.max() > 1 / len(PENGUIN)
    assert np.all(hdp.table_mean(PENGUIN).weights <= 1 / len(PENGUIN))
