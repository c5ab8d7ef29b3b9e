"""The generated checks: one unified-format test per combination of dimension values.

Each builder turns a combination into a test (operations, expected results, expected command events) from what
the table says of its values (:mod:`harness.app.combinations`): the ``watch()`` arguments an option needs and where
the aggregate must then carry it, the fail point that produces an error and what the application must see.
Nothing about a value is written here; a new value in the table is a new test at the next
``harness coverage --write-combinations``.

Four groups, in the issue's order of worth:

- :func:`option_tests`: every watch option across every resumable kind of getMore error. The resume's aggregate
  is compared whole with the first one: the same ``$changeStream`` stage (but for its start point, which becomes
  ``resumeAfter``), the same user stage, the same command options; the getMores, after the resume too, carry
  what the option puts on getMores.
- :func:`resumed_in_mode` and :func:`surfaced`: every kind of error where it strikes: a resumable one resumed
  exactly once (in each iteration mode), any other raised with no aggregate after it.
- :func:`token_test`: every source of the cached token: the change after the resume is exactly the one after
  that token. Where the source is an empty batch, the user's ``$match`` drops a change that ``updateLookup`` would
  let through if read again, so a resume from an older token shows up as that change.
- :func:`stopped_test`: every way a stream stops (closed by the application, ended by an invalidate) with every way
  the application makes its next call: that call sends no getMore and no aggregate. What it returns or raises is
  the driver's (no text says), so it is ignored and only the commands are compared.

Where the number of getMores is the server's (one may answer empty before a change comes, a resumed stream's first
batch may be empty: both permitted, specs/coverage/allowances/server.yml), a check counts aggregates only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.app.combinations import DimensionTable, Value, describe

DATABASE = "combinations"
#: The collection every stream watches, and one nothing ever writes to (a stream that never has a change).
COLLECTION, QUIET, OTHER = "watched", "never_written", "other"
#: The user's stage every option test adds, so that the resume is seen to keep the pipeline too.
USER_STAGE = {"$match": {"operationType": "insert"}}
#: A comparison of a cursor id.
ANY_ID = {"$$type": ["int", "long"]}
ABSENT = {"$$exists": False}
START_OPTIONS = ("resumeAfter", "startAfter", "startAtOperationTime")
#: Aggregate options the option tests hold absent unless a value puts them there (the command compared whole).
COMMAND_OPTIONS = ("comment", "collation", "maxTimeMS", "readConcern")


@dataclass
class Built:
    """One generated test: its combination, the rules it checks, the test document, and its file's needs."""

    combination: dict[str, str]
    rules: list[str]
    test: dict[str, Any]
    #: What the trace says the test relies on the server for (the values' ``sent``).
    sent: list[str] = field(default_factory=list)
    #: The smallest server version the test needs.
    min_server: str = "4.4"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _min_server(values: list[Value]) -> str:
    found = ["4.4"] + [str(v.get("requires", {}).get("minServerVersion", "4.4")) for v in values]
    return max(found, key=_version)


def _test(
    table: DimensionTable, combination: dict[str, str], text: str, values: list[Value], body: dict[str, Any]
) -> Built:
    rules = table.rules_checked(combination)
    description = describe(f"{', '.join(rules)}: {text}", combination)
    version = _min_server(values)
    test: dict[str, Any] = {"description": description}
    if version != "4.4":
        test["runOnRequirements"] = [{"minServerVersion": version}]
    test.update(body)
    return Built(combination, rules, test, [v.sent or f"{v.id} ({v.cue})" for v in values], version)


def fail_command(data: dict[str, Any], times: int = 1) -> dict[str, Any]:
    """A ``failPoint`` operation arming failCommand through the writer: failCommand fails the commands it names
    whoever sends them, and the writer sends none of them (it only inserts, updates and drops)."""
    return {
        "name": "failPoint",
        "object": "testRunner",
        "arguments": {
            "client": "writer",
            "failPoint": {"configureFailPoint": "failCommand", "mode": {"times": times}, "data": data},
        },
    }


def fail_point(kind: Value) -> dict[str, Any]:
    """The fail point that produces an error kind."""
    return fail_command(dict(kind.get("failPoint")), int(kind.get("times", 1)))


