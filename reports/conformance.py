"""The conformance matrix: pass rate per cell, per cell x spec file and per cell x test.

A cell is one configuration (driver and version / target and version,
topology, fail points, network faults); its name is built in
:mod:`reports.normalise`. The counts and the status come from
:mod:`reports.outcomes`, the same for every table.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from reports.frames import distinct_values, sorted_table
from reports.normalise import network_faults_configured
from reports.outcomes import (
    COUNTS,
    DECIDED,
    FAILING,
    OUTCOMES,
    latest_failure_message,
    latest_skip_reason,
    outcome_counts,
    with_rates,
)
from reports.versions import with_version_rank

#: The columns a cell is made of (its name is a function of them and of whether network faults were configured).
CELL_AXES = ("driver_name", "driver_version", "target_name", "target_version", "topology", "failpoints")


def cells(verdicts: DataFrame, versions: DataFrame) -> DataFrame:
    """One row per cell: its axes, runs, verdict counts and pass rate; in version order (``versions``)."""
    grouped = verdicts.groupBy("cell", *CELL_AXES).agg(
        F.bool_or(network_faults_configured()).alias("network_faults"),
        distinct_values("target_kind").alias("target_kinds"),
        distinct_values("server_version").alias("server_versions"),
        *outcome_counts(),
    )
    ranked = with_version_rank(
        with_version_rank(grouped, "driver_version", versions, "driver_rank"), "target_version", versions, "target_rank"
    )
    return sorted_table(
        with_rates(ranked).drop("status"), "driver_name", "driver_rank", "target_name", "target_rank", "cell"
    ).drop("driver_rank", "target_rank")


def cell_files(verdicts: DataFrame) -> DataFrame:
    """One row per cell x spec file."""
    return sorted_table(
        with_rates(verdicts.groupBy("cell", "spec_file").agg(*outcome_counts())).drop("status"), "cell", "spec_file"
    )


#: Whether a configuration ran with network faults of its own (the ``+netfaults`` of its name), per configuration.
CONFIGURED = "netfaults_configured"


def per_cell_test(verdicts: DataFrame) -> DataFrame:
    """One row per configuration x test: what ``cell_tests``, both axes of ``version_status`` and ``flakiness`` count.

    The costly parts of the report are the ones that need every verdict in one place per cell x test:
    the runs (distinct run ids: nearly every verdict is a group of its own) and the transitions (decided
    verdicts in time order). Both are computed in one shuffle that carries a small integer key per cell x
    test (from a dimension of the pairs, broadcast) with the run id, time and outcome, instead of the names
    and messages; everything else is counted by an aggregation that reduces each partition to its cell x
    test pairs before anything moves. The tables group the same verdicts (a cell is its configuration; an
    axis's context and version are the same configuration: :func:`reports.axes.keys_fit` checks it), so
    they are all made from this aggregate (cached by the caller: it has a row per cell x test).
    """
    decided = F.col("outcome").isin(*DECIDED)
    counted = (
        verdicts.groupBy("cell", *CELL_AXES, network_faults_configured().alias(CONFIGURED), "test_id")
        .agg(
            F.min("spec_file").alias("spec_file"),
            F.min("test").alias("test"),
            F.count("*").alias("verdicts"),
            *[F.count_if(F.col("outcome") == outcome).alias(outcome) for outcome in OUTCOMES],
            latest_failure_message(),
            latest_skip_reason(),
            F.min(F.when(decided, F.col("test"))).alias("decided_test"),  # flakiness names a test by its decided runs
        )
        .cache()
    )
    pairs = sorted({(row["cell"], row["test_id"]) for row in counted.select("cell", "test_id").collect()})
    keys = verdicts.sparkSession.createDataFrame(
        [(cell, test_id, key) for key, (cell, test_id) in enumerate(pairs)], "cell string, test_id string, key int"
    )
    in_time = Window.partitionBy("key").orderBy(F.col("started_at").asc_nulls_first(), "run_id", "repeat")
    earlier = in_time.rowsBetween(Window.unboundedPreceding, -1)
    failure = F.when(decided, F.col("outcome").isin(*FAILING))
    runs = (
        verdicts.join(F.broadcast(keys), ["cell", "test_id"])
        .select("key", "run_id", "started_at", "repeat", failure.alias("failure"))
        .withColumn("before", F.last("failure", ignorenulls=True).over(earlier))  # the previous decided verdict's
        .groupBy("key")
        .agg(
            F.count_distinct("run_id").alias("runs"),
            F.count_if(F.col("failure") != F.col("before")).alias("transitions"),
        )
    )
    return (
        counted.join(keys, ["cell", "test_id"])
        .join(runs, "key")
        .select(
            "cell",
            *CELL_AXES,
            CONFIGURED,
            "test_id",
            "spec_file",
            "test",
            *COUNTS,
            "message",
            "skip_reason",
            "decided_test",
            "transitions",
        )
    )


def cell_tests(verdicts: DataFrame, per_test: DataFrame | None = None) -> DataFrame:
    """One row per cell x test: counts, pass rate, status and the latest failure message; failing ones first.

    From ``per_test`` (:func:`per_cell_test` of the same verdicts) when given: each of its rows is one cell x test.
    """
    if per_test is None:
        grouped = verdicts.groupBy("cell", "test_id").agg(
            F.min("spec_file").alias("spec_file"),
            F.min("test").alias("test"),
            *outcome_counts(),
            latest_failure_message(),
            latest_skip_reason(),
        )
    else:
        grouped = per_test.select("cell", "test_id", "spec_file", "test", *COUNTS, "message", "skip_reason")
    return sorted_table(with_rates(grouped), F.col("status").isin("fail", "flaky").desc(), "cell", "test_id")
