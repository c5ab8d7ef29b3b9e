"""Fault survival per cell, from campaign records.

A campaign record (``format: campaign``) is one seeded run of faults against
a change stream; its details say how many faults were injected, how many
times the driver resumed, how many events were written, and what went wrong
(delivery anomalies, errors the spec does not allow to reach the app).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from reports.frames import sorted_table
from reports.versions import with_version_rank

#: Campaign detail columns summed per cell.
SUMMED = ("faults_injected", "resumes", "events", "anomalies", "disallowed_errors")


def fault_survival(verdicts: DataFrame, versions: DataFrame | None = None) -> DataFrame:
    """One row per cell that ran campaigns; in version order, as the cells table, when ``versions`` is given."""
    survival = (
        verdicts.where(F.col("format") == "campaign")
        .groupBy("cell", "driver_name", "driver_version", "target_name", "target_version")
        .agg(
            F.count("*").alias("campaigns"),
            F.count_if(F.col("outcome") == "passed").alias("passed"),
            *[F.coalesce(F.sum(column), F.lit(0)).alias(column) for column in SUMMED],
        )
    )
    if versions is None:
        return sorted_table(survival.select("cell", "campaigns", "passed", *SUMMED), "cell")
    ranked = with_version_rank(
        with_version_rank(survival, "driver_version", versions, "driver_rank"),
        "target_version",
        versions,
        "target_rank",
    )
    return sorted_table(ranked, "driver_name", "driver_rank", "target_name", "target_rank", "cell").select(
        "cell", "campaigns", "passed", *SUMMED
    )
