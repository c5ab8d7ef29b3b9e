"""What ``harness report`` counts: a run once, however many inputs hold it; a record with an unknown outcome never,
named as an input problem instead."""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
from html import escape
from pathlib import Path

from harness.core.records import record_line
from reports.collect import TableRows
from tests.spark_support import at, record, write_jsonl

PROBLEM = 'unknown outcome "bogus" (not one of passed, failed, error, skipped)'


def _junit(records: list[dict]) -> str:
    """A JUnit file as the pytest plugin writes it: each record in its testcase's property."""
    cases = "".join(
        f'<testcase classname="x.yml" name="{escape(r["test"])}" time="0.5"><properties>'
        f'<property name="cs-harness.result" value="{escape(record_line(r))}" /></properties></testcase>'
        for r in records
    )
    return f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>'


def test_a_run_held_by_several_inputs_counts_once_and_an_unknown_outcome_is_a_problem(spark, tmp_path):
    from reports.job import load_inputs

    run = [
        record("unified/change-streams::A", run_id="r1"),
        record("unified/change-streams::A", "failed", "boom", run_id="r1", started_at=at(1)),  # run again: kept
        record("unified/change-streams::B", "skipped", "not here", run_id="r1"),
    ]
    bogus = record("unified/change-streams::C", "bogus", run_id="r2")
    original = write_jsonl(tmp_path / "run.jsonl", run)
    copy = tmp_path / "copy" / "run.jsonl"
    copy.parent.mkdir()
    shutil.copy(original, copy)
    (tmp_path / "junit.xml").write_text(_junit([*run, bogus]))  # the same session's JUnit, one record bogus
    other = write_jsonl(tmp_path / "other.jsonl", [record("unified/change-streams::D", run_id="r2"), bogus])

    loaded = load_inputs(spark, [str(original), str(copy), str(tmp_path / "junit.xml"), str(other)])

    verdicts = sorted((r["run_id"], r["test_id"][-1], r["outcome"]) for r in loaded.verdicts.collect())
    assert verdicts == [("r1", "A", "failed"), ("r1", "A", "passed"), ("r1", "B", "skipped"), ("r2", "D", "passed")]
    assert (loaded.rows, loaded.duplicates, loaded.runs_read_twice) == (4, 6, 1)
    problems = sorted((Path(r["file"]).name, r["problem"], r["lines"]) for r in loaded.problems.collect())
    assert problems == [("junit.xml", PROBLEM, 1), ("other.jsonl", PROBLEM, 1)]
    assert '"outcome": "bogus"' in next(r["example"] for r in loaded.problems.collect() if r["file"].endswith("l"))


def test_the_runs_read_twice_are_those_seen_in_more_than_one_input():
    from reports.duplicates import runs_read_twice

    pairs = [("r1", "a.jsonl"), ("r1", "b.jsonl"), ("r2", "a.jsonl"), ("r3", "verdicts"), (None, "x"), (None, "y")]
    assert runs_read_twice(pairs) == ["r1", None]


def test_the_report_says_how_many_duplicates_it_dropped(tmp_path):
    from reports.cli import _print_outcome
    from reports.job import ReportResult

    tables = {name: TableRows() for name in ("cells", "transitions", "input_problems")}
    result = ReportResult(tmp_path / "report.html", tmp_path / "tables", tables, duplicates=296, runs_read_twice=1)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = _print_outcome(argparse.Namespace(rule_catalogue=None, append_to=None), result)
    assert status == 0
    assert (
        "duplicates: 296 verdict(s) dropped, records another input holds too "
        "(1 run(s) read from more than one input, each counted once)"
    ) in printed.getvalue().splitlines()
