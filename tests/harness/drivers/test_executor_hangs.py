"""Issue 32 item 4: an executor cannot hang the harness, nor make it hold unbounded output.

Each executor here is hostile in one way, written to tmp_path and started the way ``--driver exec:CMD`` starts one
(:class:`ExecutorProcess`, or a whole ``harness run`` in a subprocess): it leaves a child in a session of its own
holding its pipes and goes silent, writes a line with no end, closes stdout and lives on, dies mid-line, stops
reading stdin. Every one must end in an ``ExecutorFailure`` that says what happened, by the request's deadline,
with nothing it started left running. A call that could hang is run under a bound, so a regression fails the test
instead of hanging the suite.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.drivers.executor.adapter import ExecutorAdapter
from harness.drivers.executor.process import LINE_LIMIT, ExecutorFailure, ExecutorProcess
from harness.engine.lifeline import start_time
from tests.harness.drivers.executor.broken import broken_executor
from tests.harness.drivers.executor.test_executor_runs import HARNESS_RUN, SHORT, SPEC

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")

#: How long a call that must not hang may take before the test calls it hung.
BOUND_S = 20.0
HELLO = {"protocolVersion": 1}


def _within(seconds: float, call: Callable[[], Any]) -> tuple[Any, BaseException | None, float]:
    """``call()`` in a thread: its result, what it raised, and how long it took; a call still running after
    ``seconds`` fails the test (the thread is left behind, a daemon)."""
    outcome: list[Any] = []
    raised: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:
            raised.append(exc)

    began = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    took = time.monotonic() - began
    assert not thread.is_alive(), f"still blocked after {seconds:g}s: the harness would hang"
    return (outcome or [None])[0], (raised or [None])[0], took


def _shell(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "executor.sh"
    script.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    script.chmod(0o755)
    return [str(script)]


def _pid_from(path: Path) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


def _alive(pid: int) -> bool:
    return start_time(pid) is not None


#: Ways an executor leaves a process holding its stdout and stderr: each found by another of the tree's rules.
DETACHED = {
    # still the executor's child when it is killed: found as its descendant
    "setsid child": "setsid sleep 1000 & echo $! > sleep.pid",
    # its parent exits at once (a daemon's double fork), re-parented away: found by the tree's token
    "orphaned daemon": "sh -c 'setsid sleep 1000 & echo $! > sleep.pid'",
    # orphaned and with an empty environment (no token, no lifeline): found holding the executor's pipes
    "orphan without environment": "sh -c 'env -i setsid sleep 1000 & echo $! > sleep.pid'",
}


@pytest.mark.parametrize("detached", sorted(DETACHED))
def test_a_silent_executor_with_a_detached_child_fails_at_the_deadline_and_leaves_nothing(
    tmp_path: Path, detached: str
) -> None:
    process = ExecutorProcess(
        _shell(tmp_path, f"cd {shlex.quote(str(tmp_path))}\n{DETACHED[detached]}\nexec sleep 1000\n")
    )
    sleeper = _pid_from(tmp_path / "sleep.pid")
    assert _alive(sleeper)
    _, raised, took = _within(BOUND_S, lambda: process.request("hello", HELLO, 2.0))
    assert isinstance(raised, ExecutorFailure), raised
    assert "no reply within 2s; the executor was killed" in str(raised), raised
    assert took < 2.0 + 3.0, took  # the deadline, then the kill: no wait on the pipes the sleeper held
    assert not _alive(sleeper), f"the detached sleep ({detached}) outlived the executor's kill"
    assert not _alive(process._process.pid)


#: The middle test's request starts a detached child that keeps the executor's pipes, with no environment (so
#: neither the lifeline nor the tree's token can find it: only the executor's own kill can), then goes silent.
SILENT_WITH_DETACHED_CHILD = (
    "    if 'break-me' in line: os.system('env -i setsid sleep 1000 & echo $! > sleep.pid'); time.sleep(1000)"
)


def test_a_harness_run_whose_executor_goes_silent_with_a_detached_child_finishes(tmp_path: Path) -> None:
    spec, results = tmp_path / "hangs.yml", tmp_path / "results.jsonl"
    spec.write_text(SPEC)
    command = shlex.join(broken_executor(tmp_path, before=SILENT_WITH_DETACHED_CHILD))
    began = time.monotonic()
    done = subprocess.run(
        [*HARNESS_RUN, "--specs", str(spec), "--driver", f"exec:{command}", "--results", str(results), *SHORT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    took = time.monotonic() - began
    by_test = {record["test"]: record for record in map(json.loads, results.read_text().splitlines())}
    assert set(by_test) == {"before", "broken", "after"}, done.stdout[-3000:] + done.stderr[-3000:]
    assert by_test["before"]["outcome"] == by_test["after"]["outcome"] == "passed", by_test
    assert by_test["broken"]["outcome"] == "error" and "timed out after 4s" in by_test["broken"]["message"]
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert not _alive(_pid_from(tmp_path / "sleep.pid")), "the detached sleep outlived the run"
    print(f"harness run with a silent executor and a detached child ended in {took:.1f}s")


#: Writes twice the line limit to stderr and then to stdout, neither with a newline, then waits; the harness's memory
#: is read around one request to it.
LONG_LINE_MEASUREMENT = """
import json, sys, time
from harness.drivers.executor.process import LINE_LIMIT, ExecutorFailure, ExecutorProcess

def status(key):
    return next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith(key + ":"))

