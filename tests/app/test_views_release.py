"""hdp_app.views.release: the Release page's tables, sentences and choices, in milliseconds.

Oracles: the preview's "telling" digits against the brute-force comparison with every level
(the old O(k^2) code path, hdp_app.views.formatting.telling_eps), the preview's numbers
against hdp.adpm on the same tiers, formula safety by reading the CSV back cell by cell; the
budget's sentences against a real ledger's errors and entries (their fields, never their
text).
"""

from __future__ import annotations

import csv
import io
import json
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from helpers import shown

import hdp_core as hdp
from hdp_app.views import release as V
from hdp_app.views import release_budget as B
from hdp_app.views.formatting import telling_eps
from hdp_core.errors import ReleaseError
from hdp_core.menu import make_menu
from hdp_release.preview import level_counts, preview_tiers
from hdp_release.release import release_mean

FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _menu():
    return make_menu(
        ["Strict", "Balanced", "Open"], [0.1, 1.0, "public"], [40, 40, 20], 1000, 0, 500, "USD"
    )


# ------------------------------------------------------------------------------ telling digits
@pytest.mark.parametrize("seed", range(5))
def test_telling_levels_equals_the_comparison_with_every_level(seed):
    rng = np.random.default_rng(seed)
    base = rng.choice([0.1, 0.5, 1.0, 2.0], 40)
    lv = np.unique(np.r_[base * (1 + rng.choice([0, 1e-5, 2e-5, 1e-9, 3e-7], 40)), 0.0, math.inf])
    xs = np.r_[lv, 0.10003, 0.1 + 1e-12, 7.0]
    fast = V.telling_levels(xs, lv)
    slow = [telling_eps(float(x), lv) for x in xs]  # the old O(k) comparison per row
    assert fast == slow


def test_preview_table_formats_only_the_rows_shown_against_two_neighbours(monkeypatch):
    rng = np.random.default_rng(1)
    lv = np.unique(np.exp(rng.uniform(np.log(0.01), np.log(10), 20_000)))
    ct = np.ones(lv.size, dtype=np.int64)
    pv = preview_tiers(lv, ct, 0, 100)
    calls = []

    def counting(x, others=(), **kw):
        calls.append(len(list(others)))
        return telling_eps(x, others, **kw)

    monkeypatch.setattr(V, "telling_eps", counting)
    shown = V.preview_table(pv)
    # one call per shown row and one for tau*, each against at most two levels: the cost
    # does not grow with the number of distinct levels beyond the one sort
    assert len(calls) == V.PREVIEW_ROWS + 1 and max(calls) <= 2
    assert len(shown.frame) == V.PREVIEW_ROWS
    assert shown.caption == f"{lv.size:,} distinct levels: showing the 200 strictest."
    # the same text the brute force gives (every level compared)
    head = pv.tiers.iloc[:5]
    want = [telling_eps(float(x), lv) for x in head["granted_eps"]]
    assert list(shown.frame["granted eps"][:5]) == want
    assert shown.tau == telling_eps(pv.saturation_level, lv)


def test_preview_numbers_are_adpms():
    lv, ct = np.array([0.0, 0.1, 1.0, math.inf]), np.array([5, 600, 300, 100])
    pv = preview_tiers(lv, ct, 0, 500)
    sol = hdp.adpm(hdp.EpsilonProfile.from_tiers(lv[1:], ct[1:]))
    shown = V.preview_table(pv)
    assert list(shown.frame["requested eps"]) == ["0 (not used)", "0.1", "1", "public"]
    assert shown.frame["granted eps"][0] == "—"
    assert shown.tau == telling_eps(sol.saturation_level, lv)
    assert shown.caption is None


def test_off_menu_note_lists_five_and_counts_the_rest():
    lv = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 1.0, math.inf])
    ct = np.arange(1, 11)
    note = V.off_menu_note(lv, ct, _menu())
    assert note.startswith("6 levels in the table are not on your menu: 0.2 (3 users)")
    assert "and 1 more" in note
    assert V.off_menu_note(lv, ct, None) is None
    assert V.off_menu_note(np.array([0.1, 1.0]), np.array([1, 2]), _menu()) is None


# ------------------------------------------------------------------------------ columns
@pytest.mark.parametrize(
    "cols, want",
    [
        (["value", "eps"], (0, 1)),
        (["user_id", "value", "tier"], (1, 2)),
        (["a", "b"], (None, None)),
        (["amount_usd", "eps"], (0, 1)),  # two columns, eps recognised: the other is the value
        (["EPS", "spend"], (1, 0)),
        (["eps", "x2", "x3"], (None, 0)),  # three columns: no guess for the value
    ],
)
def test_guess_columns(cols, want):
    df = pd.DataFrame({c: [1.0, 2.0] for c in cols})
    assert V.guess_columns(df) == want


