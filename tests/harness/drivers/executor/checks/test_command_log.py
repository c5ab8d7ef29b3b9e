"""executor-check's command-log check (docs/executor-protocol.md 6.4.2): the reference executor passes, and an
executor broken in each way the early verdict would be misled by is named with what it got wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.drivers.executor.checks.command_log import check_command_log
from harness.drivers.executor.checks.handshake import check_hello
from harness.drivers.executor.checks.runner import CHECKS
from harness.drivers.executor.checks.session import Check
from harness.drivers.executor.process import ExecutorProcess
from tests.harness.drivers.executor.broken import REFERENCE, broken_executor


def _log_check(command: list[str], uri: str) -> list[str]:
    process = ExecutorProcess(command)
    check = Check(process, uri)
    try:
        check_hello(check)
        assert check.problems == []
        check_command_log(check)
        return check.problems
    finally:
        process.kill()


def _log_reply(change: str) -> str:
    """Fault code run on each successful ``commandLog`` reply: ``entries`` is its result, changed in place."""
    head = "    if request['method'] == 'commandLog' and reply['ok']:\n        entries = reply['result']\n"
    return f"{head}        {change}"


LOG_FAULTS = {
    "keeps only what the client observes": (
        _log_reply("entries[:] = [e for e in entries if e.get('client') != 'writer']"),
        "an insert of a client that observes nothing (insert from client 'writer') in the log",
    ),
    "leaves out requestId": (
        _log_reply("[e.pop('requestId', None) for e in entries]"),
        "the started event has no requestId",
    ),
    "puts replies before their commands": (
        _log_reply("entries.reverse()"),
        "no succeeded event with requestId",
    ),
    "answers [] past the log's end": (
        (
            "    if request['method'] == 'commandLog' and not reply['ok']:\n"
            "        reply = {'id': request['id'], 'ok': True, 'result': []}"
        ),
        "commandLog from past the log's end: expected invalidRequest",
    ),
    "ignores budgetMS": (
        {"before": "    request.get('params', {}).pop('budgetMS', None)"},
        "the slice's budget replaces the scope's",
    ),
    "drops the aggregate's command": (
        _log_reply("[e.pop('command', None) for e in entries if e.get('commandName') == 'aggregate']"),
        "the aggregate's started event must carry the command as sent",
    ),
}


def test_the_reference_executor_passes(embedded_run: Any) -> None:
    assert ("the command log and budget slices (if declared)", check_command_log, True) in CHECKS
    assert _log_check(REFERENCE, embedded_run.target.uri) == []


@pytest.mark.parametrize("fault", sorted(LOG_FAULTS))
def test_a_broken_command_log_is_named(fault: str, tmp_path: Path, embedded_run: Any) -> None:
    code, expected = LOG_FAULTS[fault]
    command = broken_executor(tmp_path, **code) if isinstance(code, dict) else broken_executor(tmp_path, code)
    problems = _log_check(command, embedded_run.target.uri)
    assert any(expected in problem for problem in problems), problems


def test_an_executor_without_the_capability_is_not_asked(tmp_path: Path, embedded_run: Any) -> None:
    """It predates section 6.4.2: the harness never sends it ``commandLog`` or ``budgetMS``, so nothing to check."""
    seen = tmp_path / "methods.txt"
    command = broken_executor(
        tmp_path,
        "    if request['method'] == 'hello': reply['result']['capabilities'].remove('command_log')\n"
        f"    open({str(seen)!r}, 'a').write(request['method'] + '\\n')",
    )
    assert _log_check(command, embedded_run.target.uri) == []
    assert seen.read_text().split() == ["hello"]
