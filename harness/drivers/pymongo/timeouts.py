"""Client-side operation timeouts (CSOT, ``timeoutMS``) at every level the unified format sets them.

pymongo takes ``timeoutMS`` on a client (a URI option, given to it as it is)
and otherwise only for a block of code (:func:`pymongo.timeout`). The other
levels are applied here around each operation, the narrowest winning, as the
CSOT spec orders them: the operation's own ``timeoutMS`` argument; for a change
stream or cursor, the timeout it was created with (so every iteration is bounded
by it); the ``timeoutMS`` of the database or collection entity the operation
runs on (a collection inherits its database's); a session's
``defaultTimeoutMS`` for the session's own operations. ``0`` means no timeout.
Whether an error was such a timeout is pymongo's ``PyMongoError.timeout``
(:mod:`harness.drivers.pymongo.errors`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pymongo

from harness.core.model import Operation
from harness.drivers.pymongo.api_shims import ITERABLES as _ITERABLES


def timeout_ms(scope: Any, operation: Operation, target: Any, arguments: dict[str, Any]) -> int | None:
    """The timeout the operation runs under (None: the client's own, if any); consumes ``timeoutMS``."""
    if "timeoutMS" in arguments:
        return arguments.pop("timeoutMS")
    if isinstance(target, _ITERABLES):
        return scope.iteration_timeouts.get(target)
    return scope.timeouts.get(operation.object)


@contextlib.contextmanager
def client_timeout(scope: Any, operation: Operation, target: Any, arguments: dict[str, Any]) -> Iterator[int | None]:
    """Run the operation under its timeout; yields the timeout (milliseconds), for :func:`remember`."""
    milliseconds = timeout_ms(scope, operation, target, arguments)
    if milliseconds is None:
        yield None
        return
    with pymongo.timeout(milliseconds / 1000):
        yield milliseconds


def remember(scope: Any, result: Any, milliseconds: int | None) -> None:
    """A change stream or cursor keeps the timeout its creating operation ran under, for its iterations."""
    if milliseconds is not None and isinstance(result, _ITERABLES):
        scope.iteration_timeouts[result] = milliseconds
