"""What several verdicts of one test come to: one rule (harness/record/outcomes.py), in Python for the run's summary
and the statements, and as the report's Spark column; the two agree on every combination."""

from __future__ import annotations

import itertools

import pytest

from harness.record.outcomes import (
    ERROR,
    FAILED,
    FLAKY,
    FLAKY_STATUS,
    PASSED,
    SKIPPED,
    STATUS_OUTCOME,
    outcome_of,
    status,
    status_of,
)


@pytest.mark.parametrize(
    "outcomes, expected",
    [
        ([FAILED, PASSED], FLAKY),
        ([PASSED, ERROR, PASSED], FLAKY),
        ([FAILED, FAILED, FAILED], FAILED),
        ([ERROR, ERROR], ERROR),
        ([ERROR, FAILED], FAILED),
        ([PASSED], PASSED),
        ([PASSED, SKIPPED], PASSED),
        ([SKIPPED, SKIPPED], SKIPPED),
        ([FAILED, SKIPPED], FAILED),
    ],
)
def test_what_a_test_s_attempts_come_to(outcomes, expected):
    assert outcome_of(outcomes) == expected


def test_a_test_that_failed_and_passed_is_never_passed():
    for order in itertools.permutations([PASSED, FAILED, PASSED]):
        assert status_of(order) == FLAKY_STATUS and STATUS_OUTCOME[status_of(order)] == FLAKY


def test_the_report_s_status_column_is_the_same_rule(spark):
    from pyspark.sql import functions as F

    from reports.outcomes import status as spark_status

    grid = [(passed, failures) for passed in range(3) for failures in range(3)]
    frame = spark.createDataFrame(grid, "passed int, failures int")
    got = {
        (row["passed"], row["failures"]): row["status"]
        for row in frame.select("*", spark_status(F.col("passed"), F.col("failures")).alias("status")).collect()
    }
    assert got == {key: status(*key) for key in grid}
    assert set(got.values()) == {"pass", "fail", "flaky", "skip"}
