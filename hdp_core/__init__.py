"""hdp_core: mean estimation under heterogeneous (personalized) differential privacy.

The numerical core of hdp-explorer, after "Mean Estimation Under Heterogeneous Privacy
Demands" (Chaudhuri, Miagkov, Courtade). Pure numpy (pandas only to read tables, plotly only
in hdp_core.figures); usable from a notebook. The package itself holds the mathematics;
``hdp_core.views`` the pages' numbers and sentences; ``hdp_core.figures`` the plotly figures::

    import hdp_core as hdp
    sol = hdp.adpm([0.1] * 1000 + [5.0] * 10)
    sol.saturation_level      # 0.18: every looser user is granted 0.18
    hdp.lower_bound(sol.profile), hdp.upper_bound(sol.profile)
"""

from .adpm import ADPMSolution, AlgorithmTrace, adpm, adpm_trace, saturation_level
from .baselines import FME, LDPE, SM, UNI, PropDPM  # registers the five baselines
from .bounds import (
    lower_bound,
    lower_bound_H,
    optimality_ratio,
    two_group_threshold,
    upper_bound,
)
from .distributions import WORST_CASE, Beta, Distribution, TwoPoint, Uniform
from .errors import (
    HdpError,
    LinkError,
    MenuError,
    NotShareable,
    ProfileError,
    ReleaseError,
    UnknownMethod,
)
from .estimators import (
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
from .intervals import (
    TARGETS,
    expected_error_95,
    interval_in_range,
    population_half_width,
    population_half_width_for,
    release_error_95,
    table_half_width,
)
from .ledger import PrivacyLedger
from .presets import PRESETS, paper_profile, preset
from .profile import MAX_ROWS, MAX_UPLOAD_BYTES, EpsilonProfile
from .simulate import SimResult, simulate_mse
from .table_mean import TableMeanSolution, table_mean
from .tables import profile_from_csv, profile_from_frame
from .validate import LEVEL_MAX, LEVEL_MIN
from .whatif import WhatIf, table_mse, whatif

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
    "PrivacyLedger",
    "ProfileError",
    "PropDPM",
    "Release",
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
    "release_mean",
    "saturation_level",
    "simulate_mse",
    "table_half_width",
    "table_mean",
    "table_mse",
    "two_group_threshold",
    "upper_bound",
    "whatif",
]


def __getattr__(name: str):
    """``Release`` and ``release_mean`` load hdp_core.release on first use, so that
    ``python -m hdp_core.release`` runs that module once (no runpy RuntimeWarning)."""
    if name in ("Release", "release_mean"):
        from . import release

        return getattr(release, name)
    raise AttributeError(f"module 'hdp_core' has no attribute {name!r}")
