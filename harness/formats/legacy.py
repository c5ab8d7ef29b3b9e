"""Legacy change-stream spec files -> :class:`harness.core.model.SpecTest`.

The legacy runner procedure (upstream ``legacy/README.rst``) maps onto the
unified-shaped model as follows:

* both databases are dropped, then both collections created empty;
* ``failPoint`` becomes a test-runner ``failPoint`` operation, run first;
* ``client`` (monitored, command-started events) watches the ``target``
  through a ``createChangeStream`` operation;
* the ``operations`` run through ``globalClient``, which is not monitored;
* ``result.error``: iterate once; ``result.success``: one
  ``iterateUntilDocumentOrError`` per expected change, labelled ``success[i]``;
* the stream is closed; the error, if any, is compared at test level;
* ``expectations`` are a prefix of the command-started events, ``killCursors``
  skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.core.model import (
    TEST_RUNNER,
    CollectionData,
    EntitySpec,
    EventExpectation,
    Operation,
    Requirement,
    SpecTest,
)

FORMAT = "legacy"
WATCHER = "client"
GLOBAL_CLIENT = "globalClient"
CHANGE_STREAM = "changeStream"

# Legacy operation name -> (unified name, entity level). ``drop`` is spelled
# ``dropCollection`` on the database in the unified format.
_OPERATION_NAMES = {"drop": ("dropCollection", "database")}

_TEST_KEYS = {
    "description",
    "minServerVersion",
    "maxServerVersion",
    "failPoint",
    "target",
    "topology",
    "changeStreamPipeline",
    "changeStreamOptions",
    "operations",
    "expectations",
    "result",
}
_TARGETS = ("collection", "database", "client")


class LegacyFormatError(ValueError):
    """A legacy test that does not follow the format; the message names the key."""


@dataclass(frozen=True)
class _Names:
    """A legacy file's top-level names, once the two required ones are known to be strings."""

    database: str
    collection: str
    database2: Any
    collection2: Any


def is_legacy_document(data: Any) -> bool:
    return isinstance(data, dict) and "schemaVersion" not in data and "database_name" in data


def load_legacy(file: str, data: dict[str, Any], lines: list[int | None]) -> list[SpecTest]:
    """Every test of one legacy file; a malformed test becomes a test with ``load_error``."""
    names = {k: data.get(k) for k in ("database_name", "collection_name", "database2_name", "collection2_name")}
    missing = [k for k in ("database_name", "collection_name") if not isinstance(names[k], str)]
    tests, database, collection = data.get("tests"), names["database_name"], names["collection_name"]
    if missing or not isinstance(tests, list) or not isinstance(database, str) or not isinstance(collection, str):
        problem = f"missing or mistyped top-level key(s): {', '.join(missing) or 'tests'}"
        return [SpecTest(file=file, format=FORMAT, description="<file>", comparator="legacy", load_error=problem)]
    checked = _Names(database, collection, names["database2_name"], names["collection2_name"])
    loaded = []
    for index, raw in enumerate(tests):
        line = lines[index] if index < len(lines) else None
        description = raw.get("description") if isinstance(raw, dict) else None
        if not isinstance(description, str):
            description = f"<tests[{index}]>"
        try:
            loaded.append(_load_test(file, raw, checked, line))
        except LegacyFormatError as exc:
            where = f" (line {line})" if line else ""
            loaded.append(
                SpecTest(
                    file=file,
                    format=FORMAT,
                    description=description,
                    comparator="legacy",
                    line=line,
                    load_error=f"{file}{where}: test {description!r}: {exc}",
                )
            )
    return loaded


