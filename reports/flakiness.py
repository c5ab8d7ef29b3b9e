"""Flakiness: the same test in the same cell with mixed outcomes across repeats and runs.

For each cell x test with decided verdicts: runs, failures, the flake rate,
the number of outcome transitions in time order (pass -> fail counts one,
fail -> pass another), and the Wilson 95% interval of the failure rate. The
Wilson interval stays inside [0, 1] and is honest for small samples: one
failed run out of one gives [0.21, 1.0] ("rerun to tell"), three failures in
twenty give [0.05, 0.36] (a real flake). The classification says which.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from harness.record.outcomes import FLAKY_STATUS
from reports.conformance import in_time
from reports.frames import sorted_table
from reports.outcomes import DECIDED, is_failure, latest_failure_message, status

#: z for a two-sided 95% interval.
Z = 1.959963984540054
KEYS = ("cell", "test_id")


def wilson_interval(failures: Column, runs: Column, z: float = Z) -> tuple[Column, Column]:
    """Lower and upper bound of the Wilson score interval for ``failures / runs`` (null when runs is 0)."""
    n = runs.cast("double")
    p = failures / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * F.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    valid = runs > 0
    return (F.when(valid, F.greatest(F.lit(0.0), centre - half)), F.when(valid, F.least(F.lit(1.0), centre + half)))


def classification(failures: Column, runs: Column) -> Column:
    """``flaky`` (both outcomes seen: the status of :mod:`harness.record.outcomes`, which the run decides its
    retried tests by), ``failing``, ``stable``, or ``one failed run`` (rerun to tell)."""
    return (
        F.when(failures == 0, "stable")
        .when(status(runs - failures, failures) == FLAKY_STATUS, "flaky")
        .when(runs == 1, "one failed run")
        .otherwise("failing")
    )


def flakiness(verdicts: DataFrame, per_test: DataFrame | None = None) -> DataFrame:
    """One row per cell x test with decided verdicts.

    With ``per_test`` (:func:`reports.conformance.per_cell_test` of the same verdicts) every figure, the
    transitions included, comes from it: the verdicts are not put in time order a second time.
    """
    counted = _counted(verdicts) if per_test is None else _counted_from(per_test)
    low, high = wilson_interval(F.col("failures"), F.col("runs"))
    table = (
        counted.withColumn("flake_rate", F.col("failures") / F.col("runs"))
        .withColumn("wilson_low", low)
        .withColumn("wilson_high", high)
        .withColumn("classification", classification(F.col("failures"), F.col("runs")))
    )
    return sorted_table(table, F.col("classification") != "flaky", F.desc("flake_rate"), *KEYS)


def _counted(verdicts: DataFrame) -> DataFrame:
    decided = (
        verdicts.where(F.col("outcome").isin(*DECIDED))
        .select(*KEYS, "test", "started_at", "run_id", "repeat", "outcome", "message", is_failure().alias("failure"))
        .withColumn("changed", F.col("failure") != F.lag("failure").over(in_time(*KEYS)))
    )
    return decided.groupBy(*KEYS).agg(
        F.min("test").alias("test"),
        F.count("*").alias("runs"),
        F.count_if("failure").alias("failures"),
        F.count_if("changed").alias("transitions"),
        latest_failure_message(),
    )


def _counted_from(per_test: DataFrame) -> DataFrame:
    decided = per_test.where(F.col("passed") + F.col("failed") + F.col("error") > 0)
    return decided.select(
        *KEYS,
        F.col("decided_test").alias("test"),
        (F.col("passed") + F.col("failed") + F.col("error")).alias("runs"),
        (F.col("failed") + F.col("error")).alias("failures"),
        "transitions",
        "message",
    )
