"""Session operations with pymongo: explicit transactions, ``withTransaction``, ending a session.

``withTransaction``'s ``callback`` reaches the adapter as a function of no
arguments: the runner's, which runs the callback's operations (checking each)
and lets their errors through, so pymongo's own retry loop sees the driver's
exceptions with their labels and decides as it would for an application.
"""

from __future__ import annotations

from typing import Any

from pymongo.client_session import ClientSession

from harness.core.ports import UnsupportedOperation
from harness.drivers.pymongo.operations import operation, options, take
from harness.drivers.pymongo.spec_options import collection_options


def _session(target: Any) -> ClientSession:
    if not isinstance(target, ClientSession):
        raise UnsupportedOperation(f"operation needs a session entity, got {type(target).__name__}")
    return target


@operation("startTransaction")
def start_transaction(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    spec_options = {k: arguments.pop(k) for k in ("readConcern", "writeConcern", "readPreference") if k in arguments}
    kwargs = collection_options(spec_options)
    if "maxCommitTimeMS" in arguments:
        kwargs["max_commit_time_ms"] = arguments.pop("maxCommitTimeMS")
    options(scope, arguments)
    _session(target).start_transaction(**kwargs)


@operation("commitTransaction")
def commit_transaction(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    options(scope, arguments)
    _session(target).commit_transaction()


@operation("abortTransaction")
def abort_transaction(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    options(scope, arguments)
    _session(target).abort_transaction()


@operation("endSession")
def end_session(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    options(scope, arguments)
    _session(target).end_session()


@operation("withTransaction")
def with_transaction(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    callback = take(arguments, "callback")
    if not callable(callback):
        raise UnsupportedOperation("withTransaction: the runner must give the callback as a function")
    spec_options = {k: arguments.pop(k) for k in ("readConcern", "writeConcern", "readPreference") if k in arguments}
    kwargs = collection_options(spec_options)
    if "maxCommitTimeMS" in arguments:
        kwargs["max_commit_time_ms"] = arguments.pop("maxCommitTimeMS")
    options(scope, arguments)
    _session(target).with_transaction(lambda _session: callback(), **kwargs)
