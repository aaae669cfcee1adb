"""How much wider the proven 95% intervals are than today's normal approximation.

Run: ``python benchmarks/bench_intervals.py`` (seconds). For n = 10, 100, 1000, 10^6 users on
three profiles (all at eps 1; log-uniform levels on [e^-4, e^2] as tiers; all public), prints
the half-width (unit scale, times R = hi - lo in data units) of

* normal: hdp_core.units.error_half_width (the data part taken as normal, sd 1/2 ||w||), what
  a release reports today (under-covers at small n: tests/test_intervals.py);
* population: hdp_core.intervals.population_half_width_for (proven: covers the population mean
  in >= 95% of releases for every distribution on the range);
* table: hdp_core.intervals.table_half_width for TableMean (proven for every table);

and the ratios population / normal and table / normal, plus the time of each call. Not part of
the test suite.
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


if __name__ == "__main__":
    main()
