"""The population half-width with a declared spread (hdp_core.intervals, bounds (b) and (c)):
the Bennett tail inverted by Newton's method, checked against

* exact arithmetic (decimal, 50 digits): every Bennett z the code returns is at or above the
  exact root for the exact inputs (h(m z / var) >= ln(2/a1) m^2 / var in decimal) and at most
  3e-11 above it; the whole bound (b) and (c) against their exact minimum over the same grids;
* the old implementation (a 60-step bisection, tests/intervals_reference.py, copied from the
  code before this change) on many random inputs and on profiles at the extremes: at most
  5e-6 above them (bound (c) now searches lam on a fixed lattice, not on a grid scaled by
  1/eta; tests/test_intervals_monotone.py), below them where the old grid was coarse.

The old bisection fails the first check at small y (its h lost digits to cancellation and it
returned up to ~8e-10 below the exact root: test_old_bisection_fell_below_the_exact_root).
"""

from __future__ import annotations

import contextlib
import math
from decimal import Decimal, localcontext

import intervals_reference as REF
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_core import intervals as I

INF = math.inf
DIGITS = 50
ABOVE = 3e-11  # the most a returned Bennett z may exceed the exact root (relative)
OLD_UP = 5e-6  # (c) on the fixed lattice of lam against the old grid scaled by 1/eta: above
OLD_DOWN = 0.1  # and below it (the old grid was coarse at small eta: 6% seen)


# ---- exact arithmetic -------------------------------------------------------------------------
def _d(x: float) -> Decimal:
    return Decimal(float(x))  # the double's exact value


def h_exact(u: Decimal) -> Decimal:
    """h(u) = (1 + u) ln(1 + u) - u in decimal, to DIGITS digits: the working precision grows
    as u shrinks (h ~ u^2 / 2 is what is left after 1 + u cancels)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10 + 2 * max(0, -u.adjusted())
        out = (1 + u) * (1 + u).ln() - u
    return +out  # rounded to the caller's precision


def bennett_root_exact(y: Decimal) -> Decimal:
    """The u with h(u) = y (decimal Newton from above: h is convex and increasing)."""
    u = y / 3 + (y * y / 9 + 2 * y).sqrt()  # Bernstein's u, above the root
    for _ in range(400):
        step = (h_exact(u) - y) / (1 + u).ln()
        u -= step
        if abs(step) <= u * Decimal(10) ** (-DIGITS + 5):
            break
    return u


def check_bennett_z(ln2: np.ndarray, m: float, var: float, z: np.ndarray) -> float:
    """Assert every finite z is at or above the exact Bennett root for the exact inputs and
    at most ABOVE above it; returns the largest relative excess."""
    worst = 0.0
    with localcontext() as ctx:
        ctx.prec = DIGITS
        md, vd = _d(m), _d(var)
        for l2, zi in zip(ln2, z, strict=True):
            assert math.isfinite(zi), (float(l2), m, var)
            y = _d(l2) * md * md / vd
            u = _d(zi) * md / vd
            assert h_exact(u) >= y, ("below the exact root", float(l2), m, var, float(zi))
            lower = u * (1 - Decimal(ABOVE))
            assert h_exact(lower) < y, ("too far above the root", float(l2), m, var, float(zi))
            worst = max(worst, float(u / bennett_root_exact(y) - 1))
    return worst


def union_exact(s2w: float, m: float, eta: float, a: float, var: float | None) -> Decimal:
    """(b) in exact arithmetic on the code's grid of splits (any split is valid)."""
    a1s = np.array([a]) if eta == 0 else a * I._SPLITS
    best = None
    with localcontext() as ctx:
        ctx.prec = DIGITS
        for a1 in a1s:
            ln2 = (2 / _d(a1)).ln()
            z = (_d(s2w) * ln2 / 2).sqrt()
            if var is not None and var > 0 and m > 0:
                vd, md = _d(var), _d(m)
                z = min(z, bennett_root_exact(ln2 * md * md / vd) * vd / md)
            t = _d(eta) * (1 / (_d(a) - _d(a1))).ln() if eta > 0 else Decimal(0)
            best = z + t if best is None else min(best, z + t)
    assert best is not None
    return best


