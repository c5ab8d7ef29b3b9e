"""executor-check's checks for the version 1 clarifications (docs/executor-protocol.md, items 13 to 31).

Each check is shown to fail against a deliberately broken executor — the reference executor with the one fault
a driver team met while writing the Java or Go executor — with a message naming the rule; the reference itself
passes them all (tests/harness/drivers/executor/checks/test_runner.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.drivers.executor.checks.runner import run_checks
from tests.harness.drivers.executor.broken import broken_executor

_OPERATION = "(request['params'].get('operation') or {})"


def _answer_at_once(condition: str, reply: str) -> str:
    """``before`` code that answers a request itself, without the reference executor, when ``condition`` holds."""
    return (
        f"    if {condition}:\n"
        f"        reply = {reply}\n"
        "        sys.stdout.write(ref.reply_line(request, reply)); sys.stdout.flush(); continue"
    )


#: Faults the checks without a server see: the hooks (broken.py), and the words the check must print.
FAULTS: dict[str, tuple[dict[str, str], str]] = {
    "answers a request whose id is 1.5": (
        {
            "unreadable": (
                '        if \'1.5\' in line: sys.stdout.write(\'{"id": 1, "ok": true, "result": 1}\\n\'); '
                "sys.stdout.flush()"
            )
        },
        "must get no reply on stdout (log them to stderr)",
    ),
    "declares a fastHeartbeatMS of 0": (
        {"fault": "    if request['method'] == 'hello': reply['result']['fastHeartbeatMS'] = 0"},
        "hello: fastHeartbeatMS must be null or a positive integer (section 4), got 0",
    ),
}

#: Faults only the checks on a server can see.
SERVER_FAULTS: dict[str, tuple[dict[str, str], str]] = {
    "replaces an open scope": (
        {"before": "    if request['method'] == 'openScope': executor.scopes.pop(request['params']['scope'], None)"},
        "openScope with the id of an open scope: expected invalidRequest (section 5)",
    ),
    "drops a URI option it does not know": (
        {
            "before": (
                "    if request['method'] == 'createEntity': "
                "request['params']['entity'].get('client', {}).get('uriOptions', {}).pop('notAUriOption', None)"
            )
        },
        "createEntity with uriOptions {notAUriOption: 1}: expected notImplemented or a driverError",
    ),
    "reads only a cursor's first batch": (
        {
            "before": (
                f"    if {_OPERATION}.get('name') == 'find' and 'batchSize' in {_OPERATION}.get('arguments', {{}}): "
                f"{_OPERATION}['arguments']['limit'] = 1"
            )
        },
        "run find (batchSize 1, three documents): expected find then a getMore per further batch",
    ),
    "gives a bulk write error the driver's summary code": (
        {"fault": f"    if {_OPERATION}.get('name') == 'insertMany' and not reply['ok']: reply['error']['code'] = 65"},
        "run insertMany (a duplicate _id at index 1): expected a driverError with code 11000",
    ),
    "wraps the server's write errors": (
        {
            "fault": (
                f"    if {_OPERATION}.get('name') == 'insertMany' and not reply['ok']: "
                "reply['error']['errorResponse']['writeErrors'] = "
                "[{'err': e} for e in reply['error']['errorResponse']['writeErrors']]"
            )
        },
        "run insertMany (a duplicate _id at index 1): expected writeErrors [{index: 1, code: 11000, ...}]",
    ),
    "answers iterateOnce from the empty first batch": (
        {
            "before": _answer_at_once(
                f"{_OPERATION}.get('name') == 'iterateOnce'", "{'id': request['id'], 'ok': True, 'result': None}"
            )
        },
        "run iterateOnce on a new stream over an empty collection: expected null after exactly aggregate, getMore",
    ),
    "closes a stream that ran out of budget": (
        {
            "fault": (
                "    if not reply['ok'] and reply['error']['kind'] == 'noChange': "
                f"executor.scope(request['params']).entity({_OPERATION}['object']).close()"
            )
        },
        "a stream that ran out of budget stays usable",
    ),
    "reports the failed killCursors of close": (
        {
            "fault": (
                f"    if {_OPERATION}.get('name') == 'close': reply = {{'id': request['id'], 'ok': False, "
                "'error': {'kind': 'driverError', 'message': 'killCursors failed', 'type': 'OperationFailure', "
                "'code': 2, 'codeName': 'BadValue', 'errorLabels': [], 'isClientError': False, "
                "'isNetworkError': False, 'isTimeoutError': False}}"
            )
        },
        "run close with killCursors failing (fail point, errorCode 2): expected null, the error swallowed",
    ),
    "waits out its budget on a stream the server closed": (
        {
            "fault": (
                "    if not reply['ok'] and reply['error']['kind'] == 'noChange': "
                "time.sleep(executor.scope(request['params']).iteration_timeout_s)"
            )
        },
        (
            "run iterateUntilDocumentOrError after invalidate (the server closed the cursor): expected noChange or "
            "a driverError at once"
        ),
    ),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_broken_executor_fails_the_check_without_a_server(
    fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hooks, expected = FAULTS[fault]
    assert run_checks(broken_executor(tmp_path, **hooks), None) == 1
    out = capsys.readouterr().out
    assert expected in out, out


@pytest.mark.parametrize("fault", sorted(SERVER_FAULTS))
def test_a_broken_executor_fails_the_check_on_a_server(
    fault: str, tmp_path: Path, embedded_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("harness.drivers.executor.checks.streams.CLOSED_STREAM_BUDGET_S", 3.0)
    hooks, expected = SERVER_FAULTS[fault]
    lines: list[str] = []
    assert run_checks(broken_executor(tmp_path, **hooks), embedded_run.target.uri, lines.append) == 1
    out = "\n".join(lines)
    assert expected in out, out
