"""Targets that fail: unreachable, hanging, or killed in the middle of a run.

Nothing can connect: one error for the run, naming the target, and no test records. A target process that
dies under a test: that test, and every later one of the run, is an ``error`` naming the cause (``target
secantusdb-daemon exited (signal 9)``) instead of each waiting for its deadline; results written before stay.
Under ``-j`` only the worker whose target died loses it, and starts a new one for its next test. Assertions
are on records and their order; the bounds below only decide when a hung run counts as a failure.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.core.errors import HarnessError
from harness.core.verdicts import ERROR, PASSED, Verdict
from harness.engine import child_processes
from harness.engine.lifecycle import Case, run_with_deadline
from harness.engine.run import CodeDefinedTest, HarnessRun, RunOptions
from harness.engine.run_settings import RunSettings
from tests.harness.app.test_cli import PASSING
from tests.helpers import LEGACY_HEADER, legacy_tests
from tests.paths import REPO

#: A run that has not ended by then is hung (the issue: within the timeout plus a few seconds).
RUN_BOUND_S = 60.0
KILLED = "target secantusdb-daemon exited (signal 9)"


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _harness_run(tmp_path: Path, target: str) -> subprocess.CompletedProcess:
    spec = tmp_path / "one.yml"
    spec.write_text(LEGACY_HEADER + PASSING)
    command = ["run", "--specs", str(spec), "--target", target, "--expected", "none"]
    return subprocess.run(
        [sys.executable, "-m", "harness.app.cli", *command, "--results", str(tmp_path / "r.jsonl")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=RUN_BOUND_S,
    )


def _errors(stderr: str) -> list[str]:
    """The run's error lines (notes about unpinned files are not errors)."""
    return [line for line in stderr.splitlines() if line.startswith("harness: ") and "note:" not in line]


def test_a_target_nothing_listens_on_is_one_error_for_the_run(tmp_path):
    with socket.socket() as probe:  # a loopback port nobody listens on: bound, never listened
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        done = _harness_run(tmp_path, f"uri=mongodb://127.0.0.1:{port}/?serverSelectionTimeoutMS=500")
    assert done.returncode == 2, done.stdout + done.stderr
    [error] = _errors(done.stderr)
    assert f"127.0.0.1:{port}" in error and "Connection refused" in error
    assert _records(tmp_path / "r.jsonl") == []


def test_a_target_that_accepts_and_never_answers_is_one_error_for_the_run(tmp_path):
    accepted: list[socket.socket] = []
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        server.settimeout(0.2)
        stop = threading.Event()

        def accept() -> None:  # takes every connection, reads nothing, answers nothing
            while not stop.is_set():
                try:
                    accepted.append(server.accept()[0])
                except OSError:
                    continue

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        port = server.getsockname()[1]
        try:
            done = _harness_run(tmp_path, f"uri=mongodb://127.0.0.1:{port}/?serverSelectionTimeoutMS=1000")
        finally:
            stop.set()
            thread.join()
            for connection in accepted:
                connection.close()
    assert accepted, "the harness never connected: this did not test a hanging target"
    assert done.returncode == 2, done.stdout + done.stderr
    [error] = _errors(done.stderr)
    assert f"127.0.0.1:{port}" in error and "Timeout" in error
    assert _records(tmp_path / "r.jsonl") == []


class _Uses(Case):
    """A test that needs its target: one command through the harness's own client."""

    def __init__(self, run: HarnessRun) -> None:
        super().__init__()
        self.run = run

    def body(self) -> None:
        self.run.target.admin_tasks.collection_names("admin")


class _KillsItsTarget(_Uses):
    """SIGKILL to the target's process from inside a test, then a command that can no longer be answered."""

    def __init__(self, run: HarnessRun, then_wait: bool) -> None:
        super().__init__(run)
        self.then_wait = then_wait

    def body(self) -> None:
        pid = self.run.target.info.details["pid"]
        os.kill(pid, signal.SIGKILL)
        while child_processes.ended(pid) is None:
            time.sleep(0.01)
        if self.then_wait:
            super().body()  # blocks in server selection until the test's deadline
        raise HarnessError("the target stopped answering")