def chernoff_sets(s2w: float, m: float, eta: float, a: float, var: float | None):
    """(c)'s sets of lam, one per psi (the code's own, :func:`I._lambdas`), and a check that
    a lattice window 16 times wider on each side has the same least value (float)."""
    ln2a = math.log(2 / a)
    sets = [("h", I._lambdas(math.sqrt(8 * ln2a / s2w), eta, ln2a))]
    if var is not None and 0 < var < s2w / 4 and m > 0:
        z = float(I._bennett_z(np.array([ln2a]), m, var)[0])
        sets.append(("b", I._lambdas(math.log1p(z * m / var) / m, eta, ln2a)))
    for kind, lam in sets:
        wide = I._lattice(float(lam.min()) / 16, float(lam.max()) * 16)
        vals = [
            I._chernoff_h(
                x,
                x * x * s2w / 8 if kind == "h" else var * (np.expm1(x * m) - x * m) / (m * m),
                eta,
                ln2a,
            )
            for x in (lam, wide)
        ]
        assert vals[0] <= vals[1] * (1 + 1e-14), (kind, vals)
    return sets


def chernoff_exact(s2w: float, m: float, eta: float, a: float, var: float | None) -> Decimal:
    """(c) in exact arithmetic on the code's sets of lam (any lam in (0, 1/eta) is valid)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        ln2a = (2 / _d(a)).ln()
        best = None
        for kind, lams in chernoff_sets(s2w, m, eta, a, var):
            for lam_f in lams:
                lam = _d(lam_f)
                if kind == "h":
                    psi = lam * lam * _d(s2w) / 8
                else:
                    x = lam * _d(m)
                    if x >= 700:
                        continue
                    psi = _d(var) * (x.exp() - 1 - x) / (_d(m) * _d(m))
                le = lam * _d(eta)
                if le >= 1:
                    continue
                h = (psi + ln2a - (1 - le * le).ln()) / lam
                best = h if best is None else min(best, h)
    assert best is not None
    return best


# ---- the Bennett root --------------------------------------------------------------------------
Y_CASES = [1e-15, 3e-13, 1e-10, 4.99e-7, 5.0e-7, 1e-4, 0.01, 0.3, 1.0, 2.5, 30.0, 1e3, 1e6, 1e12]
Y_CASES += [1e18, 1e20, 1e22]


def test_bennett_z_at_or_above_the_exact_root():
    """y from 1e-15 to 1e22 (m = var = 1, so z = u and y = ln2 exactly), through the series
    (u < 1e-3) and the closed form, as one array and one by one."""
    y = np.array(Y_CASES)
    z = I._bennett_z(y, 1.0, 1.0)
    assert check_bennett_z(y, 1.0, 1.0, z) <= ABOVE
    for yi in Y_CASES:
        one = np.array([yi])
        assert check_bennett_z(one, 1.0, 1.0, I._bennett_z(one, 1.0, 1.0)) <= ABOVE


def test_old_bisection_fell_below_the_exact_root():
    """The oracle's own defect (why the new code checks h in exact terms): at y = 1e-14 the
    old bisection's h lost ~9 of 16 digits and it returned u below the exact root."""
    y = np.array([1e-14])
    old = REF._bennett_z(y, 1.0, 1.0)
    with localcontext() as ctx:
        ctx.prec = DIGITS
        assert h_exact(_d(old[0])) < _d(y[0])  # below: a hair too narrow
    new = I._bennett_z(y, 1.0, 1.0)
    assert check_bennett_z(y, 1.0, 1.0, new) <= ABOVE


@pytest.mark.parametrize("level", [0.5, 0.8, 0.95, 0.99, 0.999999])
@pytest.mark.parametrize("c", [1e-13, 2.5e-5, 0.1, 7.0, 1e9, 1e17])
def test_bennett_z_on_the_grid_of_splits(level, c):
    """On (b)'s grid of 255 splits for each level: var = 1, m^2 = c."""
    ln2, _, lnln2 = I._split_logs(1.0 - level)
    m = math.sqrt(c)
    z = I._bennett_z(ln2, m, 1.0, lnln2)
    assert np.array_equal(z, I._bennett_z(ln2, m, 1.0))  # lnln2 is only a shortcut
    check_bennett_z(ln2, m, 1.0, z)


@given(
    st.floats(-13, 0),  # log10 sum w^2
    st.floats(0, 1),  # where max w lies in [sum w^2, sqrt(sum w^2)] (log scale)
    st.floats(-9, math.log10(0.5)),  # log10 s
    st.sampled_from([0.5, 0.9, 0.95, 0.99]),
)
@pytest.mark.slow
def test_bennett_z_random_inputs(ls2w, frac, lsd, level):
    s2w = 10.0**ls2w
    m = 10.0 ** (ls2w * (1 - frac / 2))  # s2w <= m <= sqrt(s2w): weights summing to 1
    var = (10.0**lsd) ** 2 * s2w
    ln2, _, lnln2 = I._split_logs(1.0 - level)
    z = I._bennett_z(ln2, m, var, lnln2)
    check_bennett_z(ln2[::16], m, var, z[::16])


