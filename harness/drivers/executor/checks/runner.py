"""The order of ``harness executor-check``'s checks, and the run that sequences them against one process.

A protocol fault (a crash, a hang, a line that is not JSON, a wrong id) ends the checks that need the process;
the rest are reported as not run. The checks that need a server are skipped without a ``uri``.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.drivers.executor.checks.command_log import check_command_log
from harness.drivers.executor.checks.errors import check_bulk_write_error, check_errors, check_unknown_arguments
from harness.drivers.executor.checks.handshake import check_eof, check_hello, check_round_trip
from harness.drivers.executor.checks.modes import check_iteration_modes
from harness.drivers.executor.checks.operations import check_cursor_reading, check_scopes, check_with_server
from harness.drivers.executor.checks.session import Check
from harness.drivers.executor.checks.streams import check_change_stream, check_closed_stream, check_stream_iteration
from harness.drivers.executor.process import ExecutorFailure, ExecutorProcess

#: The checks, in order: each name, what it sends, and whether it needs a server.
CHECKS: list[tuple[str, Callable[[Check], None], bool]] = [
    ("handshake (hello)", check_hello, False),
    ("Extended JSON round trip (echo)", check_round_trip, False),
    ("error replies", check_errors, False),
    ("a scope on the server", check_with_server, True),
    ("a change stream on the server", check_change_stream, True),
    ("scope ids, heartbeats and URI options", check_scopes, True),
    ("reading a cursor to its end", check_cursor_reading, True),
    ("a bulk write error", check_bulk_write_error, True),
    ("iterateOnce, the iteration budget and close", check_stream_iteration, True),
    ("an argument the executor cannot pass", check_unknown_arguments, True),
    ("a stream the server closed", check_closed_stream, True),
    ("iteration modes", check_iteration_modes, True),
    ("the command log and budget slices (if declared)", check_command_log, True),
    ("EOF handling", check_eof, False),
]


def run_checks(command: str | list[str], uri: str | None, out: Callable[[str], None] = print) -> int:
    """Run every check against a new process; 0 when all pass."""
    try:
        process = ExecutorProcess(command)
    except ExecutorFailure as exc:
        out(f"FAIL start: {exc}")
        return 1
    check = Check(process, uri)
    failed = 0
    broken: str | None = None
    for name, run, needs_server in CHECKS:
        if broken is not None:
            out(f"NOT RUN {name}: the executor broke earlier")
            failed += 1
            continue
        if needs_server and uri is None:
            out(f"SKIP {name}: no server")
            continue
        check.problems = []
        try:
            run(check)
        except ExecutorFailure as exc:
            check.problems.append(str(exc))
            broken = str(exc)
        if check.problems:
            failed += 1
            out(f"FAIL {name}")
            for problem in check.problems:
                out(f"  - {problem}")
        else:
            out(f"ok   {name}")
    if process.failure is None:
        process.kill()
    out(f"{len(CHECKS)} checks, {failed} failed")
    return 1 if failed else 0
