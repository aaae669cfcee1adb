"""The Release page's mean per segment and the planning for segments (hdp_app.views.segments,
hdp_app.figures.segments), in milliseconds: table, marks, sentences, downloads, code."""

from __future__ import annotations

import io
import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from helpers import NoNoise

import hdp_release.finish
from hdp_app.figures.segments import segments_figure
from hdp_app.figures.style import METHOD_COLORS
from hdp_app.views import segments as S
from hdp_core.intervals import release_error_95
from hdp_release import release_means


@pytest.fixture(scope="module")
def grouped():
    rng = np.random.default_rng(0)
    n = 800
    df = pd.DataFrame(
        {
            "v": rng.uniform(0, 100, n),
            "e": rng.choice([0.5, 2.0, math.inf], n),
            "region": rng.choice(["north", "south", "=HYPERLINK(1)"], n),
        }
    )
    df.loc[:1, "region"] = "tiny"  # two users: an interval wider than half the range
    df.loc[:1, "e"] = 0.05
    out = {}
    for t in ("population", "table"):
        out[t] = release_means(
            df, value="v", eps="e", by="region", lo=0, hi=100, target=t, keys=None
        )
    return out


def test_table_is_sorted_and_marks_too_few(grouped):
    g = grouped["population"]
    t = S.segments_table(g)
    assert list(t["private mean"]) == sorted(t["private mean"])
    tiny = t[t.segment == "tiny"].iloc[0]
    assert tiny["note"] == S.TOO_FEW and tiny["95% high"] - tiny["95% low"] > 50
    assert (t[t.segment != "tiny"]["note"] == "").all()
    assert "bias bound ±" not in t
    tt = S.segments_table(grouped["table"])
    assert (tt["bias bound ±"] > 0).all()


def test_sentence_downloads_and_code(grouped):
    g = grouped["table"]
    text = S.segments_sentence(g, "USD")
    assert "TableMean" in text and "parallel composition" in text and S.TOO_FEW in text
    csv = pd.read_csv(io.BytesIO(S.segments_csv(g)))
    assert len(csv) == 4 and "'=HYPERLINK(1)" in set(csv["region"])  # formula-safe
    rc = pd.read_csv(io.BytesIO(S.receipt_csv(g)))
    assert rc["users"].sum() == sum(r.n_users for r in g.releases)
    d = json.loads(S.segments_json(g, {"value": "v", "eps": "e", "unit": "USD"}, "t.csv"))
    assert d["value_column"] == "v" and len(d["segments"]) == 4
    # released_at: date, time and zone (ISO 8601 UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", d["released_at"])
    code = S.segments_code(
        {"value": "v", "eps": "e", "lo": 0, "hi": 100}, "t.csv", ["region"], "table"
    )
    assert "release_means(" in code and "by=['region']" in code
    compile(code, "<code>", "exec")


@pytest.mark.parametrize("with_menu", [False, True])
def test_code_reproduces_the_page_call(with_menu, tmp_path, monkeypatch):
    """Running the generated code gives the same segments and (noise off) the same numbers;
    with a Tier designer menu the snippet rebuilds it and reads the tier names through it."""
    from hdp_core.menu import make_menu

    monkeypatch.setattr(hdp_release.finish, "measurement", NoNoise)
    menu = None
    e: list = [1.0, 2, 1, 2]
    if with_menu:
        menu = make_menu(["Strict", "Open"], [0.2, "public"], [50, 50], 100, 0, 100, "USD")
        e = ["strict", "Open", "OPEN", "0.5"]
    df = pd.DataFrame({"v": [1.0, 50, 70, 90], "e": e, "r": ["a", "a", "b", "b"]})
    df.to_csv(tmp_path / "t.csv", index=False)
    monkeypatch.chdir(tmp_path)
    s = {"value": "v", "eps": "e", "lo": 0.0, "hi": 100.0, "data_sd": None}
    ns: dict = {}
    code = S.segments_code(s, "t.csv", ["r"], "population", menu=menu)
    assert ("tiers=menu" in code) == with_menu
    exec(code.replace("print(g.text())", ""), ns)
    want = release_means("t.csv", value="v", eps="e", by=["r"], lo=0, hi=100, tiers=menu)
    assert [r.estimate for r in ns["g"].releases] == [r.estimate for r in want.releases]
    assert [r.noise_scale for r in ns["g"].releases] == [r.noise_scale for r in want.releases]


def test_figure_colours_and_bias_bars(grouped):
    for target, method in (("population", "ADPM"), ("table", "TableMean")):
        t = S.segments_table(grouped[target])
        fig = segments_figure(t, target, 0, 100, "USD")
        assert fig.data[0].error_x.color == METHOD_COLORS[method]
        assert len(fig.data) == (2 if target == "table" else 1)
        assert list(fig.data[0].x) == list(t["private mean"])


def test_by_choices_and_problems():
    assert S.segment_columns(["v", "e", "region", "plan"], "v", "e") == ["region", "plan"]
    assert S.by_problem([]) is not None and S.by_problem(["a", "b", "c"]) is not None
    assert S.by_problem(["a"]) is None


def test_planning_matches_release_error_95():
    levels, shares = [0.1, 1.0, math.inf], [40, 40, 20]
    t = S.planning_table(levels, shares, [("small", 10), ("big", 10_000)], 0, 500)
    for i, n in enumerate([10, 10_000]):
        counts = [int(n * 0.4), int(n * 0.4), int(n * 0.2)]
        assert t.iloc[i, 2] == release_error_95(levels, counts, 0, 500, "population")
        assert t.iloc[i, 3] == release_error_95(levels, counts, 0, 500, "table")
    assert t.iloc[0]["note"] == S.TOO_FEW and t.iloc[1]["note"] == ""


def test_smallest_segment_is_the_smallest():
    from hdp_core.segments import segment_errors_95, smallest_segment

    levels, shares = [0.1, 1.0, math.inf], [40, 40, 20]
    for target in ("population", "table"):
        n = smallest_segment(levels, shares, 10.0, 0, 500, target, n_max=10**6)
        errs = segment_errors_95(levels, shares, [n - 1, n], 0, 500, target)
        assert errs[1] <= 10.0 < errs[0]
    s = S.smallest_segment_sentence(levels, shares, 10.0, 0, 500, "USD")
    assert "population mean" in s and "table's mean" in s


def test_parse_sizes():
    assert S.parse_sizes("segment,users\nnorth, 100\nsouth,2e3\n") == [
        ("north", 100),
        ("south", 2000),
    ]
    with pytest.raises(ValueError, match="line 2"):
        S.parse_sizes("a,1\nb,x\n")
