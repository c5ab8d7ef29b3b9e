"""reports.conformance and reports.outcomes: pass rates per cell, per spec file and per test."""

from __future__ import annotations

import pytest

from tests.spark_support import at, record, rows, verdicts_frame

A, B, S = "unified/cs::a", "unified/cs::b", "legacy/other::skipped"


@pytest.fixture(scope="module")
def verdicts(spark):
    recs = []
    for repeat, b_outcome in enumerate(["passed", "failed", "passed"]):
        run = f"r{repeat}"
        recs += [
            record(A, "passed", run_id=run, started_at=at(repeat)),
            record(
                B, b_outcome, "expected 2 got 1" if b_outcome == "failed" else "", run_id=run, started_at=at(repeat)
            ),
            record(S, "skipped", "needs single", run_id=run, started_at=at(repeat)),
        ]
    recs += [
        record(A, "error", f"boom {n}", run_id="other", driver_version="4.10.0", started_at=at(10 + n))
        for n in range(2)
    ]
    recs.append(record(S, "skipped", run_id="other", driver_version="4.10.0"))
    return verdicts_frame(spark, recs)


def versions(spark, verdicts):
    from reports.versions import version_dimension

    return version_dimension(spark, verdicts, ["driver_version", "target_version"])


def test_cells_count_runs_verdicts_and_pass_rate_in_version_order(spark, verdicts):
    from reports.conformance import cells

    table = cells(verdicts, versions(spark, verdicts))
    got = [
        (
            r["driver_version"],
            r["runs"],
            r["verdicts"],
            r["passed"],
            r["failed"],
            r["error"],
            r["skipped"],
            r["pass_rate"],
        )
        for r in table.collect()
    ]
    assert got == [("4.9.0", 3, 9, 5, 1, 0, 3, 5 / 6), ("4.10.0", 1, 3, 0, 0, 2, 1, 0.0)]


def test_cell_files_and_a_file_with_nothing_decided_has_no_pass_rate(verdicts):
    from reports.conformance import cell_files

    got = rows(cell_files(verdicts).where("cell like 'pymongo 4.9.0%'"), "spec_file", "passed", "decided", "pass_rate")
    assert got == [("legacy/other", 0, 0, None), ("unified/cs", 5, 6, 5 / 6)]


def test_cell_tests_status_and_latest_failure_message(verdicts):
    from reports.conformance import cell_tests

    got = rows(cell_tests(verdicts), "cell", "test_id", "status", "message")
    got = [(cell.split(" ")[1], test, status, message) for cell, test, status, message in got]
    assert got == [
        ("4.10.0", S, "skip", None),
        ("4.10.0", A, "fail", "boom 1"),
        ("4.9.0", S, "skip", None),
        ("4.9.0", A, "pass", None),
        ("4.9.0", B, "flaky", "expected 2 got 1"),
    ]
