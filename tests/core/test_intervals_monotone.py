"""The population half-width (hdp_core.intervals.population_half_width) never decreases as
the Laplace noise scale grows, everything else fixed, and is continuous at noise scale 0.

Before the fix, bound (c) searched lam on a grid scaled by 1/eta, badly placed when eta is tiny:
on the Tier designer's default menu the half-width was 0.6791 USD at eta = 0, 0.6837 at 1e-6 and
0.6791 at 5e-6, and UNI's figure came out below ADPM's although ADPM's noise is smaller.
The oracle for continuity at 0 is the closed form of Hoeffding's bound, sqrt(ln(2/a) ||w||^2 / 2).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_core import intervals as I
from hdp_core import menu as M

TOL = 1e-12  # relative: rounding only
SCALES = [0.0] + [10.0**e for e in np.arange(-12.0, 3.01, 0.25)]


def default_adpm() -> tuple[np.ndarray, np.ndarray, float, M.Menu]:
    menu = M.default_menu()
    sol = hdp.adpm(hdp.EpsilonProfile.from_tiers(menu.levels, menu.counts))
    return sol.weights, sol.profile.counts, sol.noise_scale, menu


def test_default_menu_three_noise_scales():
    w, c, _, menu = default_adpm()
    h0, h1, h5 = (I.population_half_width(w, c, b) * menu.width for b in (0.0, 1e-6, 5e-6))
    assert h0 * (1 - TOL) <= h1 <= h5 * (1 + TOL), (h0, h1, h5)
    s2w = float(np.dot(c, w * w))
    hoeffding = math.sqrt(math.log(2 / 0.05) * s2w / 2) * menu.width  # the noise-free optimum
    assert h0 == pytest.approx(hoeffding, rel=1e-12)
    assert I.population_half_width(w, c, 1e-12) * menu.width == pytest.approx(h0, rel=1e-9)


def test_default_menu_uni_not_below_adpm():
    """UNI (weights 1/n, noise 1/(n eps_min)) against ADPM on the default menu: ADPM's
    variance and noise are both smaller, so is every Chernoff term."""
    _, _, b_adpm, menu = default_adpm()
    n = menu.n_users
    uni = I.population_half_width([1.0 / n], [n], 1.0 / (n * float(menu.levels.min())))
    assert uni >= I.population_half_width_for(
        hdp.EpsilonProfile.from_tiers(menu.levels, menu.counts)
    )
    assert b_adpm < 1.0 / (n * float(menu.levels.min()))


def assert_non_decreasing(values: list[float]) -> None:
    for i in range(1, len(values)):
        assert values[i] >= values[i - 1] * (1 - TOL), (i, values[i - 1], values[i])


@settings(max_examples=60, deadline=None)
@given(
    st.floats(-13, 0),  # log10 sum w^2
    st.floats(0, 1),  # max w between sum w^2 and sqrt(sum w^2)
    st.one_of(st.none(), st.just(0.5), st.floats(-9, math.log10(0.5)).map(lambda e: 10.0**e)),
    st.sampled_from([0.5, 0.8, 0.95, 0.999]),
)
def test_moments_non_decreasing_in_noise(ls2w, frac, sd, level):
    s2w = 10.0**ls2w
    m = 10.0 ** (ls2w * (1 - frac / 2))
    hw = [I.population_half_width_moments(s2w, m, b, data_sd=sd, level=level) for b in SCALES]
    assert_non_decreasing(hw)
    tiny = 1e-8 * (0.5 if sd is None else sd) * math.sqrt(s2w)  # next to the data's spread
    near0 = I.population_half_width_moments(s2w, m, tiny, data_sd=sd, level=level)
    assert near0 == pytest.approx(hw[0], rel=1e-6)  # continuous at 0 (bound (a) grows linearly)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(1, 10**6), min_size=1, max_size=4),
    st.lists(st.floats(1e-4, 1.0), min_size=4, max_size=4),
    st.one_of(st.none(), st.floats(1e-4, 0.5)),
)
def test_profiles_non_decreasing_in_noise(counts, weights, sd):
    """Real weight vectors (summing to 1) over the same log grid of noise scales, dense
    between 0 and 1e-4 too (where the old grid jumped)."""
    c = np.array(counts, dtype=np.float64)
    w = np.array(weights[: len(counts)])
    w = w / float(np.dot(c, w))
    scales = sorted(set(SCALES) | {k * 1e-7 for k in range(1, 200)})
    hw = [I.population_half_width(w, c, b, data_sd=sd) for b in scales]
    assert_non_decreasing(hw)


def saturated_menus() -> list[tuple[list[float], list[int]]]:
    """Menus whose looser tiers all get ADPM's largest weight (saturated)."""
    out = [([0.1, 1.0, math.inf], [600_000, 300_000, 100_000])]
    for n in (10**3, 10**5, 10**7):
        for share in (0.3, 0.6, 0.9):
            for eps in (0.05, 0.1, 0.5):
                k = int(n * share)
                out.append(([eps, 5.0, math.inf], [k, (n - k) // 2, n - k - (n - k) // 2]))
    return out


@pytest.mark.parametrize("menu", saturated_menus())
def test_saturated_menus_uni_not_below_adpm(menu):
    levels, counts = menu
    prof = hdp.EpsilonProfile.from_tiers(levels, counts)
    sol = hdp.adpm(prof)
    w = sol.weights[sol.profile.counts > 0]
    looser = w[1:]
    assert not sol.outputs_zero
    assert np.allclose(looser, looser.max(), rtol=1e-12), "looser tiers not saturated"
    assert sol.noise_scale < 1.0 / (sum(counts) * min(levels))  # ADPM's noise is smaller
    n = sum(counts)
    uni = I.population_half_width([1.0 / n], [n], 1.0 / (n * min(levels)))
    assert uni >= I.population_half_width_for(prof) * (1 - TOL)
