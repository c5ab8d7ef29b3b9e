"""The named views ``harness query`` runs Spark SQL over, made from a history's verdicts.

One entry per view (docs/reports.md, "Questions in SQL", lists their columns): the report's own tables under
their own names (``runs``, ``cells``, ``cell_tests``), the verdicts themselves, one row per cause of a failing
verdict (``causes``), and the history's tables (``timelines``, ``first_changes``, ``flip_flops``,
``rule_scores``, ``exclusive_failures``). A view is registered only when the query names it, so a question about
``runs`` does not plan the timelines; nothing is computed until the query runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from reports import axes, conformance, history, scores, timelines
from reports.blame import driver_of, signature, target_of
from reports.outcomes import is_failure
from reports.schema import CAUSES
from reports.versions import version_dimension


def causes(verdicts: DataFrame) -> DataFrame:
    """One row per failing verdict x cause (a failing verdict without causes: one row with null cause fields)."""
    parsed = F.from_json(F.col("causes"), CAUSES)
    failing = verdicts.where(is_failure()).select(
        "run_id",
        "started_at",
        "cell",
        timelines.configuration_name().alias("configuration"),
        driver_of(F.col("cell")).alias("driver"),
        target_of(F.col("cell")).alias("target"),
        "driver_name",
        "driver_version",
        "target_name",
        "target_version",
        "test_id",
        "outcome",
        "message",
        F.explode_outer(parsed).alias("c"),
    )
    c = F.col("c")
    return failing.select(
        *[name for name in failing.columns if name != "c"],
        F.when(c.isNotNull(), signature(c)).alias("signature"),
        *[c[field].alias(field) for field in ("clause", "step", "path", "fact", "rules", "known")],
    )


def _cells(spark: SparkSession, verdicts: DataFrame, days: int) -> DataFrame:
    return conformance.cells(verdicts, version_dimension(spark, verdicts, list(axes.AXES)))


def _flip_flops(spark: SparkSession, verdicts: DataFrame, days: int) -> DataFrame:
    return timelines.flip_flops(timelines.first_changes(verdicts), timelines.latest_run(verdicts), days)


#: Each view: how it is made from the session, the history's verdicts and the flip-flop window (days).
VIEWS: dict[str, Callable[[SparkSession, DataFrame, int], DataFrame]] = {
    "verdicts": lambda spark, v, days: v,
    "runs": lambda spark, v, days: history.runs(v),
    "cells": _cells,
    "cell_tests": lambda spark, v, days: conformance.cell_tests(v),
    "causes": lambda spark, v, days: causes(v),
    "timelines": lambda spark, v, days: timelines.timelines(v),
    "first_changes": lambda spark, v, days: timelines.first_changes(v),
    "flip_flops": _flip_flops,
    "rule_scores": lambda spark, v, days: scores.rule_scores(v),
    "exclusive_failures": lambda spark, v, days: scores.exclusive_failures(v),
}


def named_views(sql: str) -> list[str]:
    """The views ``sql`` names (as whole words, in any case)."""
    words = {word.lower() for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql)}
    return [name for name in VIEWS if name in words]


def register_views(
    spark: SparkSession, verdicts: DataFrame, sql: str, days: int = timelines.FLIP_FLOP_DAYS
) -> list[str]:
    """Register the views ``sql`` names as temporary views of ``spark``; return their names."""
    names = named_views(sql)
    for name in names:
        VIEWS[name](spark, verdicts, days).createOrReplaceTempView(name)
    return names


def query(spark: SparkSession, verdicts: DataFrame, sql: str, days: int = timelines.FLIP_FLOP_DAYS) -> DataFrame:
    """``sql`` over the views it names (``days``: the window of ``flip_flops``)."""
    register_views(spark, verdicts, sql, days)
    return spark.sql(sql)
