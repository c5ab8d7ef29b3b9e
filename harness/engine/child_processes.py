"""Every process the harness starts ends when the harness process ends, however it ends; and how one ended.

A harness killed with SIGKILL runs no ``finally`` and no ``atexit``: whatever it started (``-j`` workers, a
server daemon, a launcher, an executor, Toxiproxy) would live on, holding ports and CPU. Two mechanisms, so
that neither a child's own session nor a library's spawn escapes:

- **PDEATHSIG** (Linux): a child started with :func:`popen` from the main thread, and a forked worker that
  calls :func:`die_with_parent`, asks the kernel for SIGKILL when its parent dies. The kernel ties that to the
  *thread* that forked, so :func:`popen` sets it only from the main thread (a test's thread ends after the
  test, and would take the child with it); a forked worker also polls its parent, which works everywhere.
- **The lifeline** (:mod:`harness.engine.lifeline`): one watcher process per harness process that starts
  children, reached by a pipe only this process writes. When this process is gone the pipe ends, and the
  lifeline kills every process whose environment carries its token (``HARNESS_LIFELINES``, which this module
  adds to ``os.environ``, so children of children and processes a library starts carry it too) and every
  forked process it was told to :func:`watch`.

While the harness runs, a child that must end with everything it started (an executor the harness kills, a
command :func:`run` kills at its timeout) is ended as a :class:`~harness.engine.process_tree.ProcessTree`: its
descendants and whatever holds its pipes too, in any session, so that no read of its output waits for ever.

:func:`ended` says how a child ended without reaping it, so the run can name a target process that died
(``target secantusdb-daemon exited (signal 9)``) while the target's own ``Popen`` still owns the exit status.

This is the lowest layer that may start processes; plug-ins (targets, drivers, fault backends) and the app
start theirs through :func:`popen`.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.engine.lifeline import VARIABLE, start_time
from harness.engine.process_tree import ProcessTree, pipe_inodes

#: ``prctl`` option number of PR_SET_PDEATHSIG (linux/prctl.h).
PR_SET_PDEATHSIG = 1
#: The signal a child asks for when its parent dies (an int: nothing is converted between fork and exec).
_DEATH_SIGNAL = int(signal.SIGKILL)
#: How often a forked worker looks at its parent pid (the fallback where PDEATHSIG does not exist or did not fire).
PARENT_POLL_S = 0.5
#: After :func:`run` killed a command that overran its timeout, how long it reads the output left in its pipes.
OVERRUN_DRAIN_S = 2.0

_LIFELINE_SCRIPT = Path(__file__).with_name("lifeline.py")


def _resolve_prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, looked up once here: a child between fork and exec must not load libraries."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The running program's own symbols, libc's among them (find_library would start ldconfig to look).
        function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return function


_PRCTL = _resolve_prctl()


class _Lifeline:
    """This process's lifeline: its token, the pipe's write end, the watcher process."""

    def __init__(self) -> None:
        self.token = f"{os.getpid()}-{secrets.token_hex(6)}"
        read_end, self.write_end = os.pipe()
        try:
            environment = {k: v for k, v in os.environ.items() if k != VARIABLE}
            self.process = subprocess.Popen(
                [sys.executable, "-I", str(_LIFELINE_SCRIPT), self.token],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                env=environment,
                start_new_session=True,  # a signal to the harness's process group must not end it first
            )
        finally:
            os.close(read_end)
        self.owner = os.getpid()
        self.lock = threading.Lock()
        inherited = os.environ.get(VARIABLE, "").split()
        os.environ[VARIABLE] = " ".join([*inherited, self.token])

    def tell(self, line: str) -> None:
        with self.lock:
            try:
                os.write(self.write_end, line.encode() + b"\n")
            except OSError:
                pass  # the lifeline is gone: PDEATHSIG still covers the direct children


_lifeline: _Lifeline | None = None
_lifeline_lock = threading.Lock()


def ensure_lifeline() -> None:
    """Start this process's lifeline if it has none (once per process: a forked child starts its own)."""
    global _lifeline
    with _lifeline_lock:
        if _lifeline is None or _lifeline.owner != os.getpid():
            _lifeline = _Lifeline()


def _forget_inherited_lifeline() -> None:
    """In a forked child: the parent's lifeline is the parent's; its pipe end is closed here, so that the
    parent's lifeline acts when the parent exits, not when the last of its forks does."""
    global _lifeline, _lifeline_lock
    _lifeline_lock = threading.Lock()  # the parent's lock may have been held by another thread at the fork
    if _lifeline is not None:
        try:
            os.close(_lifeline.write_end)
        except OSError:
            pass
        _lifeline = None


