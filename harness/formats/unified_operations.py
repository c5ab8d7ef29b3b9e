"""The unified format's operations, per entity type, with the argument names each one takes.

The unified test format lists its test-runner operations itself and defers the
entity operations to the specs that define them (CRUD, change streams, sessions,
the convenient transactions API, index management, enumerating collections and
databases, GridFS). This table is what those specs name, so a test is checked
when its file is loaded: a misspelt operation or argument is an ``error`` naming
the file, the test and ``operations[i]``, even in an operation the test never
reaches. A name the table knows but a driver adapter does not implement is a
different thing: the test runs up to it and is ``skipped`` with the reason.

Every operation on a client, database, collection or bucket may also take
``session``, ``timeoutMS`` (client-side operation timeouts) and ``comment``.
"""

from __future__ import annotations

from collections.abc import Iterable

_ON_ENTITIES = ("session", "timeoutMS", "comment")


def _args(*names: str) -> frozenset[str]:
    return frozenset(names)


_RW = ("readConcern", "readPreference", "writeConcern")
_WRITE = ("bypassDocumentValidation", "collation", "hint", "let", "writeConcern")
_CHANGE_STREAM = _args(
    "pipeline",
    "batchSize",
    "collation",
    "fullDocument",
    "fullDocumentBeforeChange",
    "maxAwaitTimeMS",
    "resumeAfter",
    "showExpandedEvents",
    "startAfter",
    "startAtOperationTime",
    "readConcern",
    "readPreference",
)
_AGGREGATE = _args(
    "pipeline",
    "allowDiskUse",
    "batchSize",
    "bypassDocumentValidation",
    "collation",
    "hint",
    "let",
    "maxAwaitTimeMS",
    "maxTimeMS",
    *_RW,
)
_FIND = _args(
    "filter",
    "allowDiskUse",
    "allowPartialResults",
    "batchSize",
    "collation",
    "cursorType",
    "hint",
    "let",
    "limit",
    "max",
    "maxAwaitTimeMS",
    "maxScan",
    "maxTimeMS",
    "min",
    "noCursorTimeout",
    "oplogReplay",
    "projection",
    "returnKey",
    "showRecordId",
    "singleBatch",
    "skip",
    "snapshot",
    "sort",
    "timeoutMode",
    "readConcern",
    "readPreference",
)
_CURSOR_COMMAND = _args(
    "command", "commandName", "batchSize", "maxTimeMS", "cursorType", "timeoutMode", "readPreference"
)
_FIND_AND_MODIFY = ("filter", "collation", "hint", "let", "maxTimeMS", "projection", "sort", "writeConcern")

CLIENT = {
    "createChangeStream": _CHANGE_STREAM,
    "watch": _CHANGE_STREAM,
    "listDatabases": _args("filter", "nameOnly", "authorizedDatabases"),
    "listDatabaseNames": _args("filter", "authorizedDatabases"),
    "listDatabaseObjects": _args("filter", "authorizedDatabases"),
    "clientBulkWrite": _args("models", "ordered", "bypassDocumentValidation", "let", "verboseResults", "writeConcern"),
    "close": _args(),
    "appendMetadata": _args("driverInfoOptions"),
}

DATABASE = {
    "aggregate": _AGGREGATE,
    "createChangeStream": _CHANGE_STREAM,
    "watch": _CHANGE_STREAM,
    "listCollections": _args("filter", "batchSize", "nameOnly", "authorizedCollections"),
    "listCollectionNames": _args("filter", "batchSize", "authorizedCollections"),
    "listCollectionObjects": _args("filter", "batchSize", "authorizedCollections"),
    "runCommand": _args("command", "commandName", "readPreference"),
    "runCursorCommand": _CURSOR_COMMAND,
    "createCommandCursor": _CURSOR_COMMAND,
    "createCollection": _args(
        "collection",
        "capped",
        "size",
        "max",
        "storageEngine",
        "validator",
        "validationLevel",
        "validationAction",
        "indexOptionDefaults",
        "viewOn",
        "pipeline",
        "collation",
        "changeStreamPreAndPostImages",
        "clusteredIndex",
        "expireAfterSeconds",
        "timeseries",
        "encryptedFields",
        "writeConcern",
    ),
    "dropCollection": _args("collection", "encryptedFields", "writeConcern"),
    "modifyCollection": _args("collection", "changeStreamPreAndPostImages", "validator", "index"),
    "dropDatabase": _args("writeConcern"),
}

