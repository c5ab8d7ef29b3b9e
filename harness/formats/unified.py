"""Unified-format spec files -> :class:`harness.core.model.SpecTest`.

A unified file is already shaped like the model: its entities, initial data,
operations and expected events map one to one. The loader's work is to
refuse files this runner must not process (see :mod:`harness.formats.unified_schema`)
as one ``error`` test naming the file and the JSON path, to give every
operation a label (``operations[3]``) that failure messages can point at, and
to check every operation's name and argument names against the format's table
(:mod:`harness.formats.unified_operation_check`): a misspelt one is an ``error``
for its test alone, naming the file, the test and the label, even in an
operation the test would never reach. ``withTransaction``'s callback is loaded
as operations (labelled ``operations[2].arguments.callback[0]``).
The ``.yml`` and ``.json`` encodings of a file load to equal tests.

:mod:`harness.formats.loaders` lists this format in its table of built-in formats.
Loading imports neither the runner nor a driver: the test-runner operations
the format uses live in the engine (:mod:`harness.engine.runner_operations`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.core.model import (
    NOT_GIVEN,
    CollectionData,
    EntitySpec,
    EventExpectation,
    LogExpectation,
    Operation,
    Requirement,
    SpecTest,
)
from harness.formats.unified_operation_check import OperationProblem, check_operations, entity_kinds
from harness.formats.unified_operations import NESTED_OPERATIONS
from harness.formats.unified_schema import SchemaProblem, validate

FORMAT = "unified"
COMPARATOR = "unified"


#: Test keys whose assertions this runner cannot make; a test using one is an ``error``, never a silent pass.
_UNSUPPORTED_TEST_KEYS = frozenset({"expectTracingMessages"})


class UnifiedFormatError(ValueError):
    """A part of a file the loader cannot turn into the model; the message names the key."""


def is_unified_document(data: Any) -> bool:
    """A unified file declares ``schemaVersion``; one that forgot it still has ``tests`` and no legacy names."""
    if not isinstance(data, dict):
        return False
    return "schemaVersion" in data or ("tests" in data and "database_name" not in data)


def load_unified(file: str, data: dict[str, Any], lines: list[int | None]) -> list[SpecTest]:
    """Every test of one unified file, or a single ``error`` test if the file must not run."""
    try:
        schema = validate(Path(file), data)
        file_requirements = _requirements(data.get("runOnRequirements"))
        entities = [_entity(raw) for raw in data.get("createEntities", [])]
        initial_data = [_collection_data(raw) for raw in data.get("initialData", [])]
    except (SchemaProblem, UnifiedFormatError, KeyError, TypeError, AttributeError) as exc:
        return [_file_error(file, data, str(exc))]
    tests = []
    for index, raw in enumerate(data["tests"]):
        line = lines[index] if index < len(lines) else None
        try:
            tests.append(replace(_test(file, raw, line, file_requirements, entities, initial_data), schema=schema))
        except (UnifiedFormatError, OperationProblem, KeyError, TypeError, AttributeError) as exc:
            # (malformed shapes get here only without a schema to check; unknown operation names always can)
            known = isinstance(exc, (UnifiedFormatError, OperationProblem))
            exc = exc if known else UnifiedFormatError(f"malformed: {exc!r}")
            description = raw.get("description") if isinstance(raw, dict) else None
            named = f" ({description!r})" if description else ""
            tests.append(
                SpecTest(
                    file=file,
                    format=FORMAT,
                    description=description or f"<tests[{index}]>",
                    comparator=COMPARATOR,
                    line=line,
                    schema=schema,
                    load_error=f"{file}: $.tests[{index}]{named}: {exc}",
                )
            )
    return tests


def _file_error(file: str, data: Any, problem: str) -> SpecTest:
    return SpecTest(
        file=file,
        format=FORMAT,
        description="<file>",
        comparator=COMPARATOR,
        load_error=f"{file}: cannot run this unified test file: {problem}",
    )


def _test(
    file: str,
    raw: dict[str, Any],
    line: int | None,
    file_requirements: list[Requirement] | None,
    entities: list[EntitySpec],
    initial_data: list[CollectionData],
) -> SpecTest:
    unchecked = sorted(set(raw) & _UNSUPPORTED_TEST_KEYS)
    if unchecked:
        raise UnifiedFormatError(f"{', '.join(unchecked)}: not supported by this runner (it would go unchecked)")
    groups = [g for g in (file_requirements, _requirements(raw.get("runOnRequirements"))) if g is not None]
    operations = [_operation(op, f"operations[{i}]") for i, op in enumerate(raw["operations"])]
    check_operations(operations, entity_kinds(entities))
    return SpecTest(
        file=file,
        format=FORMAT,
        description=raw["description"],
        comparator=COMPARATOR,
        line=line,
        requirements=groups,
        skip_reason=raw.get("skipReason"),
        entities=[EntitySpec(e.kind, e.id, dict(e.options)) for e in entities],
        initial_data=[
            CollectionData(c.database, c.collection, list(c.documents), dict(c.create_options)) for c in initial_data
        ],
        operations=operations,
        expect_events=[_events(e, f"expectEvents[{i}]") for i, e in enumerate(raw.get("expectEvents", []))],
        expect_log_messages=[
            _log_messages(e, f"expectLogMessages[{i}]") for i, e in enumerate(raw.get("expectLogMessages", []))
        ],
        expected_data=[_collection_data(c) for c in raw.get("outcome", [])],
        uses_failpoints=any(op.name in ("failPoint", "targetedFailPoint") for op in operations),
    )


def _requirements(raw: list[dict[str, Any]] | None) -> list[Requirement] | None:
    if raw is None:
        return None
    return [_requirement(r) for r in raw]


def _requirement(raw: dict[str, Any]) -> Requirement:
    topologies = raw.get("topologies")
    csfle = raw.get("csfle")
    return Requirement(
        min_server_version=raw.get("minServerVersion"),
        max_server_version=raw.get("maxServerVersion"),
        topologies=tuple(topologies) if topologies is not None else None,
        serverless=raw.get("serverless"),
        server_parameters=raw.get("serverParameters"),
        auth=raw.get("auth"),
        csfle=None if csfle is None else csfle is not False,
    )


def _entity(raw: dict[str, Any]) -> EntitySpec:
    """``{client: {id: c0, ...}}`` -> ``EntitySpec("client", "c0", {...})``."""
    if not isinstance(raw, dict) or len(raw) != 1:
        raise UnifiedFormatError(
            f"an entity must have exactly one type key, got {sorted(raw) if isinstance(raw, dict) else raw!r}"
        )
    ((kind, body),) = raw.items()
    options = {k: v for k, v in body.items() if k != "id"}
    return EntitySpec(kind, body["id"], options)


def _collection_data(raw: dict[str, Any]) -> CollectionData:
    return CollectionData(
        raw["databaseName"], raw["collectionName"], list(raw.get("documents", [])), dict(raw.get("createOptions", {}))
    )


def _operation(raw: dict[str, Any], label: str) -> Operation:
    arguments = dict(raw.get("arguments", {}))
    if raw["name"] == "createEntities" and isinstance(arguments.get("entities"), list):
        arguments["entities"] = [_entity(e) for e in arguments["entities"]]
    nested = NESTED_OPERATIONS.get(raw["name"])
    if nested and isinstance(arguments.get(nested), list):  # withTransaction's callback: operations the runner runs
        arguments[nested] = [
            _operation(op, f"{label}.arguments.{nested}[{i}]") for i, op in enumerate(arguments[nested])
        ]
    return Operation(
        name=raw["name"],
        object=raw["object"],
        arguments=arguments,
        expect_result=raw.get("expectResult", NOT_GIVEN),
        expect_error=raw.get("expectError"),
        save_result_as_entity=raw.get("saveResultAsEntity"),
        ignore_result_and_error=bool(raw.get("ignoreResultAndError", False)),
        label=label,
    )


def _events(raw: dict[str, Any], label: str) -> EventExpectation:
    return EventExpectation(
        client=raw["client"],
        events=list(raw["events"]),
        event_type=raw.get("eventType", "command"),
        ignore_extra_events=bool(raw.get("ignoreExtraEvents", False)),
        label=label,
    )


def _log_messages(raw: dict[str, Any], label: str) -> LogExpectation:
    return LogExpectation(
        client=raw["client"],
        messages=list(raw["messages"]),
        ignore_messages=list(raw.get("ignoreMessages", [])),
        ignore_extra_messages=bool(raw.get("ignoreExtraMessages", False)),
        label=label,
    )
