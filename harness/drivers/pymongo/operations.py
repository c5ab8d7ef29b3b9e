"""Spec operations implemented with pymongo, dispatched by the spec's own names.

Every function takes ``(scope, target, arguments)``: the test's entity map,
the object the operation names, and a private copy of its arguments, which
it consumes. Arguments left over are an error naming them, so an option the
adapter does not understand never silently changes a test's meaning.
Results are returned in the spec's shapes (``{insertedId: ...}`` and so on).
The same functions serve pymongo's synchronous and asynchronous APIs: a call
that returns an awaitable in the latter goes through ``scope.api.wait``
(:mod:`harness.drivers.pymongo.api_shims`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pymongo.collection import ReturnDocument
from pymongo.operations import DeleteMany, DeleteOne, InsertOne, ReplaceOne, UpdateMany, UpdateOne
from pymongo.results import BulkWriteResult, DeleteResult, InsertManyResult, InsertOneResult, UpdateResult

from harness.core.ports import DriverLacksFeature, UnsupportedOperation
from harness.drivers.pymongo.api_shims import ITERABLES, WATCHABLES
from harness.drivers.pymongo.errors import DRIVER_EXCEPTIONS, bulk_write_result
from harness.drivers.pymongo.iteration import next_or_none, until_document
from harness.drivers.pymongo.spec_options import read_preference_from_spec

#: How pymongo carries out one spec operation: ``(scope, object, arguments) -> result``.
PyMongoCall = Callable[[Any, Any, dict[str, Any]], Any]
OPERATIONS: dict[str, PyMongoCall] = {}

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


def operation(*names: str) -> Callable[[PyMongoCall], PyMongoCall]:
    def register(fn: PyMongoCall) -> PyMongoCall:
        for name in names:
            OPERATIONS[name] = fn
        return fn

    return register


def take(arguments: dict[str, Any], key: str) -> Any:
    if key not in arguments:
        raise UnsupportedOperation(f"required argument {key!r} is missing")
    return arguments.pop(key)


def options(scope: Any, arguments: dict[str, Any], allowed: tuple[str, ...] = ()) -> dict[str, Any]:
    """Consume the remaining arguments as pymongo keyword arguments."""
    kwargs: dict[str, Any] = {}
    if "session" in arguments:
        kwargs["session"] = scope.entity(arguments.pop("session"))
    for key in list(arguments):
        if key in allowed or key in _KWARGS:
            kwargs[_KWARGS.get(key, key)] = arguments.pop(key)
    if arguments:
        raise DriverLacksFeature(f"unsupported argument(s) {sorted(arguments)}")
    return kwargs


def spec_result(value: Any) -> Any:
    """A pymongo result object in the spec's result shape."""
    if isinstance(value, InsertOneResult):
        return {"insertedId": value.inserted_id}
    if isinstance(value, InsertManyResult):
        return {"insertedIds": {str(i): inserted for i, inserted in enumerate(value.inserted_ids)}}
    if isinstance(value, UpdateResult):
        result = {
            "matchedCount": value.matched_count,
            "modifiedCount": value.modified_count,
            "upsertedCount": 1 if value.upserted_id is not None else 0,
        }
        if value.upserted_id is not None:
            result["upsertedId"] = value.upserted_id
        return result
    if isinstance(value, DeleteResult):
        return {"deletedCount": value.deleted_count}
    if isinstance(value, BulkWriteResult):
        return bulk_write_result(value.bulk_api_result)
    return value


