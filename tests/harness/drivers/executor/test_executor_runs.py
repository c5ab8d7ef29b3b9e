"""``harness run --driver exec:CMD`` with an executor that breaks in one test: that test is an ``error`` naming
the cause, the others get their verdicts, and the results file holds one record per test.

Each run is a real ``harness run`` (a subprocess) over three legacy tests in tmp_path; the broken executor
misbehaves only on the request that carries the middle test's marker document. Two faults are no error of one
test: dropped events fail the test that expects them (a verdict), and an executor that cannot start at all
errors every test of the run, each record saying why.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.drivers.pymongo.adapter import PyMongoAdapter
from harness.engine.run import driver_record
from tests.harness.drivers.executor.broken import broken_executor
from tests.helpers import LEGACY_HEADER


def _test(description: str, marker: str) -> str:
    return f"""
  - description: {description}
    target: collection
    operations:
      - {{database: harness-selftest, collection: coll, name: insertOne, arguments: {{document: {{x: {marker}}}}}}}
    result: {{success: [{{operationType: insert, fullDocument: {{x: {marker}}}}}]}}
"""


#: The change stream's aggregate, as legacy ``expectations`` name it: the event a dropping executor loses.
AGGREGATE_STARTED = """
    expectations:
      - command_started_event:
          command: {aggregate: coll, cursor: {}, pipeline: [{$changeStream: {}}]}
          command_name: aggregate
          database_name: harness-selftest
"""

SPEC = LEGACY_HEADER + "".join(
    _test(description, marker) + AGGREGATE_STARTED
    for description, marker in (("before", "before"), ("broken", "break-me"), ("after", "after"))
)

#: Code run before each reply is written (broken.py): every fault fires on the middle test's requests only.
FAULTS = {
    "crash": "    if 'break-me' in line: print('boom: dying on purpose', file=sys.stderr, flush=True); os._exit(4)",
    "hang": "    if 'break-me' in line: time.sleep(600)",
    "malformed JSON": "    if 'break-me' in line: sys.stdout.write('{not json\\n'); sys.stdout.flush(); continue",
    "logs to stdout": "    if 'break-me' in line: print('connecting to the server...'); sys.stdout.flush()",
    "wrong id": "    if 'break-me' in line: reply['id'] = 999",
    # The marker arrives with the insert, after the aggregate: the events asked for next lose that aggregate.
    "drops events": (
        "    if 'break-me' in line: pending['drop'] = True\n"
        "    if request['method'] == 'events' and pending.pop('drop', False): "
        "reply['result'] = [e for e in reply['result'] if e.get('commandName') != 'aggregate']"
    ),
    "crashes at start": "    print('boom: no driver here', file=sys.stderr, flush=True); os._exit(3)",
}


HARNESS_RUN = [sys.executable, "-m", "harness.app.cli", "run"]
#: Short deadlines so the hanging test ends quickly: the per-test one, and one change-stream document's.
SHORT = ["--expected", "none", "--timeout", "4", "--iteration-timeout", "2"]


def _run(tmp_path: Path, fault: str) -> tuple[subprocess.CompletedProcess[str], dict[str, dict[str, Any]], str]:
    spec, results = tmp_path / "executor_runs.yml", tmp_path / "results.jsonl"
    spec.write_text(SPEC)
    command = shlex.join(broken_executor(tmp_path, FAULTS[fault]))
    done = subprocess.run(
        [*HARNESS_RUN, "--specs", str(spec), "--driver", f"exec:{command}", "--results", str(results), *SHORT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert results.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(records) == 3, records  # one record per test, nothing lost
    return done, {record["test"]: record for record in records}, command


def _only_the_broken_test_is_an_error(done: subprocess.CompletedProcess[str], by_test: dict[str, Any]) -> str:
    assert done.returncode == 1, done.stdout + done.stderr  # the error is unexpected; the run finished
    assert set(by_test) == {"before", "broken", "after"}
    assert by_test["before"]["outcome"] == by_test["after"]["outcome"] == "passed", by_test
    assert by_test["broken"]["outcome"] == "error", by_test["broken"]
    return str(by_test["broken"]["message"])


def test_an_executor_that_crashes_mid_test_errors_that_test_only_with_its_stderr(tmp_path: Path) -> None:
    done, by_test, command = _run(tmp_path, "crash")
    message = _only_the_broken_test_is_an_error(done, by_test)
    assert "the executor closed stdout (exit status 4)" in message and "boom: dying on purpose" in message, message
    for record in by_test.values():
        assert record["driver"]["executor"] == command and record["driver"]["name"] == "pymongo", record["driver"]


def test_an_executor_that_hangs_on_one_request_errors_that_test_only_at_its_deadline(tmp_path: Path) -> None:
    done, by_test, _ = _run(tmp_path, "hang")
    message = _only_the_broken_test_is_an_error(done, by_test)
    assert "timed out after 4s" in message, message


#: A protocol fault on the middle test's request, and the words its ``error`` must carry.
PROTOCOL_FAULTS = {
    "malformed JSON": "stdout line is not JSON",
    "logs to stdout": "'connecting to the server...' (stdout carries protocol messages only; logs go to stderr)",
    "wrong id": "got id 999",
}


@pytest.mark.parametrize("fault", sorted(PROTOCOL_FAULTS))
def test_an_executor_that_breaks_the_protocol_in_one_test_errors_that_test_only(tmp_path: Path, fault: str) -> None:
    done, by_test, _ = _run(tmp_path, fault)
    message = _only_the_broken_test_is_an_error(done, by_test)
    assert PROTOCOL_FAULTS[fault] in message, message


def test_an_executor_that_drops_events_fails_the_test_that_expects_them_naming_the_event(tmp_path: Path) -> None:
    """Dropped events are the driver's observations gone missing: a verdict (``failed``), not an ``error``."""
    done, by_test, _ = _run(tmp_path, "drops events")
    assert done.returncode == 1, done.stdout + done.stderr
    assert by_test["before"]["outcome"] == by_test["after"]["outcome"] == "passed", by_test
    assert by_test["broken"]["outcome"] == "failed", by_test["broken"]
    message = str(by_test["broken"]["message"])
    assert 'commandName: expected "aggregate"' in message, message  # the event that went missing, by name
    assert "all events: [commandStartedEvent(getMore)]" in message, message  # and what came without it