def _insert(number: int, collection: str = "writerCollection", **fields: Any) -> dict[str, Any]:
    return {"name": "insertOne", "object": collection, "arguments": {"document": {"_id": number, **fields}}}


def _next(expect: dict[str, Any], stream: str = "changeStream0") -> dict[str, Any]:
    return {"name": "iterateUntilDocumentOrError", "object": stream, "expectResult": expect}


def _inserted(number: int) -> dict[str, Any]:
    return {"operationType": "insert", "documentKey": {"_id": number}}


def _started(name: str, command: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"commandName": name, **more}
    if command is not None:
        event["command"] = command
    return {"commandStartedEvent": event}


# -- a: every watch option across every resumable kind of getMore error -------------------------------------------


def _aggregate(option: Value, stage: dict[str, Any], collection: str) -> dict[str, Any]:
    """The aggregate command as the option makes it, compared whole: every option absent unless the value sets it."""
    command_fields = dict(option.get("command") or {})
    command: dict[str, Any] = {
        "aggregate": 1 if option.get("scope") == "client" else collection,
        "pipeline": [{"$changeStream": stage}, USER_STAGE],
        "cursor": dict(option.get("cursor") or {}),
    }
    for name in COMMAND_OPTIONS:
        command[name] = command_fields.pop(name, ABSENT)
    command.update(command_fields)
    return command


def _get_more(option: Value, collection: str) -> dict[str, Any]:
    fields = dict(option.get("getMore") or {})
    command: dict[str, Any] = {
        "getMore": ANY_ID,
        "collection": "$cmd.aggregate" if option.get("scope") == "client" else collection,
    }
    for name in ("comment", "maxTimeMS"):
        command[name] = fields.pop(name, ABSENT)
    command.update(fields)
    return command


def resumed_stage(stage: Mapping[str, Any]) -> dict[str, Any]:
    """The stage of a resume with a cached token (Resume Process): the start options gone, resumeAfter set. Each
    start option the first stage had is expected absent by name, so a kept one is reported at its own path."""
    kept = {k: v for k, v in stage.items() if k not in START_OPTIONS}
    dropped = {k: ABSENT for k in stage if k in START_OPTIONS and k != "resumeAfter"}
    return {**kept, **dropped, "resumeAfter": {"$$type": "object"}}


def option_test(table: DimensionTable, option: Value, kind: Value) -> Built:
    """``option`` given to watch(), then a ``kind`` error on a getMore: the resume is the first aggregate again."""
    quiet = option.get("flow") == "quiet"
    collection = QUIET if quiet else COLLECTION
    stage = dict(option.get("stage") or {})
    first = _aggregate(option, stage, collection)
    resumed = {**first, "pipeline": [{"$changeStream": resumed_stage(stage)}, USER_STAGE]}
    get_more = _get_more(option, collection)
    where = {"databaseName": "admin"} if option.get("scope") == "client" else {}
    scope = "client0" if option.get("scope") == "client" else ("quietCollection" if quiet else "collection0")
    create = {
        "name": "createChangeStream",
        "object": scope,
        "arguments": {"pipeline": [USER_STAGE], **dict(option.get("watch") or {})},
        "saveResultAsEntity": "changeStream0",
    }
    if quiet:
        # The stream never has a change: the one getMore fails and the resume starts from the cached token.
        operations = [create, fail_point(kind), {"name": "iterateOnce", "object": "changeStream0"}]
        events = [_started("aggregate", first, **where), _started("getMore", get_more), _started("aggregate", resumed)]
    else:
        # The first getMore is the one that fails, so nothing the server may vary (an empty getMore before a change,
        # an empty first batch after the resume) comes between the two aggregates; the changes wait before it, so
        # the resumed stream has them at once.
        operations = [
            create,
            fail_point(kind),
            _insert(1),
            _next(_inserted(1)),
            _insert(2),
            _next(_inserted(2)),
        ]
        events = [
            _started("aggregate", first, **where),
            _started("getMore", get_more),
            _started("aggregate", resumed, **where),
            _started("getMore", get_more),
        ]
    text = "the resume after the error is the first aggregate again but for its start point, options and all"
    combination = {"watch-options": option.id, "error-kinds": kind.id}
    body = {
        "operations": operations,
        "expectEvents": [{"client": "client0", "ignoreExtraEvents": True, "events": events}],
    }
    return _test(table, combination, text, [option, kind], body)


