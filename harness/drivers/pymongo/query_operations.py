"""Reads and cursors with pymongo: ``find``, ``aggregate``, counts, listings, cursor entities.

Operations that return an iterable read it to the end, as the spec asks, and
hand back :class:`~harness.core.observations.CursorDocuments` so the comparator
treats each document as root-level. ``createFindCursor`` and
``createCommandCursor`` return the live cursor, to be saved as an entity and
iterated by ``iterateUntilDocumentOrError`` / ``iterateOnce``.
"""

from __future__ import annotations

from typing import Any

from harness.core.observations import CursorDocuments
from harness.core.ports import UnsupportedOperation
from harness.drivers.pymongo.api_shims import CLIENTS, COLLECTIONS, DATABASES
from harness.drivers.pymongo.operations import operation, options, take

# Where ``find`` spells an option differently from the shared table (which suits aggregate).
_FIND_NAMES = {
    "allowDiskUse": "allow_disk_use",
    "maxTimeMS": "max_time_ms",
    "noCursorTimeout": "no_cursor_timeout",
    "returnKey": "return_key",
    "showRecordId": "show_record_id",
    "min": "min",
    "max": "max",
}


def _find_options(scope: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    renamed = {_FIND_NAMES[k]: arguments.pop(k) for k in list(arguments) if k in _FIND_NAMES}
    return {**options(scope, arguments), **renamed}


def _needs(target: Any, kinds: dict[str, tuple[type, ...]], name: str) -> None:
    if not isinstance(target, tuple(t for types in kinds.values() for t in types)):
        wanted = " or ".join(kinds)
        raise UnsupportedOperation(f"{name} needs a {wanted} entity, got {type(target).__name__}")


@operation("find")
def find(scope: Any, target: Any, arguments: dict[str, Any]) -> CursorDocuments:
    _needs(target, {"collection": COLLECTIONS}, "find")
    flt = take(arguments, "filter")
    return CursorDocuments(scope.api.documents(target.find(flt, **_find_options(scope, arguments))))


@operation("createFindCursor")
def create_find_cursor(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    _needs(target, {"collection": COLLECTIONS}, "createFindCursor")
    flt = take(arguments, "filter")
    return target.find(flt, **_find_options(scope, arguments))


@operation("aggregate")
def aggregate(scope: Any, target: Any, arguments: dict[str, Any]) -> CursorDocuments:
    _needs(target, {"collection": COLLECTIONS, "database": DATABASES}, "aggregate")
    pipeline = take(arguments, "pipeline")
    return CursorDocuments(scope.api.documents(scope.api.wait(target.aggregate(pipeline, **options(scope, arguments)))))


@operation("countDocuments")
def count_documents(scope: Any, target: Any, arguments: dict[str, Any]) -> int:
    flt = take(arguments, "filter")
    return scope.api.wait(target.count_documents(flt, **options(scope, arguments)))


@operation("estimatedDocumentCount")
def estimated_document_count(scope: Any, target: Any, arguments: dict[str, Any]) -> int:
    return scope.api.wait(target.estimated_document_count(**options(scope, arguments)))


@operation("distinct")
def distinct(scope: Any, target: Any, arguments: dict[str, Any]) -> list[Any]:
    key, flt = take(arguments, "fieldName"), take(arguments, "filter")
    return scope.api.wait(target.distinct(key, flt, **options(scope, arguments)))


@operation("listDatabases")
def list_databases(scope: Any, target: Any, arguments: dict[str, Any]) -> CursorDocuments:
    _needs(target, {"client": CLIENTS}, "listDatabases")
    flt = arguments.pop("filter", None)
    extra = {"filter": flt} if flt is not None else {}
    cursor = scope.api.wait(target.list_databases(**extra, **options(scope, arguments, allowed=("nameOnly",))))
    return CursorDocuments(scope.api.documents(cursor))


@operation("listCollections")
def list_collections(scope: Any, target: Any, arguments: dict[str, Any]) -> CursorDocuments:
    _needs(target, {"database": DATABASES}, "listCollections")
    cursor = scope.api.wait(target.list_collections(**options(scope, arguments, allowed=("filter",))))
    return CursorDocuments(scope.api.documents(cursor))


@operation("listIndexes")
def list_indexes(scope: Any, target: Any, arguments: dict[str, Any]) -> CursorDocuments:
    _needs(target, {"collection": COLLECTIONS}, "listIndexes")
    return CursorDocuments(scope.api.documents(scope.api.wait(target.list_indexes(**options(scope, arguments)))))


def _command_cursor(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    _needs(target, {"database": DATABASES}, "a cursor command")
    command = take(arguments, "command")
    arguments.pop("commandName", None)
    batch_size = arguments.pop("batchSize", None)
    cursor = scope.api.wait(target.cursor_command(command, **options(scope, arguments)))
    if batch_size is not None:
        cursor.batch_size(batch_size)
    return cursor


@operation("createCommandCursor")
def create_command_cursor(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    return _command_cursor(scope, target, arguments)


@operation("runCursorCommand")
def run_cursor_command(scope: Any, target: Any, arguments: dict[str, Any]) -> CursorDocuments:
    return CursorDocuments(scope.api.documents(_command_cursor(scope, target, arguments)))