def test_an_executor_that_crashes_at_start_errors_every_test_with_its_stderr(tmp_path: Path) -> None:
    done, by_test, command = _run(tmp_path, "crashes at start")
    assert done.returncode == 1, done.stdout + done.stderr
    assert set(by_test) == {"before", "broken", "after"}
    for record in by_test.values():
        assert record["outcome"] == "error", record
        message = str(record["message"])
        assert "the executor could not start" in message and "boom: no driver here" in message, message
        assert record["driver"]["executor"] == command, record["driver"]


def test_an_in_process_driver_records_no_executor() -> None:
    expected = {"name": "pymongo", "version": PyMongoAdapter.version, "language": "python", "iteration_mode": "next"}
    assert driver_record(PyMongoAdapter()) == expected


def test_the_report_reads_an_executor_drivers_records_like_any_other(spark: Any, tmp_path: Path) -> None:
    """A driver's ``executor`` and ``language`` are read, never a malformed line: a Python driver run through an
    executor is a configuration of its own (``pymongo-executor``), other drivers keep their names."""
    from reports.discover import discover_inputs
    from reports.normalise import verdicts_from_records
    from reports.read import read_inputs
    from tests.spark_support import record, write_jsonl

    via_executor = record(run_id="r2")
    via_executor["driver"] = {**via_executor["driver"], "language": "python", "executor": "python -m some.executor"}
    raw = read_inputs(spark, discover_inputs([str(write_jsonl(tmp_path / "r.jsonl", [record(), via_executor]))]))
    assert raw.problems.count() == 0
    verdicts = verdicts_from_records(raw.results).select("run_id", "driver_name", "outcome").collect()
    assert sorted(tuple(row) for row in verdicts) == [
        ("r2", "pymongo-executor", "passed"),
        ("run-1", "pymongo", "passed"),
    ]
