"""executor-check and the executor adapter against deliberately broken executors (generated in tmp_path).

Each broken executor is the reference executor with one fault: the check must name the fault, and the
adapter must turn it into an error for the affected call only, then start a new executor.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from harness.app import cli
from harness.core.model import EntitySpec
from harness.drivers.executor.adapter import ExecutorAdapter
from harness.drivers.executor.checks.runner import CHECKS, run_checks
from harness.drivers.executor.process import ExecutorFailure
from tests.harness.drivers.executor.broken import REFERENCE, broken_executor

FAULTS = {
    "crashes at start": "    sys.exit(3)",
    "crashes mid-test": "    if request['method'] == 'echo': print('boom', file=sys.stderr); sys.exit(4)",
    "hangs": "    if request['method'] == 'echo': time.sleep(600)",
    "malformed JSON": (
        "    if request['method'] == 'echo': sys.stdout.write('{not json\\n'); sys.stdout.flush(); continue"
    ),
    "logs to stdout": "    if request['method'] == 'echo': print('connecting...'); sys.stdout.flush()",
    "wrong id": "    if request['method'] == 'echo': reply['id'] = 999",
    "bad Int64": "    if request['method'] == 'echo': reply['result']['smallInt64'] = int(1)",
    "unknown method is invalidRequest": (
        "    if request['method'] == 'noSuchMethod': reply['error']['kind'] = 'invalidRequest'"
    ),
    "answers a line that is not a request": {
        "unreadable": (
            '        sys.stdout.write(\'{"id": null, "ok": false, "error": '
            '{"kind": "invalidRequest", "message": "unreadable"}}\\n\'); sys.stdout.flush()'
        )
    },
    "canonical envelope": (
        "    if request['method'] == 'echo': from bson import json_util; "
        "sys.stdout.write(json_util.dumps(reply, json_options=json_util.CANONICAL_JSON_OPTIONS) + '\\n'); "
        "sys.stdout.flush(); continue"
    ),
    "canonical hello": (
        "    if request['method'] == 'hello': from bson import json_util; "
        "sys.stdout.write(json_util.dumps(reply, json_options=json_util.CANONICAL_JSON_OPTIONS) + '\\n'); "
        "sys.stdout.flush(); continue"
    ),
}

EXPECTED = {
    "crashes at start": "closed stdout (exit status 3)",
    "crashes mid-test": "closed stdout (exit status 4)",
    "hangs": "no reply within",
    "malformed JSON": "stdout line is not JSON",
    "logs to stdout": "stdout carries protocol messages only; logs go to stderr",
    "wrong id": "got id 999",
    "bad Int64": "smallInt64 came back as int",
    "unknown method is invalidRequest": "noSuchMethod: expected an error of kind notImplemented",
    "answers a line that is not a request": "must get no reply on stdout (log them to stderr)",
    "canonical envelope": "echo: the reply's id and ok must be a plain JSON integer and boolean (section 2), got id {",
    "canonical hello": 'hello: protocolVersion must be a plain JSON number (hello is plain JSON), got {"$numberInt"',
}


def broken(tmp_path: Path, fault: str | dict[str, str]) -> list[str]:
    """A broken executor from a fault: code run before each reply is written, or the hooks by name."""
    return broken_executor(tmp_path, **fault) if isinstance(fault, dict) else broken_executor(tmp_path, fault)


#: Faults only the checks on a server can see: ``fault`` code, and the words the check must print.
SERVER_FAULTS = {
    "drops events": (
        (
            "    if request['method'] == 'events': "
            "reply['result'] = [e for e in reply['result'] if e['kind'] != 'commandSucceededEvent']"
        ),
        (
            "events: missing commandSucceededEvent(delete), commandSucceededEvent(insert), "
            "commandSucceededEvent(insert), commandSucceededEvent(find)"
        ),
    ),
    "reorders events": (
        "    if request['method'] == 'events': reply['result'].reverse()",
        "events: out of order",
    ),
    "sends a failed command's failure as a string": (
        (
            "    if request['method'] == 'events': "
            "[e.update(failure=e['failure']['errmsg']) for e in reply['result'] if e['kind'] == 'commandFailedEvent']"
        ),
        (
            "events: commandFailedEvent(find) failure must be the server's reply document (ok, errmsg, code, "
            'codeName), got "unknown top level operator: $noSuchOperator'
        ),
    ),
    "opens a change stream lazily": (
        {
            "before": (
                "    operation = request['params'].get('operation') or {}\n"
                "    if operation.get('name') == 'createChangeStream':\n"
                "        pending[operation['saveResultAsEntity']] = request\n"
                "        reply = {'id': request['id'], 'ok': True, 'result': None, 'resultKind': 'entity', "
                "'entity': operation['saveResultAsEntity']}\n"
                "        sys.stdout.write(ref.reply_line(request, reply)); sys.stdout.flush(); continue\n"
                "    if operation.get('object') in pending: ref.answer(executor, pending.pop(operation['object']))"
            )
        },
        "run createChangeStream: replied before its driver sent the aggregate",
    ),
    "refuses an option sent as a canonical number": (
        (
            "    if '\"batchSize\": {\"$numberInt\"' in line: reply = {'id': request['id'], 'ok': False, 'error': "
            "{'kind': 'driverError', 'message': 'batchSize must be a number', 'type': 'MongoInvalidArgumentError', "
            "'code': None, 'codeName': None, 'errorLabels': [], 'isClientError': True, 'isNetworkError': False, "
            "'isTimeoutError': False}}"
        ),
        "run find (batchSize 5): expected resultKind documents",
    ),
    "loses a change's Int64": (
        (
            "    if request['params'].get('operation', {}).get('name') == 'iterateUntilDocumentOrError': "
            "reply['result']['documentKey']['_id'] = 2"
        ),
        'change event: documentKey should be {"_id": {"$numberLong": "2"}}, got {"_id": {"$numberInt": "2"}}',
    ),
}


def test_the_reference_executor_passes_every_check_on_the_embedded_target(capsys: pytest.CaptureFixture[str]) -> None:
    """``harness executor-check CMD`` with no ``--uri`` starts the default ``--target`` itself."""
    assert cli.main(["executor-check", shlex.join(REFERENCE)]) == 0
    out = capsys.readouterr().out
    assert "ok   a scope on the server" in out and "ok   a change stream on the server" in out, out
    assert "SKIP" not in out and f"{len(CHECKS)} checks, 0 failed" in out, out


def test_without_a_server_the_server_checks_are_skipped_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_checks(REFERENCE, None) == 0
    out = capsys.readouterr().out
    assert "SKIP a scope on the server: no server" in out and "0 failed" in out, out


def test_a_target_that_cannot_start_is_said_and_exits_two(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["executor-check", shlex.join(REFERENCE), "--target", "no-such-target"]) == 2
    assert "unknown target 'no-such-target'" in capsys.readouterr().out


@pytest.mark.parametrize("fault", sorted(SERVER_FAULTS))
def test_each_broken_executor_fails_the_server_checks_with_its_message(
    fault: str, tmp_path: Path, embedded_run: Any
) -> None:
    code, expected = SERVER_FAULTS[fault]
    lines: list[str] = []
    assert run_checks(broken(tmp_path, code), embedded_run.target.uri, lines.append) == 1
    out = "\n".join(lines)
    assert expected in out, out


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_broken_executor_fails_with_its_message(
    fault: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("harness.drivers.executor.checks.session.REQUEST_TIMEOUT_S", 3.0)
    monkeypatch.setattr("harness.drivers.executor.checks.handshake.HELLO_TIMEOUT_S", 10.0)
    assert run_checks(broken(tmp_path, FAULTS[fault]), None) == 1
    out = capsys.readouterr().out
    assert EXPECTED[fault] in out, out


def test_the_adapter_reports_a_crash_for_that_call_only_and_restarts(tmp_path: Path) -> None:
    once = tmp_path / "crashed"
    fault = f"    if request['method'] == 'createEntity' and not os.path.exists({str(once)!r}):\n"
    fault += f"        open({str(once)!r}, 'w').close(); print('dying', file=sys.stderr); sys.exit(5)"
    adapter = ExecutorAdapter(broken_executor(tmp_path, fault), request_timeout_s=20)
    scope = adapter.open_scope("mongodb://127.0.0.1:1/", iteration_timeout_s=1)
    with pytest.raises(ExecutorFailure, match=r"(?s)exit status 5.*dying"):
        scope.create_entity(EntitySpec("client", "client0", {"id": "client0"}))
    scope.close()  # a dead executor's scope closes quietly
    again = adapter.open_scope("mongodb://127.0.0.1:1/", iteration_timeout_s=1)  # a new executor
    again.create_entity(EntitySpec("client", "client0", {"id": "client0", "uriOptions": {"connect": False}}))
    again.close()
    adapter.close()
