"""reports.axes: each test along each version axis, in version order: first pass, regressions and fixes."""

from __future__ import annotations

import pytest

from tests.spark_support import record, rows, verdicts_frame

RESUME = "unified/cs-resume::resumes"
DOCS = "legacy/cs::compares documents"
MESSAGE = "OperationFailure, code 280 (ChangeStreamFatalError): cannot resume"


@pytest.fixture(scope="module")
def tables(spark):
    from reports.axes import first_pass, transitions, version_status
    from reports.versions import version_dimension

    recs = []
    # driver axis, text order would be wrong: 4.9 < 4.10 < 4.11
    for driver, resume in [("4.10", "failed"), ("4.9", "passed"), ("4.11", "failed")]:
        recs.append(
            record(RESUME, resume, MESSAGE if resume == "failed" else "", driver_version=driver, run_id=f"d{driver}")
        )
    # target axis: fails on the betas, fixed at the release
    for target, docs in [("0.7.0", "passed"), ("0.7.0b2", "failed"), ("0.7.0b3", "failed")]:
        recs.append(
            record(
                DOCS,
                docs,
                "" if docs == "passed" else f"expected 2 events at {target}",
                target_version=target,
                driver_version="4.9",
                run_id=f"t{target}",
            )
        )
    verdicts = verdicts_frame(spark, recs)
    status = version_status(verdicts, version_dimension(spark, verdicts, ["driver_version", "target_version"]))
    return {"version_status": status, "first_pass": first_pass(status), "transitions": transitions(status)}


def test_version_status_is_per_axis_context_test_and_version(tables):
    got = rows(
        tables["version_status"].where(f"axis = 'driver_version' and test_id = '{RESUME}'"),
        "version_rank",
        "version",
        "status",
        "context",
    )
    assert [(v, s) for _, v, s, _ in got] == [("4.9", "pass"), ("4.10", "fail"), ("4.11", "fail")]
    assert {c for *_, c in got} == {"pymongo / secantusdb 0.7.0 replicaset native"}


def test_a_regression_is_found_between_consecutive_versions_with_its_message(tables):
    got = rows(
        tables["transitions"].where("change = 'regression'"),
        "axis",
        "test_id",
        "previous_version",
        "version",
        "message",
    )
    assert got == [("driver_version", RESUME, "4.9", "4.10", MESSAGE)]


def test_a_fix_carries_the_failure_it_no_longer_has(tables):
    got = rows(
        tables["transitions"].where("change = 'fix'"), "axis", "test_id", "previous_version", "version", "message"
    )
    assert got == [("target_version", DOCS, "0.7.0b3", "0.7.0", "expected 2 events at 0.7.0b3")]


def test_first_pass_is_in_version_order_not_text_order(tables):
    got = rows(
        tables["first_pass"].where(f"test_id = '{DOCS}' and axis = 'target_version'"),
        "first_version",
        "first_pass_version",
        "last_version",
        "versions_decided",
    )
    assert got == [("0.7.0b2", "0.7.0", "0.7.0", 3)]
    never = rows(
        tables["first_pass"].where(f"test_id = '{RESUME}' and axis = 'driver_version'"),
        "first_pass_version",
        "first_version",
        "last_version",
    )
    assert never == [("4.9", "4.9", "4.11")]


def test_tests_that_start_or_stop_running_between_versions_are_changes_with_the_skip_reason(spark):
    """The real difference of the pymongo x SecantusDB matrix: an older release reports an older server, so a
    test is skipped there and runs from the next release on; the reverse is a change too."""
    from reports.axes import transitions, version_status
    from reports.versions import version_dimension

    newer = "unified/change-streams-nsType::nsType is present when creating views"
    gone = "legacy/cs::only on old servers"
    reason = "server 7.0.0 < minServerVersion 8.1.0"
    recs = []
    for target, outcome in [("0.6.0b12", "skipped"), ("0.6.0b17", "passed"), ("0.7.0b3", "passed")]:
        recs.append(
            record(newer, outcome, reason if outcome == "skipped" else "", target_version=target, run_id=f"n{target}")
        )
    for target, outcome in [("0.6.0b12", "passed"), ("0.6.0b17", "skipped"), ("0.7.0b3", "skipped")]:
        recs.append(
            record(
                gone,
                outcome,
                "maxServerVersion 7.99" if outcome == "skipped" else "",
                target_version=target,
                run_id=f"g{target}",
            )
        )
    verdicts = verdicts_frame(spark, recs)
    status = version_status(verdicts, version_dimension(spark, verdicts, ["driver_version", "target_version"]))
    got = rows(
        transitions(status), "change", "test_id", "previous_version", "version", "previous_status", "status", "message"
    )
    assert got == [
        ("no longer runs", gone, "0.6.0b12", "0.6.0b17", "pass", "skip", "maxServerVersion 7.99"),
        ("now runs", newer, "0.6.0b12", "0.6.0b17", "skip", "pass", reason),
    ]


def test_a_regression_across_a_skipped_version_is_still_a_regression(spark):
    from reports.axes import transitions, version_status
    from reports.versions import version_dimension

    recs = [
        record(RESUME, outcome, MESSAGE if outcome == "failed" else "", driver_version=driver, run_id=f"r{driver}")
        for driver, outcome in [("4.9", "passed"), ("4.10", "skipped"), ("4.11", "failed")]
    ]
    verdicts = verdicts_frame(spark, recs)
    status = version_status(verdicts, version_dimension(spark, verdicts, ["driver_version", "target_version"]))
    got = rows(transitions(status).where("axis = 'driver_version'"), "change", "previous_version", "version")
    assert got == [("no longer runs", "4.9", "4.10"), ("regression", "4.9", "4.11")]
