"""Session operations with pymongo: explicit transactions and ending a session.

``withTransaction`` is not offered: its callback is a list of operations the
runner would have to run inside the driver's retry loop, which this adapter
cannot do, so a test using it is an ``error`` naming it.
"""

from __future__ import annotations

from typing import Any

from pymongo.client_session import ClientSession

from harness.core.ports import UnsupportedOperation
from harness.drivers.pymongo.operations import operation, options
from harness.drivers.pymongo.spec_options import collection_options


def _session(target: Any) -> ClientSession:
    if not isinstance(target, ClientSession):
        raise UnsupportedOperation(f"operation needs a session entity, got {type(target).__name__}")
    return target


@operation("startTransaction")
def start_transaction(scope: Any, target: Any, arguments: dict[str, Any]) -> None:
    spec_options = {k: arguments.pop(k) for k in ("readConcern", "writeConcern", "readPreference") if k in arguments}
    options(scope, arguments)
    _session(target).start_transaction(**collection_options(spec_options))


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
