"""``harness executor-check``'s check of the iteration modes an executor declares (docs/executor-protocol.md 6.4.1).

``hello``'s ``iterationModes`` is validated with the rest of the handshake (section 4: unknown, repeated or empty
is a handshake error). This check then opens one scope per declared mode, with ``openScope``'s ``iterationMode``,
and asks of each mode what the protocol asks of every one, so a mode that is declared but not driven for real
shows here rather than as test outcomes:

- ``iterateOnce`` on a new stream over an empty collection answers null after exactly ``aggregate``, ``getMore``
  (those two first in ``emitter`` and ``stream``, whose driver reads ahead: the section's read-ahead paragraph);
- ``iterateUntilDocumentOrError`` returns an inserted change;
- on an idle stream it answers ``noChange`` within its budget, and the stream stays usable: the next change after
  it arrives through the same mode.

Then a mode the executor did not declare is asked for, and must be refused with ``invalidRequest`` without a scope
being opened (the same scope id opens afterwards). An executor whose ``hello`` has no ``iterationModes`` offers
``next`` only and predates section 6.4.1: its one mode is checked without ``iterationMode`` being sent (it would be
an unknown field to it, section 3), and the refusal is not asked of it.
"""

from __future__ import annotations

from typing import Any

from bson import Int64

from harness.core.ports import DEFAULT_ITERATION_MODES, ITERATION_MODES
from harness.drivers.executor.checks.session import (
    Check,
    client_and_collection,
    command_names,
    run_operation,
    typed_tree,
)

#: Each mode's scope budget: an idle stream's noChange takes about this long (plus one getMore's wait).
BUDGET_MS = 1000
#: What an executor that declares every mode of the vocabulary is asked for instead of an undeclared one.
NOT_A_MODE = "notAMode"
#: Modes in which the driver, not the executor, decides when to read (section 6.4.1): its next ``getMore`` may be
#: sent already when ``iterateOnce`` answers, so "exactly aggregate, getMore" is "those two first".
READ_AHEAD_MODES = ("emitter", "stream")


def check_iteration_modes(check: Check) -> None:
    declared = check.hello.get("iterationModes")
    modes = declared if isinstance(declared, list) and declared else list(DEFAULT_ITERATION_MODES)
    for mode in modes:
        _check_mode(check, mode if declared else None)
    if declared:
        _check_refusal(check, modes)


def _check_mode(check: Check, mode: str | None) -> None:
    """One scope in ``mode`` (None: the executor's only mode, not named): iterateOnce, a change, noChange, a change."""
    named = f"iterationMode {mode}" if mode is not None else "the default iteration mode"
    scope = f"mode-{mode or 'default'}"
    if not _opened(check, scope, mode, named):
        return
    run_operation(check, scope, "deleteMany", "coll", filter={})
    start = len(command_names(check, scope))
    create = {"name": "createChangeStream", "object": "coll", "arguments": {"pipeline": []}}
    opened = check.request("run", scope=scope, operation={**create, "saveResultAsEntity": "stream"})
    if not opened["ok"]:
        check.problems.append(f"{named}: run createChangeStream: expected the stream, got {opened!r}")
    else:
        once = run_operation(check, scope, "iterateOnce", "stream")
        names = command_names(check, scope)[start:]
        seen = names[:2] if mode in READ_AHEAD_MODES else names
        if not once["ok"] or once.get("result") is not None or seen != ["aggregate", "getMore"]:
            exactly = "first" if mode in READ_AHEAD_MODES else "exactly"
            check.problems.append(
                f"{named}: run iterateOnce on a new stream over an empty collection: expected null after {exactly} "
                f"aggregate, getMore (sections 6.4, 6.4.1), got {once!r} after {names}"
            )
        _expect_change(check, scope, named, 1, "an insert")
        idle = run_operation(check, scope, "iterateUntilDocumentOrError", "stream")
        if idle["ok"] or idle["error"].get("kind") != "noChange":
            check.problems.append(
                f"{named}: run iterateUntilDocumentOrError on an idle stream (budget {BUDGET_MS} ms): expected "
                f"noChange, got {idle!r}"
            )
        _expect_change(check, scope, named, 2, "a noChange and an insert (a stream out of budget stays usable)")
    check.expect_ok("closeScope", scope=scope)


def _opened(check: Check, scope: str, mode: str | None, named: str) -> bool:
    before = len(check.problems)
    chosen = {} if mode is None else {"iterationMode": mode}
    reply = check.request(
        "openScope", scope=scope, uri=check.uri, iterationTimeoutMS=BUDGET_MS, heartbeatFrequencyMS=None, **chosen
    )
    if not reply["ok"]:
        check.problems.append(f"openScope with {named} (declared in hello): expected success, got {reply!r}")
        return False
    for entity in client_and_collection("modes"):
        check.expect_ok("createEntity", scope=scope, entity=entity)
    if len(check.problems) > before:
        check.expect_ok("closeScope", scope=scope)
        return False
    return True


def _expect_change(check: Check, scope: str, named: str, key: int, after: str) -> None:
    run_operation(check, scope, "insertOne", "coll", document={"_id": Int64(key)})
    change = run_operation(check, scope, "iterateUntilDocumentOrError", "stream")
    document_key = (change.get("result") or {}).get("documentKey") if change["ok"] else None
    if typed_tree(document_key) != typed_tree({"_id": Int64(key)}):
        check.problems.append(
            f"{named}: run iterateUntilDocumentOrError after {after}: expected the insert of _id {key}, got {change!r}"
        )


def _check_refusal(check: Check, declared: list[Any]) -> None:
    """Section 5: a mode hello did not list is refused with invalidRequest, and no scope is opened."""
    undeclared = next((mode for mode in ITERATION_MODES if mode not in declared), NOT_A_MODE)
    scope = "mode-undeclared"
    opening = {"scope": scope, "uri": check.uri, "iterationTimeoutMS": BUDGET_MS, "heartbeatFrequencyMS": None}
    refused = check.request("openScope", **opening, iterationMode=undeclared)
    if refused["ok"] or refused["error"].get("kind") != "invalidRequest":
        check.problems.append(
            f"openScope with iterationMode {undeclared} (not in hello's iterationModes {declared}): expected "
            f"invalidRequest (section 5), got {refused!r}"
        )
    again = check.request("openScope", **opening, iterationMode=declared[0])
    if not again["ok"]:
        check.problems.append(
            f"openScope after a refused iterationMode {undeclared}: no scope may have been opened, so the same id "
            f"opens with iterationMode {declared[0]}; got {again!r}"
        )
    check.expect_ok("closeScope", scope=scope)
