"""A child process and everything it started, in any session, found and killed as one.

Why (issue 32): ``killpg`` ends a process group, but a child may leave its group (``setsid sleep 1000 &``, a daemon's
double fork) and still hold the harness's end of a pipe open; whatever reads that pipe then waits for ever. A process
belongs to the tree when any of these says so, each catching what the others miss:

- it is in the root's process group (the root was started in a session of its own), or descends from the root or
  from another member (``/proc/PID/stat``'s parent field: read before anything is killed, since a killed parent's
  children are re-parented and lose the link);
- its environment carries the tree's token (:data:`VARIABLE`, inherited at any depth unless cleared);
- it holds the write end of one of the root's output pipes (``/proc/PID/fd``): exactly what can make the harness wait.

:meth:`ProcessTree.end` first stops (SIGSTOP) what it finds until a pass finds nothing new, so nothing in the tree
forks while it is being found, then SIGKILLs it all, pass after pass until nothing is left. Without ``/proc`` it can
kill only the group and the root. The harness process itself is never a member. Call it before the root is reaped:
until then the root's pid (and so its group's id) cannot name another process.
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping

from harness.engine.lifeline import carries, start_time, stat_fields

#: The environment variable holding the tokens of every process tree a process belongs to, space separated.
VARIABLE = "HARNESS_PROCESS_TREE"
#: Passes over the process table, at most, to stop the tree and then to kill it.
PASSES = 20
PASS_PAUSE_S = 0.01
_WRITE_ONLY = os.O_WRONLY
_ACCESS_MODE = os.O_ACCMODE


def new_token() -> str:
    """A token that names one tree (random: two harnesses on one machine never share one)."""
    return secrets.token_hex(8)


def environment(base: Mapping[str, str], token: str) -> dict[str, str]:
    """``base`` with ``token`` added to :data:`VARIABLE`: a child started with it, and all it starts, carry it."""
    inherited = base.get(VARIABLE, "").split()
    return {**base, VARIABLE: " ".join([*inherited, token])}


def _stat(pid: int) -> tuple[int, int, int] | None:
    """``(parent, process group, start time)`` of a live process; None when it is gone or a zombie."""
    fields = stat_fields(pid)
    return None if fields is None else (int(fields[1]), int(fields[2]), int(fields[19]))


def _table() -> dict[int, tuple[int, int, int]]:
    """Every live process other than this one: pid -> ``(parent, process group, start time)``."""
    me = os.getpid()
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            found = _stat(int(name))
            if found is not None:
                table[int(name)] = found
    return table


def pipe_inodes(fds: Iterable[int]) -> frozenset[int]:
    """The pipes behind these descriptors, as ``/proc/PID/fd`` names them (``pipe:[INODE]``)."""
    return frozenset(os.fstat(fd).st_ino for fd in fds)


def _writes_to(pid: int, inodes: frozenset[int]) -> bool:
    """Whether ``pid`` holds the write end of one of the pipes ``inodes`` (the read end is the harness's own)."""
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for name in names:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        if not (link.startswith("pipe:[") and int(link[6:-1]) in inodes):
            continue
        try:
            with open(f"/proc/{pid}/fdinfo/{name}") as handle:
                flags = next((int(line.split()[1], 8) for line in handle if line.startswith("flags:")), 0)
        except (OSError, ValueError):
            continue
        if flags & _ACCESS_MODE == _WRITE_ONLY:
            return True
    return False


def _signal(pid: int, number: int) -> bool:
    try:
        os.kill(pid, number)
        return True
    except (ProcessLookupError, PermissionError):
        return False


class ProcessTree:
    """The root process (a child of this one, ideally leading a process group of its own) and all it started."""

    def __init__(
        self, root: int, *, token: str | None = None, pipes: frozenset[int] = frozenset(), group: bool = False
    ) -> None:
        self.root = root
        #: The root's start time: once the root is reaped its pid may name another process, never a member.
        self.root_started = start_time(root)
        self.token = token.encode() if token else None
        self.pipes = pipes
        #: Whether the root leads its own process group (``start_new_session``): then the whole group is the tree's.
        self.group = group

    def members(self, known: Mapping[int, int] = {}) -> dict[int, int]:
        """The tree's live processes now, pid -> start time; ``known`` members still count while they live."""
        table = _table()
        found: dict[int, int] = {}
        for pid, (_, group, started) in table.items():
            if (
                (pid == self.root and started == self.root_started)
                or known.get(pid) == started
                or (self.group and group == self.root)
                or (self.token is not None and carries(pid, self.token, VARIABLE))
                or (self.pipes and _writes_to(pid, self.pipes))
            ):
                found[pid] = started
        children: defaultdict[int, list[int]] = defaultdict(list)
        for pid, (parent, _, _) in table.items():
            children[parent].append(pid)
        stack = list(found)
        while stack:
            for child in children[stack.pop()]:
                if child not in found:
                    found[child] = table[child][2]
                    stack.append(child)
        return found

    def end(self) -> int:
        """Stop, then SIGKILL, every member until none is left; returns how many kill signals were sent."""
        if not os.path.isdir("/proc"):  # no process table to read: the group and the root are all it can end
            if self.group:
                _signal_group(self.root)
            return int(_signal(self.root, signal.SIGKILL))
        members: dict[int, int] = {}
        for _ in range(PASSES):  # stopped, a member forks no more: the next pass sees the whole tree
            found = self.members(members)
            new = found.keys() - members.keys()
            members.update(found)
            for pid in new:
                _signal(pid, signal.SIGSTOP)
            if not new:
                break
        signalled = 0
        for _ in range(PASSES):
            if self.group:
                _signal_group(self.root)
            signalled += sum(
                _signal(pid, signal.SIGKILL) for pid, started in members.items() if start_time(pid) == started
            )
            time.sleep(PASS_PAUSE_S)
            members = self.members({pid: s for pid, s in members.items() if start_time(pid) == s})
            if not members:
                break
        return signalled


def _signal_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
