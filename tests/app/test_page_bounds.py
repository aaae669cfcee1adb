"""Bounds page (AppTest): every control, several kinds of profile, no exception anywhere, and
the numbers on screen against closed forms and direct core calls on the swept profile."""

from __future__ import annotations

import json
import math

import pytest
from helpers import PROFILE_KINDS, metric, ok, shown, widget
from helpers import show as _show

import hdp_core as hdp
from hdp_app.common import PROFILE

INF = math.inf

PROFILES = PROFILE_KINDS


def show(app, prof, page="bounds"):
    """Run the app, make ``prof`` current through session state, open ``page``."""
    return _show(app, prof, page)


def g(x: float) -> str:
    """The page's short number format (3 significant digits, or 3 in scientific notation)."""
    if math.isinf(x):
        return "∞"
    return f"{x:.3g}" if 1e-3 <= abs(x) < 1e4 or x == 0 else f"{x:.2e}"


def u(x: float, unit: str = "USD") -> str:
    """The page's format for numbers in data units, with the unit (the Tier designer's
    default menu's, USD, unless a menu of the session says otherwise)."""
    return (f"{round(x):,}" if abs(x) >= 100 else f"{x:.4g}") + f" {unit}"


def sweep_traces(at) -> list[str]:
    spec = json.loads(at.get("plotly_chart")[1].spec)
    return [t.get("name", "") for t in spec["data"]]


@pytest.mark.parametrize("kind", list(PROFILES))
def test_page_renders_for_every_kind_of_profile(app, kind):
    prof = PROFILES[kind]()
    at = show(app, prof)
    ok(at)
    assert len(at.get("plotly_chart")) == 3  # at a glance, the sweep, the scatter
    up, lo_b = hdp.upper_bound(prof), hdp.lower_bound(prof)
    assert metric(at, "ADPM worst-case MSE f ∧ 1/4") == g(up)
    assert metric(at, "Lower bound (H ∧ 1/4)/512") == g(lo_b)
    assert metric(at, "Gap: upper / lower") == g(up / lo_b)
    assert metric(at, "At the marker") == "c = 1"
    assert metric(at, "ADPM worst case") == g(up)  # the marker starts on the profile itself


def test_single_level_numbers_match_closed_forms(app):
    n, eps = 1000, 0.05
    at = show(app, hdp.EpsilonProfile.from_tiers([eps], [n]))
    ok(at)
    f = (n * eps**2 + 8) / (4 * n**2 * eps**2)  # Theorem 2 for one level
    i_star = round(1 / (2 * eps**2))  # D(i) = i^2 eps^2 + n - i is smallest near 1/(2 eps^2)
    h = 1 / min((n - i) + i * i * eps * eps for i in (i_star - 1, i_star, i_star + 1))
    assert metric(at, "ADPM worst-case MSE f ∧ 1/4") == g(min(f, 0.25))
    assert metric(at, "Lower bound (H ∧ 1/4)/512") == g(min(h, 0.25) / 512)
    assert metric(at, "f / H") == g(f / h)
    # RMSE in data units for the default range, the Tier designer's default menu's 0..500 USD
    assert metric(at, "ADPM worst-case RMSE") == u(math.sqrt(f) * 500)


def test_scale_slider_moves_the_marker(app):
    prof = hdp.preset("two_groups")
    at = show(app, prof)
    widget(at, "slider", "bnd_scale").set_value(1.0).run()
    ok(at)
    assert metric(at, "At the marker") == "c = 10"
    scaled = prof.scaled(10.0)
    assert metric(at, "ADPM worst case") == g(hdp.upper_bound(scaled))
    assert metric(at, "Lower bound") == g(hdp.lower_bound(scaled))
    assert metric(at, "tau* there") == g(hdp.saturation_level(scaled))
    widget(at, "slider", "bnd_scale").set_value(-2.4).run()
    ok(at)
    scaled = prof.scaled(10**-2.4)
    assert metric(at, "ADPM worst case") == g(hdp.upper_bound(scaled))
    # the sweep's own numbers were computed once: the selected point sits on the curve
    spec = json.loads(at.get("plotly_chart")[1].spec)
    marker = next(t for t in spec["data"] if t.get("name") == "selected point")
    assert marker["x"][0] == pytest.approx(10**-2.4, rel=1e-9)
    assert marker["y"][0] == pytest.approx(hdp.upper_bound(scaled), rel=1e-9)


