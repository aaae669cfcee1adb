"""Tour page (AppTest, issue 23): five steps, each with its title, sentences, live controls and
the chart and numbers it names; previous/next; the step and the controls in the link; the
current profile untouched. Oracles: the two-group closed forms (tau* = eps1 + 8/(n1 eps1)
when the loose group is capped, Theorem 2's f in exact arithmetic), never the page's output.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from helpers import ok, open_page, widget

from hdp_app.common import PROFILE
from hdp_app.views import tour

TITLES = [
    "1. Who saturates",
    "2. Privacy for free",
    "3. The bound gap",
    "4. The simulation",
    "5. A tier menu",
]
CHARTS = {1: 1, 2: 0, 3: 1, 4: 1, 5: 1}  # plotly charts per step (step 2: cards and a table)


def _open(app, **params):
    for k, v in params.items():
        app.query_params[k] = v
    return open_page(app, "tour")


def _step(at) -> int:
    return int(widget(at, "segmented_control", "tour_step").value)


def _title(at) -> str:
    return next(h.value for h in at.subheader)


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.main.metric}


def _f_two_groups(n1: int, e1: Fraction, n2: int, r2: Fraction) -> Fraction:
    """Theorem 2's f for n1 users at e1 and n2 granted r2 (exact)."""
    l1 = n1 * e1 + n2 * r2
    l2 = n1 * e1 * e1 + n2 * r2 * r2
    return (l2 + 8) / (4 * l1 * l1)


@pytest.mark.parametrize("index", [1, 2, 3, 4, 5])
def test_each_step_from_a_link(app, index):
    at = _open(app, tour_step=str(index))
    ok(at)
    assert _step(at) == index and _title(at) == TITLES[index - 1]
    want = tour.tour_step(index)
    shown = [m.value for m in at.markdown]
    for sentence in want.sentences:
        assert sentence in shown
    metrics = _metrics(at)
    # one row of cards, none with a delta (no arrow that reads as an increase), no label twice
    assert list(metrics) == list(want.card_labels()) and len(at.main.metric) == len(metrics)
    assert not any(m.delta for m in at.main.metric)
    for label in want.card_labels():
        assert metrics[label] == tour.number_text(label, want.numbers[label])
    assert len(at.get("plotly_chart")) == CHARTS[index]
    keys = {s.key for s in at.get("select_slider")}
    assert keys == {c.key for c in want.controls}
    for s in at.get("select_slider"):
        assert s.help and s.value == pytest.approx(tour.tour_defaults()[s.key])
    # the default example, by hand: 900 users at 0.1 and 100 at 5 (capped at tau*)
    tau = Fraction(1, 10) + Fraction(8) / (900 * Fraction(1, 10))
    if index == 1:
        assert metrics["tau*"] == f"{float(tau):.4g}" and metrics["users capped"] == "100"
        assert "100 users (10% of all) are capped at τ* = 0.1889." in shown
    if index == 2:
        assert metrics["times more privacy"] == f"{float(5 / tau):.4g}"
        assert at.dataframe[0].value["users"].sum() == 1000
    if index == 3:
        f = _f_two_groups(900, Fraction(1, 10), 100, tau)
        assert metrics["ADPM worst case f ∧ 1/4"] == f"{float(f):.3e}"
    if index == 4:
        spec = at.get("plotly_chart")[0].spec
        assert all(m in spec for m in ("ADPM", "PropDPM", "UNI"))
        assert any(c.value.startswith("1,000 trials") for c in at.caption)
    if index == 5:
        f = _f_two_groups(900, Fraction(1, 10), 100, tau)
        # worst-case RMSE in USD on a 0-500 range: 500 sqrt(f)
        assert metrics["ADPM RMSE (USD, data 0 to 500)"] == f"{500 * math.sqrt(f):.4g}"
        # the tiers are introduced before they are named, every USD figure with its range
        intro = "The same two groups as a product's menu of two tiers: **Strict** (eps 0.1, "
        assert any(t.startswith(intro + "90% of the users) and **Relaxed**") for t in shown)
        assert all("between 0 and 500 USD" in t for t in shown if "RMSE" in t)


def test_previous_and_next_walk_the_five_steps(app):
    at = _open(app)
    ok(at)
    assert _step(at) == 1 and widget(at, "button", "tour_prev").disabled
    seen = [_title(at)]
    for i in range(2, 6):
        widget(at, "button", "tour_next").click().run()
        ok(at)
        assert _step(at) == i
        seen.append(_title(at))
    assert seen == TITLES
    assert widget(at, "button", "tour_next").disabled
    widget(at, "button", "tour_prev").click().run()
    assert _step(at) == 4 and _title(at) == TITLES[3]


def test_a_control_moved_in_one_step_carries_to_the_next_and_into_the_link(app):
    at = _open(app)
    widget(at, "select_slider", "tour_n").set_value(5000.0).run()
    widget(at, "select_slider", "tour_eps2").set_value(0.16).run()
    ok(at)
    n1 = 4500
    thr = 0.1 + 8 / (n1 * 0.1)  # 0.1178: eps2 = 0.16 is capped
    assert _metrics(at)["tau*"] == f"{thr:.4g}" and _metrics(at)["users capped"] == "500"
    widget(at, "button", "tour_next").click().run()
    ok(at)
    assert widget(at, "select_slider", "tour_eps2").value == pytest.approx(0.16)
    assert _metrics(at)["times more privacy"] == f"{0.16 / thr:.4g}"
    widget(at, "button", "tour_next").click().run()  # step 3 shows n again
    assert widget(at, "select_slider", "tour_n").value == 5000
    qp = {k: v if isinstance(v, str) else v[0] for k, v in at.query_params.items()}
    assert (qp["tour_step"], qp["tour_n"], qp["tour_eps2"]) == ("3", "5,000", "0.16")


def test_a_shared_link_opens_the_step_with_its_values(app):
    at = _open(app, tour_step="2", tour_n="5,000", tour_eps2="0.16", tour_share="50%")
    ok(at)
    assert _step(at) == 2
    assert widget(at, "select_slider", "tour_eps2").value == pytest.approx(0.16)
    thr = 0.1 + 8 / (2500 * 0.1)  # n = 5000 at share 50%, though step 2 shows neither
    assert _metrics(at)["tau*"] == f"{thr:.4g}"


@pytest.mark.parametrize("bad", ["lots", "-3", "1e9", "nan"])
def test_a_bad_link_value_starts_at_the_default(app, bad):
    at = _open(app, tour_step="1", tour_n=bad)
    ok(at)
    assert widget(at, "select_slider", "tour_n").value == 1000


def test_the_tour_never_changes_the_current_profile(app):
    at = _open(app)
    before = at.session_state[PROFILE]
    users = next(m.value for m in at.sidebar.metric if m.label == "Users n")
    widget(at, "select_slider", "tour_n").set_value(100_000.0).run()
    for _ in range(4):
        widget(at, "button", "tour_next").click().run()
    ok(at)
    assert at.session_state[PROFILE] is before
    assert next(m.value for m in at.sidebar.metric if m.label == "Users n") == users
    assert any("not your profile" in m.value for m in at.markdown)


@pytest.mark.parametrize("bad", ["9", "0", "two", "1.5"])
def test_a_bad_step_in_the_link_opens_step_1(app, bad):
    at = _open(app, tour_step=bad)
    ok(at)
    assert _step(at) == 1 and _title(at) == TITLES[0]
