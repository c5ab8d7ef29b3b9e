"""Version order: a small dimension table of the distinct versions, broadcast-joined back.

Text order is wrong for versions (``4.10`` < ``4.9``, ``0.7.0`` < ``0.7.0b3``).
The distinct driver and target versions are few (a few dozen), so they are
collected, ordered by the one version order (:mod:`harness.record.versions`,
which the harness compares versions with too), given a dense rank, and
joined back to the verdicts as a broadcast: raw rows never leave the executors.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from harness.record.versions import ordered_versions
from harness.record.versions import version_key as version_key  # the report's readers sort with it from here


def version_dimension(spark: SparkSession, verdicts: DataFrame, columns: list[str]) -> DataFrame:
    """``version, version_rank`` for every distinct value of ``columns`` (a small table; broadcast it)."""
    distinct = (
        verdicts.select(F.explode(F.array(*[F.col(c) for c in columns])).alias("version"))
        .where(F.col("version").isNotNull())
        .distinct()
    )
    versions = [row["version"] for row in distinct.collect()]  # the distinct versions only: a few dozen
    return ranked_versions(spark, versions)


def ranked_versions(spark: SparkSession, versions: list[str]) -> DataFrame:
    """The dimension table of ``versions`` (distinct values, known already): ``version, version_rank``."""
    return spark.createDataFrame(ordered_versions(versions), "version string, version_rank int")


def with_version_rank(
    frame: DataFrame, column: str, dimension: DataFrame, rank_name: str = "version_rank"
) -> DataFrame:
    """``frame`` with the rank of ``column`` joined from the (broadcast) dimension table."""
    ranks = F.broadcast(dimension.select(F.col("version").alias(column), F.col("version_rank").alias(rank_name)))
    return frame.join(ranks, column, "left")
