"""Flakes decided in the run: ``--retry-unexpected N`` and ``--repeat N``, every attempt recorded.

The planted intermittent failure is a code-defined check whose target state decides it: it marks the target
and fails when no earlier attempt had marked it, so its first attempt fails and its second passes, for real.
A consistently failing check stays failed after its retries, with every attempt recorded; a passing check runs
once. The run's summary, the statement and the report (Spark, over the very same records) all call the
intermittent one ``flaky``, never ``passed``: they share one definition (harness/record/outcomes.py).
"""

from __future__ import annotations

import io
import json
import os
import signal
import time
from pathlib import Path

import pytest

from harness.app.reporting import ConsoleReporter
from harness.core.errors import TestFailure
from harness.engine.lifecycle import Case
from harness.engine.run import CodeDefinedTest, HarnessRun, RunOptions
from harness.record.outcomes import FLAKY, status_of
from reports.statements import rows_from_records

COLLECTION = ("harness-selftest", "intermittent")


class _MarksTheTarget(Case):
    """Fails unless an earlier attempt left its mark on the target; leaves one either way."""

    def __init__(self, run: HarnessRun) -> None:
        super().__init__()
        self.run = run

    def body(self) -> None:
        marks = self.run.target.admin[COLLECTION[0]][COLLECTION[1]]
        seen = marks.count_documents({})
        marks.insert_one({"seen": seen})
        if seen == 0:
            raise TestFailure("no earlier attempt marked the target")


class _AlwaysFails(Case):
    def body(self) -> None:
        raise TestFailure("this check always fails")


class _Passes(Case):
    def body(self) -> None:
        return None


def _check(name: str, case) -> CodeDefinedTest:
    return CodeDefinedTest("prose", "retries", name, open=case)


INTERMITTENT = _check("CS-SELFTEST-RULE: fails first, then passes", _MarksTheTarget)
BROKEN = _check("always fails", lambda run: _AlwaysFails())
SOUND = _check("passes", lambda run: _Passes())


def _run(tmp_path: Path, checks: list[CodeDefinedTest], **options) -> tuple[list, list[dict], str]:
    results_file = tmp_path / "r.jsonl"
    run_options = RunOptions(target="embedded", results=results_file, expected="none", **options)
    out = io.StringIO()
    with HarnessRun(run_options) as run:
        run.target.admin[COLLECTION[0]].drop_collection(COLLECTION[1])
        reporter = ConsoleReporter(total=len(checks), stream=out, live=False)
        reporter.start(run)
        results = []
        for check in checks:
            results.append(run.run_test(check))
            reporter.report(results[-1])
        status = reporter.finish()
    records = [json.loads(line) for line in results_file.read_text().splitlines()]
    return results, records, out.getvalue() + f"\nexit {status}"


@pytest.fixture(scope="module")
def retried(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("retried"), [INTERMITTENT, BROKEN, SOUND], retry_unexpected=2)


def _attempts(records: list[dict], check: CodeDefinedTest) -> list[tuple[int, str]]:
    return [(r["attempt"], r["outcome"]) for r in records if r["test_id"] == check.test_id]


def test_a_planted_intermittent_failure_is_flaky_with_both_attempts_recorded(retried):
    results, records, _ = retried
    assert _attempts(records, INTERMITTENT) == [(1, "failed"), (2, "passed")]
    assert results[0].outcome == FLAKY
    assert [r["outcome"] for r in results[0].records] == ["failed", "passed"]
    assert "no earlier attempt marked the target" in results[0].message


def test_a_consistent_failure_stays_failed_after_its_retries_with_every_attempt_recorded(retried):
    results, records, _ = retried
    assert _attempts(records, BROKEN) == [(1, "failed"), (2, "failed"), (3, "failed")]
    assert results[1].outcome == "failed"