COLLECTION = {
    "aggregate": _AGGREGATE,
    "bulkWrite": _args("requests", "ordered", *_WRITE),
    "countDocuments": _args(
        "filter", "collation", "hint", "limit", "maxTimeMS", "skip", "readConcern", "readPreference"
    ),
    "estimatedDocumentCount": _args("maxTimeMS", "readConcern", "readPreference"),
    "distinct": _args("fieldName", "filter", "collation", "hint", "maxTimeMS", "readConcern", "readPreference"),
    "find": _FIND,
    "findOne": _FIND,
    "createFindCursor": _FIND,
    "createChangeStream": _CHANGE_STREAM,
    "watch": _CHANGE_STREAM,
    "insertOne": _args("document", "bypassDocumentValidation", "writeConcern"),
    "insertMany": _args("documents", "ordered", "bypassDocumentValidation", "writeConcern"),
    "updateOne": _args("filter", "update", "arrayFilters", "upsert", "sort", *_WRITE),
    "updateMany": _args("filter", "update", "arrayFilters", "upsert", *_WRITE),
    "replaceOne": _args("filter", "replacement", "upsert", "sort", *_WRITE),
    "deleteOne": _args("filter", "collation", "hint", "let", "writeConcern"),
    "deleteMany": _args("filter", "collation", "hint", "let", "writeConcern"),
    "findOneAndDelete": _args(*_FIND_AND_MODIFY),
    "findOneAndReplace": _args(
        "replacement", "returnDocument", "upsert", "bypassDocumentValidation", *_FIND_AND_MODIFY
    ),
    "findOneAndUpdate": _args(
        "update", "arrayFilters", "returnDocument", "upsert", "bypassDocumentValidation", *_FIND_AND_MODIFY
    ),
    "rename": _args("to", "dropTarget"),
    "drop": _args("encryptedFields", "writeConcern"),
    "createIndex": _args(
        "keys",
        "name",
        "unique",
        "sparse",
        "expireAfterSeconds",
        "hidden",
        "partialFilterExpression",
        "collation",
        "commitQuorum",
        "maxTimeMS",
        "background",
        "weights",
        "default_language",
        "language_override",
        "textIndexVersion",
        "2dsphereIndexVersion",
        "bits",
        "min",
        "max",
        "wildcardProjection",
        "storageEngine",
        "version",
        "writeConcern",
    ),
    "createIndexes": _args("models", "commitQuorum", "maxTimeMS", "writeConcern"),
    "dropIndex": _args("name", "maxTimeMS", "writeConcern"),
    "dropIndexes": _args("maxTimeMS", "writeConcern"),
    "listIndexes": _args("batchSize"),
    "listIndexNames": _args("batchSize"),
    "createSearchIndex": _args("model"),
    "createSearchIndexes": _args("models"),
    "dropSearchIndex": _args("name"),
    "listSearchIndexes": _args("name", "aggregationOptions"),
    "updateSearchIndex": _args("name", "definition"),
}

SESSION = {
    "startTransaction": _args("readConcern", "writeConcern", "readPreference", "maxCommitTimeMS", "timeoutMS"),
    "commitTransaction": _args("timeoutMS"),
    "abortTransaction": _args("timeoutMS"),
    "withTransaction": _args(
        "callback", "readConcern", "writeConcern", "readPreference", "maxCommitTimeMS", "timeoutMS"
    ),
    "endSession": _args(),
    "getSnapshotTime": _args(),
}

