"""Small untruths of the release fixed (issue 31): one tier-name normalisation shared by the
preview, the release (every engine and reader) and the page's column guess; the spend
factor printed as the spend it is; the CLI's text receipt with tier names; a TableMean
release's details never calling its cap level tau*; released_at in ISO 8601 UTC."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest

import hdp_release.cli
from hdp_app.views import release as V
from hdp_app.views.formatting import utc_timestamp
from hdp_core.validate import tier_key
from hdp_release.checks import column_floats
from hdp_release.preview import level_counts
from hdp_release.release import release_mean

NEL = "\x85"  # U+0085, NEXT LINE: Unicode whitespace that str.strip removes
TIERS = {"İx": 0.01, "ix": 10.0, "Straße": 0.5, "Nel": 2.0}
"""'İx' and 'ix' are different names (casefold keeps the dot: 'i̇x'); 'STRASSE' is 'Straße'."""


def hostile_names_frame() -> tuple[pd.DataFrame, dict[float, int]]:
    cells = ["İx"] * 500 + ["ix"] * 500 + ["STRASSE"] * 7 + [f"{NEL}Nel{NEL}"] * 3 + ["public"]
    want = {0.01: 500, 10.0: 500, 0.5: 7, 2.0: 3, math.inf: 1}
    rng = np.random.default_rng(3)
    return pd.DataFrame({"v": rng.uniform(0, 1, len(cells)), "e": cells}), want


def test_tier_key_is_the_one_rule():
    assert tier_key("İx") != tier_key("ix") and tier_key("ix") == "ix"
    assert tier_key("STRASSE") == tier_key("Straße") == "strasse"
    assert tier_key(f"{NEL}Nel{NEL}") == "nel"


def test_preview_reads_tier_names_as_the_release_does(tmp_path):
    """The preview's counts per level equal the release's receipt (pandas and CSV): the
    audit's 'İx' read as 'ix' by the preview put all 1,000 users at eps 10."""
    df, want = hostile_names_frame()
    lv, ct = level_counts(df, "e", TIERS)
    assert dict(zip(lv.tolist(), ct.tolist(), strict=True)) == want
    p = tmp_path / "names.csv"
    df.to_csv(p, index=False, encoding="utf-8")
    for src in (df, str(p)):
        rel = release_mean(src, value="v", eps="e", lo=0, hi=1, tiers=TIERS)
        got = dict(zip(rel.tiers["eps"].tolist(), rel.tiers["users"].tolist(), strict=True))
        assert got == want, src if isinstance(src, str) else "pandas"


def test_column_floats_reads_numbers_as_numbers_and_names_by_tier_key():
    """A number stays a number (as on the engines), a public word is inf, a tier name takes
    its level; decided once per distinct text."""
    col = pd.DataFrame({"e": ["1.5", " 2 ", "public", "straße", f"{NEL}İX", "İx"]})
    x = column_floats(col, "e", "eps", {tier_key(k): v for k, v in TIERS.items()}, "iufc")
    assert x.tolist() == [1.5, 2.0, math.inf, 0.5, 0.01, 0.01]


@pytest.mark.parametrize("engine", ["spark"])
def test_spark_reads_the_same_names(engine, tmp_path, request):
    request.getfixturevalue("spark")
    df, want = hostile_names_frame()
    p = tmp_path / "names.csv"
    df.to_csv(p, index=False, encoding="utf-8")
    rel = release_mean(str(p), value="v", eps="e", lo=0, hi=1, tiers=TIERS, engine=engine)
    got = dict(zip(rel.tiers["eps"].tolist(), rel.tiers["users"].tolist(), strict=True))
    assert got == want


def test_page_guesses_the_menu_column_by_the_same_rule():
    from hdp_core.design import Menu  # noqa: F401  (a mapping works as a menu too)

    df = pd.DataFrame({"a": ["x"] * 10, "b": ["STRASSE", f"{NEL}Nel", "İx"] * 3 + ["İx"]})
    # _menu_column via guess_columns: the tier-name column is found under tier_key
    assert V.guess_columns(df, TIERS)[1] == 1


# ------------------------------------------------------------------------------ texts
def _release() -> object:
    df = pd.DataFrame({"v": np.linspace(0, 1, 50), "e": [1.0] * 50})
    return release_mean(df, value="v", eps="e", lo=0, hi=1)


def test_spend_factor_is_printed_as_the_spend_it_is():
    rel = dataclasses.replace(
        _release(), spend=0.3, level_factor=0.29999999999999993, ledger_path="ledger.duckdb"
    )
    text = rel.text()
    assert "(run at eps x 0.3)" in text
    assert "0.29999999999999993" not in text


def test_table_target_details_never_say_tau_star():
    df = pd.DataFrame({"v": np.linspace(0, 1, 50), "e": [0.5] * 25 + [5.0] * 25})
    rel = release_mean(df, value="v", eps="e", lo=0, hi=1, target="table")
    details = V.technical_details(rel, "USD").replace("\\", "")  # as shown (no escapes)
    assert "tau*" not in details and "Cap level" in details
    assert "tau*" not in rel.text() and "cap level" in rel.text()
    pop = release_mean(df, value="v", eps="e", lo=0, hi=1)
    assert "tau* = " in V.technical_details(pop, "USD").replace("\\", "")


def test_cli_text_receipt_names_the_tiers(tmp_path, capsys):
    from hdp_core.design_io import menu_to_json
    from hdp_core.menu import default_menu

    menu = default_menu()
    rng = np.random.default_rng(5)
    cells = rng.choice(["strict", "Balanced", "OPEN"], 300)
    p = tmp_path / "named.csv"
    pd.DataFrame({"v": rng.uniform(0, 100, 300), "tier": cells}).to_csv(p, index=False)
    m = tmp_path / "menu.json"
    m.write_text(menu_to_json(menu))
    assert hdp_release.cli.main([str(p), "--value", "v", "--eps", "tier", "--menu", str(m)]) == 0
    out = capsys.readouterr().out
    receipt = out[out.index("privacy receipt") :].splitlines()
    assert receipt[1].split()[0] == "tier"
    assert {line.split()[0] for line in receipt[2:]} == {"Strict", "Balanced", "Open"}


def test_released_at_is_iso_8601_utc():
    t = datetime(2026, 11, 27, 9, 30, 12, tzinfo=timezone(timedelta(hours=2)))
    assert utc_timestamp(t) == "2026-11-27T07:30:12Z"
    now = utc_timestamp()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", now)
    parsed = datetime.strptime(now, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert abs((datetime.now(UTC) - parsed).total_seconds()) < 60
    settings = {"value": "v", "eps": "e", "unit": "USD", "lo": 0.0, "hi": 1.0}
    d = json.loads(V.result_json(_release(), settings, "f.csv", now))
    assert d["released_at"] == now