def test_marker_sentence_when_adpm_answers_the_midrange(app):
    """Where ADPM's worst case is capped at 1/4 (it answers the middle of the range), the
    sentence says so instead of a ratio of a capped and an uncapped MSE."""
    prof = hdp.preset("two_groups")
    at = show(app, prof)
    widget(at, "slider", "bnd_scale").set_value(-3.0).run()
    ok(at)
    scaled = prof.scaled(10**-3.0)
    assert hdp.upper_bound(scaled) == 0.25  # capped: the case under test
    worst = {m: hdp.get_method(m, scaled).worst_case_mse for m in hdp.METHODS if m != "ADPM"}
    best = min(worst, key=worst.__getitem__)
    text = " ".join(shown(c.value) for c in at.caption)
    assert "ADPM answers the middle of the range" in text
    assert f"The best baseline, {best}, has {g(worst[best])}" in text
    assert ("worse than not using the data at all" in text) == (worst[best] > 0.25)
    assert "× ADPM's worst case" not in text
    widget(at, "slider", "bnd_scale").set_value(1.0).run()  # c = 10: an ordinary ratio
    text = " ".join(shown(c.value) for c in at.caption)
    assert "× ADPM's worst case" in text and "middle of the range" not in text


def test_n_mode_and_its_slider(app):
    prof = hdp.preset("two_groups")
    at = show(app, prof)
    widget(at, "radio", "bnd_mode").set_value("Number of users").run()
    ok(at)
    assert metric(at, "At the marker") == "n = 1,000 users"
    widget(at, "slider", "bnd_n").set_value(2.0).run()
    ok(at)
    assert metric(at, "At the marker") == "n = 100,000 users"
    big = prof.with_n(100_000)
    assert metric(at, "ADPM worst case") == g(hdp.upper_bound(big))
    assert metric(at, "Lower bound") == g(hdp.lower_bound(big))
    widget(at, "slider", "bnd_n").set_value(-3.0).run()  # 1000 / 1000 = 1 user
    ok(at)
    assert metric(at, "At the marker") == "n = 1 users"
    assert metric(at, "ADPM worst case") == g(hdp.upper_bound(prof.with_n(1)))


def test_toggles_change_the_sweep_chart(app):
    at = show(app, hdp.paper_profile("high", 200, seed=3))
    names = sweep_traces(at)
    for m in ("PropDPM", "LDPE", "SM", "FME", "UNI"):
        assert f"{m} worst case" in names
    assert any(n.startswith("≈ 1/(4n)") for n in names)
    widget(at, "toggle", "bnd_baselines").set_value(False).run()
    ok(at)
    names = sweep_traces(at)
    assert not any(n.endswith("worst case") and not n.startswith("ADPM") for n in names)
    widget(at, "toggle", "bnd_guides").set_value(False).run()
    ok(at)
    assert not any(n.startswith("≈") for n in sweep_traces(at))


def test_data_range_inputs(app):
    prof = hdp.preset("two_groups")
    at = show(app, prof)
    widget(at, "number_input", "bnd_lo").set_value(-50.0).run()
    widget(at, "number_input", "bnd_hi").set_value(150.0).run()
    ok(at)
    sol = hdp.adpm(prof)
    assert metric(at, "ADPM worst-case RMSE") == u(math.sqrt(sol.worst_case_mse) * 200)
    assert metric(at, "of which Laplace noise scale") == u(sol.noise_scale * 200)
    table = at.table[0].value  # one row per method: a static table (issue 23)
    assert list(table["method"]) == list(hdp.METHODS)
    assert table["worst-case RMSE"].iloc[0] == u(math.sqrt(sol.worst_case_mse) * 200)
    assert table["Laplace noise scale"].iloc[0] == u(sol.noise_scale * 200)
    assert not at.dataframe  # nothing on this page scrolls
    # a range with low >= high is refused with a message, not a traceback
    widget(at, "number_input", "bnd_hi").set_value(-50.0).run()
    assert not at.exception
    assert any("range" in e.value for e in at.error)
    assert at.session_state[PROFILE] is prof  # the profile is kept


