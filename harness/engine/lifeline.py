"""The lifeline: a watcher that outlives the harness process that started it, to end what that process started.

:mod:`harness.engine.child_processes` starts it, by path, with only the standard library (``python -I``), in a
session of its own so that a signal to the harness's process group does not reach it first. Its stdin is the
read end of a pipe whose only write end the harness process holds; the harness writes ``watch PID START`` lines
for the processes it forks (they carry no marker, below), and nothing else. End of file on stdin means that
the harness process has exited, however it exited (a SIGKILL included: the kernel closes the pipe). The
lifeline then SIGKILLs every process

- whose environment carries its token in ``HARNESS_LIFELINES`` (every process started from the harness after
  the lifeline, at any depth, in any session: daemons, launchers, executors and what they start), and
- that it was told to watch, if the pid still names the same process (its start time in ``/proc``),

and does so again until a pass finds nothing (a dying launcher may have started one more), then exits.
Without ``/proc`` (not Linux) it can end only the watched processes.
"""

from __future__ import annotations

import os
import signal
import sys
import time

#: The environment variable holding the tokens of every lifeline a process is under, space separated.
VARIABLE = "HARNESS_LIFELINES"
#: Passes over the process table after the harness exits, at most (each pass kills what it finds).
PASSES = 20
PASS_PAUSE_S = 0.05


def stat_fields(pid: int) -> list[bytes] | None:
    """A live process's ``/proc/PID/stat`` fields after its name (the first is its state, field 3); None when it is
    gone or a zombie (it has exited: only its parent's wait is missing, and a signal changes nothing)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read()
    except OSError:
        return None
    fields = text[text.rindex(b")") + 2 :].split()  # the name may hold spaces and parentheses: cut at the last
    return None if fields[0] == b"Z" else fields


def start_time(pid: int) -> int | None:
    """A live process's start time (clock ticks after boot, ``/proc/PID/stat`` field 22); None when it is gone or
    a zombie."""
    fields = stat_fields(pid)
    return None if fields is None else int(fields[19])


def carries(pid: int, token: bytes, variable: str = VARIABLE) -> bool:
    """Whether process ``pid`` was started under the lifeline whose token is ``token`` (its environment says); with
    ``variable``, under another list of tokens (:mod:`harness.engine.process_tree` names executors' trees so)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environment = handle.read()
    except OSError:
        return False
    prefix = variable.encode() + b"="
    for entry in environment.split(b"\0"):
        if entry.startswith(prefix):
            return token in entry[len(prefix) :].split()
    return False


def marked(token: bytes) -> list[int]:
    """Every live process under this lifeline, by its environment (none without ``/proc``)."""
    if not os.path.isdir("/proc"):
        return []
    me = os.getpid()
    return [
        int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != me and carries(int(name), token)
    ]


def end_everything(token: bytes, watched: dict[int, int]) -> int:
    """SIGKILL what the harness left, pass after pass until nothing is found; returns how many were signalled."""
    if not os.path.isdir("/proc"):  # no process table to read: the watched pids are all it can end
        return sum(_kill(pid) for pid in watched)
    signalled = 0
    for _ in range(PASSES):
        victims = {pid for pid in marked(token) if start_time(pid) is not None}
        victims.update(pid for pid, started in watched.items() if start_time(pid) == started)
        if not victims:
            break
        signalled += sum(_kill(pid) for pid in victims)
        time.sleep(PASS_PAUSE_S)
    return signalled


def _kill(pid: int) -> int:
    try:
        os.kill(pid, signal.SIGKILL)
        return 1
    except (ProcessLookupError, PermissionError):
        return 0


def main(argv: list[str]) -> int:
    for number in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(number, signal.SIG_IGN)  # only end of file on stdin ends the watch
    token = argv[1].encode()
    watched: dict[int, int] = {}
    for line in sys.stdin.buffer:  # blocks until every write end is closed: the harness process is gone
        words = line.split()
        if len(words) == 3 and words[0] == b"watch" and words[1].isdigit() and words[2].lstrip(b"-").isdigit():
            watched[int(words[1])] = int(words[2])
    end_everything(token, watched)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
