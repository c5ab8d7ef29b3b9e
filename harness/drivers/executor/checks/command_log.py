"""``executor-check`` for section 6.4.2 of docs/executor-protocol.md: the scope's command log and ``budgetMS``.

The harness gives its early no-change verdict to an executor only through these two, and a log that leaves a
command out, or pairs a reply with the wrong command, would let the verdict fail a change that was still coming. So
the check asks for what the verdict leans on: a command the client does not observe is in the log with its reply,
each client's commands are named, a started event comes before its reply, the log is read from an index, and a
slice of an idle stream ends at its own budget, not the scope's. An executor that does not list ``command_log``
passes (the harness then never asks it); the check says so.
"""

from __future__ import annotations

import time
from typing import Any

from bson.int64 import Int64

from harness.drivers.executor.checks.session import Check, open_scope, run_operation

#: The scope's budget in this check: a slice that waited it out instead of ``budgetMS`` is told apart by time.
SCOPE_BUDGET_MS = 12_000  # under the check's 20 s request deadline, so an executor that ignores budgetMS answers
SLICE_MS = 1_000
#: A slice answers within its budget plus one server wait (section 6.4: the budget is checked between getMores).
SLICE_LIMIT_S = 8.0


def check_command_log(check: Check) -> None:
    """Section 6.4.2, when ``hello`` lists ``command_log``."""
    if "command_log" not in (check.hello.get("capabilities") or []):
        return
    scope = "command-log"
    entities = (
        {
            "client": {
                "id": "watcher",
                "observeEvents": ["commandStartedEvent"],
                "ignoreCommandMonitoringEvents": ["insert"],
            }
        },
        {"client": {"id": "writer"}},
        {"database": {"id": "db", "client": "watcher", "databaseName": "executor_check"}},
        {"collection": {"id": "watched", "database": "db", "collectionName": "command_log"}},
        {"database": {"id": "db2", "client": "writer", "databaseName": "executor_check"}},
        {"collection": {"id": "written", "database": "db2", "collectionName": "command_log"}},
    )
    if not open_scope(check, scope, SCOPE_BUDGET_MS, *entities):
        check.expect_ok("closeScope", scope=scope)
        return
    run_operation(check, scope, "deleteMany", "written", filter={})
    seen = _log(check, scope, 0)
    run_operation(check, scope, "insertOne", "watched", document={"_id": Int64(1)})
    run_operation(check, scope, "insertOne", "written", document={"_id": Int64(2)})
    new = _log(check, scope, len(seen))
    _expect_answered(check, new, "insert", "watcher", "an insert its client ignores (ignoreCommandMonitoringEvents)")
    _expect_answered(check, new, "insert", "writer", "an insert of a client that observes nothing")
    end = len(seen) + len(new)
    if _log(check, scope, end):
        check.problems.append("commandLog from the log's end: expected [] when nothing is new")
    past = check.request("commandLog", scope=scope, **{"from": end + 1000})
    if past["ok"] or past["error"].get("kind") != "invalidRequest":
        check.problems.append(
            f"commandLog from past the log's end: expected invalidRequest (section 6.4.2), got {past!r}"
        )
    opened = check.request(
        "run",
        scope=scope,
        operation={
            "name": "createChangeStream",
            "object": "watched",
            # getMores that come back every 100 ms: several are answered within the slice, whatever its phase
            "arguments": {"pipeline": [], "maxAwaitTimeMS": 100},
            "saveResultAsEntity": "stream",
        },
    )
    if not opened["ok"]:
        check.problems.append(f"run createChangeStream: expected the stream, got {opened!r}")
    else:
        _slice(check, scope, len(seen) + len(new))
    check.expect_ok("closeScope", scope=scope)


def _slice(check: Check, scope: str, start: int) -> None:
    """An idle stream's ``iterateUntilDocumentOrError`` with ``budgetMS`` answers ``noChange`` at that budget, and
    the log shows the stream's aggregate and its getMores with their replies."""
    began = time.monotonic()
    idle = check.request(
        "run",
        scope=scope,
        operation={"name": "iterateUntilDocumentOrError", "object": "stream", "arguments": {}},
        budgetMS=SLICE_MS,
    )
    took = time.monotonic() - began
    if idle["ok"] or idle["error"].get("kind") != "noChange":
        check.problems.append(
            f"run iterateUntilDocumentOrError with budgetMS {SLICE_MS} on an idle stream: expected noChange, "
            f"got {idle!r}"
        )
    elif took > SLICE_LIMIT_S:
        check.problems.append(
            f"run iterateUntilDocumentOrError with budgetMS {SLICE_MS}: answered after {took:.1f} s; the slice's "
            f"budget replaces the scope's ({SCOPE_BUDGET_MS} ms) for that request (section 6.4.2)"
        )
    entries = _log(check, scope, start)
    _expect_answered(check, entries, "aggregate", "watcher", "the stream's aggregate")
    _expect_answered(check, entries, "getMore", "watcher", "the stream's getMore")
    aggregate = next((e for e in entries if e.get("commandName") == "aggregate" and "command" in e), {})
    pipeline = (aggregate.get("command") or {}).get("pipeline")
    if not (
        isinstance(pipeline, list) and pipeline and isinstance(pipeline[0], dict) and "$changeStream" in pipeline[0]
    ):
        check.problems.append(
            f"commandLog: the aggregate's started event must carry the command as sent, got {aggregate!r}"
        )


def _log(check: Check, scope: str, start: int) -> list[dict[str, Any]]:
    found = check.expect_ok("commandLog", scope=scope, **{"from": start})
    if not isinstance(found, list):
        check.problems.append(f"commandLog: expected an array, got {found!r}")
        return []
    return [entry for entry in found if isinstance(entry, dict)]


def _expect_answered(check: Check, entries: list[dict[str, Any]], name: str, client: str, what: str) -> None:
    """``entries`` hold a started event of ``name`` from ``client``, then (later) its reply paired by requestId."""
    for index, entry in enumerate(entries):
        if entry.get("commandName") != name or entry.get("client") != client:
            continue
        if entry.get("kind") != "commandStartedEvent":
            continue
        request_id = entry.get("requestId")
        if request_id is None:
            check.problems.append(f"commandLog: {what}: the started event has no requestId (required in the log)")
            return
        for later in entries[index + 1 :]:
            if later.get("requestId") == request_id and later.get("kind") == "commandSucceededEvent":
                if not isinstance(later.get("reply"), dict) or "ok" not in later["reply"]:
                    check.problems.append(
                        f"commandLog: {what}: the succeeded event must carry the reply, got {later!r}"
                    )
                return
        check.problems.append(f"commandLog: {what}: no succeeded event with requestId {request_id} after its start")
        return
    names = [(e.get("kind"), e.get("commandName"), e.get("client")) for e in entries]
    check.problems.append(f"commandLog: expected {what} ({name} from client {client!r}) in the log, got {names}")
