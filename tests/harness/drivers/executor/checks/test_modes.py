"""executor-check's iteration modes (docs/executor-protocol.md 6.4.1): ``hello``'s ``iterationModes`` validated, each
declared mode driven through ``openScope``'s ``iterationMode``, an undeclared one refused. The pymongo reference
executor declares pymongo's three and passes; executors broken in one mode are named with that mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.drivers.executor.adapter import ExecutorAdapter, hello_problems
from harness.drivers.executor.checks.handshake import check_hello
from harness.drivers.executor.checks.modes import check_iteration_modes
from harness.drivers.executor.checks.runner import CHECKS
from harness.drivers.executor.checks.session import Check
from harness.drivers.executor.process import ExecutorProcess
from harness.drivers.executor.pymongo_reference import ADAPTER
from tests.harness.drivers.executor.broken import REFERENCE, broken_executor

HELLO = {
    "protocolVersion": 1,
    "driver": {"name": "d", "version": "1", "language": "l"},
    "capabilities": [],
    "operations": [],
}


@pytest.mark.parametrize(
    ("modes", "problem"),
    [
        (["next", "next"], "iteration modes listed more than once: ['next']"),
        (["next", "push"], "unknown iteration modes ['push']"),
        ([], "iterationModes must name at least one mode"),
        ("next", "iterationModes must be an array of mode names"),
    ],
)
def test_a_wrong_iteration_modes_list_is_a_handshake_error(modes: Any, problem: str) -> None:
    assert hello_problems(HELLO) == []  # absent: ["next"]
    assert hello_problems({**HELLO, "iterationModes": ["tryNext", "next"]}) == []
    assert any(problem in found for found in hello_problems({**HELLO, "iterationModes": modes}))


def _mode_check(command: list[str], uri: str) -> tuple[list[str], list[str]]:
    """The handshake's problems, then the iteration-mode check's."""
    process = ExecutorProcess(command)
    check = Check(process, uri)
    try:
        check_hello(check)
        handshake, check.problems = check.problems, []
        check_iteration_modes(check)
        return handshake, check.problems
    finally:
        process.kill()


def test_the_reference_executor_declares_and_drives_pymongos_three_modes(embedded_run: Any) -> None:
    assert ("iteration modes", check_iteration_modes, True) in CHECKS
    adapter = ExecutorAdapter(REFERENCE)
    try:
        assert adapter.iteration_modes == ADAPTER.iteration_modes == ("next", "tryNext", "iterator")
    finally:
        adapter.close()
    assert _mode_check(REFERENCE, embedded_run.target.uri) == ([], [])


#: Code run before each reply is written (``broken_executor``): it sees ``request``, ``reply`` and ``pending``.
_MODE_OF_SCOPE = (
    "    if request['method'] == 'openScope': pending[request['params']['scope']] = "
    "request['params'].get('iterationMode')\n"
)

MODE_FAULTS = {
    "accepts a mode it did not declare": (
        {
            "before": (
                "    if request.get('method') == 'openScope' and request['params'].get('iterationMode') == 'emitter':\n"
                "        del request['params']['iterationMode']"
            )
        },
        (
            "openScope with iterationMode emitter (not in hello's iterationModes ['next', 'tryNext', 'iterator']): "
            "expected invalidRequest"
        ),
    ),
    "declares a mode it does not drive": (
        "    if request['method'] == 'hello': reply['result']['iterationModes'].append('emitter')",
        "openScope with iterationMode emitter (declared in hello): expected success",
    ),
    "answers null for noChange in one mode": (
        _MODE_OF_SCOPE
        + "    if request['method'] == 'run' and pending.get(request['params']['scope']) == 'tryNext' and not "
        "reply['ok'] and reply['error'].get('kind') == 'noChange': reply = {'id': request['id'], 'ok': True, "
        "'result': None}",
        "iterationMode tryNext: run iterateUntilDocumentOrError on an idle stream (budget 1000 ms): expected noChange",
    ),
    "iterateOnce blocks in one mode": (
        {
            "before": _MODE_OF_SCOPE + "    operation = request['params'].get('operation') or {}\n"
            "    if operation.get('name') == 'iterateOnce' and pending.get(request['params']['scope']) == 'iterator':\n"
            "        operation['name'] = 'iterateUntilDocumentOrError'"
        },
        (
            "iterationMode iterator: run iterateOnce on a new stream over an empty collection: expected null after "
            "exactly aggregate, getMore"
        ),
    ),
}


@pytest.mark.parametrize("fault", sorted(MODE_FAULTS))
def test_an_executor_broken_in_one_mode_is_named_with_that_mode(fault: str, tmp_path: Path, embedded_run: Any) -> None:
    code, expected = MODE_FAULTS[fault]
    command = broken_executor(tmp_path, **code) if isinstance(code, dict) else broken_executor(tmp_path, code)
    handshake, problems = _mode_check(command, embedded_run.target.uri)
    assert handshake == []
    assert any(expected in problem for problem in problems), problems


def test_an_executor_that_declares_no_modes_is_checked_in_its_one_mode_without_the_field(
    tmp_path: Path, embedded_run: Any
) -> None:
    """It predates section 6.4.1: ``next`` only, ``iterationMode`` never sent to it, no refusal asked of it."""
    log = tmp_path / "opened.txt"
    command = broken_executor(
        tmp_path,
        "    if request['method'] == 'hello': del reply['result']['iterationModes']\n"
        f"    if request['method'] == 'openScope': open({str(log)!r}, 'a').write(repr(request['params']) + '\\n')",
    )
    adapter = ExecutorAdapter(command)
    try:
        assert adapter.iteration_modes == ("next",)
    finally:
        adapter.close()
    assert _mode_check(command, embedded_run.target.uri) == ([], [])
    opened = log.read_text().splitlines()
    assert len(opened) == 1 and "iterationMode" not in opened[0]
