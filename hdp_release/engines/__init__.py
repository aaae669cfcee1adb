"""The engines a release aggregates in: DuckDB (embedded) and Spark (clusters). Each source
computes the same exact integer aggregates (hdp_release.engines.base); only aggregates leave
the engine."""

from hdp_release.engines.base import ENGINES, Histogram
from hdp_release.engines.open import aggregate, open_source
from hdp_release.engines.spark_source import spark_session

__all__ = ["ENGINES", "Histogram", "aggregate", "open_source", "spark_session"]
