"""Spec operations implemented with pymongo, dispatched by the spec's own names.

Every function takes ``(session, target, arguments)``: the test's entity map,
the object the operation names, and a private copy of its arguments, which
it consumes. Arguments left over are an error naming them, so an option the
adapter does not understand never silently changes a test's meaning.
Results are returned in the spec's shapes (``{insertedId: ...}`` and so on).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pymongo import MongoClient
from pymongo.change_stream import ChangeStream
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.results import DeleteResult, InsertManyResult, InsertOneResult, UpdateResult

from harness.drivers.base import UnsupportedOperation
from harness.drivers.pymongo.spec_options import read_preference_from_spec
from harness.observations import NoChangeWithin

Operation = Callable[[Any, Any, dict[str, Any]], Any]
OPERATIONS: dict[str, Operation] = {}

# Spec option names -> pymongo keyword names, shared by many operations.
_KWARGS = {
    "fullDocument": "full_document",
    "fullDocumentBeforeChange": "full_document_before_change",
    "resumeAfter": "resume_after",
    "startAfter": "start_after",
    "startAtOperationTime": "start_at_operation_time",
    "batchSize": "batch_size",
    "maxAwaitTimeMS": "max_await_time_ms",
    "showExpandedEvents": "show_expanded_events",
    "collation": "collation",
    "comment": "comment",
    "upsert": "upsert",
    "arrayFilters": "array_filters",
    "hint": "hint",
    "let": "let",
    "bypassDocumentValidation": "bypass_document_validation",
    "ordered": "ordered",
    "projection": "projection",
    "sort": "sort",
    "skip": "skip",
    "limit": "limit",
    "allowDiskUse": "allowDiskUse",
    "maxTimeMS": "maxTimeMS",
    "dropTarget": "dropTarget",
    "unique": "unique",
}


def operation(*names: str) -> Callable[[Operation], Operation]:
    def register(fn: Operation) -> Operation:
        for name in names:
            OPERATIONS[name] = fn
        return fn

    return register


def take(arguments: dict[str, Any], key: str) -> Any:
    if key not in arguments:
        raise UnsupportedOperation(f"required argument {key!r} is missing")
    return arguments.pop(key)


def options(session: Any, arguments: dict[str, Any], allowed: tuple[str, ...] = ()) -> dict[str, Any]:
    """Consume the remaining arguments as pymongo keyword arguments."""
    kwargs: dict[str, Any] = {}
    if "session" in arguments:
        kwargs["session"] = session.entity(arguments.pop("session"))
    for key in list(arguments):
        if key in allowed or key in _KWARGS:
            kwargs[_KWARGS.get(key, key)] = arguments.pop(key)
    if arguments:
        raise UnsupportedOperation(f"unsupported argument(s) {sorted(arguments)}")
    return kwargs


def spec_result(value: Any) -> Any:
    """A pymongo result object in the spec's result shape."""
    if isinstance(value, InsertOneResult):
        return {"insertedId": value.inserted_id}
    if isinstance(value, InsertManyResult):
        return {"insertedIds": dict(enumerate(value.inserted_ids))}
    if isinstance(value, UpdateResult):
        result = {"matchedCount": value.matched_count, "modifiedCount": value.modified_count,
                  "upsertedCount": 1 if value.upserted_id is not None else 0}
        if value.upserted_id is not None:
            result["upsertedId"] = value.upserted_id
        return result
    if isinstance(value, DeleteResult):
        return {"deletedCount": value.deleted_count}
    return value


# -- change streams ----------------------------------------------------------
@operation("createChangeStream")
def create_change_stream(session: Any, target: Any, arguments: dict[str, Any]) -> ChangeStream:
    if not isinstance(target, (MongoClient, Database, Collection)):
        raise UnsupportedOperation(f"createChangeStream needs a client, database or collection, got {type(target).__name__}")
    pipeline = arguments.pop("pipeline", [])
    return target.watch(pipeline, **options(session, arguments))


def _change_stream(target: Any) -> ChangeStream:
    if not isinstance(target, ChangeStream):
        raise UnsupportedOperation(f"operation needs a change stream entity, got {type(target).__name__}")
    return target