def _expect(raw: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    value = raw.get(key, default)
    if value is None:
        return default
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise LegacyFormatError(f"key {key!r} must be {names}, got {type(value).__name__}: {value!r}")
    return value


def _load_test(file: str, raw: Any, names: _Names, line: int | None) -> SpecTest:
    if not isinstance(raw, dict):
        raise LegacyFormatError(f"a test must be a mapping, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _TEST_KEYS)
    if unknown:
        raise LegacyFormatError(f"unknown key(s) {unknown}")
    description = _expect(raw, "description", str)
    if description is None:
        raise LegacyFormatError("key 'description' is required")
    target = _expect(raw, "target", str)
    if target not in _TARGETS:
        raise LegacyFormatError(f"key 'target' must be one of {list(_TARGETS)}, got {target!r}")
    result = _expect(raw, "result", dict)
    if result is None or len(set(result) & {"success", "error"}) != 1:
        raise LegacyFormatError("key 'result' must hold exactly one of 'success' or 'error'")
    success = _expect(result, "success", list, [])
    error = _expect(result, "error", dict)
    topology = _expect(raw, "topology", list)
    requirement = Requirement(
        min_server_version=_version(raw, "minServerVersion"),
        max_server_version=_version(raw, "maxServerVersion"),
        topologies=tuple(topology) if topology else None,
    )
    db, coll = names.database, names.collection
    db2, coll2 = names.database2, names.collection2
    fail_point = _expect(raw, "failPoint", dict)

    operations: list[Operation] = []
    if fail_point is not None:
        operations.append(
            Operation("failPoint", TEST_RUNNER, {"client": GLOBAL_CLIENT, "failPoint": fail_point}, label="failPoint")
        )
    operations.append(_watch(target, raw))
    entities = _entities(db, coll)
    for index, op in enumerate(_expect(raw, "operations", list, [])):
        operations.append(_operation(op, index, entities))
    if error is not None:
        operations.append(Operation("iterateOnce", CHANGE_STREAM, label="result.error"))
    for index, change in enumerate(success):
        operations.append(
            Operation("iterateUntilDocumentOrError", CHANGE_STREAM, expect_result=change, label=f"success[{index}]")
        )
    operations.append(Operation("close", CHANGE_STREAM, ignore_result_and_error=True, label="close"))

    expectations = _expect(raw, "expectations", list, [])
    events = [_event(e, i) for i, e in enumerate(expectations)]
    collections = [CollectionData(db, coll)]
    if isinstance(db2, str) and isinstance(coll2, str):
        collections.append(CollectionData(db2, coll2))
    return SpecTest(
        file=file,
        format=FORMAT,
        description=description,
        comparator="legacy",
        line=line,
        requirements=[[requirement]],
        entities=list(entities.values()),
        reset_databases=[d for d in (db, db2) if isinstance(d, str)],
        initial_data=collections,
        operations=operations,
        expect_error=error,
        expect_events=[
            EventExpectation(
                WATCHER, events, ignore_extra_events=True, skip_commands=("killCursors",), label="expectations"
            )
        ]
        if events
        else [],
        uses_failpoints=fail_point is not None,
    )


def _version(raw: dict[str, Any], key: str) -> str | None:
    value = _expect(raw, key, (str, int, float))
    return None if value is None else str(value)


def _entities(db: str, coll: str) -> dict[str, EntitySpec]:
    # One mongos for both clients: fail points only work when configureFailPoint and
    # the failing commands go to the same mongos (legacy README, "Spec Test Runner").
    return {
        WATCHER: EntitySpec(
            "client", WATCHER, {"observeEvents": ["commandStartedEvent"], "useMultipleMongoses": False}
        ),
        "database": EntitySpec("database", "database", {"client": WATCHER, "databaseName": db}),
        "collection": EntitySpec("collection", "collection", {"database": "database", "collectionName": coll}),
        GLOBAL_CLIENT: EntitySpec("client", GLOBAL_CLIENT, {"useMultipleMongoses": False}),
    }


def _watch(target: str, raw: dict[str, Any]) -> Operation:
    pipeline = _expect(raw, "changeStreamPipeline", list, [])
    options = _expect(raw, "changeStreamOptions", dict, {})
    return Operation(
        "createChangeStream",
        WATCHER if target == "client" else target,
        {"pipeline": pipeline, **options},
        save_result_as_entity=CHANGE_STREAM,
        label="changeStream",
    )


def _operation(raw: Any, index: int, entities: dict[str, EntitySpec]) -> Operation:
    label = f"operations[{index}]"
    if not isinstance(raw, dict):
        raise LegacyFormatError(f"{label} must be a mapping")
    name, db, coll = raw.get("name"), raw.get("database"), raw.get("collection")
    for key, value in (("name", name), ("database", db), ("collection", coll)):
        if not isinstance(value, str):
            raise LegacyFormatError(f"{label}.{key} must be a string, got {value!r}")
    assert isinstance(name, str)  # checked just above; for the type checker
    arguments = _expect(raw, "arguments", dict, {})
    db_id, coll_id = f"{GLOBAL_CLIENT}/{db}", f"{GLOBAL_CLIENT}/{db}.{coll}"
    entities.setdefault(db_id, EntitySpec("database", db_id, {"client": GLOBAL_CLIENT, "databaseName": db}))
    entities.setdefault(coll_id, EntitySpec("collection", coll_id, {"database": db_id, "collectionName": coll}))
    unified_name, level = _OPERATION_NAMES.get(name, (name, "collection"))
    if level == "database":
        return Operation(unified_name, db_id, {"collection": coll, **arguments}, label=label)
    return Operation(unified_name, coll_id, arguments, label=label)


def _event(raw: Any, index: int) -> dict[str, Any]:
    """``{command_started_event: {command_name: ...}}`` -> ``{commandStartedEvent: {commandName: ...}}``."""
    if not isinstance(raw, dict) or len(raw) != 1:
        raise LegacyFormatError(f"expectations[{index}] must be a mapping with one event key")
    ((kind, body),) = raw.items()
    if kind != "command_started_event" or not isinstance(body, dict):
        raise LegacyFormatError(f"expectations[{index}]: unsupported event {kind!r}")
    renamed = {"command_name": "commandName", "database_name": "databaseName"}
    return {"commandStartedEvent": {renamed.get(k, k): v for k, v in body.items()}}
