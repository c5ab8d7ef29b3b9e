"""The early no-change benchmark measures what it says: the lost tests against the budget, verdicts compared."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks import bench_early_no_change as bench
from harness.formats.loaders import load_file


def _side(wall: float, outcome: str = "failed") -> dict[str, dict[str, object]]:
    return {
        name: {"wall_s": wall if lost else 0.5, "outcome": outcome if lost else "passed", "clauses": [], "fact": ""}
        for name, (lost, _) in bench.CASES.items()
    }


def test_the_cases_load_as_spec_tests_and_some_are_controls(tmp_path: Path) -> None:
    tests = load_file(bench.spec_file(tmp_path))
    assert [t.description for t in tests] == list(bench.CASES)
    assert all(t.load_error is None for t in tests)
    assert {lost for lost, _ in bench.CASES.values()} == {True, False}


def test_the_ratio_is_the_lost_tests_wall_time_over_the_baselines_and_differing_verdicts_are_named() -> None:
    row = bench.summarise({"early": [_side(1.0)], "budget": [_side(10.0)]}, 10.0)
    assert row["ratio"] == 0.1 and row["verdicts_differing"] == []
    args = argparse.Namespace(rounds=1)
    assert "| pymongo @ 10s | 4 | 4.00 | 40.00 | 0.100 | 0 |" in bench.render({"pymongo @ 10s": row}, args)
    differing = bench.summarise({"early": [_side(1.0, outcome="passed")], "budget": [_side(10.0)]}, 10.0)
    assert differing["verdicts_differing"] == sorted(name for name, (lost, _) in bench.CASES.items() if lost)
