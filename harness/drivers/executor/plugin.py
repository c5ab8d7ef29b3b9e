"""Plug-in: the executor drivers (:data:`harness.drivers.executor.known.EXECUTORS`: ``pymongo-executor``, ``node``,
``node@SPEC``, ``node=PATH``, ``java[@VERSION]``, ``go[@VERSION]``, ``rust[@VERSION]``) and ``exec:CMD``, any
executor by its command line."""

from __future__ import annotations

from typing import Any


def install(registry: Any) -> None:
    from harness.drivers.executor.known import EXECUTORS, _as_written
    from harness.engine.plugins import EXEC_SCHEME

    for entry in EXECUTORS:
        registry.add_driver(entry)
    registry.add_driver_scheme(
        EXEC_SCHEME, _as_written, "any executor by its command line (docs/executor-protocol.md), split as a shell would"
    )
