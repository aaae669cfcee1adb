"""AppTest of the Simulation page's "values differ by privacy level" and TableMean in its
results, and of the Tier designer's "Which mean, and how many releases?" (issues 21, 22).
Numbers shown are checked against direct calls with the same inputs (hdp_core.whatif through
views.whatif, intervals.expected_error_95 at levels divided by k by hand)."""

from __future__ import annotations

import json
import math

import pytest
from helpers import PROFILE_KINDS, open_sections, show, whole_frame

import hdp_core as hdp
from hdp_app.figures.style import METHOD_COLORS
from hdp_app.views import explain
from hdp_app.views import whatif as wv
from hdp_core.intervals import expected_error_95
from hdp_core.rounding import release_half_width

INF = math.inf
TRIALS = "500"
PENGUIN = hdp.EpsilonProfile.from_tiers([0.1, 1.0, INF], [151, 68, 123])


def ok(at):
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def sim(app, prof, **params):
    app.query_params["sim_trials"] = TRIALS
    for k, v in params.items():
        app.query_params[k] = v
    return ok(show(app, prof, "simulation"))


def whatif_table(at):
    """The what-if table, with its parts (hdp_app.widgets.wide_dataframe)."""
    for i, df in enumerate(at.dataframe):
        if "Method" in df.value.columns and "Bias (table)" in whole_frame(at, i).columns:
            return whole_frame(at, i)
    return None


def results_table(at):
    """The results table, with its parts (hdp_app.widgets.wide_dataframe)."""
    return next(
        whole_frame(at, i) for i, d in enumerate(at.dataframe) if "Simulated MSE" in d.value.columns
    )


def turn_on(at):
    at.toggle(key="sim_wi").set_value(True).run()
    return ok(at)


def test_whatif_off_by_default_then_on_matches_the_core(app):
    at = sim(app, PENGUIN)
    assert whatif_table(at) is None
    turn_on(at)
    thr = at.number_input(key="sim_wi_eps").value
    shift = at.number_input(key="sim_wi_shift").value
    assert thr == wv.default_threshold(PENGUIN) and shift == wv.default_shift(hdp.Beta(2, 3))
    df = whatif_table(at)
    methods = wv.whatif_methods(hdp.METHODS, 3)
    ref = wv.whatif_rows(PENGUIN, hdp.Beta(2, 3), thr, shift, methods=methods)
    assert list(df["Method"]) == [r["Method"] for r in ref]
    assert "TableMean (the table's own mean)" in list(df["Method"])
    for col, (short, _) in wv.WHATIF_COLUMNS.items():
        assert list(df[short]) == pytest.approx([r[col] for r in ref])
    infos = [i.value for i in at.info]
    assert any(explain.WHATIF_WHY in i for i in infos)
    assert any(wv.whatif_sentence(PENGUIN, hdp.Beta(2, 3), thr, shift) == i for i in infos), infos
    spec = next(json.loads(c.spec) for c in at.get("plotly_chart") if c.key == "sim_wi_chart")
    lines = {t["name"]: t["line"]["color"] for t in spec["data"]}
    assert lines["TableMean"] == METHOD_COLORS["TableMean"] != lines["ADPM"]
    assert not [s for s in at.success if "ADPM" in s.value]  # a fact, not good news


def test_whatif_controls_in_real_units(app):
    at = sim(app, PENGUIN, sim_real="true", sim_lo="2700", sim_hi="6300")
    turn_on(at)
    at.number_input(key="sim_wi_eps").set_value(0.5).run()
    at.number_input(key="sim_wi_shift_real").set_value(-900.0).run()
    ok(at)
    df = whatif_table(at)
    ref = wv.whatif_rows(
        PENGUIN, hdp.Beta(2, 3), 0.5, -900.0, 2700, 6300, wv.whatif_methods(hdp.METHODS, 3)
    )
    assert list(df["Bias (table)"]) == pytest.approx([r[wv.BIAS] for r in ref])
    adpm = df[df["Method"] == "ADPM (optimal)"]["Bias (table)"].iloc[0]
    tm = df[df["Method"] == "TableMean (the table's own mean)"]["Bias (table)"].iloc[0]
    assert adpm > 100 and abs(tm) < adpm / 5  # ADPM leans towards the public species
    caps = [c.value for c in at.caption]
    assert any("of the users are stricter than eps = 0.5" in c for c in caps), caps


def test_shift_is_clamped_to_the_range_when_the_distribution_changes(app):
    at = sim(app, PENGUIN)
    turn_on(at)
    at.number_input(key="sim_wi_shift").set_value(-0.4).run()  # Beta(2, 3): down to -0.4
    at.number_input(key="sim_a").set_value(20.0).run()  # mean 0.87 - 0.5: down to -0.87
    ok(at)
    at.number_input(key="sim_b").set_value(1.0).run()  # Beta(20, 1): mean 0.452, low -0.952
    ok(at)
    at.number_input(key="sim_a").set_value(0.2).run()  # Beta(0.2, 1): mean -0.333, low -0.167
    ok(at)
    low, _ = wv.shift_limits(hdp.Beta(0.2, 1.0))
    assert at.number_input(key="sim_wi_shift").value == pytest.approx(low)


@pytest.mark.parametrize("kind", ["tiered_huge", "all_public", "with_zeros", "all_zero"])
def test_whatif_every_profile_kind(app, kind):
    at = sim(app, PROFILE_KINDS[kind]())
    turn_on(at)
    df = whatif_table(at)
    assert df is not None and "TableMean (the table's own mean)" in list(df["Method"])


