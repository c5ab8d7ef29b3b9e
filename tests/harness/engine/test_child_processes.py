"""What a process starts ends with it, however it ends; and how a child ended is read without taking it.

The process that dies is a small Python program of the test's own, run in a session of its own, so that only
the mechanisms under test (PDEATHSIG, the lifeline, the forked worker's watch) can end what it started. The
assertions are on which processes remain; the bound only decides when to stop waiting.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.engine import child_processes
from harness.engine.lifeline import start_time
from tests.paths import REPO

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")

BOUND_S = 10.0

#: A harness-like process: it starts children every way the harness and its libraries do, prints their pids
#: as one JSON line, and waits to be killed.
STARTS_CHILDREN = textwrap.dedent(
    """
    import json, multiprocessing, subprocess, sys, threading, time
    from harness.engine import child_processes

    def forked_worker():
        child_processes.die_with_parent()
        time.sleep(300)

    started = {}
    started["through popen"] = child_processes.popen(["sleep", "300"]).pid
    started["session of its own"] = child_processes.popen(["sleep", "300"], start_new_session=True).pid
    from_thread = []
    thread = threading.Thread(  # a library's spawn: plain Popen, another thread, another session
        target=lambda: from_thread.append(subprocess.Popen(["sleep", "300"], start_new_session=True).pid)
    )
    thread.start()
    thread.join()
    started["library, other thread"] = from_thread[0]
    worker = multiprocessing.get_context("fork").Process(target=forked_worker, daemon=True)
    worker.start()
    child_processes.watch(worker.pid)
    started["forked worker"] = worker.pid
    shell = child_processes.popen(["sh", "-c", "sleep 300 & echo $!; wait"], stdout=subprocess.PIPE, text=True)
    started["grandchild"] = int(shell.stdout.readline())
    print(json.dumps(started), flush=True)
    time.sleep(300)
    """
)


def _alive(pids: dict[str, tuple[int, int]]) -> dict[str, int]:
    return {name: pid for name, (pid, started) in pids.items() if start_time(pid) == started}


def test_everything_a_killed_process_started_ends_with_it():
    owner = subprocess.Popen(
        [sys.executable, "-c", STARTS_CHILDREN], cwd=REPO, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    pids: dict[str, tuple[int, int]] = {}
    try:
        assert owner.stdout is not None
        started = json.loads(owner.stdout.readline())
        for name, pid in started.items():
            pids[name] = (pid, start_time(pid))
        assert set(_alive(pids)) == set(started)  # all running before the kill
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        deadline = time.monotonic() + BOUND_S
        while _alive(pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive(pids) == {}
    finally:
        for pid, _ in pids.values():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if owner.poll() is None:
            owner.kill()
            owner.wait()


def test_how_a_child_ended_is_read_without_taking_its_status_from_its_owner():
    sleeper = child_processes.popen(["sleep", "300"])
    assert child_processes.ended(sleeper.pid) is None
    sleeper.send_signal(signal.SIGKILL)
    deadline = time.monotonic() + BOUND_S
    while child_processes.ended(sleeper.pid) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert child_processes.ended(sleeper.pid) == "exited (signal 9)"
    assert sleeper.wait() == -signal.SIGKILL  # the owner still gets the status
    assert child_processes.ended(sleeper.pid) == "exited"  # reaped: only known to be gone

    three = child_processes.popen(["sh", "-c", "exit 3"])
    while child_processes.ended(three.pid) is None:
        time.sleep(0.01)
    assert child_processes.ended(three.pid) == "exited with status 3" and three.wait() == 3


def test_run_is_subprocess_run_for_a_child_that_ends_with_the_harness():
    done = child_processes.run(
        ["sh", "-c", 'cat; echo "$HARNESS_LIFELINES" >&2'], input="in", capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout == "in"
    assert done.stderr.strip() == os.environ[child_processes.VARIABLE]  # the child carries the lifeline's token
    with pytest.raises(subprocess.CalledProcessError):
        child_processes.run(["sh", "-c", "exit 4"], check=True)
    with pytest.raises(subprocess.TimeoutExpired):
        child_processes.run(["sleep", "300"], timeout=0.1)