executor = [sys.executable, "-c", "import sys, time; size = %d; " % (2 * LINE_LIMIT) +
            "sys.stderr.buffer.write(b'e' * size); sys.stderr.flush(); "
            "sys.stdout.buffer.write(b'x' * size); sys.stdout.flush(); time.sleep(1000)"]
before = status("VmRSS")
process = ExecutorProcess(executor)
began = time.monotonic()
try:
    process.request("hello", {"protocolVersion": 1}, 20.0)
    message = None
except ExecutorFailure as exc:
    message = str(exc)
print(json.dumps({"message": message, "seconds": time.monotonic() - began, "growth": status("VmHWM") - before}))
"""


def test_a_line_past_the_limit_breaks_the_executor_in_bounded_memory_without_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", LONG_LINE_MEASUREMENT], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    measured = json.loads(done.stdout.splitlines()[-1])
    message = measured["message"]
    assert message is not None
    assert f"a stdout line longer than the limit of {LINE_LIMIT >> 20} MiB" in message, message[:500]
    assert "executor " + sys.executable in message and "the executor was killed" in message, message[:500]
    assert message.endswith("e" * 100), message[-200:]  # the stderr tail is quoted (its last part only)
    assert measured["seconds"] < 10, measured  # at the limit, not at the 20 s deadline
    assert measured["growth"] < 2 * LINE_LIMIT, measured
    print(
        f"{2 * LINE_LIMIT >> 20} MiB line: refused after {measured['seconds']:.2f}s, "
        f"peak RSS growth {measured['growth'] / 2**20:.1f} MiB"
    )


def test_an_executor_that_closes_stdout_but_keeps_running_is_killed_at_once(tmp_path: Path) -> None:
    process = ExecutorProcess(_shell(tmp_path, "echo 'closing stdout' >&2\nexec 1>&-\nexec sleep 1000\n"))
    _, raised, took = _within(BOUND_S, lambda: process.request("hello", HELLO, 15.0))
    assert isinstance(raised, ExecutorFailure), raised
    message = str(raised)
    assert "the executor closed stdout but was still running 1s later; the executor was killed" in message, message
    assert "closing stdout" in message, message  # its stderr tail
    assert took < 5.0, took  # not the 15 s deadline
    assert not _alive(process._process.pid)


def test_an_executor_that_dies_mid_line_is_an_error_quoting_the_unfinished_line(tmp_path: Path) -> None:
    reads_then_dies = """read request\nprintf '{"id": 1, "ok": tr'\necho 'dying mid-line' >&2\nexit 3\n"""
    process = ExecutorProcess(_shell(tmp_path, reads_then_dies))
    _, raised, took = _within(BOUND_S, lambda: process.request("hello", HELLO, 15.0))
    assert isinstance(raised, ExecutorFailure), raised
    message = str(raised)
    assert """the executor closed stdout in the middle of a line: '{"id": 1, "ok": tr' (exit status 3)""" in message
    assert "dying mid-line" in message, message
    assert took < 5.0, took


def test_an_executor_that_never_reads_stdin_fails_at_the_deadline_of_a_large_request(tmp_path: Path) -> None:
    process = ExecutorProcess(_shell(tmp_path, "exec sleep 1000\n"))
    value = "v" * (1024 * 1024)  # more than a pipe holds: the write itself must give up at the deadline
    _, raised, took = _within(BOUND_S, lambda: process.request("echo", {"value": value}, 2.0))
    assert isinstance(raised, ExecutorFailure), raised
    assert "echo (request 1): the executor did not read the request by its deadline" in str(raised), raised
    assert took < 2.0 + 3.0, took
    assert not _alive(process._process.pid)


#: Answers the first ``hello`` it is ever sent (a marker file remembers), and never another: the restarted
#: executor hangs in its handshake.
ANSWERS_ONE_HELLO = """
import json, os, sys, time
marker = sys.argv[1]
line = sys.stdin.readline()
if os.path.exists(marker):
    time.sleep(1000)
open(marker, "w").close()
hello = {"protocolVersion": 1, "driver": {"name": "fake", "version": "1", "language": "python"},
         "capabilities": [], "operations": []}
print(json.dumps({"id": json.loads(line)["id"], "ok": True, "result": hello}), flush=True)
time.sleep(1000)
"""


def test_restart_does_not_wait_for_a_restarted_executor_stuck_in_its_handshake(tmp_path: Path) -> None:
    script = tmp_path / "executor.py"
    script.write_text(ANSWERS_ONE_HELLO)
    adapter = ExecutorAdapter([sys.executable, str(script), str(tmp_path / "answered")])
    assert adapter.start_failure is None and adapter.name == "fake"
    adapter.restart()
    failed: list[BaseException] = []

    def open_a_scope() -> None:  # what a test's scope does first: a new executor, whose hello never comes (30 s)
        try:
            adapter._started()
        except ExecutorFailure as exc:
            failed.append(exc)

    starting = threading.Thread(target=open_a_scope, daemon=True)
    starting.start()
    deadline = time.monotonic() + 10
    while adapter._starting is None and time.monotonic() < deadline:
        time.sleep(0.02)
    stuck = adapter._starting
    assert stuck is not None
    _, raised, took = _within(BOUND_S, adapter.restart)
    assert raised is None and took < 5.0, (raised, took)
    starting.join(5.0)
    assert not starting.is_alive() and failed, failed
    assert "the executor could not start: hello (request 1): the executor was killed" in str(failed[0]), failed
    assert not _alive(stuck._process.pid)