def test_a_passing_test_runs_once(retried):
    results, records, _ = retried
    assert _attempts(records, SOUND) == [(1, "passed")]
    assert results[2].outcome == "passed" and results[2].records == (results[2].record,)


def test_the_summary_counts_the_flake_as_flaky_and_fails_the_run(retried):
    _, records, said = retried
    assert "3 tests: 1 passed, 1 failed, 0 errors, 0 skipped, 1 flaky;" in said
    assert f"UNEXPECTED flaky (unexpected-failure): {INTERMITTENT.test_id}" in said
    assert said.endswith("exit 1")
    assert {r["retries"] for r in records} == {2}


def test_the_statement_reads_the_flake_as_flaky_never_passed(retried):
    _, records, _ = retried
    from reports.statements import NOT_MET, rule_verdict

    rows = {row.test_id: row for row in rows_from_records(records)}
    assert {t: row.outcome for t, row in rows.items()} == {
        INTERMITTENT.test_id: FLAKY,
        BROKEN.test_id: "failed",
        SOUND.test_id: "passed",
    }
    # The check names its rule, so its failing attempt's causes stand for it (a statement judges rules by causes).
    rule = {"id": "CS-SELFTEST-RULE", "checked_by": [INTERMITTENT.test_id, SOUND.test_id]}
    verdict = rule_verdict(rule, rows, [])
    assert verdict["verdict"] == NOT_MET
    assert [(f["test_id"], f["outcome"]) for f in verdict["tests"]["failed"]] == [(INTERMITTENT.test_id, FLAKY)]


def test_without_retries_the_intermittent_failure_is_one_failed_attempt(tmp_path):
    results, records, said = _run(tmp_path, [INTERMITTENT])
    assert _attempts(records, INTERMITTENT) == [(1, "failed")] and results[0].outcome == "failed"
    assert "flaky" not in said


def test_repeat_runs_every_test_n_times_and_retries_after(tmp_path):
    results, records, _ = _run(tmp_path, [INTERMITTENT, SOUND], repeat=3, retry_unexpected=1)
    assert _attempts(records, INTERMITTENT) == [(1, "failed"), (2, "passed"), (3, "passed")]
    assert _attempts(records, SOUND) == [(1, "passed"), (2, "passed"), (3, "passed")]
    assert [r.outcome for r in results] == [FLAKY, "passed"]
    assert {r["repeat"] for r in records} == {3}


def test_the_run_and_the_report_decide_flakiness_alike_on_the_same_records(retried, spark):
    """The report's ``cell_tests`` status and ``flakiness`` classification, over the run's own records."""
    from reports.conformance import per_cell_test
    from reports.flakiness import flakiness
    from reports.outcomes import with_rates
    from tests.spark_support import verdicts_frame

    _, records, _ = retried
    in_run = {
        test_id: status_of(r["outcome"] for r in records if r["test_id"] == test_id)
        for test_id in {r["test_id"] for r in records}
    }
    verdicts = verdicts_frame(spark, records)
    table = with_rates(per_cell_test(verdicts))
    in_report = {row["test_id"]: row["status"] for row in table.collect()}
    assert in_report == in_run == {INTERMITTENT.test_id: "flaky", BROKEN.test_id: "fail", SOUND.test_id: "pass"}
    classified = {row["test_id"]: row["classification"] for row in flakiness(verdicts).collect()}
    assert [t for t, c in classified.items() if c == "flaky"] == [INTERMITTENT.test_id]


class _UsesTheExecutor(Case):
    """Opens a scope in the driver's executor (which process served it is kept) and fails unless asked to pass."""

    def __init__(self, run: HarnessRun, processes: list, passes: bool) -> None:
        super().__init__()
        self.run, self.processes, self.passes = run, processes, passes

    def body(self) -> None:
        scope = self.run.driver.open_scope(self.run.driver_uri, iteration_timeout_s=1.0)
        try:
            self.processes.append(scope.process)
        finally:
            scope.close()
        if not self.passes:
            raise TestFailure("failed in this executor process")