def _check(name: str, open_case) -> CodeDefinedTest:
    return CodeDefinedTest("prose", "targets", name, open=open_case)


def test_a_target_killed_mid_run_ends_the_remaining_tests_as_errors_naming_it(tmp_path):
    results = tmp_path / "r.jsonl"
    checks = [
        _check("uses the target", _Uses),
        _check("kills the target", lambda run: _KillsItsTarget(run, then_wait=True)),
        _check("uses the target again", _Uses),
        _check("and again", _Uses),
    ]
    options = RunOptions(
        target="secantusdb-daemon", results=results, expected="none", settings=RunSettings(test_timeout_s=2.0)
    )
    with HarnessRun(options) as run:
        outcomes = [run.run_test(check) for check in checks]
        pid = run.target.info.details["pid"]
        assert child_processes.ended(pid) == "exited (signal 9)"
    records = _records(results)
    assert [r["test"] for r in records] == [c.name for c in checks]  # every result written, in order
    assert [r["outcome"] for r in records] == ["passed", "error", "error", "error"]
    during, *later = records[1:]
    assert during["message"].startswith(f"{KILLED} during this test (the test saw: timed out after 2s")
    assert all(r["message"] == f"{KILLED}; the test was not run" for r in later)
    assert [o.outcome for o in outcomes] == [r["outcome"] for r in records]


#: A spec test that waits for a second event that never comes: it is still running when its target is killed.
WAITS_FOR_MORE = """
  - description: waits for an event that never comes
    target: collection
    operations:
      - {database: harness-selftest, collection: coll, name: insertOne, arguments: {document: {x: 1}}}
    result: {success: [{operationType: insert}, {operationType: insert}]}
"""


def test_a_spec_test_whose_target_process_exits_under_it_is_stopped_at_once(tmp_path):
    [test] = legacy_tests(tmp_path, WAITS_FOR_MORE)
    settings = RunSettings(test_timeout_s=RUN_BOUND_S, iteration_timeout_s=RUN_BOUND_S)
    options = RunOptions(target="secantusdb-daemon", results=tmp_path / "r.jsonl", expected="none", settings=settings)
    with HarnessRun(options) as run:
        pid = run.target.info.details["pid"]
        collection = run.target.admin["harness-selftest"]["coll"]

        def kill_once_the_test_has_inserted() -> None:
            while collection.count_documents({}) == 0:
                time.sleep(0.05)
            os.kill(pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_once_the_test_has_inserted, daemon=True)
        killer.start()
        result = run.run_test(test)
        killer.join()
    assert result.outcome == "error", result.message
    # stopped when the process exited, at the step it was in; not after the iteration's or the test's deadline,
    # whose verdict the run would only relabel afterwards ("during this test (the test saw: ...)")
    assert result.message.startswith(f"{KILLED} during success[1]"), result.message  # the second event


class _NotesARestart(_Uses):
    """Uses its target, and leaves a marker when that target is a restarted one."""

    def __init__(self, run: HarnessRun, marker: Path) -> None:
        super().__init__(run)
        self.marker = marker

    def body(self) -> None:
        super().body()
        if "target_restarted_after" in self.run.options.provenance:
            self.marker.touch()


class _WaitsForARestartedTarget(_NotesARestart):
    """Holds its worker until some test has run on a restarted target: on the worker that did not lose its
    target this leaves the rest to the one that did, so both a lost and a kept target serve later tests."""

    def body(self) -> None:
        super().body()
        deadline = time.monotonic() + RUN_BOUND_S
        while not self.marker.exists():
            if time.monotonic() > deadline:
                raise HarnessError("no test ran on a restarted target")
            time.sleep(0.05)


