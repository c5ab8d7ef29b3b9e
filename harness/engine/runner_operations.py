"""Special test operations (``object: testRunner``) of the unified format.

Each registers under its spec name in :data:`harness.engine.operation_table.TEST_RUNNER_OPERATIONS`
(``wait`` and ``failPoint`` too). Collection and index assertions
use the target's internal admin client, as the spec requires. Assertions
about a session or a client's commands ask the driver scope, which knows
its driver's internals; a driver scope that cannot answer makes the test
``skipped`` with the reason (a feature the driver adapter lacks).
"""

from __future__ import annotations

import time
from typing import Any

from harness.core.constants import ALL_COMMAND_EVENTS, CMAP_EVENTS
from harness.core.errors import HarnessError, TestFailure, TestSkipped
from harness.core.matching import show
from harness.core.matching.table import comparator_for
from harness.core.model import Operation
from harness.core.observations import SDAM_EVENTS
from harness.core.ports import FailPointError, TargetAdminError, require_capability, require_event_family
from harness.engine.operation_table import test_runner_operation
from harness.engine.spec_context import SpecContext


def _argument(operation: Operation, key: str) -> Any:
    try:
        return operation.arguments[key]
    except KeyError:
        raise HarnessError(f"{operation.label}: {operation.name} needs the argument {key!r}") from None


def _scope_with(context: SpecContext, operation: Operation, capability: str) -> Any:
    """The test's driver scope, once the adapter is known to declare ``capability`` (else ``skipped``)."""
    require_capability(context.driver, capability, f"{operation.label}: {operation.name}")
    assert context.scope is not None
    return context.scope


@test_runner_operation("wait")
def _wait(context: SpecContext, operation: Operation) -> None:
    """The unified format's ``wait``: sleep ``ms`` milliseconds (no lock held: teardown may happen meanwhile)."""
    milliseconds = operation.arguments.get("ms")
    if not isinstance(milliseconds, (int, float)) or milliseconds < 0:
        raise HarnessError(f"{operation.label}: wait needs a non-negative 'ms', got {milliseconds!r}")
    time.sleep(milliseconds / 1000)


@test_runner_operation("failPoint")
def _fail_point(context: SpecContext, operation: Operation) -> None:
    command = operation.arguments.get("failPoint")
    if not isinstance(command, dict):
        raise HarnessError(f"{operation.label}: failPoint needs a 'failPoint' document")
    try:
        with context.guarded():  # a torn-down test must not arm a point the next test would inherit
            context.failpoints.arm(command)
    except FailPointError as exc:
        raise HarnessError(f"{operation.label}: {exc}") from exc


@test_runner_operation("createEntities")
def _create_entities(context: SpecContext, operation: Operation) -> None:
    assert context.scope is not None
    for entity in _argument(operation, "entities"):
        context.scope.create_entity(entity)


# -- collections and indexes, seen through the internal client ----------------------
def _collection_names(context: SpecContext, operation: Operation) -> list[str]:
    try:
        names: list[str] = context.target.admin_tasks.collection_names(_argument(operation, "databaseName"))
        return names
    except TargetAdminError as exc:
        raise HarnessError(f"{operation.label}: {exc}") from exc


def _index_names(context: SpecContext, operation: Operation) -> list[str]:
    database, collection = _argument(operation, "databaseName"), _argument(operation, "collectionName")
    try:
        names: list[str] = context.target.admin_tasks.index_names(database, collection)
        return names
    except TargetAdminError as exc:
        raise HarnessError(f"{operation.label}: {exc}") from exc


#: Presence assertion -> (what lists the names, the argument naming the thing, must it exist).
_PRESENCE_ASSERTIONS = {
    "assertCollectionExists": (_collection_names, "collectionName", True),
    "assertCollectionNotExists": (_collection_names, "collectionName", False),
    "assertIndexExists": (_index_names, "indexName", True),
    "assertIndexNotExists": (_index_names, "indexName", False),
}


def _assert_presence(context: SpecContext, operation: Operation) -> None:
    list_names, key, wanted = _PRESENCE_ASSERTIONS[operation.name]
    names = list_names(context, operation)
    name = _argument(operation, key)
    if (name in names) != wanted:
        where = f"{_argument(operation, 'databaseName')}.{_argument(operation, 'collectionName')}"
        state = "does not exist" if wanted else "exists"
        raise TestFailure(
            f"{operation.label}: {operation.name}: {key[:-4]} {name} {state} in {where} (found {sorted(names)})"
        )


for _name in _PRESENCE_ASSERTIONS:
    test_runner_operation(_name)(_assert_presence)


# -- sessions --------------------------------------------------------------------
def _session_state(context: SpecContext, operation: Operation) -> dict[str, Any]:
    state: dict[str, Any] = _scope_with(context, operation, "session_state").session_state(
        _argument(operation, "session")
    )
    return state


def _expect_state(operation: Operation, key: str, expected: Any, state: dict[str, Any]) -> None:
    if state.get(key) != expected:
        raise TestFailure(
            f"{operation.label}: {operation.name}: session {operation.arguments['session']!r} "
            f"has {key}={state.get(key)!r}, expected {expected!r}"
        )


