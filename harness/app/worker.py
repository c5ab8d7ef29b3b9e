"""One worker of ``harness run -j N``: a run of its own (its own target), tests by index, results back.

Workers are forked from the parent once it has loaded the plug-ins and
collected the tests, so a worker starts with both in memory and only has to
start its target. Where ``fork`` is not available the worker is spawned and
collects the tests again with the front end's ``collect`` (or is sent them);
an index names the same test on both sides either way (the test id travels
back and the parent checks it). The worker gets the run's options as the
front end built them (any front end: nothing is re-parsed), with its own
target. Messages, over a pipe:

    parent -> worker:  ("run", index)   ("stop",)
    worker -> parent:  ("ready", tests, provenance)  ("started", index)  ("result", payload)  ("fatal", why)
                       ("restarted", why, provenance)

A worker whose target's process exits (a test killed it, the server crashed) ends that run and starts a new
one, with a new target, for its next test; ``restarted`` says why and gives the new run's provenance, which
records the cause (``target_restarted_after``). Only that worker's target is lost; the others go on. A worker
dies with its parent (:func:`~harness.engine.child_processes.die_with_parent`), and its own children with it.

The worker writes no results file: the parent does, one record per test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any


def serve(connection: Any, options: Any, tests: list[Any] | None, collect: Callable[[], list[Any]] | None) -> int:
    """Run tests by index on a run of ``options`` (a :class:`~harness.engine.run.RunOptions`) until told to stop;
    a stop signal (the parent relays it) tears the test in flight down, sends its record and ends the worker."""
    from harness.app.stopping import RunInterrupted, stopping_on_signals
    from harness.engine import child_processes

    child_processes.die_with_parent()
    with stopping_on_signals(second_exits=False):
        try:
            return _serve_runs(connection, options, tests, collect)
        except RunInterrupted as stop:  # the run's own teardown has turned its fail points off
            return stop.exit_status


def _serve_runs(connection: Any, options: Any, tests: list[Any] | None, collect: Callable[[], list[Any]] | None) -> int:
    """:func:`serve`'s runs, one after another while targets are lost and replaced."""
    from harness.app import compose
    from harness.core.expectations import ExpectationsError
    from harness.core.ports import DriverUnavailable, TargetUnavailable

    lost: str | None = None
    try:
        if tests is None:
            assert collect is not None  # the parent sends the tests when it has no way to collect them
            tests = collect()
        waiting: int | None = None  # a test asked for while the target was found lost: run it on the new one
        while True:
            run_options = options
            if lost is not None:
                run_options = replace(options, provenance={**options.provenance, "target_restarted_after": lost})
            with compose.new_run(run_options) as run:
                assert run.provenance is not None
                if lost is None:
                    connection.send(("ready", len(tests), run.provenance))
                else:
                    connection.send(("restarted", lost, run.provenance))
                lost, waiting, ran = _run_tests(connection, run, tests, waiting)
            if lost is None:
                return 0
            if not ran and "target_restarted_after" in run_options.provenance:
                raise TargetUnavailable(f"the restarted target was lost too before it ran a test ({lost})")
    except (TargetUnavailable, DriverUnavailable, ExpectationsError) as exc:  # a driver refusing the run's mode too
        why = f"restarting the target after '{lost}' failed: {exc}" if lost is not None else str(exc)
        connection.send(("fatal", why))
        return 2
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return 1  # the parent went away or was interrupted: the run's own teardown has cleaned up


def _run_tests(connection: Any, run: Any, tests: list[Any], waiting: int | None) -> tuple[str | None, int | None, bool]:
    """Serve ``run`` until told to stop (why None) or until its target is lost: ``(why, index, ran)``, where
    ``index`` is a test asked for and not yet run (None when the loss showed after a test) and ``ran`` says
    whether this run ran any test (a target lost before its first test each time is not restarted forever)."""
    from harness.app.stopping import RunInterrupted

    ran = False
    while True:
        if waiting is None:
            command = connection.recv()
            if command[0] != "run":
                return None, None, ran
            waiting = command[1]
        lost = run.target_lost()
        if lost is not None:
            return lost, waiting, ran
        index, waiting, ran = waiting, None, True
        connection.send(("started", index))
        try:
            result = run.run_test(tests[index])
        except RunInterrupted as stop:  # the test was torn down; its record says why, then the worker stops
            cut_short = run.record_interrupted(tests[index], str(stop))
            if cut_short is not None:
                connection.send(("result", _payload(index, cut_short)))
            raise
        connection.send(("result", _payload(index, result)))
        lost = run.target_lost()
        if lost is not None:
            return lost, None, ran


def _payload(index: int, result: Any) -> dict[str, Any]:
    """A result as it travels to the parent (which writes the one results file)."""
    from harness.core.records import record_line

    return {
        "index": index,
        "test_id": result.test_id,
        "file": result.file,
        "outcome": result.outcome,
        "message": result.message,
        "duration_s": result.duration_s,
        "classification": result.classification.as_record(),
        "record": record_line(result.record),
        "attempts": [record_line(record) for record in result.attempts],
    }
