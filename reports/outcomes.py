"""Counting verdicts, one definition for every table.

"Decided" verdicts are passed, failed and error; a pass rate is
``passed / decided`` and null when nothing was decided (all skipped). The
status of a group of verdicts (a cell x test, a test at a version) is
``pass`` when every decided one passed, ``fail`` when none did, ``flaky``
when both happened, and ``skip`` when nothing was decided: the rules of
:mod:`harness.record.outcomes`, which the run's summary and the statements
apply to the same records, made a Spark column here.
"""

from __future__ import annotations

import operator
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from harness.record.outcomes import DECIDED, FAILING, OUTCOMES, STATUS_RULES

#: The columns :func:`outcome_counts` makes, in order.
COUNTS = ("runs", "verdicts", *OUTCOMES)


def is_failure() -> Column:
    return F.col("outcome").isin(*FAILING)


def outcome_counts() -> list[Column]:
    """Aggregations: runs, verdicts, one count per outcome, decided and pass_rate."""
    counts = [F.count_if(F.col("outcome") == outcome).alias(outcome) for outcome in OUTCOMES]
    return [F.count_distinct("run_id").alias("runs"), F.count("*").alias("verdicts"), *counts]


def added_counts() -> list[Column]:
    """Aggregations: ``verdicts`` and one count per outcome, added up from rows that hold them (never null)."""
    return [F.coalesce(F.sum(column), F.lit(0)).alias(column) for column in ("verdicts", *OUTCOMES)]


def with_rates(grouped_counts: DataFrame) -> DataFrame:
    """Add ``decided``, ``pass_rate`` and ``status`` to a frame of :func:`outcome_counts`."""
    decided = reduce(operator.add, [F.col(outcome) for outcome in DECIDED])
    return (
        grouped_counts.withColumn("decided", decided)
        .withColumn("pass_rate", F.when(decided > 0, F.col("passed") / decided))
        .withColumn("status", status(F.col("passed"), F.col("failed") + F.col("error")))
    )


def status(passed: Column, failures: Column) -> Column:
    """``pass``, ``fail``, ``flaky`` or ``skip`` from the passed and failing counts of a group
    (:data:`harness.record.outcomes.STATUS_RULES`, in order; the last holds always)."""
    column: Any = F
    for name, needs_pass, needs_failure in STATUS_RULES[:-1]:
        conditions = [
            (count > 0) if needs else ~(count > 0)
            for count, needs in ((passed, needs_pass), (failures, needs_failure))
            if needs is not None
        ]
        column = column.when(reduce(operator.and_, conditions), name)
    return column.otherwise(STATUS_RULES[-1][0])


def latest_failure_message() -> Column:
    """The message of the group's most recent failing verdict (null when none failed)."""
    return _latest_message(is_failure()).alias("message")


#: What :func:`latest_failure` keeps of the most recent failing verdict, in the order it breaks ties by.
LATEST_FAILURE = ("message", "causes", "known_deviation")


def known_deviation() -> Column:
    """A verdict's known-deviation reason: its ``expectation_reason`` when the run classified it as a known
    failure or error (``known-*``), else null (an unexpected failure's reason is no deviation's)."""
    return F.when(F.col("expectation_kind").startswith("known-"), F.col("expectation_reason"))


def latest_failure() -> list[Column]:
    """The group's most recent failing verdict: its message, its causes (JSON text) and its known-deviation reason.

    All three come from the one verdict (a struct's maximum), so a statement reads a failure's causes beside the
    message they explain; the message is the one :func:`latest_failure_message` picks.
    """
    when = F.coalesce(F.col("started_at"), F.lit(0).cast("timestamp"))
    fields = [F.col("message"), F.col("causes"), known_deviation().alias("known_deviation")]
    latest = F.max(F.when(is_failure(), F.struct(when.alias("at"), *fields)))
    return [latest[name].alias(name) for name in LATEST_FAILURE]


def latest_skip_reason() -> Column:
    """Why the group's most recent skipped verdict was skipped (null when none was)."""
    return _latest_message(F.col("outcome") == "skipped").alias("skip_reason")


def _latest_message(condition: Column) -> Column:
    when = F.coalesce(F.col("started_at"), F.lit(0).cast("timestamp"))
    return F.max(F.when(condition, F.struct(when.alias("at"), F.col("message").alias("message"))))["message"]