BUCKET = {
    "delete": _args("id"),
    "download": _args("id"),
    "downloadByName": _args("filename", "revision"),
    "drop": _args(),
    "find": _args("filter", "batchSize", "limit", "maxTimeMS", "noCursorTimeout", "skip", "sort"),
    "rename": _args("id", "newFilename"),
    "upload": _args("source", "filename", "chunkSizeBytes", "metadata", "contentType", "disableMD5"),
    "uploadWithId": _args("id", "source", "filename", "chunkSizeBytes", "metadata", "contentType"),
}

#: Change streams and cursors (``saveResultAsEntity`` of the operations in :data:`RESULT_KINDS`).
ITERABLE = {
    "iterateUntilDocumentOrError": _args(),
    "iterateOnce": _args(),
    "close": _args(),
}

#: ``object: testRunner`` (the unified format's "Special Test Operations").
TEST_RUNNER = {
    "failPoint": _args("failPoint", "client"),
    "targetedFailPoint": _args("failPoint", "session"),
    "assertSessionTransactionState": _args("session", "state"),
    "assertSessionPinned": _args("session"),
    "assertSessionUnpinned": _args("session"),
    "assertSessionDirty": _args("session"),
    "assertSessionNotDirty": _args("session"),
    "assertDifferentLsidOnLastTwoCommands": _args("client"),
    "assertSameLsidOnLastTwoCommands": _args("client"),
    "assertCollectionExists": _args("databaseName", "collectionName"),
    "assertCollectionNotExists": _args("databaseName", "collectionName"),
    "assertIndexExists": _args("databaseName", "collectionName", "indexName"),
    "assertIndexNotExists": _args("databaseName", "collectionName", "indexName"),
    "createEntities": _args("entities"),
    "assertNumberConnectionsCheckedOut": _args("client", "connections"),
    "runOnThread": _args("thread", "operation"),
    "waitForThread": _args("thread"),
    "waitForEvent": _args("client", "event", "count"),
    "assertEventCount": _args("client", "event", "count"),
    "recordTopologyDescription": _args("client", "id"),
    "assertTopologyType": _args("topologyDescription", "topologyType"),
    "waitForPrimaryChange": _args("client", "priorTopologyDescription", "timeoutMS"),
    "wait": _args("ms"),
}

#: Entity type -> its operations. ``session``/``timeoutMS``/``comment`` are added for these types.
ENTITY_OPERATIONS: dict[str, dict[str, frozenset[str]]] = {
    "client": CLIENT,
    "database": DATABASE,
    "collection": COLLECTION,
    "bucket": BUCKET,
    "session": SESSION,
    "changeStream": ITERABLE,
    "findCursor": ITERABLE,
    "commandCursor": ITERABLE,
}
_WITH_COMMON = frozenset({"client", "database", "collection", "bucket"})

#: Operations whose result, saved with ``saveResultAsEntity``, is an entity of this type.
RESULT_KINDS = {
    "createChangeStream": "changeStream",
    "watch": "changeStream",
    "createFindCursor": "findCursor",
    "createCommandCursor": "commandCursor",
}

#: Arguments that hold a list of operations run by the test runner (``withTransaction``'s callback).
NESTED_OPERATIONS = {"withTransaction": "callback"}


def arguments_of(kind: str, name: str) -> frozenset[str] | None:
    """The argument names operation ``name`` takes on an entity of type ``kind``; None if it has no such operation."""
    table = ENTITY_OPERATIONS.get(kind)
    if table is None or name not in table:
        return None
    return table[name] | frozenset(_ON_ENTITIES) if kind in _WITH_COMMON else table[name]


def any_arguments_of(name: str) -> frozenset[str] | None:
    """For an entity of unknown type: the arguments ``name`` takes on any type that has it (None: none has it)."""
    found = [arguments_of(kind, name) for kind in ENTITY_OPERATIONS]
    known = [a for a in found if a is not None]
    return frozenset().union(*known) if known else None


def kinds_with(name: str) -> list[str]:
    """The entity types that have an operation ``name``."""
    return [kind for kind, table in ENTITY_OPERATIONS.items() if name in table]


def unknown_arguments(given: Iterable[str], allowed: frozenset[str]) -> list[str]:
    return sorted(set(given) - allowed)