@test_runner_operation("assertSessionTransactionState")
def _assert_transaction_state(context: SpecContext, operation: Operation) -> None:
    state = _session_state(context, operation)
    _expect_state(operation, "transactionState", _argument(operation, "state"), state)


@test_runner_operation("assertSessionPinned")
@test_runner_operation("assertSessionUnpinned")
def _assert_pinned(context: SpecContext, operation: Operation) -> None:
    _expect_state(operation, "pinned", operation.name == "assertSessionPinned", _session_state(context, operation))


@test_runner_operation("assertSessionDirty")
@test_runner_operation("assertSessionNotDirty")
def _assert_dirty(context: SpecContext, operation: Operation) -> None:
    _expect_state(operation, "dirty", operation.name == "assertSessionDirty", _session_state(context, operation))


@test_runner_operation("assertSameLsidOnLastTwoCommands")
@test_runner_operation("assertDifferentLsidOnLastTwoCommands")
def _assert_lsids(context: SpecContext, operation: Operation) -> None:
    assert context.scope is not None
    client = _argument(operation, "client")
    started = [e for e in context.scope.events(client) if e.kind == "commandStartedEvent"]
    if len(started) < 2:
        raise TestFailure(f"{operation.label}: {operation.name}: {client} sent {len(started)} command(s), needs two")
    lsids = [(e.command or {}).get("lsid") for e in started[-2:]]
    if None in lsids:
        raise TestFailure(f"{operation.label}: {operation.name}: one of the last two commands has no lsid")
    same = lsids[0] == lsids[1]
    if same != (operation.name == "assertSameLsidOnLastTwoCommands"):
        raise TestFailure(
            f"{operation.label}: {operation.name}: the last two lsids are "
            f"{'the same' if same else 'different'}: {lsids}"
        )


@test_runner_operation("assertNumberConnectionsCheckedOut")
def _assert_connections_checked_out(context: SpecContext, operation: Operation) -> None:
    client = _argument(operation, "client")
    count = _scope_with(context, operation, "connections_checked_out").connections_checked_out(client)
    if count != _argument(operation, "connections"):
        raise TestFailure(
            f"{operation.label}: {operation.name}: {client} has {count} connection(s) checked out, "
            f"expected {operation.arguments['connections']}"
        )


# -- counting events: waitForEvent, assertEventCount ---------------------------------
#: How long ``waitForEvent`` waits before the test fails (the unified format: 10 seconds).
WAIT_FOR_EVENT_S = 10.0
#: The event families a driver scope can be asked for, by the spec's event names.
_EVENT_FAMILIES = {
    **dict.fromkeys(ALL_COMMAND_EVENTS, "command"),
    **dict.fromkeys(CMAP_EVENTS.values(), "cmap"),
    **dict.fromkeys(SDAM_EVENTS, "sdam"),
}


def _matching_events(context: SpecContext, operation: Operation) -> int:
    """How many events ``client`` has published so far that match ``event`` (by the test's comparator)."""
    assert context.scope is not None
    client, event = _argument(operation, "client"), _argument(operation, "event")
    if not isinstance(event, dict) or len(event) != 1:
        raise HarnessError(f"{operation.label}: {operation.name}: 'event' must name exactly one event type")
    ((name, _),) = event.items()
    family = _EVENT_FAMILIES.get(name)
    if family is None:  # other families (log and tracing events): the harness does not capture them
        raise TestSkipped(f"{operation.label}: {operation.name} on {name}: this runner does not capture {name} events")
    require_event_family(context.driver, family, f"{operation.label}: {operation.name} on {name}")
    published = context.scope.events(client, event_type=family)
    comparator = comparator_for(context.test.comparator)
    path = f"{operation.label}.event"
    matching = context.matching
    return sum(
        1
        for observed in list(published)
        if observed.kind == name and not comparator.match_event(event, observed, path, matching)
    )


@test_runner_operation("assertEventCount")
def _assert_event_count(context: SpecContext, operation: Operation) -> None:
    found, wanted = _matching_events(context, operation), _argument(operation, "count")
    if found != wanted:
        raise TestFailure(
            f"{operation.label}: assertEventCount: {operation.arguments['client']} published {found} "
            f"matching {show(operation.arguments['event'])}, expected exactly {wanted}"
        )


@test_runner_operation("waitForEvent")
def _wait_for_event(context: SpecContext, operation: Operation) -> None:
    """Poll the client's events until ``count`` match; past :data:`WAIT_FOR_EVENT_S`, the test fails."""
    wanted = _argument(operation, "count")
    deadline = time.monotonic() + WAIT_FOR_EVENT_S
    while True:
        context.check_alive()
        found = _matching_events(context, operation)
        if found >= wanted:
            return
        if time.monotonic() >= deadline:
            raise TestFailure(
                f"{operation.label}: waitForEvent: {operation.arguments['client']} published {found} "
                f"matching {show(operation.arguments['event'])} in {WAIT_FOR_EVENT_S:g}s, "
                f"waited for {wanted}"
            )
        time.sleep(0.01)
