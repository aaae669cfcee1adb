"""The Profile page's figure (hdp_app.figures.profile): the bars count the right users.

Oracles: counting by hand (a loop over a few levels), the profile's own counts and the
ADPM tau* passed in; positions checked against log10 of the levels.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.figures.profile import eps_ticks, level_histogram, profile_figure
from hdp_app.figures.style import PUBLIC_COLOR, SATURATION_COLOR


def _bars(fig, name=None):
    return [
        t
        for t in fig.data
        if t.type == "bar"
        and t.x is not None
        and t.x[0] is not None
        and (name is None or t.name == name)
    ]


def test_histogram_counts_every_level_in_its_bin():
    rng = np.random.default_rng(1)
    lv = np.exp(rng.uniform(-4, 2, 137))
    edges, heights = level_histogram(lv)
    assert heights.sum() == 137
    widths = np.diff(edges)
    assert np.allclose(widths, widths[0])
    by_hand = np.zeros(heights.size)
    for x in np.log10(lv):  # brute force: the last bin is closed on the right
        j = min(int((x - edges[0]) // widths[0]), heights.size - 1)
        by_hand[j] += 1
    assert np.array_equal(by_hand, heights)


def test_histogram_ignores_public_and_excluded_and_weights_counts():
    edges, heights = level_histogram(np.array([0.0, 0.5, math.inf, 2.0]), np.array([3, 4, 5, 6]))
    assert heights.sum() == 10  # 4 at 0.5 + 6 at 2
    edges, heights = level_histogram(np.array([0.3, 0.3]))
    assert heights.sum() == 2 and edges[0] < math.log10(0.3) < edges[-1]


def test_per_user_figure_counts_and_tau():
    prof = hdp.EpsilonProfile.from_values([0.1] * 40 + [0.5] * 7 + [math.inf] * 3 + [0.0] * 2)
    sol = hdp.adpm(prof)
    fig = profile_figure(prof, sol.saturation_level, sol.n_saturated)
    hist = _bars(fig, "users by asked eps")[0]
    assert sum(hist.y) == 47
    pub = _bars(fig, "public (∞)")[0]
    assert list(pub.y) == [3] and pub.marker.color == PUBLIC_COLOR
    assert list(_bars(fig, "eps = 0: data not used")[0].y) == [2]
    line = next(s for s in fig.layout.shapes if s.type == "line")
    assert line.x0 == pytest.approx(math.log10(sol.saturation_level))
    assert line.line.color == SATURATION_COLOR
    assert any(f"τ* = {sol.saturation_level:.4g}" in (t.name or "") for t in fig.data)
    assert not fig.layout.annotations  # labels in the legend: nothing to overlap or clip
    ticks = list(fig.layout.xaxis.ticktext)
    assert ticks[0] == "0 (not used)" and ticks[-1] == "public (∞)"
    # the public bar is to the right of every finite level and of tau*
    assert pub.x[0] > max(hist.x) and pub.x[0] > line.x0


def test_tier_figure_has_one_bar_per_tier_with_its_count():
    prof = hdp.preset("product_menu")
    sol = hdp.adpm(prof)
    fig = profile_figure(prof, sol.saturation_level, sol.n_saturated)
    tiers = [t for t in _bars(fig) if t.name in ("Strict", "Balanced", "Relaxed")]
    assert [t.y[0] for t in tiers] == [500_000, 300_000, 150_000]
    assert [t.x[0] for t in tiers] == pytest.approx([-1, math.log10(0.5), math.log10(2)])
    assert "500,000" in tiers[0].text[0]
    assert list(_bars(fig, "public (∞)")[0].y) == [50_000]
    assert fig.layout.yaxis.range[1] > 500_000  # room for the labels


def test_no_tau_line_when_nothing_saturates():
    prof = hdp.preset("paper_low")
    sol = hdp.adpm(prof)
    assert math.isinf(sol.saturation_level)
    fig = profile_figure(prof, sol.saturation_level, sol.n_saturated)
    assert not [s for s in fig.layout.shapes if s.type == "line"]


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        (-2, 1, ["0.01", "0.1", "1", "10"]),
        (-1.0, 0.5, ["0.1", "0.2", "0.5", "1", "2"]),
        (-1.3, -0.87, ["0.06", "0.07", "0.1"]),  # the paper's low-variance range
    ],
)
def test_ticks_are_labelled_in_eps(lo, hi, expected):
    vals, text = eps_ticks(lo, hi)
    for t in expected:
        assert t in text
    for v, t in zip(vals, text):
        assert 10**v == pytest.approx(float(t), rel=1e-9) or len(vals) == 2