def option_tests(table: DimensionTable, kind: Value) -> list[Built]:
    """Every reachable watch option with one resumable getMore error (the first pair plan of the table)."""
    plan = table.pairs[0]
    options, kinds = table.pair_values(plan)
    if kind.id not in {k.id for k in kinds} or plan.why_left([kind.id]):
        return []
    return [option_test(table, option, kind) for option in options]


# -- b: every kind of error, where it strikes -------------------------------------------------------------------


def _aggregates_only(count: int) -> list[dict[str, Any]]:
    return [{"client": "aggregateWatcher", "events": [_started("aggregate")] * count}]


def resumed_in_mode(table: DimensionTable, kind: Value, mode: Value) -> Built:
    """A resumable getMore error met by ``mode``: exactly one aggregate follows, and the stream goes on.

    Only aggregates are counted (how many getMores a server answers empty is its own). A change waits before the
    failing getMore, so a stream resumed inside a tryNext has something to return without waiting; the resumed
    aggregate may bring it or leave it to a getMore (a server may answer the first batch empty), so the last
    iteration takes whichever insert comes."""
    operations: list[dict[str, Any]] = [
        {
            "name": "createChangeStream",
            "object": "aggregateWatcherCollection",
            "arguments": {"pipeline": [], **dict(kind.get("watch") or {})},
            "saveResultAsEntity": "changeStream0",
        },
        _insert(1),
        fail_point(kind),
    ]
    if mode.id == "tryNext":
        operations += [{"name": "iterateOnce", "object": "changeStream0"}, _insert(2)]
        operations.append(_next({"operationType": "insert"}))
    elif mode.id == "timeout":
        operations += [
            {"name": "iterateOnce", "object": "changeStream0", "expectError": dict(kind.get("raises"))},
            _next(_inserted(1)),
        ]
    else:
        operations.append(_next(_inserted(1)))
    text = "one resume follows the error, met by this way of iterating, and the stream goes on"
    combination = {"error-kinds": kind.id, "iteration-modes": mode.id}
    body = {"operations": operations, "expectEvents": _aggregates_only(2)}
    return _test(table, combination, text, [kind, mode], body)


def surfaced(table: DimensionTable, kind: Value) -> Built:
    """An error that must reach the application: after it, no aggregate (or, for the resume's own aggregate, none
    more)."""
    at = next(iter({"getMore", "aggregate", "killCursors", "resume-aggregate"} & kind.tags))
    raises = dict(kind.get("raises") or {})
    create: dict[str, Any] = {
        "name": "createChangeStream",
        "object": "collection0",
        "arguments": {"pipeline": []},
        "saveResultAsEntity": "changeStream0",
    }
    if at == "aggregate":
        create.pop("saveResultAsEntity")
        operations = [fail_point(kind), {**create, "expectError": raises}]
        events = [{"client": "client0", "events": [_started("aggregate")]}]
        text = "the error of the aggregate that opens the stream is raised and not resumed"
    elif at == "getMore":
        create["object"] = "aggregateWatcherCollection"
        operations = [
            create,
            _insert(1),
            fail_point(kind),
            {"name": "iterateUntilDocumentOrError", "object": "changeStream0", "expectError": raises},
            # A later iteration may send a getMore on the cursor still open (the driver's choice), never a resume.
            {"name": "iterateOnce", "object": "changeStream0", "ignoreResultAndError": True},
        ]
        events = _aggregates_only(1)
        text = "the error is raised and no aggregate follows it, then or at the next iteration"
    elif at == "resume-aggregate":
        operations = [
            create,
            fail_point(kind),
            _insert(1),
            {"name": "iterateUntilDocumentOrError", "object": "changeStream0", "expectError": raises},
        ]
        events = [
            {
                "client": "client0",
                "events": [_started("aggregate"), _started("getMore"), _started("aggregate")],
            }
        ]
        text = "when the resume's own aggregate fails, its error is raised and nothing more is tried"
    else:  # killCursors: the failure of the kill is swallowed and the resume goes on
        create["object"] = "aggregateWatcherCollection"
        operations = [create, fail_point(kind), _insert(1), _next(_inserted(1))]
        events = _aggregates_only(2)
        text = "a killCursors that fails during the resume is not raised, and the change arrives"
    return _test(table, {"error-kinds": kind.id}, text, [kind], {"operations": operations, "expectEvents": events})


