"""hdp_core: mean estimation under heterogeneous (personalized) differential privacy.

The numerical core of hdp-explorer, after "Mean Estimation Under Heterogeneous Privacy
Demands" (Chaudhuri, Miagkov, Courtade). numpy only (pandas only in the readers of
hdp_core.tables and hdp_core.design_io, imported when a table is read); usable from a
notebook. The real release (DuckDB, Spark, OpenDP, the ledger) is hdp_release; the app's
numbers, sentences and figures are hdp_app::

    import hdp_core as hdp
    sol = hdp.adpm([0.1] * 1000 + [5.0] * 10)
    sol.saturation_level      # 0.18: every looser user is granted 0.18
    hdp.lower_bound(sol.profile), hdp.upper_bound(sol.profile)
"""

from hdp_core.adpm import ADPMSolution, AlgorithmTrace, adpm, adpm_trace, saturation_level
from hdp_core.baselines import FME, LDPE, SM, UNI, PropDPM  # registers the five baselines
from hdp_core.bounds import (
    lower_bound,
    lower_bound_H,
    optimality_ratio,
    two_group_threshold,
    upper_bound,
)
from hdp_core.distributions import WORST_CASE, Beta, Distribution, TwoPoint, Uniform
from hdp_core.errors import (
    HdpError,
    LinkError,
    MenuError,
    NotShareable,
    ProfileError,
    ReleaseError,
    UnknownMethod,
)
from hdp_core.estimators import (
    METHOD_CLASSES,
    METHODS,
    ADPMEstimator,
    AffineEstimator,
    Estimator,
    TableMeanEstimator,
    TunedADPMEstimator,
    estimate,
    exact_mse,
    get_method,
    register,
)
from hdp_core.intervals import (
    TARGETS,
    expected_error_95,
    interval_in_range,
    population_half_width,
    population_half_width_for,
    release_error_95,
    table_half_width,
)
from hdp_core.presets import PRESETS, paper_profile, preset
from hdp_core.profile import MAX_ROWS, MAX_UPLOAD_BYTES, EpsilonProfile
from hdp_core.simulate import SimResult, simulate_mse
from hdp_core.table_mean import TableMeanSolution, table_mean
from hdp_core.tables import profile_from_csv, profile_from_frame
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN
from hdp_core.whatif import WhatIf, table_mse, whatif

__all__ = [
    "FME",
    "LDPE",
    "LEVEL_MAX",
    "LEVEL_MIN",
    "MAX_ROWS",
    "MAX_UPLOAD_BYTES",
    "METHODS",
    "METHOD_CLASSES",
    "PRESETS",
    "SM",
    "TARGETS",
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
    "HdpError",
    "LinkError",
    "MenuError",
    "NotShareable",
    "ProfileError",
    "PropDPM",
    "ReleaseError",
    "SimResult",
    "TableMeanEstimator",
    "TableMeanSolution",
    "TunedADPMEstimator",
    "TwoPoint",
    "Uniform",
    "UnknownMethod",
    "WhatIf",
    "adpm",
    "adpm_trace",
    "estimate",
    "exact_mse",
    "expected_error_95",
    "get_method",
    "interval_in_range",
    "lower_bound",
    "lower_bound_H",
    "optimality_ratio",
    "paper_profile",
    "population_half_width",
    "population_half_width_for",
    "preset",
    "profile_from_csv",
    "profile_from_frame",
    "register",
    "release_error_95",
    "saturation_level",
    "simulate_mse",
    "table_half_width",
    "table_mean",
    "table_mse",
    "two_group_threshold",
    "upper_bound",
    "whatif",
]
