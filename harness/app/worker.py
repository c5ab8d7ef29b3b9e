"""One worker of ``harness run -j N``: a run of its own (its own target), tests by index, results back.

Workers are forked from the parent once it has loaded the plug-ins and
collected the tests, so a worker starts with both in memory and only has to
start its target. Where ``fork`` is not available the worker is spawned and
collects the tests itself from the parent's own ``harness run`` arguments;
an index names the same test on both sides either way (the test id travels
back and the parent checks it). Messages, over a pipe:

    parent -> worker:  ("run", index)   ("stop",)
    worker -> parent:  ("ready", facts)  ("started", index)  ("result", payload)  ("fatal", why)

The worker writes no results file: the parent does, one record per test.
"""

from __future__ import annotations

from typing import Any


def serve(connection: Any, argv: list[str], run_id: str, target: str, tests: list[Any] | None) -> int:
    from harness.app import compose
    from harness.app.cli import build_parser
    from harness.core.expectations import ExpectationsError
    from harness.core.ports import TargetUnavailable
    from harness.core.records import record_line

    args = build_parser("run").parse_args(argv)
    options = compose.prepare(args)
    tests = tests if tests is not None else compose.select(args)
    compose.note_schemas(options, tests)
    options.target, options.results, options.run_id = target, None, run_id
    try:
        with compose.new_run(options) as run:
            assert run.provenance is not None
            connection.send(("ready", {"run_id": run.run_id, "target": run.target.info.as_record(),
                                       "driver": {"name": run.driver.name, "version": run.driver.version},
                                       "failpoints": run.provenance.failpoints, "tests": len(tests),
                                       "expectations": run.expectations.source}))
            while True:
                command = connection.recv()
                if command[0] != "run":
                    break
                index = command[1]
                connection.send(("started", index))
                result = run.run_test(tests[index])
                connection.send(("result", {"index": index, "test_id": result.test_id, "file": result.file,
                                            "outcome": result.outcome, "message": result.message,
                                            "duration_s": result.duration_s,
                                            "classification": result.classification.as_record(),
                                            "record": record_line(result.record)}))
    except (TargetUnavailable, ExpectationsError) as exc:
        connection.send(("fatal", str(exc)))
        return 2
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return 1  # the parent went away or was interrupted: the run's own teardown has cleaned up
    return 0