# -- c: every source of the cached token --------------------------------------------------------------------------

#: The user's filter of the empty-batch tests: a change passes while the looked-up document has x 1.
X_IS_ONE = {"$match": {"fullDocument.x": 1}}


def _set_x(value: int) -> dict[str, Any]:
    return {
        "name": "updateOne",
        "object": "writerCollection",
        "arguments": {"filter": {"_id": 1}, "update": {"$set": {"x": value}}},
    }


def _updated_to(value: int) -> dict[str, Any]:
    return {"operationType": "update", "updateDescription": {"$$matchAsRoot": {"updatedFields": {"x": value}}}}


def _token_events(stage: dict[str, Any], user: list[dict[str, Any]], **cursor: Any) -> list[Any]:
    """The two aggregates, compared whole but for their getMores (how many a server answers empty is its own): the
    resume's stage holds resumeAfter where the first had no start point."""
    first = {"pipeline": [{"$changeStream": stage}, *user], **({"cursor": cursor} if cursor else {})}
    resumed = {"pipeline": [{"$changeStream": resumed_stage(stage)}, *user], **({"cursor": cursor} if cursor else {})}
    return [{"client": "aggregateWatcher", "events": [_started("aggregate", first), _started("aggregate", resumed)]}]


def _event_batch_end(kind: Value, state: Value | None) -> dict[str, Any]:
    """Four changes before the first getMore, whose batch of two ends at the second: the resume after it must bring
    the third, not the second again (a mid-batch token) nor the fourth (a token past the batch)."""
    operations: list[dict[str, Any]] = [
        {
            "name": "createChangeStream",
            "object": "aggregateWatcherCollection" if state is None else "aggregateWatcherDatabase",
            "arguments": {"pipeline": [], "batchSize": 2},
            "saveResultAsEntity": "changeStream0",
        }
    ]
    if state is not None and state.id == "transaction":
        operations.append({"name": "startTransaction", "object": "session0"})
        operations += [
            {**_insert(n), "arguments": {"session": "session0", "document": {"_id": n}}} for n in (1, 2, 3, 4)
        ]
        operations.append({"name": "commitTransaction", "object": "session0"})
    else:
        operations += [_insert(n) for n in (1, 2, 3, 4)]
    expected = [_inserted(n) for n in (1, 2, 3, 4)]
    operations += [_next(expected[0]), _next(expected[1]), fail_point(kind), _next(expected[2]), _next(expected[3])]
    return {"operations": operations, "expectEvents": _token_events({}, [], batchSize=2)}


def _after_ddl(kind: Value, state: Value) -> dict[str, Any]:
    """A database stream returns another collection's drop or rename as its batch's last change; the resume must
    bring the next insert, not that change again."""
    user = [{"$match": {"ns.coll": {"$in": [COLLECTION, OTHER]}}}]
    ddl: list[dict[str, Any]]
    if state.id == "rename":
        ddl = [{"name": "rename", "object": "writerOther", "arguments": {"to": f"{OTHER}_renamed"}}]
        seen: dict[str, Any] = {"operationType": "rename", "ns": {"db": DATABASE, "coll": OTHER}}
    else:
        ddl = [{"name": "dropCollection", "object": "writerDatabase", "arguments": {"collection": OTHER}}]
        seen = {"operationType": "drop", "ns": {"db": DATABASE, "coll": OTHER}}
    operations = [
        # what an earlier test left (the rename's target), dropped before the stream opens
        {"name": "dropCollection", "object": "writerDatabase", "arguments": {"collection": f"{OTHER}_renamed"}},
        {
            "name": "createChangeStream",
            "object": "aggregateWatcherDatabase",
            "arguments": {"pipeline": user},
            "saveResultAsEntity": "changeStream0",
        },
        *ddl,
        _next(seen),
        fail_point(kind),
        _insert(1),
        _next(_inserted(1)),
    ]
    return {"operations": operations, "expectEvents": _token_events({}, user)}


