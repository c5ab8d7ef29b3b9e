"""The checks of error replies: protocol errors, a driver error's shape, a bulk write error, an unknown argument.

An executor that answers a fault with the wrong kind, or drops what it cannot pass, would turn a driver's failure
into a pass; these checks ask for the kinds of docs/executor-protocol.md sections 1, 6.2 and 7.
"""

from __future__ import annotations

from typing import Any

from harness.drivers.executor.checks.session import (
    Check,
    client_and_collection,
    command_names,
    open_scope,
    run_operation,
    wire,
)

#: Lines that are not requests (section 1): no integer id to answer, so nothing may appear on stdout.
NOT_REQUESTS = (
    "{not json",
    "[1, 2]",
    '{"method": "echo", "params": {"value": 1}}',
    '{"id": 1.5, "method": "echo", "params": {"value": 1}}',
)


def check_errors(check: Check) -> None:
    reply = check.request("noSuchMethod")
    if reply["ok"] or reply["error"].get("kind") != "notImplemented":
        check.problems.append(f"noSuchMethod: expected an error of kind notImplemented, got {reply!r}")
    for line in NOT_REQUESTS:
        check.process.send_line(line)
    stray = check.process.unexpected_output(0.5)
    if stray:
        check.problems.append(
            f"lines that are not requests ({', '.join(NOT_REQUESTS)}) must get no reply on stdout (log them to "
            f"stderr), got {stray[:3]!r}"
        )
        return
    if check.expect_ok("echo", value="still there") != "still there":
        check.problems.append("echo after lines that are not requests: the executor must keep reading requests")
    reply = check.request("run", scope="no-such-scope", operation={"name": "find", "object": "x", "arguments": {}})
    if reply["ok"] or reply["error"].get("kind") != "invalidRequest":
        check.problems.append(f"run on an unknown scope: expected an error of kind invalidRequest, got {reply!r}")


def check_driver_error(check: Check, reply: dict[str, Any]) -> None:
    error = reply.get("error") or {}
    if reply["ok"] or error.get("kind") != "driverError":
        check.problems.append(f"run insertOne (duplicate _id): expected a driverError, got {reply!r}")
        return
    expected = {"code": 11000, "isClientError": False, "isNetworkError": False, "isTimeoutError": False}
    for key, value in expected.items():
        if error.get(key) != value:
            check.problems.append(f"driverError: {key} should be {value!r}, got {error.get(key)!r}")
    for key, kind in (("message", str), ("type", str), ("errorLabels", list)):
        if not isinstance(error.get(key), kind):
            check.problems.append(f"driverError: {key} must be a {kind.__name__}, got {error.get(key)!r}")
    if "codeName" not in error:
        check.problems.append("driverError: codeName is missing (null when the server gave none)")


def check_bulk_write_error(check: Check) -> None:
    """Section 7: a write error's ``code`` is the first write error's, ``errorResponse.writeErrors`` the server's."""
    scope = "bulk"
    if open_scope(check, scope, 5000, *client_and_collection("bulk")):
        run_operation(check, scope, "deleteMany", "coll", filter={})
        reply = run_operation(check, scope, "insertMany", "coll", documents=[{"_id": 1}, {"_id": 1}])
        error = reply.get("error") or {}
        response = error.get("errorResponse")
        written = response.get("writeErrors") if isinstance(response, dict) else None
        if reply["ok"] or error.get("kind") != "driverError" or error.get("code") != 11000:
            check.problems.append(
                f"run insertMany (a duplicate _id at index 1): expected a driverError with code 11000, got {reply!r}"
            )
        elif not isinstance(written, list) or len(written) != 1 or not isinstance(written[0], dict):
            check.problems.append(
                "run insertMany (a duplicate _id at index 1): errorResponse.writeErrors must be the server's "
                f"writeErrors array, one entry, got errorResponse {wire(response)}"
            )
        elif written[0].get("index") != 1 or written[0].get("code") != 11000:
            check.problems.append(
                "run insertMany (a duplicate _id at index 1): expected writeErrors [{index: 1, code: 11000, ...}], "
                f"got {wire(written)}"
            )
    check.expect_ok("closeScope", scope=scope)


#: An argument no operation of the unified format has: every executor must refuse it, never drop it (section 6.2).
UNKNOWN_ARGUMENT = "notAnArgument"


def check_unknown_arguments(check: Check) -> None:
    """Section 6.2: an argument the executor cannot pass to its driver is refused with ``notImplemented`` naming it,
    before anything is sent; an operation that takes no arguments (a stream's ``iterateOnce``) refuses one too."""
    scope = "arguments"
    if open_scope(check, scope, 1000, *client_and_collection("arguments")):
        create = {"name": "createChangeStream", "object": "coll", "arguments": {"pipeline": []}}
        opened = check.request("run", scope=scope, operation={**create, "saveResultAsEntity": "stream"})
        _refuses_unknown_argument(check, scope, "find", "coll", filter={})
        if opened["ok"]:
            _refuses_unknown_argument(check, scope, "iterateOnce", "stream")
        else:
            check.problems.append(f"run createChangeStream: expected the stream, got {opened!r}")
    check.expect_ok("closeScope", scope=scope)


def _refuses_unknown_argument(check: Check, scope: str, name: str, obj: str, **arguments: Any) -> None:
    sent = len(command_names(check, scope))
    reply = run_operation(check, scope, name, obj, **arguments, **{UNKNOWN_ARGUMENT: 1})
    commands = command_names(check, scope)[sent:]
    error = reply.get("error") or {}
    refused = error.get("kind") == "notImplemented" and UNKNOWN_ARGUMENT in str(error.get("message"))
    if reply["ok"] or not refused or commands:
        check.problems.append(
            f"run {name} with an argument {UNKNOWN_ARGUMENT}: expected notImplemented naming it and no command sent "
            f"(section 6.2: an argument the executor cannot pass is refused, never dropped), got {reply!r} after "
            f"{commands}"
        )