def test_outside_the_table_falls_back_and_is_still_certified():
    """y below the table (1e-40) and above it (1e30): the Bernstein-started Newton loop."""
    for y in (1e-40, 1e-30, 1e25, 1e30, 1e100):
        one = np.array([y])
        check_bennett_z(one, 1.0, 1.0, I._bennett_z(one, 1.0, 1.0))


def test_no_usable_y_gives_hoeffding():
    """c = m^2 / var outside (1e-300, 1e290): inf, so the minimum takes Hoeffding's z (a
    wider interval, still proven), and no floating-point warning (they are errors here)."""
    ln2 = np.log(2.0 / (0.05 * I._SPLITS))
    assert np.isinf(I._bennett_z(ln2, 1.0, 1e-300)).all()
    assert np.isinf(I._bennett_z(ln2, 1e-160, 1.0)).all()
    assert math.isfinite(I.population_half_width_moments(1e-6, 1e-6, 1e-3, data_sd=1e-160))


def test_start_table_accuracy():
    """The table read backwards is within 1.2e-6 of the root for y in [1.1e-35, 1.7e24] (its
    docstring), so one Newton step leaves at most ~7e-13."""
    lu = np.linspace(-39.95, 51.95, 200_001)
    u = np.exp(lu)
    ly = np.log(I._bennett_h(u, np.log1p(u), I._small(u)))
    est = np.exp(np.interp(ly, *I._H_TABLE))
    rel = est / u - 1
    assert np.abs(rel).max() <= 1.2e-6
    # so the one Newton step passes the check everywhere on the table (no fallback)
    y = np.geomspace(1.2e-35, 1.7e24, 100_001)
    start = np.exp(np.interp(np.log(y), *I._H_TABLE, left=np.nan, right=np.nan))
    _, ok = I._certified(I._newton(start, y, 1), y)
    assert ok.all()
    # and _bennett_h itself against decimal, across the switch at u = 1e-3
    with localcontext() as ctx:
        ctx.prec = DIGITS
        pts = np.concatenate([np.geomspace(1e-12, 1e3, 61), [0.999e-3, 1e-3, 1.001e-3]])
        got = I._bennett_h(pts, np.log1p(pts), I._small(pts))
        for p, g in zip(pts, got, strict=True):
            assert abs(float(_d(g) / h_exact(_d(p)) - 1)) <= 2e-12


# ---- the whole bound against exact arithmetic --------------------------------------------------
MOMENT_CASES = [
    # (sum w^2, max w, eta, sd, level)
    (1.0000165561086524e-06, 1.004983388704319e-06, 9.966777408637874e-06, 0.2, 0.95),
    (0.02, 0.02, 0.05, 0.1, 0.95),  # 50 equal users
    (0.02, 0.02, 0.0, 0.1, 0.95),  # no noise: one split
    (1e-4, 1e-3, 1e-3, 1e-9, 0.95),  # spread near 0
    (1e-12, 1e-12, 1e-9, 0.5, 0.95),  # 10^12 users, spread 1/2
    (1e-12, 1e-12, 1e-9, 0.01, 0.99),
    (0.3, 0.5, 2.0, 0.05, 0.9),  # few users, big noise
    (0.5, 0.5, 1e-6, 0.49, 0.5),
]


@pytest.mark.parametrize("case", MOMENT_CASES)
def test_bounds_against_exact_arithmetic(case):
    """(b) and (c) against their exact minimum over the same grids. (b): at or above it up to
    the unchanged Hoeffding and noise terms' last-bit rounding (1e-14), at most 3e-11 above.
    (c) is the old code's arithmetic unchanged: within 1e-12 of exact."""
    s2w, m, eta, sd, level = case
    a = 1.0 - level
    var = sd * sd * s2w
    b_new = I._union(s2w, m, eta, a, var)
    b_exact = float(union_exact(s2w, m, eta, a, var))
    assert b_exact * (1 - 1e-14) <= b_new <= b_exact * (1 + ABOVE)
    c_new = I._chernoff(s2w, m, eta, a, var)
    c_exact = float(chernoff_exact(s2w, m, eta, a, var))
    assert c_new == pytest.approx(c_exact, rel=1e-12)