def _empty_aggregate(kind: Value) -> dict[str, Any]:
    """The stream's first reply is empty: its postBatchResumeToken is the token, so the resume sends resumeAfter
    (a driver that kept no token would send startAtOperationTime or nothing)."""
    operations = [
        {
            "name": "createChangeStream",
            "object": "aggregateWatcherCollection",
            "arguments": {"pipeline": []},
            "saveResultAsEntity": "changeStream0",
        },
        fail_point(kind),
        {"name": "iterateOnce", "object": "changeStream0"},
        _insert(1),
        _next(_inserted(1)),
    ]
    return {"operations": operations, "expectEvents": _token_events({}, [])}


def _empty_get_more(kind: Value, after_document: bool) -> dict[str, Any]:
    """An empty getMore moves the token past a change the filter dropped (its looked-up document had x 2); the
    document then gets x 1 again. The resume must bring that last change (x set to 1); a resume from the older
    token brings the dropped one first, which now passes the filter (x set to 2)."""
    create = {
        "name": "createChangeStream",
        "object": "aggregateWatcherCollection",
        "arguments": {"pipeline": [X_IS_ONE], "fullDocument": "updateLookup", "maxAwaitTimeMS": 50},
        "saveResultAsEntity": "changeStream0",
    }
    if after_document:
        operations = [create, _insert(1, x=1), _next({"operationType": "insert", "documentKey": {"_id": 1}})]
    else:
        operations = [_insert(1, x=1), create]
    operations += [
        _set_x(2),
        {"name": "iterateOnce", "object": "changeStream0"},
        _set_x(1),
        fail_point(kind),
        _next(_updated_to(1)),
    ]
    events = _token_events({"fullDocument": "updateLookup"}, [X_IS_ONE])
    return {"operations": operations, "expectEvents": events}


_TOKEN_TEXT = {
    "event-batch-end": "the resume starts after the batch's last change: the next change comes, none again or skipped",
    "pbrt-empty-aggregate": "the resume starts from the empty first reply's token, sent as resumeAfter",
    "pbrt-empty-getmore": "the resume starts from the token an empty getMore moved, not the older one",
    "pbrt-after-document": "after a change, the resume starts from the token a later empty getMore moved",
}


def token_test(table: DimensionTable, kind: Value, source: Value, state: Value | None) -> Built:
    builders: dict[str, Callable[[], dict[str, Any]]] = {
        "event-batch-end": lambda: (
            _after_ddl(kind, state)
            if state is not None and state.id in ("drop", "rename")
            else _event_batch_end(kind, state)
        ),
        "pbrt-empty-aggregate": lambda: _empty_aggregate(kind),
        "pbrt-empty-getmore": lambda: _empty_get_more(kind, after_document=False),
        "pbrt-after-document": lambda: _empty_get_more(kind, after_document=True),
    }
    combination = {"token-sources": source.id, **({"server-states": state.id} if state is not None else {})}
    values = [kind, source] + ([state] if state is not None else [])
    return _test(table, combination, _TOKEN_TEXT[source.id], values, builders[source.id]())


# -- d: every way a stream stops, and the call that follows ---------------------------------------------------------

#: The appName of the client whose stream is invalidated, so that a fail point fails only that client's commands.
STOPPED_APP = "combinedStops"
#: The code the fail point armed after the invalidate fails the stream client's next getMore or aggregate with
#: (BadValue: neither resumable nor a retryable read, so it is raised and nothing sends the command again).
PROBE_CODE = 2
#: The unified-format operation each value of next-calls is.
NEXT_CALLS = ("iterateUntilDocumentOrError", "iterateOnce")


