"""Coverage of the Simulation page's 95% intervals at the fewest trials the page allows.

The exact MSE (closed form, hdp.exact_mse) is the oracle: over 1000 seeds, 30 users and every
method, the interval simulate_mse reports at simview.MIN_TRIALS trials must contain it at least
93% of the time. The symmetric interval mse +- 1.96 se it replaced is checked to fail the same
test at 10 trials (the page's old minimum), so the test can tell a bad interval from a good one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.views import simulation as simview
from hdp_core.simulate import CI_MIN_TRIALS, mse_interval

SEEDS = 1000
_SPREAD = np.exp(np.random.default_rng(7).uniform(math.log(0.1), math.log(5.0), 27))
PROFILE = hdp.EpsilonProfile.from_values(np.append(_SPREAD, [0.3, 0.3, math.inf]))
# 30 users: strict to loose, one public


def _coverage(trials: int, dist: hdp.Distribution, symmetric: bool = False) -> dict[str, float]:
    hits = dict.fromkeys(hdp.METHODS, 0)
    for seed in range(SEEDS):
        for m, r in hdp.simulate_mse(hdp.METHODS, PROFILE, dist, trials=trials, seed=seed).items():
            lo, hi = (
                (r.mse - 1.96 * r.std_err, r.mse + 1.96 * r.std_err)
                if symmetric
                else (r.ci_low, r.ci_high)
            )
            hits[m] += lo <= r.exact <= hi
    return {m: h / SEEDS for m, h in hits.items()}


def test_page_minimum_is_the_trusted_count():
    assert simview.MIN_TRIALS == CI_MIN_TRIALS == 500


@pytest.mark.slow
@pytest.mark.parametrize("dist", [hdp.Beta(2, 3), hdp.TwoPoint(0.9)], ids=["beta", "twopoint"])
def test_coverage_at_the_page_minimum(dist):
    cov = _coverage(simview.MIN_TRIALS, dist)
    assert min(cov.values()) >= 0.93, cov


@pytest.mark.slow
def test_symmetric_interval_undercovers_at_ten_trials():
    cov = _coverage(10, hdp.Beta(2, 3), symmetric=True)
    assert min(cov.values()) < 0.88, cov


def test_mse_interval_against_its_formula():
    lo, hi = mse_interval(2.0, 20.0 * 500, 500)  # se = sqrt(20) ~ 4.47
    se = math.sqrt(20.0)
    assert lo == pytest.approx(2.0 * math.exp(-1.96 * se / 2.0))
    assert hi == pytest.approx(2.0 * math.exp(1.96 * se / 2.0))
    assert lo > 0 and lo * hi == pytest.approx(4.0)
    assert mse_interval(0.0, 0.0, 500) == (0.0, 0.0)
    assert mse_interval(3.0, 0.0, 500) == (3.0, 3.0)
