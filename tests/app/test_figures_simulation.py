"""hdp_app.figures.simulation: the figures carry the numbers they are given, in each method's
colour, and the histogram densities integrate to the share of estimates shown."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.figures import simulation as figs
from hdp_app.figures.style import METHOD_COLORS, METHOD_DASH
from hdp_app.views import simulation as simview
from hdp_core import experiments
from hdp_core.sweeps import group_sweep


@pytest.fixture(scope="module")
def results():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 0.7, math.inf], [300, 50, 20])
    return hdp.simulate_mse(
        hdp.METHODS, prof, hdp.Beta(2, 3), trials=2000, seed=1, return_estimates=True
    )


def test_mse_figure_points_error_bars_and_colours(results):
    rows = simview.simulation_rows(results, ["UNI", "ADPM", "SM"])
    fig = figs.mse_figure(rows)
    dots = fig.data[:3]
    assert [t.name for t in dots] == ["ADPM", "SM", "UNI"]
    for t, m in zip(dots, ["ADPM", "SM", "UNI"]):
        r = results[m]
        assert t.y[0] == r.mse
        assert t.marker.color == METHOD_COLORS[m]
        assert t.y[0] + t.error_y.array[0] == pytest.approx(r.ci_high)
        assert t.y[0] - t.error_y.arrayminus[0] == pytest.approx(r.ci_low)
    exact = fig.data[3]
    assert list(exact.y) == [results[m].exact for m in ["ADPM", "SM", "UNI"]]
    assert fig.layout.yaxis.type == "log"


def test_histogram_densities_integrate_to_the_share_shown():
    rng = np.random.default_rng(0)
    est = {"ADPM": rng.normal(0.1, 0.01, 5000), "UNI": rng.laplace(0.1, 0.2, 5000)}
    edges, dens, outside = figs.estimate_histograms(est, bins=50, central=0.98, center=0.1)
    width = edges[1] - edges[0]
    for m, d in dens.items():
        inside = np.mean((est[m] >= edges[0]) & (est[m] <= edges[-1]))
        assert d.sum() * width == pytest.approx(inside, abs=1e-12)
        assert outside[m] == pytest.approx(1 - inside, abs=1e-12)
    # the range is set by the widest method's central 98%
    assert edges[0] == pytest.approx(np.quantile(est["UNI"], 0.01))
    assert edges[-1] == pytest.approx(np.quantile(est["UNI"], 0.99))
    assert outside["ADPM"] == 0.0
    # a constant answer (all public, constant data) still gets a valid range
    edges, dens, _ = figs.estimate_histograms({"ADPM": np.full(10, 0.2)}, center=0.2)
    assert edges[0] < 0.2 < edges[-1] and dens["ADPM"].sum() > 0


def test_estimates_figure_marks_the_true_mean(results):
    est = {m: results[m].estimates for m in ("ADPM", "UNI")}
    fig = figs.estimates_figure(est, -0.1)
    assert [t.name.split()[0] for t in fig.data] == ["ADPM", "UNI"]
    assert [t.line.color for t in fig.data] == [METHOD_COLORS["ADPM"], METHOD_COLORS["UNI"]]
    rmse = math.sqrt(np.mean((results["UNI"].estimates + 0.1) ** 2))
    assert f"±{rmse:.2g}" in fig.data[1].name
    assert any(s.x0 == -0.1 for s in fig.layout.shapes)


def test_sweep_figure_public_point_and_saturation_line():
    sat = simview.saturation_point(900, 0.1)
    vals = simview.sweep_eps_values(0.1, 100.0, 20, public=True, include=[sat])
    sw = group_sweep(900, 0.1, 100, vals, hdp.METHODS, hdp.TwoPoint(0.5))
    fig = figs.sweep_figure(sw, ["ADPM", "PropDPM", "LDPE"], sat, 900, 0.1, 100)
    lines = [t for t in fig.data if t.showlegend is not False]
    assert [t.name for t in lines] == ["ADPM", "PropDPM", "LDPE"]
    for t in lines:
        assert t.line.dash == METHOD_DASH[t.name] and t.line.color == METHOD_COLORS[t.name]
        assert np.allclose(10 ** np.asarray(t.x), vals[:-1])
        assert np.array_equal(np.asarray(t.y), sw.mse[t.name][:-1])
    pub = [t for t in fig.data if t.showlegend is False]
    assert [t.y[-1] for t in pub] == [sw.mse[m][-1] for m in ("ADPM", "PropDPM", "LDPE")]
    assert fig.layout.xaxis.ticktext[-1] == "public (∞)"
    assert fig.layout.xaxis.tickvals[-1] == pub[0].x[-1] > math.log10(100.0)
    assert any(s.x0 == pytest.approx(math.log10(sat)) for s in fig.layout.shapes)
    # LDPE is orders of magnitude above: the y window keeps the others readable
    lo, hi = fig.layout.yaxis.range
    assert hi - lo == pytest.approx(figs.SWEEP_DECADES + 0.1)
    assert 10**lo < sw.mse["ADPM"].min()
    assert any("LDPE" in a.text for a in fig.layout.annotations)


def test_paper_figure_from_table_rows():
    rows = [
        {
            "method": m,
            "paper_high": ph,
            "paper_low": pl,
            "exact_high": ph + 0.05,
            "exact_low": pl - 0.05,
            "sim_high": ph + 0.1,
            "sim_low": pl,
            "sim_high_lo": ph,
            "sim_high_hi": ph + 0.3,
            "sim_low_lo": -math.inf,
            "sim_low_hi": pl + 1,
        }
        for m, (ph, pl) in experiments.PAPER_TABLE1.items()
    ]
    fig = figs.paper_figure(rows)
    paper_high, sim_high = fig.data[0], fig.data[1]
    assert list(paper_high.y) == [v[0] for v in experiments.PAPER_TABLE1.values()]
    assert sim_high.error_y.array[0] == pytest.approx(0.2)
    assert sim_high.error_y.arrayminus[0] == pytest.approx(0.1)
    sim_low = fig.data[4]
    assert sim_low.error_y.arrayminus[0] == 0.0  # a CI down to MSE 0: no lower bar
