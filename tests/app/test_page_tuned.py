"""AppTest of the tuned-ADPM additions on the Saturation, Bounds and Tier designer pages
(issue 14). Numbers shown are checked against direct hdp_core calls and closed forms."""

from __future__ import annotations

import base64
import math

import numpy as np
import plotly.io as pio
import pytest
from helpers import ok, open_page, open_sections, show

import hdp_core as hdp
from hdp_app.figures.style import METHOD_COLORS
from hdp_app.views import tuned as tv
from hdp_core import design as D
from hdp_core import solvers as S

PROF = hdp.EpsilonProfile.from_tiers([0.1, 1.0, math.inf], [800, 150, 50])


def arr(v) -> np.ndarray:
    """A trace's x or y as floats (plotly sends numpy arrays as base64 typed arrays)."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).astype(float)
    return np.array([np.nan if e is None else e for e in v], dtype=float)


def chart(at, key_word: str):
    """The first chart whose title or a trace name contains ``key_word``, as a go.Figure."""
    for c in at.get("plotly_chart"):
        fig = pio.from_json(c.spec)
        title = fig.layout.title.text or ""
        if key_word in title or any(key_word in (t.name or "") for t in fig.data):
            return fig
    raise AssertionError(f"no chart with {key_word!r}")


def test_saturation_page_tau_against_spread(app):
    at = show(app, PROF, "saturation")
    ok(at)
    spec = chart(at, "assumed spread")
    _, tau = tv.tau_vs_spread(PROF)
    y = arr(spec.data[0].y)
    assert np.allclose(y[np.isfinite(tau)], tau[np.isfinite(tau)], rtol=1e-12)
    text = " ".join(m.value for m in at.markdown)
    assert "Saturation is a worst-case effect" in text
    at.number_input(key="sat_spread").set_value(0.05).run()
    ok(at)
    tau05 = hdp.adpm(PROF, data_sd=0.05).saturation_level
    assert f"tuned to s = 0.05 it is tau* = {tau05:.4g}" in " ".join(m.value for m in at.markdown)


def test_bounds_page_known_spread_adds_the_tuned_curve(app):
    at = show(app, PROF, "bounds")
    ok(at)
    with pytest.raises(AssertionError):
        chart(at, "ADPM tuned")
    at.toggle(key="bnd_tuned").set_value(True).run()
    at.number_input(key="bnd_spread").set_value(0.1).run()
    ok(at)
    spec = chart(at, "ADPM tuned to s = 0.1")
    tr = next(t for t in spec.data if "tuned" in (t.name or ""))
    assert tr.line.color == METHOD_COLORS["ADPM-tuned"]
    x = arr(tr.x)
    for xi, yi in zip(x[::7], arr(tr.y)[::7]):
        scaled = hdp.EpsilonProfile.from_tiers(*PROF.grouped()).scaled(float(xi))
        est = hdp.get_method("ADPM-tuned", scaled, data_sd=0.1)
        d = hdp.distributions.TwoPoint(0.5 + math.sqrt(0.25 - 0.01))  # sd 0.1
        expect = 0.25 if est.outputs_zero else min(est.exact_mse(d), 0.25)
        assert yi == pytest.approx(expect, rel=1e-9)
    assert any("ADPM tuned to s = 0.1" in c.value for c in at.caption)


def test_tier_designer_known_sd_uses_the_tuned_weights(app):
    at = open_sections(open_page(app, "tier_designer"), "target")
    ok(at)
    at.radio(key="td_spread").set_value("sd").run()
    at.number_input(key="td_sd").set_value(5.0).run()
    ok(at)
    m = at.session_state["td_menu"]
    assert m.data_sd == 5.0
    assert any("every number here is for ADPM tuned" in c.value for c in at.caption)
    # the solver's answer is the brute-force minimum with the tuned weights
    at.radio(key="td_metric").set_value("rmse").run()
    target = D.menu_error(m.with_n_users(5000), "rmse")
    at.number_input(key="td_target").set_value(target).run()
    at.radio(key="td_question").set_value("users").run()
    ok(at)
    ans = S.min_users(m, target, "rmse")
    assert D.menu_error(m.with_n_users(ans.value), "rmse") <= target
    assert D.menu_error(m.with_n_users(ans.value - 1), "rmse") > target
    shown = [x.value for x in at.metric if x.label.startswith("Minimum number of users")]
    assert shown == [f"{ans.value:,}"]
    assert at.radio(key="td_question").help == tv.SOLVER_HELP
