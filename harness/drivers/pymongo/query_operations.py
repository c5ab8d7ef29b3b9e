"""Reads and cursors with pymongo: ``find``, ``aggregate``, counts, listings, cursor entities.

Operations that return an iterable read it to the end, as the spec asks, and
hand back :class:`~harness.core.observations.CursorDocuments` so the comparator
treats each document as root-level. ``createFindCursor`` and
``createCommandCursor`` return the live cursor, to be saved as an entity and
iterated by ``iterateUntilDocumentOrError`` / ``iterateOnce``.
"""

from __future__ import annotations

from typing import Any

from pymongo import MongoClient
from pymongo.collection import Collection
from pymongo.database import Database

from harness.core.observations import CursorDocuments
from harness.core.ports import UnsupportedOperation
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


def _needs(target: Any, kinds: tuple[type, ...], name: str) -> None:
    if not isinstance(target, kinds):
        wanted = " or ".join(k.__name__.lower() for k in kinds)
        raise UnsupportedOperation(f"{name} needs a {wanted} entity, got {type(target).__name__}")


@operation("find")
def find(scope: Any, target: Collection, arguments: dict[str, Any]) -> CursorDocuments:
    _needs(target, (Collection,), "find")
    flt = take(arguments, "filter")
    return CursorDocuments(target.find(flt, **_find_options(scope, arguments)))


@operation("createFindCursor")
def create_find_cursor(scope: Any, target: Collection, arguments: dict[str, Any]) -> Any:
    _needs(target, (Collection,), "createFindCursor")
    flt = take(arguments, "filter")
    return target.find(flt, **_find_options(scope, arguments))


@operation("aggregate")
def aggregate(scope: Any, target: Collection | Database, arguments: dict[str, Any]) -> CursorDocuments:
    _needs(target, (Collection, Database), "aggregate")
    pipeline = take(arguments, "pipeline")
    return CursorDocuments(target.aggregate(pipeline, **options(scope, arguments)))


@operation("countDocuments")
def count_documents(scope: Any, target: Collection, arguments: dict[str, Any]) -> int:
    flt = take(arguments, "filter")
    return target.count_documents(flt, **options(scope, arguments))


@operation("estimatedDocumentCount")
def estimated_document_count(scope: Any, target: Collection, arguments: dict[str, Any]) -> int:
    return target.estimated_document_count(**options(scope, arguments))


@operation("distinct")
def distinct(scope: Any, target: Collection, arguments: dict[str, Any]) -> list[Any]:
    key, flt = take(arguments, "fieldName"), take(arguments, "filter")
    return target.distinct(key, flt, **options(scope, arguments))


@operation("listDatabases")
def list_databases(scope: Any, target: MongoClient, arguments: dict[str, Any]) -> CursorDocuments:
    _needs(target, (MongoClient,), "listDatabases")
    flt = arguments.pop("filter", None)
    extra = {"filter": flt} if flt is not None else {}
    return CursorDocuments(target.list_databases(**extra, **options(scope, arguments, allowed=("nameOnly",))))


@operation("listCollections")
def list_collections(scope: Any, target: Database, arguments: dict[str, Any]) -> CursorDocuments:
    _needs(target, (Database,), "listCollections")
    return CursorDocuments(target.list_collections(**options(scope, arguments, allowed=("filter",))))


@operation("listIndexes")
def list_indexes(scope: Any, target: Collection, arguments: dict[str, Any]) -> CursorDocuments:
    _needs(target, (Collection,), "listIndexes")
    return CursorDocuments(target.list_indexes(**options(scope, arguments)))


def _command_cursor(scope: Any, target: Database, arguments: dict[str, Any]) -> Any:
    _needs(target, (Database,), "a cursor command")
    command = take(arguments, "command")
    arguments.pop("commandName", None)
    batch_size = arguments.pop("batchSize", None)
    cursor = target.cursor_command(command, **options(scope, arguments))
    if batch_size is not None:
        cursor.batch_size(batch_size)
    return cursor


@operation("createCommandCursor")
def create_command_cursor(scope: Any, target: Database, arguments: dict[str, Any]) -> Any:
    return _command_cursor(scope, target, arguments)


@operation("runCursorCommand")
def run_cursor_command(scope: Any, target: Database, arguments: dict[str, Any]) -> CursorDocuments:
    return CursorDocuments(_command_cursor(scope, target, arguments))
