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

The worker writes no results file: the parent does, one record per test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def serve(connection: Any, options: Any, tests: list[Any] | None, collect: Callable[[], list[Any]] | None) -> int:
    """Run tests by index on a run of ``options`` (a :class:`~harness.engine.run.RunOptions`) until told to stop."""
    from harness.app import compose
    from harness.core.expectations import ExpectationsError
    from harness.core.ports import TargetUnavailable
    from harness.core.records import record_line

    try:
        if tests is None:
            assert collect is not None  # the parent sends the tests when it has no way to collect them
            tests = collect()
        with compose.new_run(options) as run:
            assert run.provenance is not None
            connection.send(("ready", len(tests), run.provenance))
            while True:
                command = connection.recv()
                if command[0] != "run":
                    break
                index = command[1]
                connection.send(("started", index))
                result = run.run_test(tests[index])
                connection.send(
                    (
                        "result",
                        {
                            "index": index,
                            "test_id": result.test_id,
                            "file": result.file,
                            "outcome": result.outcome,
                            "message": result.message,
                            "duration_s": result.duration_s,
                            "classification": result.classification.as_record(),
                            "record": record_line(result.record),
                        },
                    )
                )
    except (TargetUnavailable, ExpectationsError) as exc:
        connection.send(("fatal", str(exc)))
        return 2
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return 1  # the parent went away or was interrupted: the run's own teardown has cleaned up
    return 0
