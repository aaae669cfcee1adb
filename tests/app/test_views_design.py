"""hdp_app.views.design: the Tier designer's widget values, cards, tables and sentences
(issue 20: what the page used to decide, unit-tested without Streamlit).

Oracles: the menu's own fields (round trips), hdp_core.design.evaluate_menu for the numbers a
card shows, counting and summing for tables, the paper's optimality of ADPM (Theorem 2: no
affine estimator has a smaller worst-case MSE) for the comparison cards, and the eps grid's
promise in its help text (about ten levels a decade, each step about x1.25).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from hdp_app.views import design as V
from hdp_app.views.formatting import plain
from hdp_core import design as D
from hdp_core import menu as M
from hdp_core import solvers as S

INF = math.inf

MENUS = [
    M.default_menu(),
    M.make_menu(["Strict", "Open", "Free"], [0.05, 2.0, INF], [70, 25, 5], 12_345, -5, 20, "km"),
    M.make_menu(["Solo"], [0.3], [100], 7, 0, 1, "", 0.1),
    M.make_menu(["A", "B"], [1.5, 4.0], [33.3333, 66.6667], 10**12, 0, 500, "USD", 100.0),
]


@functools.cache
def report(menu: M.Menu) -> D.MenuReport:
    """evaluate_menu, once per menu in this module (menus are frozen and hashable)."""
    return D.evaluate_menu(menu)


# widget values <-> menu ------------------------------------------------------------------------
@pytest.mark.parametrize("menu", MENUS)
def test_widget_values_read_back_as_the_same_menu(menu):
    vals = V.widget_values(menu)
    assert vals["td_k"] == menu.k and vals["td_n"] == menu.n_users
    assert vals["td_spread"] == ("worst" if menu.data_sd is None else "sd")
    back, note, error = V.menu_from_inputs(vals)
    assert error is None and note is None
    assert back == menu


def test_worst_case_menu_offers_a_quarter_of_the_range_as_sd():
    m = M.make_menu(["A"], [1.0], [100], 10, 10, 30, "")
    assert V.widget_values(m)["td_sd"] == 5.0  # (30 - 10) / 4


def test_inputs_with_shares_not_adding_up_are_scaled_with_a_note():
    vals = V.widget_values(MENUS[1]) | {"td_share_0": 35.0, "td_share_1": 12.5, "td_share_2": 2.5}
    menu, note, error = V.menu_from_inputs(vals)
    assert error is None and note is not None and "50" in note
    assert [t.share_percent for t in menu.tiers] == pytest.approx([70, 25, 5])


@pytest.mark.parametrize(
    "change",
    [{"td_name_1": "strict"}, {"td_n": 0}, {"td_lo": 30.0}, {"td_spread": "sd", "td_sd": 1e9}],
)
def test_bad_inputs_give_no_menu_and_an_error(change):
    menu, _, error = V.menu_from_inputs(V.widget_values(MENUS[1]) | change)
    assert menu is None and error
    assert V.input_error_text(error).startswith("Please fix the menu: ")


def test_stale_tier_keys_cover_every_tier_the_new_menu_lacks():
    keys = V.stale_tier_keys(2, 4)
    assert "td_name_1" not in keys and {"td_name_2", "td_eps_9", "td_share_3"} <= set(keys)
    assert len(keys) == 3 * (M.MAX_MENU_TIERS - 2)
    assert len(V.stale_tier_keys(1, M.MAX_MENU_TIERS + 2)) == 3 * (M.MAX_MENU_TIERS + 1)


def test_eps_grid_is_about_ten_levels_a_decade_each_about_x1_25():
    g = np.array(V.EPS_GRID)
    assert g[0] == pytest.approx(0.001) and g[-1] == 1000.0
    assert np.all(np.diff(g) > 0)
    per_decade = np.sum((g >= 1) & (g < 10))
    assert per_decade == 10
    ratios = g[1:] / g[:-1]
    assert ratios.max() < 1.34 and ratios.min() > 1.19
    assert math.exp(np.log(ratios).mean()) == pytest.approx(10**0.1, rel=1e-6)  # 1.259


def test_eps_options_hold_the_menu_levels_and_end_with_public():
    m = M.make_menu(["A", "B", "C"], [0.123, 7.0, INF], [30, 30, 40], 100)
    opts = V.eps_options(m)
    assert opts[-1] == INF and opts[:-1] == sorted(opts[:-1])
    assert 0.123 in opts and 7.0 in opts and set(V.EPS_GRID) <= set(opts)


# section 2 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("menu", MENUS)
def test_headline_cards_show_the_core_numbers(menu):
    rep = report(menu)
    cards = V.headline_metrics(menu, rep)
    u = f" {plain(menu.unit)}" if menu.unit else ""
    assert cards[0].value == f"± {rep.errors['ADPM'].half_width:.3g}{u}"
    assert cards[1].value == f"{rep.errors['ADPM'].rmse:.3g}{u}"
    assert cards[3].value == f"{int(rep.counts[rep.saturated].sum()):,}"
    capped = "Some tiers are capped now." in cards[2].help
    assert capped == bool(np.any(menu.levels > rep.tau_star))


@pytest.mark.parametrize("menu", MENUS)
def test_saturation_message_names_exactly_the_tiers_looser_than_tau(menu):
    rep = report(menu)
    kind, text = V.saturation_message(menu, rep)
    looser = [t.name for t in menu.tiers if t.eps > rep.tau_star]
    if looser:
        assert kind == "info" and f"**Saturated: {plain(', '.join(looser))}.**" in text
    else:
        assert kind == "info" and text.startswith("No tier is saturated")


@pytest.mark.parametrize("menu", MENUS)
def test_tier_table_rows_add_up(menu):
    rep = report(menu)
    t = V.tier_table(menu, rep)
    assert list(t["tier"]) == list(menu.names)
    assert sum(int(x.replace(",", "")) for x in t["users"]) == menu.n_users
    # shown to 4 significant digits: each cell within 0.005 of its value (>= 10%), so the
    # column adds up to 100 within 0.005 per tier
    for col in ("share %", "share of the estimate %"):
        assert sum(float(x) for x in t[col]) == pytest.approx(100, abs=0.005 * menu.k)
    assert (t["saturated"] != "no").sum() == int(np.sum(menu.levels > rep.tau_star))


@pytest.mark.parametrize("menu", MENUS[:2])
def test_method_cards_adpm_is_never_beaten(menu):
    rep = report(menu)
    colors = {"ADPM": "blue", "UNI": "orange", "PropDPM": "green"}
    cards = V.method_metrics(rep, "rmse", menu.unit, colors)
    assert cards[0].label.startswith("ADPM (")
    assert cards[0].delta is None and "blue" in cards[0].help
    for c, m in zip(cards[1:], ("UNI", "PropDPM")):
        # Theorem 2: ADPM's worst-case MSE is the smallest of any affine estimator
        assert rep.errors[m].rmse >= rep.errors["ADPM"].rmse * (1 - 1e-12)
        assert c.delta.endswith(" vs ADPM") and not c.delta.startswith("-")
        # grey exactly when the change reads '≈ 0%' (issue 23), else worse is red
        assert c.delta_color == ("off" if c.delta.startswith("≈ 0%") else "inverse")


def test_all_public_caption_and_default_target():
    m = MENUS[1]
    rep = report(m)
    assert f"{rep.all_public.rmse:.3g} km" in V.all_public_caption(rep, "rmse", m.unit)
    t = V.default_target(rep)
    assert t == pytest.approx(rep.errors["ADPM"].half_width / 2, rel=0.05)
    assert len(f"{t:g}".replace(".", "").replace("0", "")) <= 2  # two significant digits


# section 3 ------------------------------------------------------------------------------------
def test_answer_cards_and_notes():
    m = M.make_menu(["S", "O"], [0.1, 2.0], [90, 10], 2000, 0, 1, "")
    rep = report(m)
    users = S.solve(m, "users", rep.errors["ADPM"].rmse / 2, "rmse")
    cards = V.answer_metrics(users, m)
    n = int(users.value)
    assert cards[0].value == f"{n:,}" and cards[0].delta == f"{n - 2000:+,} vs now"
    assert cards[1].label == "Error there" and V.can_apply(users, m)
    assert V.applied_note(users, m) == f"Set the number of users to {n:,}."

    move = S.solve(m, "move", rep.errors["ADPM"].rmse * 0.9, "rmse", 0, 1)
    k = int(move.value)
    assert V.answer_metrics(move, m)[0].delta == f"{100 * k / 2000:.3g}% of all users"
    assert V.applied_note(move, m) == f"Moved {k:,} users from S to O." or k == 1

    level = S.solve(m, "level", rep.errors["ADPM"].rmse * 1.2, "rmse", 0)
    assert V.answer_metrics(level, m)[0].label == "Strictest eps for S"
    assert V.applied_note(level, m).startswith("Set S to eps = ")

    triv = S.solve(m, "users", 0.5, "rmse")
    assert V.answer_box(triv, m) == "info" and V.answer_metrics(triv, m) == []
    assert not V.can_apply(triv, m)
    for ans in (users, move, level, triv):  # the button shows exactly when apply has a menu
        assert V.can_apply(ans, m) == (ans.apply(m) is not None)


def test_solver_defaults_pick_the_loosest_tier_as_destination():
    m = M.make_menu(["A", "B", "C"], [1.0, INF, 0.1], [40, 20, 40], 100)
    assert V.solver_tier_defaults(m) == {"td_solve_tier": 0, "td_move_from": 0, "td_move_to": 1}


# section 4 ------------------------------------------------------------------------------------
def test_whatif_tiers_defaults_and_kept_choices():
    m = M.make_menu(["A", "B", "C"], [1.0, 0.1, 5.0], [40, 20, 40], 100)
    assert V.whatif_tiers(m, None, None) == (1, 2)  # strictest tier, then the last other
    assert V.whatif_tiers(m, 2, 0) == (2, 0)
    assert V.whatif_tiers(m, 2, 2) == (2, 1)  # B may not be A
    assert V.whatif_tiers(m, 7, 2) == (1, 2)  # a tier that no longer exists


def test_whatif_share_and_cards():
    m = M.make_menu(["A", "B", "C"], [0.1, 1.0, 5.0], [33.37, 16.63, 50], 1000, 0, 1, "u")
    start, both = V.whatif_share(m, 0, 1)
    assert both == pytest.approx(50.0) and start == 33.4
    rep = report(m)
    moved = D.evaluate_menu(D.move_share(m, 0, 1, 20.0))
    cards = V.whatif_metrics(m, rep, moved, "rmse", 0, 1, 20.0)
    assert cards[2].value == "20.0% / 30.0%"
    e_new, e_cur = moved.errors["ADPM"].rmse, rep.errors["ADPM"].rmse
    assert cards[0].value == f"{e_new:.3g} u"
    assert cards[0].delta == f"{e_new - e_cur:+.3g} u vs now"
    same = V.whatif_metrics(m, rep, rep, "rmse", 0, 1, start)
    assert same[0].delta is None  # no change: no delta (not rounding noise)


# section 5 and notes ----------------------------------------------------------------------------
def test_shareable_link_drops_the_old_query():
    q = [("menu", "abc"), ("goal", "rmse~1")]
    assert V.shareable_link("http://h:1/tier_designer?menu=old", "tier_designer", q) == (
        "http://h:1/tier_designer?menu=abc&goal=rmse~1"
    )
    assert V.shareable_link(None, "tier_designer", q) == "/tier_designer?menu=abc&goal=rmse~1"


def test_user_text_in_notes_is_plain():
    assert (
        V.removed_note("*x*")
        == f"Removed the tier {plain('*x*')}; the other shares were scaled to 100%."
    )
    kind, text = V.import_messages(None, "[a](b).json", "bad")
    assert kind == "error" and "[a]" not in text and text.endswith("The current menu is unchanged.")
    kind, text = V.import_messages(MENUS[1], "m.json")
    assert kind == "success" and "3 tiers" in text
    assert V.too_big_text(300 * 1024, 64 * 1024) == (
        "the file is 300 KB; a menu file is at most 64 KB"
    )


def test_as_profile_keeps_the_tiers_and_their_users():
    m = MENUS[1]
    prof, spec, label = V.as_profile(m)
    assert list(prof.counts) == list(m.counts) and list(prof.names) == list(m.names)
    assert spec["kind"] == "tiers" and sum(spec["counts"]) == m.n_users
    assert label.startswith("Tier menu: 3 tiers (Strict, Open, Free), 12,345 users")


def test_method_deltas_of_about_zero_are_grey():
    """Issue 23: a change of about 0% is neutral (grey), not red; a real difference keeps
    its colour. One tier: UNI, PropDPM and ADPM are the same estimator (equal weights, the
    same noise), so their errors are equal whatever the code computes."""
    one = M.make_menu(["Only"], [0.5], [100], 10_000, 0, 100, "USD")
    for metric in ("half_width", "rmse"):
        cards = V.method_metrics(
            report(one), metric, "USD", {m: "#000" for m in ("ADPM", "UNI", "PropDPM")}
        )
        rest = [c for c in cards if c.delta is not None]
        assert len(rest) == 2
        for c in rest:
            assert c.delta == "≈ 0% vs ADPM" and c.delta_color == "off"  # main: "inverse"
    two = M.make_menu(["S", "O"], [0.1, 2.0], [90, 10], 2000, 0, 100, "USD")
    cards = V.method_metrics(
        report(two), "rmse", "USD", {m: "#000" for m in ("ADPM", "UNI", "PropDPM")}
    )
    uni = next(c for c in cards if "UNI" in c.label)
    assert uni.delta.startswith("+") and uni.delta_color == "inverse"  # worse: red


def test_minimum_users_delta_tone():
    """Fewer users than now is good news (green), more is bad news (red)."""
    m = M.make_menu(["S", "O"], [0.1, 2.0], [90, 10], 2000, 0, 1, "")
    err = D.menu_error(m, "rmse")
    more = S.solve(m, "users", err / 2, "rmse")
    fewer = S.solve(m, "users", err * 2, "rmse")
    assert more.value > 2000 > fewer.value
    assert V.answer_metrics(more, m)[0].delta_color == "inverse"  # + users: red
    assert V.answer_metrics(fewer, m)[0].delta_color == "inverse"  # − users: green
    assert V.answer_box(more, m) == "warning" and V.answer_box(fewer, m) == "success"


@pytest.mark.parametrize(
    "menu",
    [
        M.default_menu(),
        M.make_menu(["p"], [100.0], [100], 4, 0, 1),
        M.make_menu(["s", "b", "p"], [0.05, 0.5, math.inf], [50, 40, 10], 3000, 0, 100, "", 8.0),
        M.make_menu(["s"], [0.3], [100], 50, 0, 10, "", 0.0),  # sd 0: tuned to SD_FLOOR
    ],
)
def test_one_95_error_on_the_tier_designer(menu):
    """Issue 21 item 3: section 2's ADPM 95% error and section 5's population figure at k = 1
    are one number from one function (intervals.expected_error_95), with no caption excusing a
    difference; the headline card shows it."""
    from hdp_app.views import whatif as wv
    from hdp_core import intervals as I

    rep = D.evaluate_menu(menu)
    sec2 = rep.errors["ADPM"].half_width
    sec5 = wv.menu_release_errors(menu, 1).population
    s = D.tuned_sd(menu)
    assert sec2 == sec5
    assert sec2 == pytest.approx(
        I.expected_error_95(menu.to_profile(), "population", s) * menu.width
    )
    assert V.headline_metrics(menu, rep)[0].value == f"± {V.fmt_err(sec5, menu.unit)}"
    assert not hasattr(wv, "TARGETS_NOTE")


def test_no_saturation_sentence_never_names_a_level_looser_than_public():
    """Found by a tester: with every tier public the page said 'A new tier looser than
    public would be capped'. Nothing is looser than public."""
    inf = float("inf")
    for menu in (
        M.make_menu(["Open"], [inf], [100], 1000),
        M.make_menu(["A", "B"], [inf, inf], [50, 50], 1000),
    ):
        kind, text = V.saturation_message(menu, D.evaluate_menu(menu))
        assert kind == "info" and text.startswith("No tier is saturated")
        assert "looser than public" not in text and "looser than ∞" not in text
        assert "no level, however loose, would be capped" in text
    # a finite cap is still named (100 users: nobody is saturated, a looser tier would be)
    menu = M.make_menu(["S", "M"], [0.1, 0.2], [50, 50], 100)
    rep = D.evaluate_menu(menu)
    assert not any(rep.saturated) and math.isfinite(rep.worth_offering)
    kind, text = V.saturation_message(menu, rep)
    assert "would be capped at that level" in text


def test_both_targets_answers_and_the_table_s_jump():
    """Issue 31: a 95% error target is answered for both targets, an RMSE target for the
    population mean only; each answer has its own "Apply" key. A table answer whose number of
    users is below the menu's while the menu as it is misses the target (95% public, 5% at
    eps 0.001: the first strict user brings a bias) is a warning, not good news."""
    from hdp_app.views import design_controls as T

    assert V.solver_metrics("half_width") == {"population": "half_width", "table": S.TABLE_METRIC}
    assert V.solver_metrics("rmse") == {"population": "rmse"}
    assert "population mean only" in V.TABLE_RMSE_NOTE
    keys = {T.apply_button(t)["key"] for t in ("population", "table")}
    assert keys == {"td_apply", "td_apply_table"}
    m = M.make_menu(["Open", "Strict"], [math.inf, 0.001], [95, 5], 1000, 0, 500, "USD", None)
    now = S.solve(m, "users", 250.0 / 2, S.TABLE_METRIC).now_error
    ans = S.solve(m, "users", now / 2, S.TABLE_METRIC)
    assert ans.value == 1 and ans.now_error > ans.target
    assert V.answer_box(ans, m) == "warning"
