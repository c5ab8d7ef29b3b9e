"""Run one command as a measured, memory-capped subprocess.

A benchmark side (the Spark job, or the pandas baseline) runs in its own
process group so its memory is measured apart from the other side's and
from the orchestrator's. Two figures are taken:

* ``peak_tree_rss``: the largest sum of RSS over the process and all its
  descendants (for Spark that is the Python driver plus the JVM it starts),
  sampled by psutil in a side thread every ``interval`` seconds. A sum of RSS
  counts shared library pages once per process, so it slightly overstates;
  sampling can miss a spike shorter than the interval.
* ``maxrss_largest``: the kernel's own high-water mark from ``wait4`` (the
  largest single process among the child and its waited-for descendants).
  Exact, but not a sum, so it understates a tree.

The sampler also sums the CPU time the tree used (the last value seen per
process) and the runner takes the whole machine's busy CPU over the same
interval: the difference is what other processes took meanwhile, which on
a shared machine says how far to trust the wall time.

The same sampler is the memory guard: when the tree passes ``cap_bytes``
the whole process group is killed and the result says so, so a side that
would take the 24 GiB machine down becomes a finding instead of an outage
(RLIMIT_AS is not used: Arrow and the JVM reserve far more address space
than they touch, so an address-space cap fails them spuriously).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

GIB = 1024**3


@dataclass
class Measurement:
    command: list[str]
    returncode: int
    wall_s: float
    peak_tree_rss: int
    maxrss_largest: int
    exceeded_cap: bool
    cap_bytes: int
    log: str
    #: CPU seconds used by the tree (approximate: last sample of each process).
    tree_cpu_s: float = 0.0
    #: CPU seconds the whole machine was busy over the wall time (all cores).
    machine_busy_cpu_s: float = 0.0

    def as_json(self) -> dict:
        return asdict(self)


def _sample_tree(root: psutil.Process, cpu: dict[int, float]) -> int:
    """RSS of a process and every descendant (skipping ones that end while we look); updates ``cpu`` by pid."""
    total = 0
    try:
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    for proc in procs:
        try:
            with proc.oneshot():
                total += proc.memory_info().rss
                times = proc.cpu_times()
                cpu[proc.pid] = times.user + times.system
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return total


def _busy(times: psutil._common.scputimes) -> float:
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def run_measured(
    command: list[str],
    *,
    cap_bytes: int,
    log_path: Path,
    interval: float = 0.1,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> Measurement:
    """Run ``command`` to completion (or to the cap) and return what it cost."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        busy_before = _busy(psutil.cpu_times())
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True)
        root = psutil.Process(proc.pid)
        peak = [0]
        cpu: dict[int, float] = {}
        exceeded = threading.Event()
        finished = threading.Event()

        def sample() -> None:
            while not finished.is_set():
                rss = _sample_tree(root, cpu)
                peak[0] = max(peak[0], rss)
                if rss > cap_bytes:
                    exceeded.set()
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    return
                finished.wait(interval)

        sampler = threading.Thread(target=sample, name="rss-sampler", daemon=True)
        sampler.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # the runner is stopped (Ctrl-C, SIGTERM): never leave a side running
            finished.set()
            _kill_leftovers(proc.pid)
            raise
        wall = time.perf_counter() - started
        busy = _busy(psutil.cpu_times()) - busy_before
        finished.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        _kill_leftovers(proc.pid)
    return Measurement(
        command=command,
        returncode=proc.returncode,
        wall_s=wall,
        peak_tree_rss=peak[0],
        maxrss_largest=usage.ru_maxrss * 1024,
        exceeded_cap=exceeded.is_set(),
        cap_bytes=cap_bytes,
        log=str(log_path),
        tree_cpu_s=round(sum(cpu.values()), 1),
        machine_busy_cpu_s=round(busy, 1),
    )


def _kill_leftovers(pgid: int) -> None:
    """A side that exits early may leave its JVM behind in its own group: end that group, only that."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
