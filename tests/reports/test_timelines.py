"""Timelines, first changes and flip-flops (reports/timelines.py), and ``harness history`` on a planted regression."""

from __future__ import annotations

import pytest

from harness.app.cli import main
from reports import timelines
from tests.reports import history_world as world
from tests.spark_support import at, record, rows, verdicts_frame


@pytest.fixture(scope="module")
def history(spark, tmp_path_factory):
    return world.write_history(spark, tmp_path_factory.mktemp("history"))


@pytest.fixture(scope="module")
def verdicts(spark, history):
    from reports.read import read_verdicts

    return read_verdicts(spark, [str(history / "verdicts")])


def test_harness_history_shows_the_planted_regressions_first_bad_run(history, capsys):
    code = main(["history", "regressed test", "--cell", "pymongo / secantusdb", "--history", str(history)])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"{world.REGRESSED} on pymongo / secantusdb replicaset native"
    runs = [line for line in lines[3:] if not line.startswith("    ")]
    assert [line.split()[:4] for line in runs] == [
        [str(run), f"2026-03-{2 + 3 * (run - 1):02d}T08:00:00", f"pymongo-secantusdb-{run}", status]
        for run, status in zip(range(1, 7), ["pass"] * 3 + ["fail"] * 3, strict=True)
    ]
    marked = [line for line in runs if "first bad run" in line]
    assert len(marked) == 1 and marked[0].split()[0] == str(world.FIRST_BAD_RUN)
    assert marked[0].endswith("pass -> fail (first bad run); changed: driver_version 4.9.0 -> 4.10.0")
    cause = lines[lines.index(marked[0]) + 1]
    assert cause == "    cause: event at operations[2]: operationTime is missing [CS-RESUME-1]"
    assert "node" not in out  # --cell kept the one configuration


def test_without_cell_every_configuration_is_shown_and_node_never_changes(history, capsys):
    assert main(["history", world.REGRESSED, "--history", str(history)]) == 0
    blocks = capsys.readouterr().out.split("\n\n")
    assert len(blocks) == 4
    node = [block for block in blocks if " on node / " in block.splitlines()[0]]
    assert len(node) == 2 and all("->" not in block for block in node)


def test_an_unknown_or_ambiguous_test_and_a_cell_matching_nothing(history, capsys):
    assert main(["history", "no such test", "--history", str(history)]) == 2
    assert "no test 'no such test'" in capsys.readouterr().err
    assert main(["history", "unified/change-streams::", "--history", str(history)]) == 2
    assert world.FLIPPER in capsys.readouterr().err  # the candidates are listed
    assert main(["history", world.REGRESSED, "--cell", "rust", "--history", str(history)]) == 1


def test_first_changes_are_the_planted_ones(verdicts):
    table = timelines.first_changes(verdicts)
    got = rows(table, "configuration", "test_id", "run_number", "change", "started_failing", "changed_versions")
    node, pymongo = "node / secantusdb replicaset native", "pymongo / {} replicaset native"
    flips = [
        (node, world.FLIPPER, n, c, c == "pass -> fail", None)
        for n, c in [(2, "pass -> fail"), (3, "fail -> pass"), (4, "pass -> fail"), (5, "fail -> pass")]
    ]
    regressions = [
        (pymongo.format(target), world.REGRESSED, 4, "pass -> fail", True, "driver_version 4.9.0 -> 4.10.0")
        for target in world.TARGETS
    ]
    assert got == sorted(flips + regressions)


def test_a_skip_neither_changes_a_status_nor_ends_one(spark):
    outcomes = ["passed", "skipped", "failed", "skipped", "failed", "passed"]
    records = [
        record(outcome=outcome, run_id=f"r{n}", started_at=at(n), message="boom" if outcome == "failed" else "")
        for n, outcome in enumerate(outcomes, 1)
    ]
    line = timelines.timelines(verdicts_frame(spark, records))
    assert rows(line, "run_number", "status", "previous_status", "previous_run_id", "changed") == [
        (1, "pass", None, None, False),
        (2, "skip", "pass", "r1", False),
        (3, "fail", "pass", "r1", True),
        (4, "skip", "fail", "r3", False),
        (5, "fail", "fail", "r3", False),
        (6, "pass", "fail", "r5", True),
    ]


def test_a_run_that_both_passed_and_failed_is_flaky_there(spark):
    records = [
        record(outcome="passed", run_id="r1", started_at=at(1)),
        record(outcome="passed", run_id="r2", started_at=at(2)),
        record(outcome="failed", run_id="r2", started_at=at(3), message="boom"),
    ]
    changes = timelines.first_changes(verdicts_frame(spark, records))
    assert rows(changes, "run_id", "change", "started_failing", "changed_versions") == [
        ("r2", "pass -> flaky", True, None)
    ]


@pytest.mark.parametrize(("days", "flip_flop"), [(30, 4), (10, 3), (5, None)])
def test_a_flip_flop_is_more_than_one_change_in_the_window(verdicts, days, flip_flop):
    # FLIPPER changes on days 3, 6, 9 and 12 (a second in); the latest verdict is 6 s into day 15
    flips = timelines.flip_flops(timelines.first_changes(verdicts), timelines.latest_run(verdicts), days)
    got = rows(flips, "test_id", "changes", "window_days")
    assert got == ([] if flip_flop is None else [(world.FLIPPER, flip_flop, days)])
