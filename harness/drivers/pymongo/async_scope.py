"""pymongo's asynchronous API (``AsyncMongoClient``) as a driver under test: ``--driver pymongo-async``.

Not a second adapter: the scope is :class:`~harness.drivers.pymongo.adapter.PyMongoScope` with the
asynchronous shim (:class:`~harness.drivers.pymongo.api_shims.AsyncApi`), so entity creation, events,
log messages, session state and the whole operation table are the synchronous driver's code, run
against ``AsyncMongoClient`` objects on an event loop of the test's own.
"""

from __future__ import annotations

import pymongo

from harness.drivers.pymongo.adapter import PyMongoAdapter, PyMongoScope
from harness.drivers.pymongo.api_shims import AsyncApi


class AsyncPyMongoScope(PyMongoScope):
    """One test's entities, made with ``AsyncMongoClient``; its event loop stops when the scope closes."""

    def __init__(
        self,
        uri: str,
        iteration_timeout_s: float,
        heartbeat_ms: int | None = None,
        iteration_mode: str = "next",
        resume_token_format: str | None = None,
    ) -> None:
        self.api = AsyncApi()
        super().__init__(uri, iteration_timeout_s, heartbeat_ms, iteration_mode, resume_token_format)


class AsyncPyMongoAdapter(PyMongoAdapter):
    name = "pymongo-async"
    version = f"{pymongo.version} (async)"
    scope_class = AsyncPyMongoScope
