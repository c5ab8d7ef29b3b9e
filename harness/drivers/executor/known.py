"""The executor drivers of the catalogue, one entry each: ``pymongo-executor``, ``node``, ``java``, ``go``, ``rust``.

An executor is a command line speaking docs/executor-protocol.md. Its entry says how the command line is had:
as it is (the reference executor), once its packages are checked (Node), or built on first use into the harness's
cache against the pinned release or ``NAME@RELEASE`` (Java, Go, Rust); and where its releases come from, which
``harness matrix`` reads for its release axis. A new executor is its module (its sources and a ``build.py`` or
the like) and one entry in :data:`EXECUTORS`; a driver team's own executor needs none (``--driver exec:CMD``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.drivers.pymongo.plugin import PYMONGO_RELEASES
from harness.engine.plugins import EXECUTOR, DriverEntry, Releases

_DRIVERS = Path(__file__).resolve().parent.parent
_NODE = ["node", str(_DRIVERS / "node" / "executor.js")]

Command = str | list[str]


def _adapter(command: Command) -> Any:
    from harness.drivers.executor.adapter import ExecutorAdapter

    return ExecutorAdapter(command)


def executor_entry(
    name: str,
    help: str,
    command: Callable[[], Command],
    *,
    set_up: Callable[[], None] | None = None,
    releases: Releases | None = None,
    release_command: Callable[[str], Command] | None = None,
    argument: str = "",
    argument_command: Callable[[str], Command] | None = None,
) -> DriverEntry:
    """An executor's catalogue entry from its command lines: the pinned one, ``NAME@RELEASE``'s, ``NAME=ARGUMENT``'s."""

    def command_of(rest: str) -> Command:
        if rest[:1] == "@" and release_command is not None:
            return release_command(rest[1:])
        if rest[:1] == "=" and argument_command is not None:
            return argument_command(rest[1:])
        return command()

    return DriverEntry(
        name,
        help,
        EXECUTOR,
        make=lambda: _adapter(command()),
        set_up=set_up,
        releases=releases,
        make_release=None if release_command is None else lambda release: _adapter(release_command(release)),
        argument=argument,
        make_with_argument=None if argument_command is None else lambda value: _adapter(argument_command(value)),
        command=command_of,
    )


def _built(build: Callable[[str], list[str]]) -> Callable[[], None]:
    """A built executor's set-up: its build at the pinned release (a cache hit after the first)."""
    from harness.drivers.executor.set_up import built

    return lambda: built(lambda: build(""))()


def _node_ready() -> None:
    from harness.drivers.executor.set_up import node_ready

    node_ready()


def _node_release(spec: str) -> list[str]:
    from harness.drivers.executor.node_release import installed_driver

    return [*_NODE, "--driver-module", str(installed_driver(spec))]


def _node_module(path: str) -> list[str]:
    return [*_NODE, "--driver-module", str(Path(path).expanduser().resolve())]


def _java(release: str) -> list[str]:
    from harness.drivers.java.build import executor_command

    return executor_command(release)


def _go(release: str) -> list[str]:
    from harness.drivers.go.build import executor_command

    return executor_command(release)


def _rust(release: str) -> list[str]:
    from harness.drivers.rust.build import executor_command

    return executor_command(release)


EXECUTORS: tuple[DriverEntry, ...] = (
    executor_entry(
        "pymongo-executor",
        "pymongo through the executor protocol (the reference executor, in Python)",
        lambda: [sys.executable, "-m", "harness.drivers.executor.pymongo_reference"],
        releases=PYMONGO_RELEASES,
    ),
    executor_entry(
        "node",
        "the Node.js driver (npm mongodb, locked in harness/drivers/node; npm ci first)",
        lambda: _NODE,
        set_up=_node_ready,
        releases=Releases("npm: mongodb@SPEC, installed once into the harness's cache (a range: 6.x)", "6.10.0"),
        release_command=_node_release,
        argument="PATH",
        argument_command=_node_module,
    ),
    executor_entry(
        "java",
        "the Java sync driver (org.mongodb:mongodb-driver-sync), built with Maven on first use",
        lambda: _java(""),
        set_up=_built(_java),
        releases=Releases(
            "Maven: org.mongodb:mongodb-driver-sync VERSION, the executor built into the cache", "5.14.0"
        ),
        release_command=_java,
    ),
    executor_entry(
        "go",
        "the Go driver (go.mongodb.org/mongo-driver/v2), built with Go on first use",
        lambda: _go(""),
        set_up=_built(_go),
        releases=Releases("Go: go.mongodb.org/mongo-driver/v2 VERSION, the executor built into the cache", "2.10.0"),
        release_command=_go,
    ),
    executor_entry(
        "rust",
        "the Rust driver (crates.io mongodb, Cargo.lock), built with cargo on first use",
        lambda: _rust(""),
        set_up=_built(_rust),
        releases=Releases("cargo: crates.io mongodb VERSION, the executor built into the cache", "3.9.1"),
        release_command=_rust,
    ),
)


def _as_written(command: str) -> Any:
    """``exec:CMD`` as written: the adapter splits it as a shell would and records it unchanged."""
    return _adapter(command)
