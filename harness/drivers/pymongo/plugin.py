"""Plug-in: pymongo as a driver under test, with its APM listeners: ``--driver pymongo`` (``MongoClient``)
and ``--driver pymongo-async`` (``AsyncMongoClient``, the same adapter with the asynchronous API's shim)."""

from __future__ import annotations

from typing import Any


def _pymongo() -> Any:
    from harness.drivers.pymongo.adapter import PyMongoAdapter

    return PyMongoAdapter()


def _pymongo_async() -> Any:
    from harness.drivers.pymongo.async_scope import AsyncPyMongoAdapter

    return AsyncPyMongoAdapter()


def install(registry: Any) -> None:
    registry.add_driver("pymongo", _pymongo)
    registry.add_driver("pymongo-async", _pymongo_async)
