"""Session operations with pymongo: explicit transactions, ``withTransaction``, ending a session.

``withTransaction``'s ``callback`` reaches the adapter as
:class:`~harness.core.ports.NestedOperations`: the operations, run here through
the scope one by one inside pymongo's own loop, each reported to the engine's
hook (which checks it), and each error raised again as the driver's own
exception, so the retry loop sees its labels and decides as it would for an application.
"""

from __future__ import annotations

from typing import Any

from harness.core.observations import DriverOperationError
from harness.core.ports import NestedOperations, UnsupportedOperation
from harness.drivers.pymongo.api_shims import SESSIONS
from harness.drivers.pymongo.operations import operation, options, take
from harness.drivers.pymongo.spec_options import collection_options


def _session(target: Any) -> Any:
    if not isinstance(target, SESSIONS):
        raise UnsupportedOperation(f"operation needs a session entity, got {type(target).__name__}")
    return target


@operation("startTransaction")
def start_transaction(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    spec_options = {k: arguments.pop(k) for k in ("readConcern", "writeConcern", "readPreference") if k in arguments}
    kwargs = collection_options(spec_options)
    if "maxCommitTimeMS" in arguments:
        kwargs["max_commit_time_ms"] = arguments.pop("maxCommitTimeMS")
    options(scope, arguments)
    scope.api.wait(_session(target).start_transaction(**kwargs))


@operation("commitTransaction")
def commit_transaction(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    options(scope, arguments)
    scope.api.wait(_session(target).commit_transaction())


@operation("abortTransaction")
def abort_transaction(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    options(scope, arguments)
    scope.api.wait(_session(target).abort_transaction())


@operation("endSession")
def end_session(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    options(scope, arguments)
    scope.api.wait(_session(target).end_session())


@operation("withTransaction")
def with_transaction(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    callback = take(arguments, "callback")
    if not isinstance(callback, NestedOperations):
        raise UnsupportedOperation("withTransaction: the runner must give the callback as NestedOperations")
    spec_options = {k: arguments.pop(k) for k in ("readConcern", "writeConcern", "readPreference") if k in arguments}
    kwargs = collection_options(spec_options)
    if "maxCommitTimeMS" in arguments:
        kwargs["max_commit_time_ms"] = arguments.pop("maxCommitTimeMS")
    options(scope, arguments)
    scope.api.with_transaction(_session(target), lambda: _run_nested(scope, callback), **kwargs)


def _run_nested(scope: Any, nested: NestedOperations) -> None:
    """One attempt of the callback: each operation through the scope, reported to the engine's hook."""
    for index, nested_operation in enumerate(nested.operations):
        nested.hook.started(index)
        try:
            result = scope.run(nested_operation)
        except DriverOperationError as exc:
            nested.hook.finished(index, None, exc)
            raise exc.info.exception or exc  # noqa: B904 - the driver's own exception, unchanged, for its retry loop
        nested.hook.finished(index, result, None)
