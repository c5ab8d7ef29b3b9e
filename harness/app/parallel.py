"""``harness run -j N``: N worker processes, each with a target of its own, slowest tests first.

Tests that drop and recreate the same databases must never share a server,
so each worker (:mod:`harness.app.worker`) starts its own harness-started
target (an embedded SecantusDB starts in a fraction of a second). A target
the harness does not start (``uri=``) is shared by whoever uses it, so it
gets one worker, unless more deployments are listed with ``--worker-target``
(one per extra worker).

The parent hands out one test at a time to whichever worker is free, the
slowest first (durations from earlier runs, :mod:`harness.app.durations`),
writes every record to the one results file as it arrives, and reports
through the same console reporter as a sequential run: same verdicts, same
records (one per test), same summary. A worker that dies takes only its
current test with it (an ``error`` record says so); a new worker takes its
place. A worker whose target's process exits starts a new target itself
(:mod:`harness.app.worker`) and says so. Workers end with the parent however
it ends, and everything they started with them
(:mod:`harness.engine.child_processes`): the parent's lifeline is told each
worker's pid.

Workers are processes, not threads: an embedded SecantusDB and the driver
under test are CPU-bound Python, and a process each uses every core.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.connection import wait
from types import SimpleNamespace
from typing import Any

from harness.app.compose import plugins as compose_plugins
from harness.app.durations import Durations
from harness.app.reporting import ConsoleReporter
from harness.app.stopping import RunInterrupted, stopping_on_signals
from harness.core.causes import from_record
from harness.core.credentials import redact_text
from harness.core.expectations import Classification, Expectations
from harness.core.ports import TargetInfo, TargetUnavailable
from harness.core.records import RunProvenance, new_run_id, utc_now
from harness.core.terminal_text import printable
from harness.core.verdicts import ERROR, Verdict
from harness.engine import child_processes
from harness.engine.results_store import ResultsStore
from harness.engine.run import RunOptions, TestResult, expectations_for, result_of

#: Replacement workers started, at most, per worker asked for (a target that kills every worker stops the run).
RESTARTS_PER_WORKER = 2


@dataclass
class _Worker:
    number: int
    target: str
    process: Any
    connection: Any
    current: int | None = None
    alive: bool = True
    #: The worker's run's provenance, from its ``ready``: a test lost with the worker is recorded under it.
    provenance: RunProvenance | None = None


@dataclass
class _View:
    """What the console reporter reads from a run, built from the first worker's ``ready``."""

    run_id: str
    target: Any
    driver: Any
    expectations: Expectations


def worker_targets(plugins: Any, target: str, jobs: int, extra: list[str], warn: Any) -> list[str]:
    """One target per worker: the same harness-started kind for all, or the listed deployments."""
    if plugins.isolated(target):
        return [target] * jobs
    deployments = [target, *extra]
    if jobs > len(deployments):
        warn(
            f"harness: -j {jobs}: target {target.partition('=')[0]!r} is not started by the harness, so "
            f"workers cannot each have their own; running {len(deployments)} worker(s), one per deployment "
            "(list more with --worker-target)"
        )
    return deployments[:jobs]


#: After a stop signal, how long the workers get to tear their tests down and send their last records.
DRAIN_S = 30.0


