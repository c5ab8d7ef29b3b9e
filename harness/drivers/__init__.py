"""Drivers under test, by the name ``--driver`` takes."""

from __future__ import annotations

from collections.abc import Callable

from harness.drivers.base import DriverAdapter, DriverSession, UnsupportedOperation


def _pymongo() -> DriverAdapter:
    from harness.drivers.pymongo.adapter import PyMongoAdapter

    return PyMongoAdapter()


DRIVERS: dict[str, Callable[[], DriverAdapter]] = {
    "pymongo": _pymongo,
}


def make_driver(name: str) -> DriverAdapter:
    try:
        factory = DRIVERS[name]
    except KeyError:
        raise SystemExit(f"unknown driver {name!r}; known drivers: {', '.join(sorted(DRIVERS))}") from None
    return factory()


__all__ = ["DRIVERS", "DriverAdapter", "DriverSession", "UnsupportedOperation", "make_driver"]
