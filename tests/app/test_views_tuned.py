"""hdp_app.views.tuned and the tuned figures (issue 14). Oracles: exact_mse under TwoPoint
distributions (the closed forms of each estimator), the saturation closed form
tau* = (||eps_<||_2^2 + 2/s^2)/||eps_<||_1 for two tiers, and the sweep's own profiles built
independently with adpm."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.figures.bounds import sweep_figure
from hdp_app.figures.saturation import tau_spread_figure
from hdp_app.figures.simulation import spread_figure
from hdp_app.figures.style import METHOD_COLORS, METHOD_DASH
from hdp_app.views import tuned as tv
from hdp_core.distributions import TwoPoint
from hdp_core.sweeps import scale_sweep

PROF = hdp.EpsilonProfile.from_tiers([0.1, 1.0, math.inf], [800, 150, 50])


def test_palette_has_the_tuned_method():
    c = METHOD_COLORS["ADPM-tuned"]
    assert c == "#56B4E9"
    others = [v for k, v in METHOD_COLORS.items() if k != "ADPM-tuned"]
    assert c not in others and METHOD_DASH["ADPM-tuned"] not in [
        v for k, v in METHOD_DASH.items() if k != "ADPM-tuned"
    ]


@pytest.mark.parametrize("p", [0.5, 0.3, 0.9])
def test_spread_curve_agrees_with_exact_mse(p):
    """At the true spread of TwoPoint(p) (sd sqrt(p(1-p))) each curve is the estimator's exact
    MSE under that distribution."""
    d = TwoPoint(p)
    sd = math.sqrt(d.variance)
    c = tv.spread_curve(PROF, 0.2, [sd], mean=d.mean)
    for m in tv.CURVE_METHODS:
        assert c.mse[m][0] == pytest.approx(hdp.exact_mse(m, PROF, d, data_sd=0.2), rel=1e-12)


def test_spread_curve_tuned_is_best_at_its_spread():
    c = tv.spread_curve(PROF, 0.05)
    i = int(np.argmin(np.abs(c.true_sd - 0.05)))
    assert c.true_sd[i] == pytest.approx(0.05)
    assert c.mse["ADPM-tuned"][i] <= min(c.mse["ADPM"][i], c.mse["PropDPM"][i])
    j = int(np.argmin(np.abs(c.true_sd - 0.5)))
    assert c.mse["ADPM"][j] <= c.mse["ADPM-tuned"][j]  # at the worst case ADPM wins
    with pytest.raises(ValueError):
        tv.spread_curve(PROF, 0.2, [0.7])
    with pytest.raises(ValueError):
        tv.spread_curve(PROF, 0.0)


def test_tau_vs_spread_closed_form():
    """Two tiers n1 at e1, n2 at e2 >= saturation: tau*(s) = (n1 e1^2 + 2/s^2)/(n1 e1) while
    that is <= e2, else inf (nothing saturates without public users)."""
    n1, e1, n2, e2 = 500, 0.1, 500, 3.0
    prof = hdp.EpsilonProfile.from_tiers([e1, e2], [n1, n2])
    s, tau = tv.tau_vs_spread(prof, [0.5, 0.3, 0.1, 0.05])
    for si, ti in zip(s, tau):
        closed = (n1 * e1**2 + 2 / si**2) / (n1 * e1)
        if closed <= e2:
            assert ti == pytest.approx(closed, rel=1e-12)
        else:
            assert math.isinf(ti)
    s, tau = tv.tau_vs_spread(PROF)
    fin = tau[np.isfinite(tau)]
    assert np.all(np.diff(fin) <= 0)  # larger spread, earlier saturation
    text = tv.saturation_spread_sentence(PROF, 0.2)
    assert "worst-case effect" in text and f"{hdp.adpm(PROF).saturation_level:.4g}" in text


@pytest.mark.parametrize("mode", ["scale", "n"])
def test_tuned_sweep_mse(mode):
    x = np.array([0.1, 1.0, 10.0]) if mode == "scale" else np.array([10, 1000, 100000])
    y = tv.tuned_sweep_mse(PROF, mode, x, 0.1)
    for xi, yi in zip(x, y):
        p = PROF.scaled(float(xi)) if mode == "scale" else PROF.with_n(int(xi))
        est = hdp.get_method("ADPM-tuned", p, data_sd=0.1)
        d = TwoPoint(0.5 + math.sqrt(0.25 - 0.01))  # sd 0.1
        expect = 0.25 if est.outputs_zero else est.exact_mse(d)
        assert yi == pytest.approx(min(expect, 0.25), rel=1e-9)
    with pytest.raises(ValueError):
        tv.tuned_sweep_mse(PROF, "bad", x, 0.1)


def test_dip_note():
    assert tv.dip_note({"ADPM": 1.0, "PropDPM": 2.0}) is None
    t = tv.dip_note({"ADPM": 1.0, "PropDPM": 0.9, "ADPM-tuned": 0.8}, 0.2)
    assert "PropDPM has a lower" in t and "ADPM tuned to s = 0.2" in t and "beats them all" in t
    t = tv.dip_note({"ADPM": 1.0, "PropDPM": 0.9})
    assert "Switch on" in t
    t = tv.dip_note({"ADPM": 1.0, "PropDPM": 0.9, "SM": 0.95, "ADPM-tuned": 0.95}, 0.01)
    assert "have a lower" in t and "need not be the best" in t


def test_designer_note_and_help():
    from hdp_core import menu as M

    m = M.make_menu(["a"], [0.1], [100], 1000, 0, 500, "US$*", 5.0)
    note = tv.designer_spread_note(m)
    assert "s = 0.01" in note and "20000" in note and r"US\$\*" in note
    assert tv.designer_spread_note(M.make_menu(["a"], [0.1], [100], 1000)) is None
    assert "RMSE are exact" in tv.SOLVER_HELP and "half-width" in tv.SOLVER_HELP


def test_figures():
    c = tv.spread_curve(PROF, 0.2)
    fig = spread_figure(c)
    names = [t.name for t in fig.data]
    assert names == ["ADPM", "ADPM tuned to s = 0.2", "PropDPM"]
    assert fig.data[1].line.color == METHOD_COLORS["ADPM-tuned"]
    assert np.allclose(fig.data[1].y, c.mse["ADPM-tuned"])
    s, tau = tv.tau_vs_spread(PROF)
    f2 = tau_spread_figure(s, tau, 0.2)
    assert np.allclose(
        np.asarray(f2.data[0].y, dtype=float)[np.isfinite(tau)], tau[np.isfinite(tau)]
    )
    sw = scale_sweep(PROF, [0.1, 1.0, 10.0], methods=("ADPM",))
    y = tv.tuned_sweep_mse(PROF, "scale", sw.x, 0.2)
    f3 = sweep_figure(sw, "x", 1, (), None, tuned=(0.2, y))
    tr = [t for t in f3.data if t.name and "tuned" in t.name]
    assert len(tr) == 1 and np.allclose(tr[0].y, y)
    assert not [t for t in sweep_figure(sw, "x", 1).data if t.name and "tuned" in t.name]
