"""Scores (reports/scores.py, docs/reports.md "Scores") on the generated history's planted facts."""

from __future__ import annotations

import pytest

from reports import scores
from tests.reports import history_world as world
from tests.spark_support import record, rows, verdicts_frame


@pytest.fixture(scope="module")
def verdicts(spark):
    return verdicts_frame(spark, world.history_records()).cache()


def test_the_share_of_rules_met_per_cell_and_area(verdicts):
    table = rows(
        scores.rule_scores(verdicts), "cell", "rule_area", "rules_met", "rules_not_met", "rules_neutral", "share_met"
    )
    by_key = {(cell, area): rest for cell, area, *rest in table}
    regressed = "pymongo 4.10.0 / secantusdb 0.7.0 replicaset native"
    # REGRESSED (CS-RESUME-1) fails, CS-RESUME-2 passes; CS-ITER-2 passes, NODE_SKIPS (CS-ITER-3) fails
    assert by_key[(regressed, "CS-RESUME")] == [1, 1, 0, 0.5]
    assert by_key[(regressed, "CS-ITER")] == [1, 1, 0, 0.5]
    assert by_key[(regressed, "CS-SKIP")] == [0, 0, 1, None]  # skipped everywhere: neutral, no share
    assert by_key[(regressed, "all")] == [3, 3, 1, 0.5]
    node = "node 6.0.0 / secantusdb 0.7.0 replicaset native"
    # node skips NODE_SKIPS (neutral) and fails the flip-flop in two of its runs (not met)
    assert by_key[(node, "CS-ITER")] == [0, 1, 1, 0.0]
    assert by_key[(node, "CS-RESUME")] == [2, 0, 0, 1.0]


def test_failures_only_one_driver_or_target_has(verdicts):
    got = rows(
        scores.exclusive_failures(verdicts),
        "axis",
        "name",
        "compared_within",
        "exclusive_causes",
        "exclusive_tests",
        "score",
    )
    assert got == sorted(
        [
            # REGRESSED's cause on both targets, where node passed it; NODE_SKIPS is not counted (node skipped it)
            ("driver", "pymongo 4.10.0", 2, 2, 2, 2.0),
            ("driver", "node 6.0.0", 2, 1, 1, 1.0),  # the flip-flop's cause on secantusdb
            ("driver", "pymongo 4.9.0", 2, 0, 0, 0.0),
            # with node, only secantusdb shows the flip-flop's cause; REGRESSED fails on both targets
            ("target", "secantusdb 0.7.0 replicaset native", 3, 1, 1, 1.0),
            ("target", "mongo-java-server 1.47.0 replicaset native", 3, 0, 0, 0.0),
        ]
    )


def test_a_test_with_two_causes_counts_once_in_the_score(spark):
    """wpt.fyi's normalisation: one exclusive cause of two shown counts half a test."""
    two = [{"clause": "event", "fact": "a", "rules": []}, {"clause": "result", "fact": "b", "rules": []}]
    one = [{"clause": "result", "fact": "b", "rules": []}]
    records = []
    for version, causes in (("4.9.0", two), ("4.10.0", one)):
        failing = record(outcome="failed", message="x", driver_version=version, run_id=version)
        failing["causes"] = causes
        records.append(failing)
    table = rows(scores.exclusive_failures(verdicts_frame(spark, records)), "axis", "name", "exclusive_causes", "score")
    assert ("driver", "pymongo 4.9.0", 1, 0.5) in table
    assert ("driver", "pymongo 4.10.0", 0, 0.0) in table