def run_parallel(
    tests: list[Any],
    options: RunOptions,
    targets: list[str],
    quiet: bool,
    collect: Callable[[], list[Any]] | None = None,
) -> int:
    """Run ``tests`` in one worker per entry of ``targets``, each with a run of the same ``options``.

    ``options`` is the run's, as any front end built it (spec sources and schemas in its provenance, its rule
    mapping loaded). Workers get a copy with their own target. A worker that cannot inherit the tests (no
    ``fork``) gets ``collect`` to collect them again (picklable: a module function or a ``functools.partial``
    of one), or, without it, the tests themselves.
    """
    shared = replace(options, run_id=options.run_id or new_run_id(), results=None)
    durations = Durations.load()
    pending = schedule(tests, durations)
    context = _context()
    workers: list[_Worker] = []
    store = ResultsStore(options.results)
    reporter = ConsoleReporter(total=len(tests), quiet=quiet, notes=options.notes)
    view: _View | None = None
    restarts = RESTARTS_PER_WORKER * len(targets)
    done = 0

    def spawn(number: int, target: str) -> None:
        parent_end, child_end = context.Pipe()
        inherited = tests if context.get_start_method() == "fork" or collect is None else None
        process = context.Process(
            target=_serve,
            args=(child_end, replace(shared, target=target), inherited, collect),
            name=f"harness-worker-{number}",
            daemon=True,
        )
        process.start()
        child_processes.watch(process.pid)
        child_end.close()
        workers.append(_Worker(number, target, process, parent_end))

    def dispatch(worker: _Worker) -> None:
        worker.current = pending.pop(0) if pending else None
        _send(worker, ("run", worker.current) if worker.current is not None else ("stop",))

    def relay_and_drain(stop: RunInterrupted) -> int:
        """A stop signal: each worker is told (it tears its test down, sends that test's record and ends); their
        last records are written, for a bounded time; then the summary, and 128 + the signal's number."""
        for worker in workers:
            if worker.alive and worker.process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + DRAIN_S
        while any(w.alive for w in workers) and time.monotonic() < deadline:
            live = {w.connection: w for w in workers if w.alive}
            for connection in wait(list(live), timeout=max(0.0, deadline - time.monotonic())):
                worker = live[connection]
                try:
                    kind, *payload = connection.recv()
                except (EOFError, OSError):
                    worker.alive = False
                    continue
                if kind == "result":
                    result = _result(payload[0], tests)
                    for record in result.records:
                        store.append(record)
                    reporter.report(result)
        reporter.finish(interrupted=str(stop))
        return stop.exit_status

    def serve_tests() -> int:
        nonlocal view, restarts, done
        child_processes.ensure_lifeline()  # before the first fork: the workers must not inherit a half-made one
        if context.get_start_method() == "fork":
            for target in dict.fromkeys(targets):
                kind = compose_plugins().targets.get(target.partition("=")[0])
                if kind is not None and kind.warm_up is not None:
                    kind.warm_up()
        for number, target in enumerate(targets):
            spawn(number, target)
        while done < len(tests):
            live = {w.connection: w for w in workers if w.alive}
            if not live:
                raise TargetUnavailable(f"every worker exited with {len(tests) - done} test(s) not run")
            for connection in wait(list(live)):
                worker = live[connection]
                try:
                    kind, *payload = connection.recv()
                except (EOFError, OSError):  # the worker exited
                    worker.alive = False
                    worker.process.join(5)
                    if worker.current is not None and view is not None:
                        result = _lost(view, tests[worker.current], worker, worker.process.exitcode, shared)
                        store.append(result.record)
                        reporter.report(result)
                        done += 1
                        worker.current = None
                    if pending and restarts > 0 and view is not None:
                        restarts -= 1
                        spawn(len(workers), worker.target)
                    continue
                if kind == "fatal":
                    raise TargetUnavailable(
                        f"worker {worker.number} (target {redact_text(worker.target)}): {redact_text(payload[0])}"
                    )
                if kind == "ready":
                    collected, worker.provenance = payload
                    if collected != len(tests):
                        raise TargetUnavailable(
                            f"worker {worker.number} collected {collected} tests, the "
                            f"parent {len(tests)}: the spec files changed while starting"
                        )
                    if view is None:
                        view = _view(worker.provenance, options)
                        reporter.start(view, workers=len(targets))
                    dispatch(worker)
                elif kind == "restarted":
                    why, worker.provenance = payload
                    said = printable(redact_text(why))  # a server's words: shown, never sent to the terminal as codes
                    print(f"harness: worker {worker.number}: {said}; it started a new target", file=sys.stderr)
                elif kind == "started":
                    reporter.begin(tests[payload[0]].test_id)
                elif kind == "result":
                    result = _result(payload[0], tests)
                    for record in result.records:  # every attempt, in order
                        store.append(record)
                    durations.note(result.test_id, result.duration_s)
                    reporter.report(result)
                    done += 1
                    dispatch(worker)
        durations.save()
        return reporter.finish()

    try:
        with stopping_on_signals():
            try:
                return serve_tests()
            except RunInterrupted as stop:
                return relay_and_drain(stop)
    finally:
        store.close()
        for worker in workers:
            _stop(worker)


def schedule(tests: list[Any], durations: Durations) -> list[int]:
    """Test indexes, slowest first (by earlier runs; a test never seen counts as the median); ties keep load order."""
    return sorted(range(len(tests)), key=lambda i: -durations.estimate(tests[i].test_id))


def _context() -> Any:
    """fork where it is safe (workers inherit the loaded tests), else spawn (workers collect them again).

    Safe means Linux, and a parent with no other thread: a thread's locks (a
    server's, a driver's, logging's) would be copied held into the child.
    """
    import multiprocessing
    import threading

    fork = sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if fork and threading.active_count() == 1 else "spawn")


def _serve(
    connection: Any, options: RunOptions, tests: list[Any] | None, collect: Callable[[], list[Any]] | None
) -> None:
    from harness.app.worker import serve

    sys.exit(serve(connection, options, tests, collect))


def _send(worker: _Worker, message: tuple) -> None:
    try:
        worker.connection.send(message)
    except (BrokenPipeError, OSError):
        pass  # it died; the next wait() reports it


def _stop(worker: _Worker) -> None:
    if worker.process.is_alive():
        _send(worker, ("stop",))
        worker.process.join(10)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
    worker.connection.close()


def _view(provenance: RunProvenance, options: RunOptions) -> _View:
    info = TargetInfo(**provenance.target)
    return _View(
        provenance.run_id,
        SimpleNamespace(info=info),
        SimpleNamespace(**provenance.driver),
        expectations_for(
            options.expected, info.name, provenance.driver["name"], provenance.driver.get("iteration_mode")
        ),
    )


def _result(payload: dict[str, Any], tests: list[Any]) -> TestResult:
    test = tests[payload["index"]]
    if test.test_id != payload["test_id"]:
        raise TargetUnavailable(f"worker ran {payload['test_id']!r} for {test.test_id!r}: the test lists differ")
    record = json.loads(payload["record"])
    fields = payload["classification"]
    classification = Classification(
        fields["expected"],
        fields["kind"],
        fields["reason"],
        tuple(fields["entries"]),
        fields["unexplained"],
        tuple(from_record(cause) for cause in record.get("causes", [])),
    )
    return TestResult(
        payload["test_id"],
        payload["file"],
        payload["outcome"],
        payload["message"],
        payload["duration_s"],
        classification,
        record,
        tuple(json.loads(line) for line in payload.get("attempts", [])),
    )


def _lost(view: _View, test: Any, worker: _Worker, returncode: int, options: RunOptions) -> TestResult:
    """The result of a test whose worker died under it: an ``error`` with the worker's exit status, recorded
    by the one record builder under the worker's own provenance, so it has every field a normal record has."""
    assert worker.provenance is not None  # a worker gets a test only after its ``ready``
    message = (
        f"worker {worker.number} (target {redact_text(worker.target)}) exited with status {returncode} during this test"
    )
    return result_of(test, Verdict(ERROR, message), worker.provenance, view.expectations, options.rules, utc_now(), 0.0)
