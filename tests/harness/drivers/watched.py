"""The one stream the early-verdict tests watch, made the same way in any driver's scope (in process or in an
executor): client ``c`` named after the test (so a fail point can pick its commands), collection ``coll`` emptied,
and change stream ``s`` on it."""

from __future__ import annotations

from typing import Any

from harness.core.model import EntitySpec, Operation


def op(scope: Any, name: str, target: str, **arguments: Any) -> Any:
    return scope.run(Operation(name=name, object=target, arguments=arguments))


def watch_collection(scope: Any, app_name: str, pipeline: list[Any] | None = None) -> Any:
    """``scope`` with the entities above; returns it."""
    scope.create_entity(EntitySpec("client", "c", {"uriOptions": {"appName": app_name}}))
    scope.create_entity(EntitySpec("database", "d", {"client": "c", "databaseName": "early_no_change"}))
    scope.create_entity(EntitySpec("collection", "coll", {"database": "d", "collectionName": app_name[:60]}))
    op(scope, "deleteMany", "coll", filter={})
    scope.set_entity("s", op(scope, "createChangeStream", "coll", pipeline=pipeline or []))
    return scope
