"""reports.flakiness: a flaky test (3 failures in 20) told apart from one failed run, by the Wilson interval."""

from __future__ import annotations

import pytest

from tests.spark_support import at, record, verdicts_frame

FLAKY, ONCE, SOLID, BROKEN = "u/f::flaky", "u/f::once", "u/f::solid", "u/f::broken"


@pytest.fixture(scope="module")
def table(spark):
    from reports.flakiness import flakiness

    failing_runs = {3, 4, 11}  # three failures in twenty, two of them back to back: four transitions
    recs = [
        record(
            FLAKY,
            "failed" if n in failing_runs else "passed",
            f"timeout {n}" if n in failing_runs else "",
            run_id=f"r{n:02}",
            started_at=at(n),
        )
        for n in range(20)
    ]
    recs += [
        record(ONCE, "failed", "boom", run_id="x", started_at=at(0)),
        record(SOLID, "passed", run_id="y"),
        record(SOLID, "skipped", run_id="z"),
        record(BROKEN, "error", "e1", run_id="b1", started_at=at(0)),
        record(BROKEN, "failed", "e2", run_id="b2", started_at=at(1)),
    ]
    return {r["test_id"]: r for r in flakiness(verdicts_frame(spark, recs)).collect()}


def test_three_failures_in_twenty_is_flaky_with_an_interval_that_excludes_zero(table):
    row = table[FLAKY]
    assert (row["runs"], row["failures"], row["flake_rate"], row["transitions"]) == (20, 3, 0.15, 4)
    assert (round(row["wilson_low"], 3), round(row["wilson_high"], 3)) == (0.052, 0.360)
    assert row["classification"] == "flaky" and row["message"] == "timeout 11"


def test_a_single_failed_run_is_one_failed_run_with_a_wide_interval(table):
    row = table[ONCE]
    assert (row["runs"], row["failures"], row["transitions"]) == (1, 1, 0)
    assert (round(row["wilson_low"], 3), row["wilson_high"]) == (0.207, 1.0)
    assert row["classification"] == "one failed run"


def test_stable_and_failing_and_skips_do_not_count_as_runs(table):
    assert (table[SOLID]["runs"], table[SOLID]["classification"], table[SOLID]["wilson_low"]) == (1, "stable", 0.0)
    assert (table[BROKEN]["runs"], table[BROKEN]["classification"], table[BROKEN]["transitions"]) == (2, "failing", 0)


def test_the_flaky_test_is_listed_first(spark, table):
    from reports.flakiness import flakiness

    first = flakiness(
        verdicts_frame(
            spark,
            [
                record(ONCE, "failed", "x"),
                record(FLAKY, "failed", "y", run_id="a"),
                record(FLAKY, "passed", run_id="b"),
            ],
        )
    ).first()
    assert first["test_id"] == FLAKY
