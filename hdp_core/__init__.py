"""hdp_core: mean estimation under heterogeneous (personalized) differential privacy.

The numerical core of hdp-explorer, after "Mean Estimation Under Heterogeneous Privacy
Demands" (Chaudhuri, Miagkov, Courtade). Pure numpy (pandas only to read tables, plotly only
in hdp_core.figures); usable from a notebook::

    import hdp_core as hdp
    sol = hdp.adpm([0.1] * 1000 + [5.0] * 10)
    sol.saturation_level      # 0.18: every looser user is granted 0.18
    hdp.lower_bound(sol.profile), hdp.upper_bound(sol.profile)
"""

from .adpm import ADPMSolution, AlgorithmTrace, adpm, adpm_trace, saturation_level
from .baselines import FME, LDPE, SM, UNI, PropDPM
from .bounds import (
    lower_bound,
    lower_bound_H,
    optimality_ratio,
    two_group_threshold,
    upper_bound,
)
from .distributions import WORST_CASE, Beta, Distribution, TwoPoint, Uniform
from .estimators import ADPMEstimator, AffineEstimator, Estimator, TunedADPMEstimator
from .presets import PRESETS, paper_profile, preset
from .profile import MAX_ROWS, MAX_UPLOAD_BYTES, EpsilonProfile, ProfileError
from .simulate import METHODS, SimResult, estimate, exact_mse, get_method, simulate_mse

__all__ = [
    "FME",
    "LDPE",
    "MAX_ROWS",
    "MAX_UPLOAD_BYTES",
    "METHODS",
    "PRESETS",
    "SM",
    "UNI",
    "WORST_CASE",
    "ADPMEstimator",
    "ADPMSolution",
    "AffineEstimator",
    "AlgorithmTrace",
    "Beta",
    "Distribution",
    "EpsilonProfile",
    "Estimator",
    "ProfileError",
    "PropDPM",
    "SimResult",
    "TunedADPMEstimator",
    "TwoPoint",
    "Uniform",
    "adpm",
    "adpm_trace",
    "estimate",
    "exact_mse",
    "get_method",
    "lower_bound",
    "lower_bound_H",
    "optimality_ratio",
    "paper_profile",
    "preset",
    "saturation_level",
    "simulate_mse",
    "two_group_threshold",
    "upper_bound",
]