def _next_call(call: Value) -> dict[str, Any]:
    """The call after the stop; what it returns or raises is the driver's idiom, so neither is compared."""
    if call.id not in NEXT_CALLS:
        raise ValueError(f"next-calls={call.id}: the generator knows only {', '.join(NEXT_CALLS)}")
    return {"name": call.id, "object": "changeStream0", "ignoreResultAndError": True}


def _after_close(call: Value) -> dict[str, Any]:
    """The application closes the stream right after the aggregate opened its cursor (nothing buffered, no getMore
    yet); a change is written after the close. The commands are exactly the aggregate and the close's killCursors:
    the next call sends nothing, so that change can never reach it."""
    operations = [
        {
            "name": "createChangeStream",
            "object": "closerCollection",
            "arguments": {"pipeline": []},
            "saveResultAsEntity": "changeStream0",
        },
        {"name": "close", "object": "changeStream0"},
        _insert(1),
        _next_call(call),
    ]
    events = [_started("aggregate"), _started("killCursors", {"killCursors": COLLECTION})]
    return {"operations": operations, "expectEvents": [{"client": "closer", "events": events}]}


def _after_invalidate(call: Value) -> dict[str, Any]:
    """The watched collection is dropped; the stream returns the drop, then the invalidate. How many getMores that
    takes is the deployment's (the two may come in one reply or two, a reply may be empty), so the stream's client
    reports no getMore (nor killCursors, which closing an exhausted stream may send or not). What the next call
    sends is seen another way: a fail point armed after the invalidate fails that client's next getMore or
    aggregate, once. A probe aggregate after the next call meets it only if the next call sent neither; the
    aggregates are exactly the stream's and the probe's, so the stream did not resume."""
    operations = [
        {
            "name": "createChangeStream",
            "object": "stopWatcherCollection",
            "arguments": {"pipeline": []},
            "saveResultAsEntity": "changeStream0",
        },
        {"name": "dropCollection", "object": "writerDatabase", "arguments": {"collection": COLLECTION}},
        _next({"operationType": "drop"}),
        _next({"operationType": "invalidate"}),
        fail_command({"failCommands": ["getMore", "aggregate"], "errorCode": PROBE_CODE, "appName": STOPPED_APP}),
        _insert(1),
        _next_call(call),
        {
            "name": "aggregate",
            "object": "stopWatcherCollection",
            "arguments": {"pipeline": []},
            "expectError": {"errorCode": PROBE_CODE},
        },
    ]
    events = [
        _started("aggregate", {"pipeline": [{"$changeStream": {}}]}),
        _started("aggregate", {"pipeline": []}),
    ]
    return {"operations": operations, "expectEvents": [{"client": "stopWatcher", "events": events}]}


_STOP_TEXT = {
    "closed": "the closed stream's next call sends no command, so a change written after the close never reaches it",
    "invalidated": "after the invalidate the next call sends no getMore and no aggregate: the stream does not resume",
}


def stopped_test(table: DimensionTable, stop: Value, call: Value) -> Built | None:
    """The stream stopped the way ``stop`` says, then the application's next call made the way ``call`` says; None
    when no rule of the table checks that pair (a value the rules leave, with why)."""
    combination = {"iteration-modes": stop.id, "next-calls": call.id}
    if not table.rules_checked(combination):
        return None
    if "closed" in stop.tags:
        return _test(table, combination, _STOP_TEXT["closed"], [stop, call], _after_close(call))
    if "invalidated" in stop.tags:
        return _test(table, combination, _STOP_TEXT["invalidated"], [stop, call], _after_invalidate(call))
    raise ValueError(f"iteration-modes={stop.id}: the generator knows how a stream stops by 'closed' or 'invalidated'")


def stop_tests(table: DimensionTable) -> list[Built]:
    """Each reachable way a stream stops with each way of making the next call, but the pairs every rule leaves."""
    modes, calls = table.dimension("iteration-modes"), table.dimension("next-calls")
    if modes is None or calls is None:
        return []
    stops = [v for v in modes.values if not v.unreachable and v.tags & {"closed", "invalidated"}]
    built = [stopped_test(table, stop, call) for stop in stops for call in calls.values if not call.unreachable]
    return [b for b in built if b is not None]