@operation("iterateUntilDocumentOrError")
def iterate_until_document_or_error(session: Any, target: Any, arguments: dict[str, Any]) -> Any:
    stream = _change_stream(target)
    options(session, arguments)
    deadline = time.monotonic() + session.iteration_timeout_s
    while True:
        change = stream.try_next()
        if change is not None:
            return change
        if not stream.alive:
            raise NoChangeWithin("the change stream was closed by the server before a change arrived")
        if time.monotonic() >= deadline:
            raise NoChangeWithin(f"no change arrived within {session.iteration_timeout_s:g}s")


@operation("iterateOnce")
def iterate_once(session: Any, target: Any, arguments: dict[str, Any]) -> Any:
    options(session, arguments)
    return _change_stream(target).try_next()


@operation("close")
def close(session: Any, target: Any, arguments: dict[str, Any]) -> None:
    options(session, arguments)
    target.close()


# -- collections and databases ------------------------------------------------
@operation("insertOne")
def insert_one(session: Any, target: Collection, arguments: dict[str, Any]) -> Any:
    document = take(arguments, "document")
    return spec_result(target.insert_one(document, **options(session, arguments)))


@operation("insertMany")
def insert_many(session: Any, target: Collection, arguments: dict[str, Any]) -> Any:
    documents = take(arguments, "documents")
    return spec_result(target.insert_many(documents, **options(session, arguments)))


@operation("updateOne")
def update_one(session: Any, target: Collection, arguments: dict[str, Any]) -> Any:
    flt, update_doc = take(arguments, "filter"), take(arguments, "update")
    return spec_result(target.update_one(flt, update_doc, **options(session, arguments)))


@operation("updateMany")
def update_many(session: Any, target: Collection, arguments: dict[str, Any]) -> Any:
    flt, update_doc = take(arguments, "filter"), take(arguments, "update")
    return spec_result(target.update_many(flt, update_doc, **options(session, arguments)))


@operation("replaceOne")
def replace_one(session: Any, target: Collection, arguments: dict[str, Any]) -> Any:
    flt, replacement = take(arguments, "filter"), take(arguments, "replacement")
    return spec_result(target.replace_one(flt, replacement, **options(session, arguments)))


@operation("deleteOne")
def delete_one(session: Any, target: Collection, arguments: dict[str, Any]) -> Any:
    flt = take(arguments, "filter")
    return spec_result(target.delete_one(flt, **options(session, arguments)))


@operation("deleteMany")
def delete_many(session: Any, target: Collection, arguments: dict[str, Any]) -> Any:
    flt = take(arguments, "filter")
    return spec_result(target.delete_many(flt, **options(session, arguments)))


@operation("rename")
def rename(session: Any, target: Collection, arguments: dict[str, Any]) -> Any:
    new_name = take(arguments, "to")
    target.rename(new_name, **options(session, arguments))
    return None


@operation("createIndex")
def create_index(session: Any, target: Collection, arguments: dict[str, Any]) -> Any:
    keys = take(arguments, "keys")
    name = arguments.pop("name", None)
    kwargs = options(session, arguments)
    if name is not None:
        kwargs["name"] = name
    return target.create_index(list(keys.items()), **kwargs)


@operation("dropIndex")
def drop_index(session: Any, target: Collection, arguments: dict[str, Any]) -> Any:
    name = take(arguments, "name")
    target.drop_index(name, **options(session, arguments))
    return None


@operation("createCollection")
def create_collection(session: Any, target: Database, arguments: dict[str, Any]) -> Any:
    name = take(arguments, "collection")
    kwargs = options(session, arguments, allowed=("changeStreamPreAndPostImages", "capped", "size", "max",
                                                  "validator", "timeseries", "expireAfterSeconds", "clusteredIndex"))
    target.create_collection(name, **kwargs)
    return None


@operation("dropCollection")
def drop_collection(session: Any, target: Database, arguments: dict[str, Any]) -> Any:
    name = take(arguments, "collection")
    target.drop_collection(name, **options(session, arguments))
    return None


@operation("runCommand")
def run_command(session: Any, target: Database, arguments: dict[str, Any]) -> Any:
    command = take(arguments, "command")
    arguments.pop("commandName", None)
    read_preference = arguments.pop("readPreference", None)
    kwargs = options(session, arguments)
    if read_preference is not None:
        kwargs["read_preference"] = read_preference_from_spec(read_preference)
    return target.command(command, **kwargs)
