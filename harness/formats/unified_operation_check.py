"""Load-time check of a unified test's operations against :mod:`harness.formats.unified_operations`.

Each operation's name must be one the format defines for the type of entity it
names, and each of its arguments one that operation takes. The entity types
are followed through the test as a runner would: the file's ``createEntities``,
then each ``createEntities`` operation and each ``saveResultAsEntity`` (a
``createChangeStream`` result is a change stream). An object whose type cannot
be known this way (the result of another operation) is checked against every
type that has the operation. Test-runner operations a plug-in adds
(``networkFault``) are not known here: their names are checked by the engine,
against its operation table, before the test's first operation runs.
"""

from __future__ import annotations

from typing import Any

from harness.core.model import TEST_RUNNER, Operation
from harness.formats import unified_operations as table


class OperationProblem(ValueError):
    """An operation or argument name the format does not define; the message names the label."""


def check_operations(operations: list[Operation], kinds: dict[str, str]) -> None:
    """Raise :class:`OperationProblem` for the first unknown name; ``kinds`` (entity id -> type) is updated."""
    for operation in operations:
        _check(operation, kinds)
        if operation.object == TEST_RUNNER and operation.name == "createEntities":
            for entity in operation.arguments.get("entities", []):
                kinds[getattr(entity, "id", "")] = getattr(entity, "kind", "")
        if operation.save_result_as_entity:
            kinds[operation.save_result_as_entity] = table.RESULT_KINDS.get(operation.name, "result")
        nested = table.NESTED_OPERATIONS.get(operation.name)
        inner = operation.arguments.get(nested) if nested else None
        if isinstance(inner, list) and all(isinstance(op, Operation) for op in inner):
            check_operations(inner, kinds)


def _check(operation: Operation, kinds: dict[str, str]) -> None:
    label, name = operation.label, operation.name
    if operation.object == TEST_RUNNER:
        allowed = table.TEST_RUNNER.get(name)
        if allowed is None:  # perhaps a plug-in's: the engine checks the name against its table
            return
        where = "the test runner"
    else:
        kind = kinds.get(operation.object)
        if kind in table.ENTITY_OPERATIONS:
            allowed = table.arguments_of(kind, name)
            if allowed is None:
                raise OperationProblem(
                    f"{label}: unknown operation {name!r} on {kind} entity {operation.object!r}{_elsewhere(name)}"
                )
            where = f"{kind} entity {operation.object!r}"
        elif kind is None or kind == "result":
            allowed = table.any_arguments_of(name)
            if allowed is None:
                raise OperationProblem(
                    f"{label}: unknown operation {name!r} (on {operation.object!r}): "
                    "the unified format defines no operation of that name"
                )
            where = f"{operation.object!r}"
        else:  # an entity type the table does not cover (clientEncryption, thread...): nothing to check against
            return
    unknown = table.unknown_arguments(operation.arguments, allowed)
    if unknown:
        raise OperationProblem(
            f"{label}: {name} on {where}: unknown argument(s) {unknown} (it takes {sorted(allowed)})"
        )


def _elsewhere(name: str) -> str:
    kinds = table.kinds_with(name)
    if not kinds:
        return ": the unified format defines no operation of that name"
    return f": {name} is an operation of {', '.join(kinds)} entities"


def entity_kinds(entities: list[Any]) -> dict[str, str]:
    """Entity id -> type, for the file's ``createEntities``."""
    return {entity.id: entity.kind for entity in entities}