def test_guess_columns_finds_the_column_of_tier_names():
    df = pd.DataFrame({"amount": [1.0, 2.0, 3.0], "plan": ["Strict", "open", "BALANCED "]})
    assert V.guess_columns(df, _menu()) == (0, 1)
    assert V.guess_columns(df) == (0, None)  # no menu: "plan" is not recognised


# ------------------------------------------------------------------------------ settings
def test_range_problem_and_sd_bounds_use_the_validators_limit():
    from hdp_app.views.limits import REAL_MAX

    assert V.RANGE_MAX == REAL_MAX
    assert V.range_problem(0, 100) is None
    assert V.range_problem(-REAL_MAX, REAL_MAX) is None
    assert "below the highest" in V.range_problem(5, 5)
    assert "between" in V.range_problem(-1e308, 1e308)
    lo_sd, hi_sd = V.sd_bounds(-REAL_MAX, REAL_MAX)
    assert math.isfinite(lo_sd) and hi_sd == REAL_MAX and hi_sd < 1.797e308


def test_table_hint_reads_the_errors_fields_not_its_text():
    df = pd.DataFrame({"value": [1.0, 2.0], "eps": ["0.5", "Strict"]})
    with pytest.raises(ReleaseError) as info:
        level_counts(df, "eps")
    e = info.value
    assert (e.row, e.column, e.reason) == (2, "eps", "text")
    assert V.table_hint(e, "eps", menu_off=True) == V.MENU_HINT
    assert V.table_hint(e, "eps", menu_off=False) == ""
    assert V.table_hint(e, "other", menu_off=True) == ""
    # a message that happens to say "is not a number" but is about another column: no hint
    other = ReleaseError("eps ... is not a number", column="value", reason="text")
    assert V.table_hint(other, "eps", menu_off=True) == ""


def test_upload_hint_has_no_markdown_backticks():
    assert "`" not in V.upload_hint(None) and "value,eps" in V.upload_hint(None)
    assert "`" not in V.upload_hint(_menu()) and "Strict" in V.upload_hint(_menu())


# ------------------------------------------------------------------------------ downloads
def _release(names=False, cols=("value", "eps")):
    rng = np.random.default_rng(2)
    eps = rng.choice(["Strict", "Balanced", "Open"] if names else [0.1, 1.0, "public"], 300)
    df = pd.DataFrame({cols[0]: rng.uniform(0, 500, 300), cols[1]: eps})
    menu = _menu() if names else None
    rel = release_mean(df, value=cols[0], eps=cols[1], lo=-5, hi=500, tiers=menu)
    s = {"value": cols[0], "eps": cols[1], "lo": -5.0, "hi": 500.0, "unit": "+cmd", "data_sd": None}
    return rel, s, menu


def _cells(data: bytes) -> list[str]:
    return [c for row in csv.reader(io.StringIO(data.decode())) for c in row]


def _plain_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_downloads_are_complete_and_formula_safe():
    rel, s, menu = _release(names=True, cols=("=SUM(A1)", "@eps"))
    name = "=HYPERLINK(evil).csv"
    d = json.loads(V.result_json(rel, s, name, "12:00:00", menu))
    assert d["file"] == name and d["value_column"] == "=SUM(A1)"  # JSON keeps names exactly
    assert d["estimate"] == rel.estimate and d["noise_scale"] == rel.noise_scale
    assert [r["tier"] for r in d["tiers"]] == ["Strict", "Balanced", "Open"]
    for data in (V.result_csv(rel, s, name, "12:00:00", menu), V.receipt_csv(rel, menu)):
        for cell in _cells(data):
            assert _plain_number(cell) or not cell.startswith(FORMULA), cell
    res = pd.read_csv(io.BytesIO(V.result_csv(rel, s, name, "12:00:00", menu)))
    assert res["estimate"][0] == rel.estimate and res["lo"][0] == -5.0
    rec = pd.read_csv(io.BytesIO(V.receipt_csv(rel, menu)))
    assert list(rec["users"]) == list(rel.tiers["users"])


def test_captions_escape_user_text_and_say_when_the_range_differs():
    df = pd.DataFrame({"a": [1, 2, 3], "b": [1, 2, 3]})
    assert (
        V.loaded_caption("*x*.csv", df)
        == "Loaded \\*x\\*\\.csv: 3 rows, 2 columns (not displayed)."
    )
    assert V.menu_range_note(0, 500, _menu()) is None
    assert "differs from the menu" in V.menu_range_note(0, 100, _menu())
    assert V.menu_range_note(0, 100, None) is None
    assert V.menu_caption(_menu(), "the link").startswith("From the link\\: Strict\\: eps 0\\.1")


# ------------------------------------------------------------------------------ issue 21
def test_the_answers_map_to_targets_and_none_is_preselected():
    assert V.TARGET_ANSWERS == ("Yes, or maybe", "No")
    assert V.target_of("Yes, or maybe") == "table" and V.target_of("No") == "population"
    assert V.target_of(None) is None
    with pytest.raises(ValueError):
        V.target_of("yes")
    assert B.chosen_target("No") == "population"
    with pytest.raises(ValueError):
        B.chosen_target(None)  # a release never falls back to a default target
    assert B.preview_target(None) == "population" and B.preview_target("Yes, or maybe") == "table"


