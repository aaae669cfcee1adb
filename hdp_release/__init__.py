"""hdp_release: the real private release of a mean under per-user privacy levels.

Built on hdp_core's mathematics (ADPM, TableMean, the proven intervals): checks on the
table's cells before anything computed from the values is used, the plan (exact integer sums in
the engine: DuckDB embedded or Spark), OpenDP's Laplace noise and privacy map (fail closed),
the receipt, and the privacy ledger that charges every release::

    import hdp_release
    rel = hdp_release.release_mean("wages.csv", value="wage", eps="eps", lo=0, hi=5000)
    rel.estimate, rel.ci95, rel.text()

Command line: ``python -m hdp_release PATH --value C --eps C --range LO HI``; the ledger:
``python -m hdp_release.ledger PATH``.
"""

from hdp_release.checks import check_values
from hdp_release.grouped import release_means
from hdp_release.grouped_result import GroupedRelease
from hdp_release.ledger import PrivacyLedger
from hdp_release.preview import (
    TierPreview,
    level_counts,
    preview_tiers,
    tier_levels,
    tier_names_of,
)
from hdp_release.release import release_mean
from hdp_release.result import LEVEL, Release, not_recorded_note

__all__ = [
    "LEVEL",
    "GroupedRelease",
    "PrivacyLedger",
    "Release",
    "TierPreview",
    "check_values",
    "level_counts",
    "not_recorded_note",
    "preview_tiers",
    "release_mean",
    "release_means",
    "tier_levels",
    "tier_names_of",
]