# -- change streams ----------------------------------------------------------
@operation("createChangeStream")
def create_change_stream(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    if not isinstance(target, WATCHABLES):
        raise UnsupportedOperation(
            f"createChangeStream needs a client, database or collection, got {type(target).__name__}"
        )
    pipeline = arguments.pop("pipeline", [])
    return scope.api.wait(target.watch(pipeline, **options(scope, arguments)))


def _iterable(target: Any) -> Any:
    if not isinstance(target, ITERABLES):
        raise UnsupportedOperation(f"operation needs a change stream or cursor entity, got {type(target).__name__}")
    return target


@operation("iterateUntilDocumentOrError")
def iterate_until_document_or_error(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    """A change stream in the scope's iteration mode (:mod:`harness.drivers.pymongo.iteration`), a cursor polled."""
    iterable = _iterable(target)
    options(scope, arguments)
    return until_document(scope, iterable)


@operation("iterateOnce")
def iterate_once(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    """One non-blocking iteration in every mode (the protocol's table: ``try_next``)."""
    options(scope, arguments)
    return next_or_none(scope, _iterable(target))


@operation("close")
def close(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    """Close a cursor, change stream or client; the spec has errors from ``killCursors`` suppressed."""
    options(scope, arguments)
    try:
        scope.api.wait(target.close())
    except DRIVER_EXCEPTIONS:
        pass


# -- collections and databases ------------------------------------------------
#: Write operations that are one pymongo call: spec name -> (method, required positional arguments).
_WRITES = {
    "insertOne": ("insert_one", ("document",)),
    "insertMany": ("insert_many", ("documents",)),
    "updateOne": ("update_one", ("filter", "update")),
    "updateMany": ("update_many", ("filter", "update")),
    "replaceOne": ("replace_one", ("filter", "replacement")),
    "deleteOne": ("delete_one", ("filter",)),
    "deleteMany": ("delete_many", ("filter",)),
}


def _write(method: str, positional: tuple[str, ...]) -> PyMongoCall:
    def run(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
        values = [take(arguments, name) for name in positional]
        return spec_result(scope.api.wait(getattr(target, method)(*values, **options(scope, arguments))))

    run.__name__ = method
    return run


for _name, (_method, _positional) in _WRITES.items():
    OPERATIONS[_name] = _write(_method, _positional)


@operation("rename")
def rename(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    new_name = take(arguments, "to")
    scope.api.wait(target.rename(new_name, **options(scope, arguments)))
    return None


@operation("createIndex")
def create_index(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    keys = take(arguments, "keys")
    name = arguments.pop("name", None)
    kwargs = options(scope, arguments)
    if name is not None:
        kwargs["name"] = name
    return scope.api.wait(target.create_index(list(keys.items()), **kwargs))


@operation("dropIndex")
def drop_index(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    name = take(arguments, "name")
    scope.api.wait(target.drop_index(name, **options(scope, arguments)))
    return None


@operation("createCollection")
def create_collection(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    name = take(arguments, "collection")
    kwargs = options(
        scope,
        arguments,
        allowed=(
            "changeStreamPreAndPostImages",
            "capped",
            "size",
            "max",
            "validator",
            "timeseries",
            "expireAfterSeconds",
            "clusteredIndex",
            "viewOn",
            "pipeline",
            "encryptedFields",
        ),
    )
    scope.api.wait(target.create_collection(name, **kwargs))
    return None


@operation("dropCollection")
def drop_collection(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    name = take(arguments, "collection")
    scope.api.wait(target.drop_collection(name, **options(scope, arguments)))
    return None


@operation("runCommand")
def run_command(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    command = take(arguments, "command")
    arguments.pop("commandName", None)
    read_preference = arguments.pop("readPreference", None)
    kwargs = options(scope, arguments)
    if read_preference is not None:
        kwargs["read_preference"] = read_preference_from_spec(read_preference)
    return scope.api.wait(target.command(command, **kwargs))


# -- bulk writes and find-and-modify ------------------------------------------
@operation("bulkWrite")
def bulk_write(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    requests = [_write_model(request, index) for index, request in enumerate(take(arguments, "requests"))]
    return spec_result(scope.api.wait(target.bulk_write(requests, **options(scope, arguments))))


#: ``bulkWrite`` request name -> (pymongo model, its positional spec arguments).
_WRITE_MODELS: dict[str, tuple[type, tuple[str, ...]]] = {
    "insertOne": (InsertOne, ("document",)),
    "updateOne": (UpdateOne, ("filter", "update")),
    "updateMany": (UpdateMany, ("filter", "update")),
    "replaceOne": (ReplaceOne, ("filter", "replacement")),
    "deleteOne": (DeleteOne, ("filter",)),
    "deleteMany": (DeleteMany, ("filter",)),
}


def _write_model(request: dict[str, Any], index: int) -> Any:
    ((name, spec_arguments),) = request.items()
    if name not in _WRITE_MODELS:
        raise UnsupportedOperation(f"requests[{index}]: unsupported bulk write model {name!r}")
    model, positional = _WRITE_MODELS[name]
    arguments = dict(spec_arguments)
    values = [take(arguments, key) for key in positional]
    leftover = sorted(set(arguments) - set(_KWARGS))
    if leftover:
        raise UnsupportedOperation(f"requests[{index}].{name}: unsupported argument(s) {leftover}")
    return model(*values, **{_KWARGS[k]: v for k, v in arguments.items()})


_RETURN_DOCUMENT = {"Before": ReturnDocument.BEFORE, "After": ReturnDocument.AFTER}


def _return_document(arguments: dict[str, Any]) -> dict[str, Any]:
    if "returnDocument" not in arguments:
        return {}
    choice = arguments.pop("returnDocument")
    if choice not in _RETURN_DOCUMENT:
        raise UnsupportedOperation(f"returnDocument must be Before or After, got {choice!r}")
    return {"return_document": _RETURN_DOCUMENT[choice]}


@operation("findOneAndUpdate")
def find_one_and_update(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    flt, update_doc = take(arguments, "filter"), take(arguments, "update")
    returned = _return_document(arguments)
    return scope.api.wait(target.find_one_and_update(flt, update_doc, **returned, **options(scope, arguments)))


@operation("findOneAndReplace")
def find_one_and_replace(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    flt, replacement = take(arguments, "filter"), take(arguments, "replacement")
    returned = _return_document(arguments)
    return scope.api.wait(target.find_one_and_replace(flt, replacement, **returned, **options(scope, arguments)))


@operation("findOneAndDelete")
def find_one_and_delete(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    flt = take(arguments, "filter")
    return scope.api.wait(target.find_one_and_delete(flt, **options(scope, arguments)))


# Reads, cursors and sessions live beside this module; importing them registers them here.
from harness.drivers.pymongo import prose_ops as _prose_ops  # noqa: E402,F401 - registers prose-only operations
from harness.drivers.pymongo import query_operations, session_operations  # noqa: E402,F401 - registers reads, cursors, sessions
