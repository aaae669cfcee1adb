"""The command line of a release per segment: --by, --keys, text and JSON, refusals."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import hdp_release.cli
import hdp_release.grouped_cli
from hdp_release import release_means
from hdp_release.cli import main


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    n = 600
    p = tmp_path / "t.csv"
    pd.DataFrame(
        {
            "v": rng.uniform(0, 100, n),
            "e": rng.choice(["0.5", "1", "public"], n),
            "seg": rng.choice(["a", "b", "c"], n),
            "plan": rng.choice(["x", "y"], n),
        }
    ).to_csv(p, index=False)
    return p


def test_text_and_json(table, capsys):
    assert (
        main([str(table), "--value", "v", "--eps", "e", "--range", "0", "100", "--by", "seg"]) == 0
    )
    out = capsys.readouterr().out
    assert "3 segments" in out and "parallel composition" in out
    args = [str(table), "--value", "v", "--eps", "e", "--range", "0", "100"]
    assert main([*args, "--by", "seg,plan", "--format", "json", "--target", "table"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["by"] == ["seg", "plan"] and len(d["segments"]) == 6 and d["target"] == "table"
    ref = release_means(str(table), value="v", eps="e", by=["seg", "plan"], lo=0, hi=100)
    assert [s["key"] for s in d["segments"]] == [list(k) for k in ref.keys]
    assert [s["users"] for s in d["segments"]] == [r.n_users for r in ref.releases]


def test_keys_file(table, tmp_path, capsys):
    k = tmp_path / "k.csv"
    k.write_text("seg\nc\nzz\n")
    args = [str(table), "--value", "v", "--eps", "e", "--range", "0", "100", "--by", "seg"]
    assert main([*args, "--keys", str(k), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [s["key"] for s in d["segments"]] == [["c"], ["zz"]]
    assert [s["present"] for s in d["segments"]] == [True, False]
    assert d["n_left_out"] == 2
    k.write_text("region\nc\n")
    assert main([*args, "--keys", str(k)]) == 2
    assert "no column 'seg'" in capsys.readouterr().err


def test_refusals_are_one_line(table, capsys):
    args = [str(table), "--value", "v", "--eps", "e", "--range", "0", "100"]
    assert main([*args, "--by", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "nope" in err and err.count("\n") == 1
    assert main([*args, "--keys", str(table)]) == 2
    assert "--keys needs --by" in capsys.readouterr().err


def test_exit_statuses_agree():
    g = hdp_release.grouped_cli
    c = hdp_release.cli
    assert (g.EXIT_RELEASED, g.EXIT_REFUSED, g.NOT_RECORDED) == (
        c.EXIT_RELEASED,
        c.EXIT_REFUSED,
        c.NOT_RECORDED,
    )