os.register_at_fork(after_in_child=_forget_inherited_lifeline)


def watch(pid: int) -> None:
    """Have the lifeline end ``pid`` (a process this one forked: its environment carries no token) if it outlives
    this process."""
    ensure_lifeline()
    assert _lifeline is not None
    started = start_time(pid)
    _lifeline.tell(f"watch {pid} {-1 if started is None else started}")


def _set_parent_death_signal() -> None:
    """SIGKILL to this process when the thread that forked it ends (its parent's main thread: the process)."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, _DEATH_SIGNAL, 0, 0, 0)


def _child_preparation(parent: int, then: Callable[[], Any] | None) -> Callable[[], None]:
    def prepare() -> None:  # runs in the child between fork and exec: no imports, no locks
        _set_parent_death_signal()
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)
        if then is not None:
            then()

    return prepare


def popen(command: Any, **options: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(command, **options)``, for a process that must end when this process ends.

    The lifeline is started first, so the child's environment carries its token (added to ``env`` when the
    caller gives one); from the main thread the child also gets PDEATHSIG (a ``preexec_fn`` of the caller's
    runs after it).
    """
    ensure_lifeline()
    if options.get("env") is not None:
        options["env"] = {**options["env"], VARIABLE: os.environ[VARIABLE]}
    if _PRCTL is not None and threading.current_thread() is threading.main_thread():
        options["preexec_fn"] = _child_preparation(os.getpid(), options.get("preexec_fn"))
    return subprocess.Popen(command, **options)


def run(
    command: Any, *, timeout: float | None = None, check: bool = False, **options: Any
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` through :func:`popen`: the same arguments and result (``input``, ``capture_output``,
    ``text``...), and a command still running at ``timeout`` is killed, with everything it started, and
    :class:`subprocess.TimeoutExpired` raised, as there."""
    data = options.pop("input", None)
    if data is not None:
        options["stdin"] = subprocess.PIPE
    if options.pop("capture_output", False):
        options["stdout"] = options["stderr"] = subprocess.PIPE
    with popen(command, **options) as process:
        try:
            stdout, stderr = process.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            _end_overrun(process, bool(options.get("start_new_session")))
            raise
        except BaseException:
            process.kill()
            raise
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if check:
        done.check_returncode()
    return done


def _end_overrun(process: subprocess.Popen[Any], own_group: bool) -> None:
    """Kill a command that overran its timeout and everything it started: a grandchild that keeps its pipes (a
    daemon in a session of its own) would keep ``communicate`` waiting for ever. What output is left is read
    within :data:`OVERRUN_DRAIN_S`; past that the pipes are left to ``Popen``'s exit, which closes them."""
    pipes = [pipe.fileno() for pipe in (process.stdout, process.stderr) if pipe is not None and not pipe.closed]
    ProcessTree(process.pid, pipes=pipe_inodes(pipes), group=own_group).end()
    try:
        process.communicate(timeout=OVERRUN_DRAIN_S)
    except subprocess.TimeoutExpired:
        pass


def die_with_parent() -> None:
    """Called first in a forked worker: end this process when its parent ends (PDEATHSIG, and a thread that
    notices a new parent where the signal is unavailable). The worker's own children then go with its
    lifeline."""
    parent = os.getppid()
    _set_parent_death_signal()
    if os.getppid() != parent:
        os._exit(1)

    def poll() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=poll, daemon=True, name="harness-parent-watch").start()


def ended(pid: int) -> str | None:
    """How process ``pid`` (a child of this one) ended, or None while it runs; the exit status stays for its owner.

    ``exited with status 3``, ``exited (signal 9)``; a pid that is not this process's child is only known to
    be gone (``exited``).
    """
    if not hasattr(os, "waitid"):  # no way to look without reaping: only whether it is gone
        return None if _alive(pid) else "exited"
    try:
        found = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # not our child, or already reaped by its owner
        return None if _alive(pid) else "exited"
    if found is None:
        return None
    if found.si_code == os.CLD_EXITED:
        return f"exited with status {found.si_status}"
    return f"exited (signal {found.si_status})"


def _alive(pid: int) -> bool:
    """Whether ``pid`` names a running process (a zombie has exited)."""
    if Path("/proc").is_dir():
        return start_time(pid) is not None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
