"""Plug-in: executor drivers (``--driver pymongo-executor``, ``node``, ``node@6.x``, ``node=PATH``, ``java``,
``java@VERSION``, ``go``, ``go@VERSION``, ``exec:CMD``)."""

from __future__ import annotations

from typing import Any


def _executor(command: str | list[str]) -> Any:
    from harness.drivers.executor.adapter import ExecutorAdapter

    return ExecutorAdapter(command)


def install(registry: Any) -> None:
    from harness.drivers.executor.known import BUILT_EXECUTORS, DRIVER_SCHEMES, KNOWN_EXECUTORS, SET_UP
    from harness.drivers.executor.set_up import built

    for name, argv in KNOWN_EXECUTORS.items():
        if name not in registry.drivers:  # a plug-in of its own (the Node driver's) may register it first
            registry.add_driver(name, lambda argv=argv: _executor(argv), set_up=SET_UP.get(name))
    for name, build in BUILT_EXECUTORS.items():
        registry.add_driver(name, lambda build=build: _executor(build()), set_up=built(build))
    for prefix, command in DRIVER_SCHEMES.items():
        registry.add_driver_scheme(prefix, lambda argument, command=command: _executor(command(argument)))
