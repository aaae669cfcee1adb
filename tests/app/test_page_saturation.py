"""Saturation page (AppTest): every control, several kinds of profile, no exception anywhere,
and the numbers on screen against closed forms (two groups: tau* = eps1 + 8/(n1 eps1))."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import PROFILE_KINDS, metric, ok, whole_frame, widget
from helpers import show as _show

import hdp_core as hdp
from hdp_app.common import PROFILE
from hdp_app.views import saturation as sat

INF = math.inf

PROFILES = PROFILE_KINDS


def show(app, prof, page="saturation"):
    """Run the app, make ``prof`` current through session state, open ``page``."""
    return _show(app, prof, page)


@pytest.mark.parametrize("kind", list(PROFILES))
def test_page_renders_for_every_kind_of_profile(app, kind):
    prof = PROFILES[kind]()
    at = show(app, prof)
    ok(at)
    charts = at.get("plotly_chart")
    usable = prof.n > prof.n_excluded
    # the curve, the phase diagram, the trace (nothing to trace if no data may be used) and
    # tau* against the assumed spread
    assert len(charts) == (4 if usable else 1)
    downloads = at.get("download_button")
    assert len(downloads) == (1 if usable else 0)
    if usable:
        assert downloads[0].label.startswith("Download")
        assert downloads[0].url.endswith(".csv")
    sol = hdp.adpm(prof)
    if usable:
        tau = metric(at, "Saturation level tau*")
        assert tau == (
            f"{sol.saturation_level:.4g}" if math.isfinite(sol.saturation_level) else "none"
        )
        assert metric(at, "Users capped at tau*") == f"{sol.n_saturated:,}"
        table = whole_frame(at)
        assert int(table["users"].sum()) == prof.n
        assert table["share of total weight"].sum() == pytest.approx(1.0, rel=1e-9)
    # a profile of more than 50 users gets the teaching example, smaller ones a toggle
    toggles = [t.key for t in at.toggle]
    assert ("sat_trace_example" in toggles) == (prof.n <= 50)


def test_two_groups_numbers_match_the_closed_form(app):
    at = show(app, hdp.preset("two_groups"))  # 900 users at 0.1, 100 at 1.0
    ok(at)
    tau = 0.1 + 8.0 / (900 * 0.1)
    assert metric(at, "Saturation level tau*") == f"{tau:.4g}"
    assert metric(at, "Users capped at tau*") == "100"
    assert metric(at, "They get") == f"{tau:.4g}"
    # the phase controls start from the profile: n = 1000, f = 0.9, eps1 = 0.1
    assert widget(at, "number_input", "sat_phase_n").value == 1000
    assert widget(at, "slider", "sat_phase_f").value == pytest.approx(0.9)
    assert widget(at, "select_slider", "sat_phase_eps1").value == pytest.approx(0.1)
    assert widget(at, "select_slider", "sat_phase_eps2").value == pytest.approx(1.0)
    assert metric(at, "The looser group saturates from eps2 =") == f"{tau:.4g}"
    assert any("**is capped** (100 users" in m.value for m in at.markdown)
    assert any(c.value.startswith("The star is your current profile") for c in at.caption)


def test_tiered_profile_with_huge_counts(app):
    prof = PROFILES["tiered_huge"]()
    at = show(app, prof)
    ok(at)
    tau = 0.1 + 8.0 / (10**12 * 0.1)
    assert metric(at, "Saturation level tau*") == f"{tau:.4g}"
    assert metric(at, "Users capped at tau*") == f"{10**11 + 10**6:,}"
    table = whole_frame(at)
    assert list(table["group"]) == ["Strict", "Relaxed", "Public"]
    assert list(table["users"]) == [10**12, 10**11, 10**6]
    np.testing.assert_allclose(table["granted eps"], [0.1, tau, tau], rtol=1e-12)


def test_phase_controls(app):
    at = show(app, hdp.paper_profile("high", 300, seed=2))
    ok(at)
    widget(at, "number_input", "sat_phase_n").set_value(5000).run()
    widget(at, "slider", "sat_phase_f").set_value(0.25).run()
    widget(at, "select_slider", "sat_phase_eps1").set_value(0.02).run()
    ok(at)
    want = 0.02 + 8.0 / (5000 * 0.25 * 0.02)
    assert metric(at, "The looser group saturates from eps2 =") == f"{want:.4g}"
    spec = at.get("plotly_chart")[1].spec
    assert "n = 5,000 users" in spec and "0.25" in spec


def _verdict(at) -> str:
    return next(m.value for m in at.markdown if "group 2 saturates when" in m.value)


def test_phase_levels_move_in_place_without_changing_the_profile(app):
    """Two level sliders (log grid over the diagram's range): the verdict and the point
    follow the remark's threshold eps1 + 8/(n1 eps1); the current profile stays."""
    prof = hdp.preset("two_groups")  # 900 users at 0.1, 100 at 1.0
    at = show(app, prof)
    ok(at)
    e2 = widget(at, "select_slider", "sat_phase_eps2")
    opts = list(e2.options)  # as shown: 2 significant digits, public last
    assert float(opts[0]) == pytest.approx(1e-3) and opts[-1] == "public (∞)"
    assert float(opts[-2]) == pytest.approx(1e2)
    assert "5" in opts and "0.1" in opts and "1" in opts  # a log grid a teacher reads
    thr = 0.1 + 8.0 / (900 * 0.1)  # 0.1889
    assert "**is capped**" in _verdict(at)
    e2.set_value(0.16).run()  # below the threshold: not capped
    ok(at)
    assert thr > 0.16 and "is **not** capped" in _verdict(at)
    assert any(c.value.startswith("The star is a what-if") for c in at.caption)
    spec = at.get("plotly_chart")[1].spec
    assert "what-if levels" in spec and "0.16" in spec
    widget(at, "select_slider", "sat_phase_eps1").set_value(0.01).run()
    ok(at)  # eps1 = 0.01: the threshold jumps to 0.01 + 8/(900 0.01) = 0.899
    assert f"{0.01 + 8 / (900 * 0.01):.3g}" in _verdict(at)
    widget(at, "select_slider", "sat_phase_eps2").set_value(math.inf).run()
    assert "**is capped**" in _verdict(at)  # public users always saturate
    # a what-if: the current profile is untouched
    assert at.session_state[PROFILE] is prof
    assert metric(at, "Saturation level tau*") == f"{thr:.4g}"
    help_ = widget(at, "select_slider", "sat_phase_eps2").help
    assert "smaller eps = more privacy" in help_.lower() and "does not change" in help_


def test_phase_levels_for_a_profile_that_is_not_two_groups(app):
    """Any profile: the sliders start at the medians of its stricter and looser halves."""
    prof = hdp.paper_profile("high", 300, seed=2)
    at = show(app, prof)
    ok(at)
    from hdp_app.views import tour

    start = tour.phase_state(prof)
    assert widget(at, "select_slider", "sat_phase_eps1").value == pytest.approx(start.eps1)
    assert widget(at, "select_slider", "sat_phase_eps2").value == pytest.approx(start.eps2)
    cap = next(c.value for c in at.caption if c.value.startswith("The star is a what-if"))
    assert "median levels of its stricter and looser halves" in cap
    assert "what-if levels" in at.get("plotly_chart")[1].spec


def test_trace_stepper_on_the_teaching_example(app):
    at = show(app, hdp.paper_profile("high", 300, seed=2))  # > 50 users: teaching example
    ok(at)
    e = np.sort(sat.teaching_example().levels)
    step = widget(at, "slider", "sat_trace_step")
    assert step.value == 1 and step.max == 50
    table = at.dataframe[-1].value
    assert len(table) == 1 and float(table.iloc[0, 1]) == pytest.approx(e[0], rel=1e-3)
    step.set_value(30).run()
    ok(at)
    assert len(at.dataframe[-1].value) == 30
    assert any(i.value.startswith("Step 30:") for i in at.info)
    widget(at, "button", "sat_trace_next").click().run()
    assert widget(at, "slider", "sat_trace_step").value == 31
    assert any(i.value.startswith("Step 31:") for i in at.info)
    widget(at, "button", "sat_trace_prev").click().run()
    widget(at, "button", "sat_trace_prev").click().run()
    ok(at)
    assert widget(at, "slider", "sat_trace_step").value == 29
    # the first saturated step says so, with tau* = the curve's saturation level
    trace = hdp.adpm_trace(sat.teaching_example())
    k = int(np.argmax(trace.saturated)) + 1
    widget(at, "slider", "sat_trace_step").set_value(k).run()
    text = next(i.value for i in at.info if i.value.startswith(f"Step {k}:"))
    assert "saturation!" in text
    # at the last step "Next" is disabled (it did nothing), at the first "Previous" is
    widget(at, "slider", "sat_trace_step").set_value(50).run()
    ok(at)
    assert widget(at, "button", "sat_trace_next").disabled
    assert not widget(at, "button", "sat_trace_prev").disabled
    assert widget(at, "slider", "sat_trace_step").value == 50
    assert at.dataframe[-1].value["step k"].iloc[0] == 50  # the table follows the step
    widget(at, "slider", "sat_trace_step").set_value(1).run()
    assert widget(at, "button", "sat_trace_prev").disabled


def test_trace_toggle_on_a_small_profile(app):
    prof = PROFILES["with_zeros"]()  # 7 users, 2 with eps = 0
    at = show(app, prof)
    ok(at)
    step = widget(at, "slider", "sat_trace_step")
    assert step.max == 5  # the two eps = 0 users are left out of the recursion
    step.set_value(5).run()
    ok(at)
    # the public user is the last step (top row), shown as a word, not "Infinity"
    assert at.dataframe[-1].value.iloc[0, 1] == "public (∞)"
    widget(at, "toggle", "sat_trace_example").set_value(True).run()
    ok(at)
    step = widget(at, "slider", "sat_trace_step")
    assert step.max == 50 and step.value == 5  # kept, as it is still in range
    widget(at, "slider", "sat_trace_step").set_value(40).run()
    widget(at, "toggle", "sat_trace_example").set_value(False).run()
    ok(at)
    step = widget(at, "slider", "sat_trace_step")
    assert step.max == 5 and step.value == 5  # clamped to the smaller profile


def test_step_beyond_a_new_smaller_profile_is_clamped(app):
    at = show(app, hdp.paper_profile("high", 300, seed=2))
    widget(at, "slider", "sat_trace_step").set_value(45).run()
    at.session_state[PROFILE] = hdp.EpsilonProfile.from_values([0.1, 0.2, 0.3, 5.0])
    at.run()
    ok(at)
    assert widget(at, "slider", "sat_trace_step").value <= 4


def test_single_user_profile_has_no_stepper(app):
    at = show(app, hdp.EpsilonProfile.from_values([0.3]))
    ok(at)
    assert not [s for s in at.slider if s.key == "sat_trace_step"]
    assert any(i.value.startswith("Step 1:") for i in at.info)


def test_large_profile_is_downsampled(app):
    prof = hdp.presets.log_uniform(30_000, math.exp(-4), math.exp(2))
    at = show(app, prof)
    ok(at)
    assert any("of 30,000 users are drawn" in c.value for c in at.caption)
    spec = at.get("plotly_chart")[0].spec
    assert len(spec) < 2_000_000  # thousands of points, not 30 000 per trace


def test_a_link_opens_the_walk_through_at_a_step(app):
    """The step (and the teaching-example toggle) are part of a shared link."""
    app.query_params["sat_trace_step"] = "12"
    app.switch_page("pages/saturation.py").run()  # the default profile: 1000 users
    ok(app)
    assert widget(app, "slider", "sat_trace_step").value == 12
    assert any(i.value.startswith("Step 12:") for i in app.info)
    assert len(app.dataframe[-1].value) == 12


def test_walk_through_jumps_to_saturation_and_shows_weights_and_why_eight(app):
    """The jump button lands on the first saturated step (exact arithmetic: step 25 of the
    teaching example); each step shows its weights w_i = r_i/||r||_1 (summing to 1) and the
    noise scale 1/||r||_1; why the constant is 8, on the step's own numbers; a tau* that is
    not the sidebar's is said to be so in the same sentence."""
    from fractions import Fraction

    prof = hdp.paper_profile("high", 300, seed=2)  # > 50 users: the teaching example
    at = show(app, prof)
    ok(at)
    jump = widget(at, "button", "sat_trace_jump")
    assert not jump.disabled
    jump.click().run()
    ok(at)
    assert widget(at, "slider", "sat_trace_step").value == 25
    assert widget(at, "button", "sat_trace_jump").disabled  # already there
    info = next(i.value for i in at.info if i.value.startswith("Step 25:"))
    t_cur = f"{hdp.adpm(prof).saturation_level:.4g}"
    assert "saturation!" in info and f"not the sidebar's τ* = {t_cur}" in info
    assert any("not the sidebar's" in m.value and "τ* = 1.325" in m.value for m in at.markdown)
    # weights after 25 steps, in exact arithmetic (Algorithm 1 on the sorted levels)
    e = sorted(Fraction(float(x)) for x in sat.teaching_example().levels if math.isfinite(x))
    r = [e[0]]
    for k in range(1, 25):
        r.append(min(e[k], (sum(x * x for x in r) + 8) / sum(r)))
    l1 = sum(r)
    text = next(m.value for m in at.markdown if m.value.startswith("If the estimate used"))
    assert f"‖r‖₁ = {float(l1):.4g}" in text and f"η = 1/‖r‖₁ = {float(1 / l1):.4g}" in text
    table = at.dataframe[-1].value
    w = table["weight wₖ now"].to_numpy()
    assert w.sum() == pytest.approx(1.0, rel=1e-12)
    np.testing.assert_allclose(w[::-1], [float(x / l1) for x in r], rtol=1e-12)
    # why 8: the expander holds the identity and this step's numbers
    eight = [m.value for m in at.expander[0].markdown] if at.expander else []
    assert any("Why the constant is 8" in x for x in eight)
    f = (sum(x * x for x in r) + 8) / (4 * l1 * l1)
    assert any(f"f = (‖r‖₂² + 8)/(4‖r‖₁²) = {float(f):.4g}" in x for x in eight)


def test_walk_through_on_the_current_profile_quotes_the_sidebar_tau(app):
    prof = hdp.EpsilonProfile.from_values([0.1, 0.2, 0.3, 5.0, 8.0])
    at = show(app, prof)
    ok(at)
    widget(at, "button", "sat_trace_jump").click().run()
    ok(at)
    k = widget(at, "slider", "sat_trace_step").value
    trace = hdp.adpm_trace(prof)
    assert k == int(np.argmax(trace.saturated)) + 1
    info = next(i.value for i in at.info if i.value.startswith(f"Step {k}:"))
    assert "sidebar" not in info  # the walk-through's tau* is the sidebar's
    assert f"τ* = {hdp.adpm(prof).saturation_level:.4g}" in info


def test_no_jump_when_nobody_saturates(app):
    at = show(app, hdp.EpsilonProfile.from_values([0.5, 0.6, 0.7]))
    ok(at)
    assert widget(at, "button", "sat_trace_jump").disabled
