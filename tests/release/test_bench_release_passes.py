"""benchmarks/bench_release.py's ``--passes`` queries (the tiers pass as the release runs it,
the floor, and the pass taken apart: the key alone, the key with sum(v), the key with the
grid but no check, GROUP BY the level column) compute what they claim: its selftest compares
each group's rows and sum with numpy's on a small file (the grid's sum as exact integers,
rounded half away from zero by an independent formulation). A broken query fails it."""

from __future__ import annotations

import importlib.util

import pytest
from helpers import ROOT


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location(
        "bench_release_under_test", ROOT / "benchmarks" / "bench_release.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_passes_queries_selftest(bench):
    assert bench.selftest(rows=5_000) == 45  # 9 grouped queries x 5 levels


def test_selftest_catches_a_wrong_grid(bench, monkeypatch):
    real = bench.pass_sqls
    # the grid of another range: every grid sum is wrong
    monkeypatch.setattr(bench, "pass_sqls", lambda rel, lv: real(rel, lv, 0.0, 999.0))
    with pytest.raises(AssertionError):
        bench.selftest(rows=2_000)
