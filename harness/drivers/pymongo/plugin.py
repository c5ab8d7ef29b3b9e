"""Plug-in: pymongo as a driver under test, with its APM listeners: ``--driver pymongo`` (``MongoClient``)
and ``--driver pymongo-async`` (``AsyncMongoClient``, the same adapter with the asynchronous API's shim)."""

from __future__ import annotations

from typing import Any

from harness.engine.plugins import IN_PROCESS, DriverEntry, Releases

#: A pymongo release, installed into a matrix cell's environment (the reference executor runs pymongo too).
PYMONGO_RELEASES = Releases("pip: pymongo==VERSION in the matrix cell's environment", "4.18.3", package="pymongo")


def _pymongo() -> Any:
    from harness.drivers.pymongo.adapter import PyMongoAdapter

    return PyMongoAdapter()


def _pymongo_async() -> Any:
    from harness.drivers.pymongo.async_scope import AsyncPyMongoAdapter

    _async_api_present()
    return AsyncPyMongoAdapter()


def _async_api_present() -> None:
    """A run that cannot start says why, like an unknown driver (exit 2)."""
    import pymongo

    from harness.core.ports import DriverUnavailable
    from harness.drivers.pymongo.api_shims import ASYNC_API

    if not ASYNC_API:
        raise DriverUnavailable(
            f"--driver pymongo-async: pymongo {pymongo.version} has no AsyncMongoClient; "
            "install pymongo 4.10 or later (pip install 'pymongo>=4.10')"
        )


def install(registry: Any) -> None:
    registry.add_driver(
        DriverEntry(
            "pymongo", "pymongo's MongoClient in the harness's process", IN_PROCESS, _pymongo, releases=PYMONGO_RELEASES
        )
    )
    registry.add_driver(
        DriverEntry(
            "pymongo-async",
            "pymongo's AsyncMongoClient in the harness's process (pymongo 4.10 or later)",
            IN_PROCESS,
            _pymongo_async,
            set_up=_async_api_present,
            releases=PYMONGO_RELEASES,
        )
    )
