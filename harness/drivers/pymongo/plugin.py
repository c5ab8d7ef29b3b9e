"""Plug-in: pymongo as a driver under test (``--driver pymongo``), with its APM listeners."""

from __future__ import annotations

from typing import Any


def _pymongo() -> Any:
    from harness.drivers.pymongo.adapter import PyMongoAdapter

    return PyMongoAdapter()


def install(registry: Any) -> None:
    registry.add_driver("pymongo", _pymongo)
