"""Plug-in: pymongo as a driver under test, with its APM listeners: ``--driver pymongo`` (``MongoClient``)
and ``--driver pymongo-async`` (``AsyncMongoClient``, the same adapter with the asynchronous API's shim)."""

from __future__ import annotations

from typing import Any


def _pymongo() -> Any:
    from harness.drivers.pymongo.adapter import PyMongoAdapter

    return PyMongoAdapter()


def _pymongo_async() -> Any:
    import pymongo

    from harness.drivers.pymongo.api_shims import ASYNC_API
    from harness.drivers.pymongo.async_scope import AsyncPyMongoAdapter

    if not ASYNC_API:  # a run that cannot start says why, like an unknown driver (exit 2)
        raise SystemExit(f"--driver pymongo-async: pymongo {pymongo.version} has no AsyncMongoClient (pymongo 4.10+)")
    return AsyncPyMongoAdapter()


def install(registry: Any) -> None:
    registry.add_driver("pymongo", _pymongo)
    registry.add_driver("pymongo-async", _pymongo_async)
