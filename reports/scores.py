"""Scores people compare: the share of rules met, and the failures only one driver (or one target) has.

Defined in docs/reports.md ("Scores"). ``rule_scores``: per cell and rule area, a rule is *met* when some verdict
of a test checking it was decided and none failed, *not met* when one failed, and *neutral* when nothing was
decided (every verdict skipped or not applicable); the share is met / (met + not met). ``exclusive_failures``
counts, the way wpt.fyi counts a browser's specific failures, the causes (docs/causes.md, grouped by the blame
signature) that a driver shows on a target while every other driver that decided the test there is without them
(and the same with the roles of driver and target swapped); a cell that only skipped the test is neutral: it
neither clears nor shows the cause, and a cause no other cell decided is not counted.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from reports.blame import driver_of, failing_causes, target_of
from reports.frames import sorted_table
from reports.normalise import verdicts_by_rule
from reports.outcomes import DECIDED, is_failure

#: The two axes of ``exclusive_failures``: the one a failure is exclusive to, and the one it is compared within.
AXES = {"driver": "target", "target": "driver"}
#: The ``rule_area`` of the row that sums every area of a cell.
ALL_AREAS = "all"


def rule_scores(verdicts: DataFrame) -> DataFrame:
    """Per cell x rule area (and ``all``): rules met, not met and neutral, and ``share_met``."""
    per_rule = (
        verdicts_by_rule(verdicts)
        .groupBy("cell", "rule_area", "rule")
        .agg(
            F.count_if(F.col("outcome").isin(*DECIDED)).alias("decided"),
            F.count_if(is_failure()).alias("failed"),
        )
        .select(
            "cell",
            "rule_area",
            (F.col("failed") == 0) & (F.col("decided") > 0),
            F.col("failed") > 0,
            F.col("decided") == 0,
        )
        .toDF("cell", "rule_area", "met", "not_met", "neutral")
    )
    counts = [
        F.count_if("met").alias("rules_met"),
        F.count_if("not_met").alias("rules_not_met"),
        F.count_if("neutral").alias("rules_neutral"),
    ]
    areas = per_rule.groupBy("cell", "rule_area").agg(*counts)
    every = per_rule.groupBy("cell").agg(*counts).withColumn("rule_area", F.lit(ALL_AREAS))
    scored = areas.unionByName(every)
    judged = F.col("rules_met") + F.col("rules_not_met")
    return sorted_table(
        scored.withColumn("share_met", F.when(judged > 0, F.col("rules_met") / judged)),
        "cell",
        F.col("rule_area") == ALL_AREAS,
        "rule_area",
    )


def exclusive_failures(verdicts: DataFrame) -> DataFrame:
    """Per axis (``driver``, ``target``) and name: the failures no other driver (target) has, over causes.

    ``exclusive_causes``: cell x test x cause signatures shown with this driver on a target where at least one
    other driver decided the test and none of them shows it; ``exclusive_tests``: the target x tests with one or
    more; ``score``: per target x test, its exclusive causes / the causes it shows there, summed (wpt.fyi's
    normalisation, a test with many subtests counting one, here with causes for subtests). For ``target`` the
    same with the roles swapped.
    """
    parts = F.struct(driver_of(F.col("cell")).alias("driver"), target_of(F.col("cell")).alias("target"))
    decided = (
        verdicts.where(F.col("outcome").isin(*DECIDED))
        .select("cell", "test_id")
        .distinct()
        .select("test_id", parts.alias("p"))
        .select("test_id", "p.*")
    )
    shown = (
        failing_causes(verdicts)
        .select("cell", "test_id", "signature")
        .distinct()
        .select("test_id", "signature", parts.alias("p"))
        .select("test_id", "signature", "p.*")
    )
    driver, target = (_exclusive(decided, shown, axis, within) for axis, within in AXES.items())
    return sorted_table(driver.unionByName(target), "axis", F.col("exclusive_causes").desc(), "name")


def _exclusive(decided: DataFrame, shown: DataFrame, axis: str, within: str) -> DataFrame:
    deciders = decided.groupBy(within, "test_id").agg(F.count("*").alias("deciders"))
    by_cause = Window.partitionBy(within, "test_id", "signature")
    by_cell_test = Window.partitionBy(axis, within, "test_id")
    judged = (
        shown.join(deciders, [within, "test_id"])
        .withColumn("showing", F.count("*").over(by_cause))
        .withColumn("shown_here", F.count("*").over(by_cell_test))
        .withColumn("exclusive", (F.col("deciders") > 1) & (F.col("showing") == 1))
    )
    per_test = judged.groupBy(axis, within, "test_id").agg(
        F.count_if("exclusive").alias("exclusive"), F.max("shown_here").alias("shown")
    )
    cells = decided.groupBy(axis).agg(F.count_distinct(within).alias("compared_with"))
    counted = per_test.groupBy(axis).agg(
        F.sum("exclusive").alias("exclusive_causes"),
        F.count_if(F.col("exclusive") > 0).alias("exclusive_tests"),
        F.sum(F.col("exclusive") / F.col("shown")).alias("score"),
    )
    return (
        cells.join(counted, axis, "left")
        .select(
            F.lit(axis).alias("axis"),
            F.col(axis).alias("name"),
            F.col("compared_with").alias(f"{within}s"),
            F.coalesce(F.col("exclusive_causes"), F.lit(0)).cast("long").alias("exclusive_causes"),
            F.coalesce(F.col("exclusive_tests"), F.lit(0)).cast("long").alias("exclusive_tests"),
            F.coalesce(F.col("score"), F.lit(0.0)).alias("score"),
        )
        .withColumnRenamed(f"{within}s", "compared_within")
    )
