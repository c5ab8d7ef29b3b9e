"""The conformance matrix: pass rate per cell, per cell x spec file and per cell x test.

A cell is one configuration (driver and version / target and version,
topology, fail points, network faults); its name is built in
:mod:`reports.normalise`. The counts and the status come from
:mod:`reports.outcomes`, the same for every table.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from reports.frames import distinct_values, sorted_table
from reports.normalise import network_faults_configured
from reports.outcomes import latest_failure_message, outcome_counts, with_rates
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


def cell_tests(verdicts: DataFrame) -> DataFrame:
    """One row per cell x test: counts, pass rate, status and the latest failure message; failing ones first."""
    grouped = verdicts.groupBy("cell", "test_id").agg(
        F.min("spec_file").alias("spec_file"), F.min("test").alias("test"), *outcome_counts(), latest_failure_message()
    )
    return sorted_table(with_rates(grouped), F.col("status").isin("fail", "flaky").desc(), "cell", "test_id")
