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
interleaved), and on 100 tiers of 10^10 users. Not part of the test suite.
"""

from __future__ import annotations

import math
import time

import numpy as np

import hdp_core as hdp
from hdp_core.intervals import expected_error_95
from hdp_core.units import error_half_width


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


if __name__ == "__main__":
    main()
    solver_speed()
