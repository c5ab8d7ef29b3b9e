"""Each test along each version axis: status per version, the first version it passes, regressions and fixes.

An axis is a version column; the context is everything else in the cell
(for ``driver_version``, the target; for ``target_version``, the driver), so
a test is compared only with itself in the same configuration. Versions are
ordered through :mod:`reports.versions`, never by text. A regression is a
version where the test fails (or is flaky) while it passed at the previous
decided version; a fix is the reverse. Both carry the failure message.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from reports.frames import sorted_table
from reports.normalise import UNKNOWN, cell_name
from reports.outcomes import latest_failure_message, outcome_counts, with_rates
from reports.versions import with_version_rank

#: The version axes the report follows (each one is a verdict column).
AXES = ("driver_version", "target_version")
KEYS = ("axis", "context", "test_id")


def version_status(verdicts: DataFrame, dimension: DataFrame) -> DataFrame:
    """One row per axis x context x test x version: counts, status and the latest failure message."""
    frames = []
    for axis in AXES:
        known = verdicts.where(F.col(axis).isNotNull() & (F.col(axis) != UNKNOWN))
        grouped = known.groupBy(F.lit(axis).alias("axis"), cell_name(omit=axis).alias("context"), "test_id",
                                F.col(axis).alias("version")).agg(
            F.min("test").alias("test"), *outcome_counts(), latest_failure_message())
        frames.append(grouped)
    stacked = frames[0]
    for frame in frames[1:]:
        stacked = stacked.unionByName(frame)
    return sorted_table(with_version_rank(with_rates(stacked), "version", dimension), *KEYS, "version_rank")


def _version_where(condition: Column, pick: str = "min") -> Column:
    """The version (lowest or highest rank) among the rows meeting ``condition``; null when none does."""
    chosen = getattr(F, pick)(F.when(condition, F.struct("version_rank", "version")))
    return chosen["version"]


def first_pass(status: DataFrame) -> DataFrame:
    """One row per axis x context x test: the first version where it passes, and the versions tested."""
    return sorted_table(status.groupBy(*KEYS).agg(
        F.min("test").alias("test"),
        _version_where(F.col("status") == "pass").alias("first_pass_version"),
        _version_where(F.col("status") != "skip").alias("first_version"),
        _version_where(F.col("status") != "skip", "max").alias("last_version"),
        F.count_if(F.col("status") != "skip").alias("versions_decided")), *KEYS)


def transitions(status: DataFrame) -> DataFrame:
    """Regressions and fixes between consecutive decided versions, with the failure message."""
    order = Window.partitionBy(*KEYS).orderBy("version_rank", "version")
    previous = (status.where(F.col("status") != "skip")
                .withColumn("previous_version", F.lag("version").over(order))
                .withColumn("previous_status", F.lag("status").over(order))
                .withColumn("previous_message", F.lag("message").over(order)))
    regression = (F.col("previous_status") == "pass") & F.col("status").isin("fail", "flaky")
    fix = F.col("previous_status").isin("fail", "flaky") & (F.col("status") == "pass")
    change = F.when(regression, "regression").when(fix, "fix")
    changes = (previous.withColumn("change", change).where(F.col("change").isNotNull())
            .select(*KEYS, "test", "version", "version_rank", "change", "previous_version", "previous_status",
                    "status", F.when(regression, F.col("message")).otherwise(F.col("previous_message")).alias(
                        "message")))
    return sorted_table(changes, F.desc("change"), *KEYS, "version_rank")  # regressions first
