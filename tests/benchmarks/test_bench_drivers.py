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