def test_tablemean_opt_in_in_the_main_table(app):
    at = sim(app, PENGUIN)
    names = list(results_table(at)["Method"])
    assert len(names) == 6 and not any("TableMean" in n for n in names)  # the paper's six
    at.multiselect(key="sim_methods").select("TableMean").run()
    ok(at)
    df = results_table(at)
    assert list(df["Method"])[-1] == "TableMean (the table's own mean)"
    exact = df[df["Method"] == "TableMean (the table's own mean)"]["Exact MSE"].iloc[0]
    assert exact == pytest.approx(hdp.get_method("TableMean", PENGUIN).exact_mse(hdp.Beta(2, 3)))
    hist = at.multiselect(key="sim_hist")
    assert "TableMean" in hist.options
    hist.select("TableMean").run()
    ok(at)
    spec = next(json.loads(c.spec) for c in at.get("plotly_chart") if c.key == "sim_hist_chart")
    assert any(t.get("name", "").startswith("TableMean") for t in spec["data"])
    # adding TableMean never changes the six (fixed noise streams)
    res = hdp.simulate_mse(hdp.METHODS, PENGUIN, hdp.Beta(2, 3), trials=500, seed=0)
    adpm = df[df["Method"] == "ADPM (optimal)"]["Simulated MSE"].iloc[0]
    assert adpm == pytest.approx(res["ADPM"].mse, rel=1e-12)


# ---- Tier designer ----------------------------------------------------------------------------
def designer(app):
    at = app
    at.run()
    at.switch_page("pages/tier_designer.py").run()
    return ok(open_sections(at))


def target_cards(at):
    return {m.label: m for m in at.metric if m.label in wv.TARGET_LABELS.values()}


def test_designer_both_targets_and_k_releases(app):
    at = designer(app)
    menu = at.session_state["td_menu"]
    unit = f" {menu.unit}" if menu.unit else ""
    cards = target_cards(at)
    one = wv.menu_release_errors(menu, 1)
    assert cards[wv.TARGET_LABELS["population"]].value == f"± {one.population:.4g}{unit}"
    assert cards[wv.TARGET_LABELS["table"]].value == f"± {one.table:.4g}{unit}"
    caps = [c.value for c in at.caption]
    assert explain.TARGET_POPULATION_TEXT in caps and explain.TARGET_TABLE_TEXT in caps

    at.number_input(key="td_releases").set_value(12).run()
    ok(at)
    cards = target_cards(at)
    # independent: the menu's tiers with every level divided by 12, by hand
    prof = hdp.EpsilonProfile.from_tiers([t.eps / 12 for t in menu.tiers], list(menu.counts))
    sd = None if menu.data_sd is None else hdp.design.tuned_sd(menu)
    # plus every rounding the release makes (hdp_core.rounding, issue 31)
    lo, hi = menu.low, menu.high
    pop = release_half_width(expected_error_95(prof, "population", sd), 1.0, lo, hi)
    tab = release_half_width(expected_error_95(prof, "table"), 1.0, lo, hi)
    assert cards[wv.TARGET_LABELS["population"]].value == f"± {pop:.4g}{unit}"
    assert cards[wv.TARGET_LABELS["table"]].value == f"± {tab:.4g}{unit}"
    for m in cards.values():
        assert "one release" in m.delta  # more releases, larger error (the colour: views tests)
    assert any("eps / 12" in m.value for m in at.markdown)
    preview = next(c.value for c in at.code if c.language == "json")
    t = json.loads(preview)["results"]["targets"]
    assert t["releases"] == 12
    assert t["error_95_each_release"]["population"] == pytest.approx(pop)
    assert t["error_95_each_release"]["table"] == pytest.approx(tab)
    assert t["error_95_one_release"]["table"] == pytest.approx(one.table)


def test_designer_releases_bounds(app):
    at = designer(app)
    ni = at.number_input(key="td_releases")
    assert ni.min == 1 and ni.max == 52 and ni.value == 1
    assert "12 for a monthly report" in ni.help


def test_histogram_keeps_working_when_tablemean_is_removed(app):
    at = sim(app, PENGUIN)
    at.multiselect(key="sim_methods").select("TableMean").run()
    at.multiselect(key="sim_hist").select("TableMean").run()
    ok(at)
    at.multiselect(key="sim_methods").unselect("TableMean").run()
    ok(at)
    assert "TableMean" not in at.multiselect(key="sim_hist").value


def test_whatif_on_a_profile_too_wide_to_simulate(app):
    """The exact-only path (no simulation) still offers the what-if; SM is left out (too many
    entries for its exact moments) and the page says so."""
    import numpy as np

    wide = hdp.EpsilonProfile.from_values(np.exp(np.random.default_rng(3).uniform(-3, 3, 300_000)))
    at = sim(app, wide)
    assert [w.value for w in at.warning if "too many to simulate" in w.value]
    turn_on(at)
    df = whatif_table(at)
    names = list(df["Method"])
    assert "TableMean (the table's own mean)" in names and not any(
        n.startswith("SM") for n in names
    )
    assert any("SM is left out here" in c.value for c in at.caption)


@pytest.mark.parametrize("bad", ["0", "53", "1e400", "abc", "2.5"])
def test_designer_bad_releases_in_the_link_are_dropped(app, bad):
    app.query_params["td_releases"] = bad
    at = designer(app)
    assert at.number_input(key="td_releases").value == 1
    assert "td_releases" not in at.query_params


def test_designer_releases_from_the_link(app):
    app.query_params["td_releases"] = "12"
    at = designer(app)
    assert at.number_input(key="td_releases").value == 12
    assert any("eps / 12" in m.value for m in at.markdown)
