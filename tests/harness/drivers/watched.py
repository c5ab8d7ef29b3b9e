"""The one stream the early-verdict tests watch, made the same way in any driver's scope (in process or in an
executor): client ``c`` named after the test (so a fail point can pick its commands), collection ``coll`` emptied,
and change stream ``s`` on it."""

from __future__ import annotations

from typing import Any

import pytest

from harness.core.model import EntitySpec, Operation
from harness.core.observations import NoChangeWithin


def op(scope: Any, name: str, target: str, **arguments: Any) -> Any:
    return scope.run(Operation(name=name, object=target, arguments=arguments))


def watch_collection(scope: Any, app_name: str, pipeline: list[Any] | None = None) -> Any:
    """``scope`` with the entities above; returns it."""
    scope.create_entity(EntitySpec("client", "c", {"uriOptions": {"appName": app_name}}))
    scope.create_entity(EntitySpec("database", "d", {"client": "c", "databaseName": "early_no_change"}))
    scope.create_entity(EntitySpec("collection", "coll", {"database": "d", "collectionName": app_name[:60]}))
    scope.create_entity(EntitySpec("collection", "other", {"database": "d", "collectionName": "other"}))
    op(scope, "deleteMany", "coll", filter={})
    scope.set_entity("s", op(scope, "createChangeStream", "coll", pipeline=pipeline or []))
    return scope


#: A ``$match`` an insert's change never passes.
FILTERED = [{"$match": {"operationType": "delete"}}]


def filtered_change_fails_at_once(scope: Any) -> None:
    """On a stream opened with :data:`FILTERED`: an insert's change fails the iteration at once, with the fact that
    says the stream passed the write, and the stream stays usable (the next change that passes arrives)."""
    op(scope, "insertOne", "coll", document={"_id": 1})
    # A write elsewhere after it: its reply's operationTime may be later than the filtered insert's own oplog entry
    # (the server's clock ticks for any client), which the stream's position, that entry's time, would never reach;
    # the write elsewhere moves the stream's high-water mark past every reply.
    op(scope, "insertOne", "other", document={"x": 1})
    with pytest.raises(NoChangeWithin) as failed:
        op(scope, "iterateUntilDocumentOrError", "s")
    assert failed.value.early, str(failed.value)
    fact = str(failed.value)
    assert fact.startswith("no document arrived; the stream passed the last write (insert) at Timestamp(")
    assert "a getMore sent after its reply returned an empty batch with a postBatchResumeToken at Timestamp(" in fact
    op(scope, "deleteOne", "coll", filter={"_id": 1})
    assert op(scope, "iterateUntilDocumentOrError", "s")["operationType"] == "delete"
