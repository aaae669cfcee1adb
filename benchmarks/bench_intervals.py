"""How much wider the proven 95% intervals are than today's normal approximation.

Run: ``python benchmarks/bench_intervals.py`` (seconds). For n = 10, 100, 1000, 10^6 users on
three profiles (all at eps 1; log-uniform levels on [e^-4, e^2] as tiers; all public), prints
the half-width (unit scale, times R = hi - lo in data units) of

* normal: hdp_core.units.error_half_width (the data part taken as normal, sd 1/2 ||w||), what
  a release reports today (under-covers at small n: tests/test_intervals.py);
* population: hdp_core.intervals.population_half_width_for (proven: covers the population mean
  in >= 95% of releases for every distribution on the range);
* table: hdp_core.intervals.table_half_width for TableMean (proven for every table);

and the ratios population / normal and table / normal, plus the time of each call. Then the
TableMean solver on 10^7 per-user levels against numpy.sort of the same array (best of 3,
interleaved), and on 100 tiers of 10^10 users.

Then the population half-width with a declared spread (the Bennett bound), old against new
side by side: the old path is the 60-step bisection kept as the oracle in
tests/intervals_reference.py (swapped in for hdp_core.intervals' (b) and (c) while it runs),
the new one today's Newton steps (hdp_core.intervals._bennett_z). For each call: the fastest
of 7 interleaved rounds of each (the machine is shared), the ratio old / new and the largest
relative difference of the numbers. Calls: population_half_width_moments alone on several
inputs, the Tier designer's section 5 (views.whatif.menu_release_errors for 1 and 12
releases), and its two heavier cached calls that recompute when the spread changes
(design.share_sweep, design.solve for the half-width), and all of the page's core calls
when the spread changes (every cache misses). ``--bennett`` runs only this part.
Not part of the test suite.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import pathlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import hdp_core as hdp
from hdp_app.views import design as DV
from hdp_app.views.whatif import menu_release_errors
from hdp_core import design as D
from hdp_core import intervals as I
from hdp_core import menu as M
from hdp_core import solvers as S
from hdp_core.intervals import expected_error_95
from hdp_core.units import error_half_width

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
import intervals_reference as REF  # the old path, the tests' oracle


def profiles(n: int) -> dict[str, hdp.EpsilonProfile]:
    lv = np.exp(np.linspace(-4, 2, 50))
    ct = np.full(50, n // 50) if n >= 50 else np.ones(50, dtype=np.int64)
    if n < 50:
        lv, ct = lv[:: 50 // n][:n], np.ones(n, dtype=np.int64)
    ct[-1] += n - int(ct.sum())
    return {
        "all eps 1": hdp.EpsilonProfile.from_tiers([1.0], [n]),
        "log-uniform": hdp.EpsilonProfile.from_tiers(lv, ct),
        "all public": hdp.EpsilonProfile.from_tiers([math.inf], [n]),
    }


def main() -> None:
    print(
        f"{'profile':<12} {'n':>8} {'normal':>10} {'population':>11} {'table':>10} "
        f"{'pop/normal':>10} {'table/normal':>12} {'ms':>6}"
    )
    for n in (10, 100, 1000, 10**6):
        for name, prof in profiles(n).items():
            ad = hdp.adpm(prof)
            if ad.outputs_zero:
                normal = 0.5
            else:
                s2 = float(np.dot(prof.counts, ad.weights**2))
                normal = error_half_width(0.5 * math.sqrt(s2), ad.noise_scale)
            t0 = time.perf_counter()
            pop = expected_error_95(prof, "population")
            tab = expected_error_95(prof, "table")
            ms = (time.perf_counter() - t0) * 1e3
            print(
                f"{name:<12} {n:>8} {normal:>10.4g} {pop:>11.4g} {tab:>10.4g} "
                f"{pop / normal:>10.3f} {tab / normal:>12.3f} {ms:>6.1f}"
            )


def best_of(fn, repeats: int = 3) -> float:
    """Fastest wall time of ``repeats`` calls, in seconds."""
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def solver_speed() -> None:
    e = np.exp(np.random.default_rng(0).uniform(-4, 2, 10**7))
    prof = hdp.EpsilonProfile.from_values(e)
    t_sort = t_tm = math.inf
    for _ in range(3):
        t_sort = min(t_sort, best_of(lambda: np.sort(e), 1))
        t_tm = min(t_tm, best_of(lambda: hdp.table_mean(prof), 1))
    print(
        f"table_mean on 10^7 levels: {t_tm:.3f} s; numpy.sort: {t_sort:.3f} s; "
        f"ratio {t_tm / t_sort:.2f}"
    )
    tiers = hdp.EpsilonProfile.from_tiers(np.exp(np.linspace(-4, 2, 100)), [10**10] * 100)
    ms = best_of(lambda: hdp.table_mean(tiers), 20) * 1e3
    print(f"table_mean on 100 tiers of 10^10 users: {ms:.2f} ms")


@contextlib.contextmanager
def old_path() -> Iterator[None]:
    """hdp_core.intervals with the old (b) and (c) (tests/intervals_reference.py) swapped in."""
    saved = I._union, I._chernoff
    I._union, I._chernoff = REF._union, REF._chernoff  # type: ignore[assignment]
    try:
        yield
    finally:
        I._union, I._chernoff = saved


def old_new(fn: Callable[[], Any], number: int, rounds: int = 7) -> tuple[float, float, Any, Any]:
    """Fastest time per call (s) of ``fn`` on the old path and on the new one, interleaved,
    and the last result of each."""
    t_old = t_new = math.inf
    r_old = r_new = None
    for _ in range(rounds):
        with old_path():
            t0 = time.perf_counter()
            for _ in range(number):
                r_old = fn()
            t_old = min(t_old, (time.perf_counter() - t0) / number)
        t0 = time.perf_counter()
        for _ in range(number):
            r_new = fn()
        t_new = min(t_new, (time.perf_counter() - t0) / number)
    return t_old, t_new, r_old, r_new


def _numbers(r: Any) -> np.ndarray:
    """The floats in a result (a float, a list, a ShareSweep or a DesignAnswer)."""
    if isinstance(r, float):
        return np.array([r])
    if isinstance(r, list):
        return np.array(r)
    if isinstance(r, D.ShareSweep):
        return np.concatenate([np.ravel(v) for v in r.half_widths.values()])
    if isinstance(r, S.DesignAnswer):
        return np.array([float(r.value or 0), r.error, r.error_below or 0.0])
    raise TypeError(type(r))


def bennett_speed() -> None:
    menu = M.default_menu()  # three tiers with public, 10^6 users, $0-500
    spread = dataclasses.replace(menu, data_sd=100.0)  # declared sd $100: s = 0.2
    sol = hdp.adpm(spread.to_profile(), data_sd=0.2)
    s2w = float(np.dot(sol.profile.counts, sol.weights**2))
    m, eta = float(sol.weights.max()), float(sol.noise_scale)
    wa, wb = DV.whatif_tiers(spread, None, None)
    target = DV.default_target(D.evaluate_menu(spread))

    def page_calls() -> list[float]:
        """What the Tier designer computes when the spread changes (every cache misses):
        the report, the solver at its default target (half-width), the what-if sweep and the
        report of the moved menu, and section 5 for 1 and 12 releases."""
        rep = D.evaluate_menu(spread)
        ans = S.solve(spread, "users", target, "half_width")
        sweep = D.share_sweep(spread, wa, wb)
        moved = D.evaluate_menu(
            D.move_share(spread, wa, wb, 0.5 * DV.whatif_share(spread, wa, wb)[1])
        )
        sec5 = [menu_release_errors(spread, k).population for k in (1, 12)]
        return [
            rep.errors["ADPM"].half_width,
            ans.error,
            *sweep.half_widths["ADPM"],
            moved.errors["ADPM"].half_width,
            *sec5,
        ]

    calls: list[tuple[str, Callable[[], Any], int]] = [
        (
            "moments: Tier designer default, s 0.2",
            lambda: I.population_half_width_moments(s2w, m, eta, 0.2),
            300,
        ),
        (
            "moments: 50 users, s 0.1",
            lambda: I.population_half_width_moments(0.02, 0.02, 0.05, 0.1),
            300,
        ),
        (
            "moments: s 1e-9 (near 0)",
            lambda: I.population_half_width_moments(1e-4, 1e-3, 1e-3, 1e-9),
            300,
        ),
        (
            "moments: s 0.5, 10^12 users",
            lambda: I.population_half_width_moments(1e-12, 1e-12, 1e-9, 0.5),
            300,
        ),
        (
            "moments: no noise (eta 0)",
            lambda: I.population_half_width_moments(0.02, 0.02, 0.0, 0.1),
            300,
        ),
        (
            "section 5: menu_release_errors 1 + 12",
            lambda: [
                e.population
                for e in (menu_release_errors(spread, 1), menu_release_errors(spread, 12))
            ],
            100,
        ),
        ("share_sweep (41 menus, 4 bounds each)", lambda: D.share_sweep(spread, wa, wb), 2),
        (
            f"solve: users for a ${target:g} half-width",
            lambda: S.solve(spread, "users", target, "half_width"),
            2,
        ),
        ("all of the page's core calls (a miss)", page_calls, 2),
    ]
    head = f"{'old ms':>9} {'new ms':>9} {'old/new':>8} {'max rel diff':>13}"
    print(f"\n{'call (declared spread)':<42} {head}")
    for name, fn, number in calls:
        t_old, t_new, r_old, r_new = old_new(fn, number)
        a, b = _numbers(r_old), _numbers(r_new)
        diff = float(np.max(np.abs(b / a - 1.0)))
        ms = f"{t_old * 1e3:>9.3f} {t_new * 1e3:>9.3f}"
        print(f"{name:<42} {ms} {t_old / t_new:>8.1f} {diff:>13.1e}")


if __name__ == "__main__":
    if "--bennett" not in sys.argv:
        main()
        solver_speed()
    bennett_speed()
