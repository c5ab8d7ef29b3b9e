"""Plug-in: the prose tests as a suite (``harness run --suite prose``)."""

from __future__ import annotations

from typing import Any


def _collect(specs: list[Any]) -> list[Any]:
    from prose_tests import load_prose_checks

    return load_prose_checks()


def install(registry: Any) -> None:
    from harness.engine.plugins import Suite

    registry.add_suite(Suite("prose", "the change-stream prose tests, automated", _collect, order=20))
