"""A harness killed with SIGKILL mid-run leaves nothing running, and keeps every result it had written.

The run is a real ``harness run -j 2`` with the daemon target and an executor driver, so its tree has every
kind of process the harness starts on a plain machine: forked workers, a server daemon per worker (a
grandchild), an executor per worker (in a session of its own) and whatever keeps watch over them. The test
collects that tree from ``/proc`` while the run goes, kills only the harness's own pid, and then asks whether
any process of the tree is still there. It asserts on which processes remain, never on how long anything took
(the bound only decides when to stop waiting).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.paths import REPO

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")

#: How long the tree gets to go away after the harness dies (the issue's "a few seconds"), and the run to start.
EXIT_BOUND_S = 10.0
START_BOUND_S = 120.0


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of a live process, None if it is gone or a zombie already reaped by nobody."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    if fields[0] == "Z":
        return None  # exited; only its parent's wait is missing
    return int(fields[1]), int(fields[19])


def _tree(root: int) -> dict[int, int]:
    """The live descendants of ``root`` (and ``root``), each with its start time (a pid may be reused)."""
    parents: dict[int, int] = {}
    started: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            found = _stat(int(entry.name))
            if found is not None:
                parents[int(entry.name)], started[int(entry.name)] = found
    tree = {root} if root in started else set()
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return {pid: started[pid] for pid in tree}


def _still_running(seen: dict[int, int]) -> dict[int, str]:
    """The processes of ``seen`` still alive (same pid, same start time), with their command lines."""
    alive = {}
    for pid, start in seen.items():
        found = _stat(pid)
        if found is not None and found[1] == start:
            try:
                alive[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
    return alive


def _complete_lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    text = path.read_text()
    return text.splitlines()[: text.count("\n")]


def test_a_sigkilled_parallel_run_leaves_no_process_behind_and_keeps_its_results(tmp_path):
    results = tmp_path / "r.jsonl"
    command = [
        sys.executable,
        "-m",
        "harness.app.cli",
        "run",
        "-j",
        "2",
        "--specs",
        "specs/scenarios/supplementary",
        "--suite",
        "all",
        "--target",
        "secantusdb-daemon",
        "--driver",
        "pymongo-executor",
        "--expected",
        "none",
        "--results",
        str(results),
        "--quiet",
    ]
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    harness = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    seen: dict[int, int] = {}
    try:
        deadline = time.monotonic() + START_BOUND_S
        # Until both workers have finished a test, each has its daemon and its executor: the whole tree is up.
        while len(_complete_lines(results)) < 2 and harness.poll() is None and time.monotonic() < deadline:
            seen.update(_tree(harness.pid))
            time.sleep(0.05)
        seen.update(_tree(harness.pid))
        assert harness.poll() is None, "the run ended before it could be killed: give it more tests"
        written = _complete_lines(results)
        assert len(written) >= 2, "no results within the start bound"
        kinds = " ".join(_still_running(seen).values())
        assert "secantus" in kinds and "executor" in kinds, f"the tree lacks a daemon or an executor: {kinds}"

        os.kill(harness.pid, signal.SIGKILL)
        harness.wait()
        deadline = time.monotonic() + EXIT_BOUND_S
        while _still_running(seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _still_running(seen)
        assert not left, f"still running after the harness was killed: {left}"

        kept = _complete_lines(results)
        assert kept[: len(written)] == written  # nothing written before the kill was lost
        assert all(json.loads(line)["outcome"] for line in kept)  # every complete line is a whole record
    finally:
        for pid, start in seen.items():  # a failed test must not leave its tree to the next one
            found = _stat(pid)
            if found is not None and found[1] == start:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if harness.poll() is None:
            harness.kill()
            harness.wait()