def test_target_choices_pair_each_answer_with_its_error_and_sentence():
    from hdp_app.views.explain import TARGET_POPULATION_TEXT, TARGET_TABLE_TEXT
    from hdp_core.intervals import release_error_95

    lv, ct = np.array([0.0, 0.1, 1.0, math.inf]), np.array([5, 300, 100, 20])
    for spend in (1, 0.3):
        errs = V.spend_errors(lv, ct, 0.0, 500.0, None, spend)
        table, pop = V.target_choices(errs)
        assert (table.answer, table.target, table.text) == (
            "Yes, or maybe",
            "table",
            TARGET_TABLE_TEXT,
        )
        assert (pop.answer, pop.target, pop.text) == ("No", "population", TARGET_POPULATION_TEXT)
        assert table.error == release_error_95(lv, ct, 0, 500, target="table", spend=spend)
        assert pop.error == release_error_95(lv, ct, 0, 500, target="population", spend=spend)
    # a smaller spend adds noise: both errors grow
    full, third = (V.spend_errors(lv, ct, 0.0, 500.0, None, s) for s in (1, Fraction(1, 3)))
    assert third.table > full.table and third.population > full.population


# ------------------------------------------------------------------------------ issue 22
def test_spend_of_percent_is_exact():
    assert B.spend_of_percent(37) == Fraction(37, 100)
    assert sum(B.spend_of_percent(10) for _ in range(10)) == 1
    for bad in (0, 101):
        with pytest.raises(ValueError):
            B.spend_of_percent(bad)


def test_the_blocker_refuses_a_spent_budget_before_asking_the_question():
    spent = B.release_blocker("No", Fraction(0), Fraction(1, 2))
    assert spent is not None and spent.kind == "error" and "budget is spent" in spent.text
    short = B.release_blocker("No", Fraction(2, 5), Fraction(3, 5))
    assert short is not None and short.kind == "error" and "at most 40%" in short.text
    ask = B.release_blocker(None, Fraction(1), Fraction(1))
    assert ask is not None and ask.kind == "info"
    assert B.release_blocker("No", Fraction(2, 5), Fraction(2, 5)) is None


def test_budget_refusal_and_history_come_from_a_real_ledgers_fields(tmp_path):
    from hdp_core.errors import BudgetExceeded
    from hdp_release.ledger.store import PrivacyLedger

    led = PrivacyLedger(tmp_path / "l.duckdb")
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"value": rng.uniform(0, 10, 200), "eps": rng.choice([0.5, 2.0], 200)})
    rel = release_mean(
        df,
        value="value",
        eps="eps",
        lo=0,
        hi=10,
        ledger=led,
        spend=0.75,
        dataset="*Q3*",
        target="table",
    )
    assert B.released_sentence(rel) == (
        "This release estimates this table's own mean (TableMean), spending 75% of every "
        "user's level; 25% of this dataset's budget remains."
    )
    with pytest.raises(BudgetExceeded) as e:
        release_mean(df, value="value", eps="eps", lo=0, hi=10, ledger=led, spend=0.5)
    e.value.args = ("a message the page must never read",)
    text = shown(B.budget_refusal(e.value))
    assert (
        "data with these privacy levels (the same number of users at each level) has spent "
        "75%" in text
    )
    assert "75%" in text and "25% remains" in text and "spend 50%" in text
    assert "never read" not in text
    hist = led.history()
    f = B.history_frame(hist)
    assert list(f["spend"]) == ["75%"] and list(f["status"]) == ["released"]
    assert list(f["estimated"]) == ["this table's own mean (TableMean)"]
    assert f["private mean"][0] == V.in_units(rel.estimate)
    assert B.budget_caption(Fraction(1, 4), 1, True).startswith("1 release under this name")
    # refused by its name: the name is shown as plain text (markdown escaped)
    with pytest.raises(BudgetExceeded) as e:
        other = df.assign(value=df["value"] / 2)
        release_mean(other, value="value", eps="eps", lo=0, hi=10, ledger=led, dataset="*q3*")
    text = B.budget_refusal(e.value)
    assert "\\*q3\\*" in text and shown(text).startswith(
        "Nothing was released: the dataset named *q3*"
    )


def test_ledger_problems_are_told_from_the_errors_type_and_fields():
    from hdp_core.errors import LedgerBusy, LedgerUnusable

    busy = B.ledger_problem(LedgerBusy("secret text", path="/x", waited=10.0))
    assert "busy" in busy and "10 s" in busy and "secret" not in busy
    bad = B.ledger_problem(LedgerUnusable("secret text", path="/x", reason="corrupt"))
    assert "it is damaged" in bad and "HDP_LEDGER" in bad and "secret" not in bad
    odd = B.ledger_problem(LedgerUnusable("secret text", path="/x", reason="new-code"))
    assert "cannot be opened" in odd