@given(
    st.floats(-13, 0),
    st.floats(0, 1),
    st.floats(-12, 3).map(lambda e: 10.0**e),  # eta
    st.one_of(st.just(0.5), st.floats(-9, math.log10(0.5)).map(lambda e: 10.0**e)),
    st.sampled_from([0.5, 0.95, 0.999]),
)
def test_chernoff_near_old(ls2w, frac, eta, sd, level):
    """(c) on the fixed lattice against the old grid scaled by 1/eta: at most OLD_UP above it
    (the lattice's spacing), often below (the old grid was coarse when eta was tiny)."""
    s2w = 10.0**ls2w
    m = 10.0 ** (ls2w * (1 - frac / 2))
    var = sd * sd * s2w
    new = I._chernoff(s2w, m, eta, 1.0 - level, var)
    old = REF._chernoff(s2w, m, eta, 1.0 - level, var)
    assert new / old - 1 <= OLD_UP


# ---- new against old ---------------------------------------------------------------------------
@contextlib.contextmanager
def old_path():
    """hdp_core.intervals with the old (b) and (c) swapped in (the oracle)."""
    saved = I._union, I._chernoff
    I._union, I._chernoff = REF._union, REF._chernoff
    try:
        with without_moments():
            yield
    finally:
        I._union, I._chernoff = saved


@contextlib.contextmanager
def without_moments():
    """hdp_core.intervals without bounds (d) and (e) (issue 31), which the old code lacked."""
    saved = I._moments
    I._moments = lambda *args: (math.inf, math.inf)
    try:
        yield
    finally:
        I._moments = saved


def assert_same(new: float, old: float) -> None:
    """The Bennett root: the same numbers as the old bisection; bound (c)'s lattice: at most
    OLD_UP above the old grid's, at most OLD_DOWN below it."""
    assert math.isfinite(new) and new > 0
    assert -OLD_DOWN <= new / old - 1 <= OLD_UP, (new, old)


@given(
    st.floats(-13, 0),
    st.floats(0, 1),
    st.one_of(st.just(0.0), st.floats(-9, 2).map(lambda e: 10.0**e)),  # eta
    st.one_of(st.none(), st.just(0.5), st.floats(-9, math.log10(0.5)).map(lambda e: 10.0**e)),
    st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999]),
)
def test_moments_same_as_old(ls2w, frac, eta, sd, level):
    s2w = 10.0**ls2w
    m = 10.0 ** (ls2w * (1 - frac / 2))
    with without_moments():
        new = I.population_half_width_moments(s2w, m, eta, data_sd=sd, level=level)
    old = REF.population_half_width_moments(s2w, m, eta, data_sd=sd, level=level)
    assert_same(new, old)
    # with (d) and (e): their least with the old three, never more
    every = I.population_half_width_moments(s2w, m, eta, data_sd=sd, level=level)
    both = I.population_bounds(s2w, m, eta, data_sd=sd, level=level)
    assert every == min(new, both["chebyshev"], both["fourth_moment"]) <= new


PROFILES = {
    "default menu": ([0.1, 1.0, INF], [600_000, 300_000, 100_000]),
    "one public user": ([INF], [1]),
    "two users eps 50": ([50.0], [2]),
    "50 public users": ([INF], [50]),
    "10^12 users": ([0.5, 2.0], [10**12, 10**11]),
    "eps near 0": ([1e-6, 1e-3], [10**9, 10**6]),
    "eps huge": ([1e6, INF], [3, 4]),
    "log-uniform": (list(np.exp(np.linspace(-4, 2, 50))), [20] * 50),
    "skewed with public": ([0.5, 2.0, INF], [30, 15, 5]),
}


@pytest.mark.parametrize("name", list(PROFILES))
@pytest.mark.parametrize("sd", [None, 1e-9, 1e-4, 0.05, 0.2, 0.4999, 0.5])
def test_profiles_same_as_old(name, sd):
    """expected_error_95 (the figure of the Tier designer and the Release page) and
    release_error_95 for 1 and 12 releases, as the Tier designer's section 5 calls them."""
    levels, counts = PROFILES[name]
    prof = hdp.EpsilonProfile.from_tiers(levels, counts)
    sd_data = None if sd is None else sd * 500.0
    with old_path():
        old = [I.expected_error_95(prof, data_sd=sd)]
        old += [I.release_error_95(levels, counts, 0, 500, data_sd=sd_data, k=k) for k in (1, 12)]
    with without_moments():
        new = [I.expected_error_95(prof, data_sd=sd)]
        new += [I.release_error_95(levels, counts, 0, 500, data_sd=sd_data, k=k) for k in (1, 12)]
    for a, b in zip(new, old, strict=True):
        assert_same(a, b)