def parallel_run(results: str) -> int:
    """Run in a fresh interpreter (forked workers must not inherit this pytest process's threads)."""
    from harness.app.parallel import run_parallel

    marker = Path(results).with_suffix(".restarted")
    checks = [
        _check("kills its worker's target", lambda run: _KillsItsTarget(run, then_wait=False)),
        _check("waits for a restarted target", lambda run: _WaitsForARestartedTarget(run, marker)),
        *[_check(f"uses a target {n}", lambda run: _NotesARestart(run, marker)) for n in range(3)],
    ]
    options = RunOptions(target="secantusdb-daemon", results=Path(results), expected="none")
    return run_parallel(checks, options, ["secantusdb-daemon"] * 2, quiet=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers")
def test_under_j_only_the_worker_whose_target_died_loses_it_and_starts_a_new_one(tmp_path):
    results = tmp_path / "r.jsonl"
    script = (
        "import sys; from tests.harness.engine.test_target_failures import parallel_run; "
        f"sys.exit(parallel_run({str(results)!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=RUN_BOUND_S * 2
    )
    records = {r["test"]: r for r in _records(results)}
    assert done.returncode == 1 and len(records) == 5, done.stdout + done.stderr
    killed = records.pop("kills its worker's target")
    assert killed["outcome"] == "error" and killed["message"].startswith(f"{KILLED} during this test")
    assert {r["outcome"] for r in records.values()} == {"passed"}  # no other test lost its target
    restarted = [r for r in records.values() if r.get("target_restarted_after")]
    assert restarted and {r["target_restarted_after"] for r in restarted} == {KILLED}
    # no test that started after the kill ran on the dead target (one that ran on it before may share its pid)
    later = [r for r in records.values() if r["started_at"] > killed["started_at"]]
    assert later and killed["target"]["details"]["pid"] not in {r["target"]["details"]["pid"] for r in later}
    assert f": {KILLED}; it started a new target" in done.stderr  # said aloud, by the worker that lost it


def test_a_teardown_blocked_on_a_target_that_stopped_answering_does_not_hold_the_run():
    answers = threading.Event()  # the target never answers until the test is over

    def body() -> Verdict:
        answers.wait(RUN_BOUND_S)
        return Verdict(PASSED)

    def teardown() -> list[str]:  # the harness's own clean-up, blocked on the same target
        answers.wait(RUN_BOUND_S)
        return []

    verdict = run_with_deadline(body, teardown, 0.1, lambda: "step")
    returned_first = not answers.is_set()
    answers.set()
    assert returned_first, "the verdict waited for a target that never answers"
    assert verdict.outcome == ERROR
    assert "did not finish" in verdict.message and "timed out after 0.1s during step" in verdict.message


def test_a_deployment_the_guard_refuses_mid_run_ends_the_remaining_tests_as_errors_naming_why(tmp_path):
    """The guard's refusal (a remote member appeared in a ``uri=`` deployment) stops the run like a lost target:
    no later test reaches the deployment (tests/harness/targets/test_guard_hosts.py shows the refusal itself)."""
    results = tmp_path / "r.jsonl"
    why = "the deployment now names db.example.invalid:27017 (hosts), which is not on the loopback interface"
    refused: list[str] = []
    checks = [_check("uses the target", _Uses), _check("after the reconfig", _Uses), _check("and after", _Uses)]
    with HarnessRun(RunOptions(target="embedded", results=results, expected="none")) as run:
        run.target.refusal = lambda address=None: refused[0] if refused else None  # type: ignore[method-assign]
        first = run.run_test(checks[0])
        refused.append(why)
        later = [run.run_test(check) for check in checks[1:]]
    assert first.outcome == PASSED
    assert [o.outcome for o in later] == [ERROR, ERROR]
    assert all(r["message"] == f"{why}; the test was not run" for r in _records(results)[1:])