def test_use_the_uploaded_data_range(app):
    prof = hdp.EpsilonProfile.from_values([0.1, 0.5, 1.0, INF], data=[12.0, 40.0, 33.0, 95.5])
    at = show(app, prof)
    ok(at)
    widget(at, "button", "bnd_use_data_range").click().run()
    ok(at)
    assert widget(at, "number_input", "bnd_lo").value == 12.0
    assert widget(at, "number_input", "bnd_hi").value == 95.5
    sol = hdp.adpm(prof)
    assert metric(at, "ADPM worst-case RMSE") == u(math.sqrt(sol.worst_case_mse) * 83.5)


def test_scatter_metrics_and_current_point(app):
    prof = hdp.paper_profile("low", 300, seed=4)
    at = show(app, prof)
    ok(at)
    ratio = hdp.optimality_ratio(prof)
    assert metric(at, "Current profile f/H") == g(ratio)
    spec = json.loads(at.get("plotly_chart")[2].spec)
    star = next(t for t in spec["data"] if t.get("name") == "current profile")
    sol = hdp.adpm(prof)
    assert star["x"][0] == pytest.approx(math.log(sol.objective), rel=1e-12)
    assert star["y"][0] == pytest.approx(math.log(hdp.lower_bound_H(prof)), rel=1e-12)
    assert int(metric(at, "Sequences with f/H > 4").split()[0]) >= 0


def test_query_params_seed_the_controls(app):
    """A shared link opens the page with its sweep settings."""
    app.query_params["bnd_mode"] = "Number of users"
    app.query_params["bnd_n"] = "1.0"
    app.query_params["bnd_hi"] = "500.0"
    app.switch_page("pages/bounds.py").run()
    ok(app)
    assert widget(app, "radio", "bnd_mode").value == "Number of users"
    assert widget(app, "slider", "bnd_n").value == pytest.approx(1.0)
    assert widget(app, "number_input", "bnd_hi").value == 500.0
    assert metric(app, "At the marker") == f"n = {10 * app.session_state[PROFILE].n:,} users"


def test_the_sweep_slider_is_kept_in_the_link(app):
    """The slider's position is in the link (written by the script, hdp_app.url.keep_in_link,
    not by the browser): left out at 10^0, kept across a visit to another page."""
    at = show(app, hdp.preset("two_groups"))
    assert "bnd_scale" not in at.query_params
    widget(at, "slider", "bnd_scale").set_value(-2.4).run()
    ok(at)
    assert float(at.query_params["bnd_scale"]) == pytest.approx(-2.4)
    assert metric(at, "At the marker") == f"c = {10**-2.4:.3g}"
    at.switch_page("pages/profile.py").run()
    at.switch_page("pages/bounds.py").run()
    ok(at)
    assert widget(at, "slider", "bnd_scale").value == pytest.approx(-2.4)
    assert metric(at, "At the marker") == f"c = {10**-2.4:.3g}"
    widget(at, "slider", "bnd_scale").set_value(0.0).run()
    assert "bnd_scale" not in at.query_params


def test_the_range_and_unit_are_the_tier_designers_menus(app):
    """Issue 31: the section starts from the range and unit of the session's Tier designer
    menu, and with that menu as the profile its "95% error" is the Tier designer's own
    (hdp_core.design.evaluate_menu: the same proven half-width, one meaning per number)."""
    from hdp_app.common import TD_MENU
    from hdp_core.design import evaluate_menu
    from hdp_core.menu import make_menu

    menu = make_menu(
        ["A", "B"], [0.5, 2.0], [70, 30], n_users=2000, low=100, high=1100, unit="EUR/month"
    )
    app.run()
    app.session_state[TD_MENU] = menu
    at = show(app, menu.to_profile())
    ok(at)
    assert widget(at, "number_input", "bnd_lo").value == 100.0
    assert widget(at, "number_input", "bnd_hi").value == 1100.0
    adpm = evaluate_menu(menu).errors["ADPM"]
    assert metric(at, "ADPM 95% error: ±") == u(adpm.half_width, "EUR/month")
    assert metric(at, "ADPM worst-case RMSE") == u(adpm.rmse, "EUR/month")
    assert any("from your Tier designer menu" in c.value for c in at.caption)
    assert at.table[0].value["95% error ±"].iloc[0] == u(adpm.half_width, "EUR/month")