def test_each_retry_of_an_executor_driver_starts_in_a_new_executor_process(tmp_path):
    retried: list = []
    passing: list = []
    options = RunOptions(target="embedded", driver="pymongo-executor", expected="none", retry_unexpected=1)
    with HarnessRun(options) as run:
        assert run.driver.restartable
        run.run_test(_check("fails", lambda run: _UsesTheExecutor(run, retried, passes=False)))
        for _ in range(2):
            run.run_test(_check("passes", lambda run: _UsesTheExecutor(run, passing, passes=True)))
    assert len(retried) == 2 and retried[0] is not retried[1]  # the retry's own process
    assert len(passing) == 2 and passing[0] is passing[1]  # tests that need no retry share one


def test_a_parallel_worker_sends_every_attempt_and_the_parent_keeps_them(retried):
    """Under ``-j`` the parent writes the results file: a worker's payload carries every attempt's record."""
    from harness.app.parallel import _result
    from harness.app.worker import _payload

    results, _, _ = retried
    sent = json.loads(json.dumps(_payload(0, results[0])))  # what crosses the pipe
    received = _result(sent, [INTERMITTENT])
    assert received.outcome == FLAKY
    assert [json.loads(json.dumps(r)) for r in results[0].records] == list(received.records)


def test_the_options_reach_the_run_and_only_harness_run_declares_them():
    from harness.app.cli import build_parser
    from harness.app.options import ATTEMPT_OPTIONS, RUN_OPTIONS, from_namespace

    args = build_parser().parse_args(["run", "--retry-unexpected", "2", "--repeat", "3", "-k", "resume"])
    options = from_namespace(args)
    assert (options.retry_unexpected, options.repeat, args.keyword) == (2, 3, "resume")
    defaults = from_namespace(build_parser().parse_args(["run"]))
    assert (defaults.retry_unexpected, defaults.repeat) == (0, 1)
    for refused in (["--repeat", "0"], ["--retry-unexpected", "-1"], ["--repeat", "x"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["run", *refused])
    assert {o.dest for o in ATTEMPT_OPTIONS} == {"retry_unexpected", "repeat"}
    assert not {o.dest for o in ATTEMPT_OPTIONS} & {o.dest for o in RUN_OPTIONS}  # pytest declares RUN_OPTIONS


class _StoppedOnItsRetry(Case):
    """Fails its first attempt; during its second, the run gets SIGTERM (as from a user's kill)."""

    def __init__(self, run: HarnessRun, attempts: list) -> None:
        super().__init__()
        self.attempts = attempts

    def body(self) -> None:
        self.attempts.append(len(self.attempts) + 1)
        if len(self.attempts) == 1:
            raise TestFailure("the first attempt fails")
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)  # the signal stops the run first; teardown ends this worker thread's wait


def test_a_stop_signal_during_a_retry_keeps_every_attempt(tmp_path):
    """The cut attempt is an ``error`` naming the signal, and the result carries the finished attempt too (under
    ``-j`` the parent writes them from it)."""
    from harness.app.stopping import RunInterrupted, stopping_on_signals

    attempts: list = []
    check = _check("stopped on its retry", lambda run: _StoppedOnItsRetry(run, attempts))
    options = RunOptions(target="embedded", results=tmp_path / "r.jsonl", expected="none", retry_unexpected=2)
    with stopping_on_signals(), HarnessRun(options) as run:
        with pytest.raises(RunInterrupted) as stop:
            run.run_test(check)
        cut_short = run.record_interrupted(check, str(stop.value))
    assert cut_short is not None
    assert [(r["attempt"], r["outcome"]) for r in cut_short.records] == [(1, "failed"), (2, "error")]
    assert "SIGTERM" in cut_short.records[1]["message"]
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [(r["attempt"], r["outcome"]) for r in records] == [(1, "failed"), (2, "error")]
