"""Runs over time, and the growing history ``--append-to`` keeps.

``runs`` has one row per run (its cell, when it started, its counts and
pass rate): the table behind the history plot. :func:`append_verdicts` adds
this job's normalised verdicts to ``DIR/verdicts`` (Parquet), skipping any
run already there, so publishing the same results twice changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from reports.discover import VERDICTS_MARKER
from reports.frames import distinct_values, sorted_table
from reports.outcomes import OUTCOMES, with_rates
from reports.read import read_verdicts


def runs(verdicts: DataFrame) -> DataFrame:
    """One row per run_id, in time order.

    Counted in two steps: per run x cell x source with plain aggregates (which reduce each partition to
    its runs before anything moves), then the cells and sources of each run gathered from those few rows.
    Gathering sets (``collect_set``) over every verdict of a large history would be an object aggregate
    over hundreds of thousands of groups, which Spark sorts instead of hashing (past 128 groups a task).
    """
    counts = [F.count_if(F.col("outcome") == outcome).alias(outcome) for outcome in OUTCOMES]
    parts = verdicts.groupBy("run_id", "cell", "source").agg(
        F.min("started_at").alias("started_at"),
        F.max("started_at").alias("ended_at"),
        F.max("matrix").alias("matrix"),
        F.max("cell_label").alias("cell_label"),
        F.max("repeat").alias("repeat"),
        F.count("*").alias("verdicts"),
        *counts,
    )
    grouped = parts.groupBy("run_id").agg(
        F.min("started_at").alias("started_at"),
        F.max("ended_at").alias("ended_at"),
        distinct_values("cell", "; ").alias("cell"),
        F.max("matrix").alias("matrix"),
        F.max("cell_label").alias("cell_label"),
        F.max("repeat").alias("repeat"),
        distinct_values("source").alias("sources"),
        *[F.coalesce(F.sum(column), F.lit(0)).alias(column) for column in ("verdicts", *OUTCOMES)],  # never null
    )
    return sorted_table(with_rates(grouped).drop("status"), F.col("started_at").asc_nulls_first(), "run_id")


def verdicts_directory(history: Path) -> Path:
    return history / "verdicts"


def append_verdicts(spark: SparkSession, verdicts: DataFrame, history: Path) -> tuple[int, DataFrame]:
    """Append the runs not yet in ``history/verdicts``; return how many runs were added and the whole history."""
    target = verdicts_directory(history)
    existing = _read_history(spark, target)
    new = verdicts.join(existing.select("run_id").distinct(), "run_id", "left_anti").select(*verdicts.columns)
    added = new.select("run_id").distinct().count()
    if added:
        new.write.mode("append").parquet(str(target))
        (target / VERDICTS_MARKER).write_text("normalised verdicts written by harness report --append-to\n")
    return added, _read_history(spark, target)


def _read_history(spark: SparkSession, target: Path) -> DataFrame:
    return read_verdicts(spark, [str(target)] if (target / VERDICTS_MARKER).exists() else [])
