"""Child processes of a matrix: each in its own process group, its output in a log file, stoppable as a whole.

Every installer call and every ``harness run`` starts a new session, so a
Ctrl-C at the terminal reaches only the matrix, which then stops its children
itself, group by group (a ``harness run`` may have started a SecantusDB daemon
of its own): SIGINT first, so the run turns its fail points off as it does on
a Ctrl-C, then SIGKILL for whatever is left after a grace period. After a
child ends, its group is killed too, so a helper it leaked cannot outlive it.

Output goes to a log file (stdout straight from the child; stderr through this
process, which keeps its last lines as the reason a failure is recorded with).
Children get an environment without ``PYTHONPATH``/``PYTHONHOME`` and without
the user site directory: the cell's own packages, and nothing else, must be
what is imported.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.engine import child_processes
from harness.shared.connection_strings import redact_text

#: How long a stopped child gets to clean up after SIGINT before it is killed.
STOP_GRACE_S = 5.0
TAIL_LINES = 25
#: Variables that would let packages from outside the cell's environment be imported.
_LEAKY_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")


class Interrupted(Exception):
    """The matrix is stopping (Ctrl-C): no new child is started."""


@dataclass
class Finished:
    returncode: int
    seconds: float
    stderr_tail: str
    #: The matrix stopped it (Ctrl-C), rather than it ending or crashing by itself.
    stopped: bool = False

    @property
    def signal(self) -> int | None:
        return -self.returncode if self.returncode < 0 else None


def child_environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _LEAKY_VARIABLES}
    env["PYTHONNOUSERSITE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def kill_orphan(pid: int, marker: str) -> bool:
    """Kill the group of ``pid`` if it still runs a command containing ``marker`` (a matrix killed with SIGKILL
    leaves its children running; the marker, a results path, makes sure a reused pid is left alone)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    if marker not in cmdline:
        return False
    _signal_group(pid, signal.SIGKILL)
    return True


class Children:
    """The live children of one matrix; :meth:`stop_all` ends every one of them and refuses new ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[int, subprocess.Popen] = {}
        self.stopping = threading.Event()

    def run(
        self, command: list[str], log: Path, *, cwd: Path | None = None, on_start: Callable[[int], None] | None = None
    ) -> Finished:
        """Run ``command`` to its end, its output appended to ``log``."""
        log.parent.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        with open(log, "ab") as out:
            out.write(f"$ {redact_text(shlex.join(command))}\n".encode())
            out.flush()
            with self._lock:
                if self.stopping.is_set():
                    raise Interrupted()
                process = child_processes.popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.PIPE,
                    cwd=cwd,
                    env=child_environment(),
                    start_new_session=True,
                )
                self._live[process.pid] = process
            try:
                if on_start is not None:
                    on_start(process.pid)
                tail: deque[bytes] = deque(maxlen=TAIL_LINES)
                assert process.stderr is not None
                for line in process.stderr:
                    out.write(line)
                    out.flush()
                    tail.append(line)
                process.wait()
            finally:
                with self._lock:
                    self._live.pop(process.pid, None)
                _signal_group(process.pid, signal.SIGKILL)
            seconds = time.monotonic() - began
            out.write(f"# exit {process.returncode} after {seconds:.1f}s\n".encode())
        return Finished(
            process.returncode, seconds, b"".join(tail).decode(errors="replace").strip(), stopped=self.stopping.is_set()
        )

    def stop_all(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGINT every child's group, then SIGKILL what is still there after ``grace_s``."""
        with self._lock:
            self.stopping.set()
            live = list(self._live.values())
        for process in live:
            _signal_group(process.pid, signal.SIGINT)
        deadline = time.monotonic() + grace_s
        for process in live:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            _signal_group(process.pid, signal.SIGKILL)
