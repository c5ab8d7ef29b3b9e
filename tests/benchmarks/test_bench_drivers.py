"""The drivers benchmark measures what it says: round trips through each port, and a table naming every driver."""

from __future__ import annotations

import argparse

from benchmarks import bench_drivers


def test_round_trips_go_through_the_driver_port_in_process_and_through_an_executor():
    for driver in ("pymongo", "pymongo-executor"):
        timings = bench_drivers.round_trips(driver, 3)
        assert set(timings) == {"find", "insertOne"}
        assert all(value > 0 for value in timings.values())


def test_the_table_gives_ratios_to_pymongo_and_says_why_a_driver_was_not_measured():
    base = bench_drivers.DriverRow("pymongo", walls_s=[10.0, 12.0], exit_codes=[0, 0], verdicts={"a": "passed"})
    slower = bench_drivers.DriverRow("node", walls_s=[18.0], exit_codes=[0], verdicts={"a": "failed"})
    missing = bench_drivers.DriverRow("go", problem="not installed here")
    args = argparse.Namespace(rounds=2, jobs=1)
    page = bench_drivers.render([base, slower, missing], args)
    node_row = next(line for line in page.splitlines() if line.startswith("| node |"))
    assert "| 18.00 | 1.80 |" in node_row
    assert "| 1 |" in node_row  # one verdict differs from pymongo's
    assert "| go | not measured: not installed here |" in page


def test_the_breakdown_splits_budget_waits_slow_tests_and_the_rest_against_the_same_tests_with_pymongo():
    base = bench_drivers.DriverRow("pymongo", walls_s=[5.0], exit_codes=[0], durations={"a": 1.0, "b": 0.2, "c": 0.2})
    records = [
        {"test_id": "a", "duration_s": 10.1, "causes": [{"clause": "no-change", "waited_s": 10.0}]},
        {"test_id": "b", "duration_s": 1.2, "causes": []},
        {"test_id": "c", "duration_s": 0.3, "causes": []},
    ]
    java = bench_drivers.DriverRow("java", walls_s=[13.0], exit_codes=[0])
    java.durations = {r["test_id"]: r["duration_s"] for r in records}
    java.budget_waits = bench_drivers.budget_waits(records)
    assert java.budget_waits == {"a": 10.1}  # the longer of its wait and its duration
    page = bench_drivers.render([base, java], argparse.Namespace(rounds=1, jobs=1))
    java_row = next(line for line in page.splitlines() if line.startswith("| java | 13.00 |"))
    # outside the tests 1.4 s; a budget wait of 10.1 s; b is 1.0 s slower (listed), c 0.1 s (summed, 100 ms a test)
    assert "| 1.40 | 11.60 | 10.10 (1) | +1.00 (1) | +0.10 (+100.0) |" in java_row


def test_the_hand_written_notes_are_kept_when_the_page_is_rewritten(tmp_path):
    page = tmp_path / "RESULTS.md"
    assert bench_drivers.kept_notes(page) == ""
    page.write_text(f"# old table\n\n{bench_drivers.NOTES_MARKER}\n## What was changed\n")
    assert bench_drivers.kept_notes(page) == f"\n{bench_drivers.NOTES_MARKER}\n## What was changed\n"
