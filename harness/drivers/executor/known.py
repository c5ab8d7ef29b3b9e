"""The executors the harness knows by driver name, ``exec:CMD`` for any other, ``node@SPEC`` for a Node release.

A known executor is a command line; a driver team's own executor needs no entry here
(``--driver exec:"node my-executor.js"``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

_DRIVERS = Path(__file__).resolve().parent.parent
_NODE = ["node", str(_DRIVERS / "node" / "executor.js")]

#: ``--driver NAME`` -> the executor's command line (argv).
KNOWN_EXECUTORS: dict[str, list[str]] = {
    "pymongo-executor": [sys.executable, "-m", "harness.drivers.executor.pymongo_reference"],
    "node": _NODE,
}


def _node_ready() -> None:
    from harness.drivers.executor.set_up import node_ready

    node_ready()


#: ``--driver NAME`` -> what checks, when the run starts, that this machine can run the executor.
SET_UP: dict[str, Callable[[], None]] = {"node": _node_ready}


def _node_release(spec: str) -> list[str]:
    from harness.drivers.executor.node_release import installed_driver

    return [*_NODE, "--driver-module", str(installed_driver(spec))]


def _java_release(release: str) -> list[str]:
    from harness.drivers.java.build import executor_command

    return executor_command(release)


def _go_release(release: str) -> list[str]:
    from harness.drivers.go.build import executor_command

    return executor_command(release)


def _rust_release(release: str) -> list[str]:
    from harness.drivers.rust.build import executor_command

    return executor_command(release)


#: ``--driver NAME`` -> a function giving the executor's command line once the executor is built (on first use,
#: then from the harness's cache): the Java, Go and Rust executors are compiled against their pinned driver release.
BUILT_EXECUTORS: dict[str, Callable[[], list[str]]] = {
    "java": lambda: _java_release(""),
    "go": lambda: _go_release(""),
    "rust": lambda: _rust_release(""),
}


def _as_written(command: str) -> str:
    """``exec:CMD`` as written: the adapter splits it as a shell would and records it unchanged."""
    return command


def _node_module(path: str) -> list[str]:
    return [*_NODE, "--driver-module", str(Path(path).expanduser().resolve())]


#: ``--driver PREFIX+ARGUMENT`` -> the executor's command line for ARGUMENT: ``exec:CMD``, any executor (split as a
#: shell would); ``node@SPEC``, the npm ``mongodb`` release SPEC (installed once into the harness's cache folder);
#: ``node=PATH``, the Node driver in a ``node_modules/mongodb`` folder of one's own; ``java@VERSION``,
#: ``go@VERSION`` and ``rust@VERSION``, the Java, Go or Rust executor built against that driver release (an empty
#: release: the pinned one).
DRIVER_SCHEMES: dict[str, Callable[[str], str | list[str]]] = {
    "exec:": _as_written,
    "node@": _node_release,
    "node=": _node_module,
    "java@": _java_release,
    "go@": _go_release,
    "rust@": _rust_release,
}


def executor_command(driver: str) -> str | list[str] | None:
    """The command line ``--driver DRIVER`` runs its executor with (set up, or built, first: a machine that cannot
    run it raises ``DriverUnavailable`` with the command that installs what is missing); None when ``DRIVER`` names
    no executor (an in-process driver, or a name the harness does not know). ``harness executor-check --driver``
    checks the very executor ``harness run --driver`` would start."""
    if driver in KNOWN_EXECUTORS:
        SET_UP.get(driver, lambda: None)()
        return KNOWN_EXECUTORS[driver]
    if driver in BUILT_EXECUTORS:
        from harness.drivers.executor.set_up import built

        built(BUILT_EXECUTORS[driver])()  # a failed build refuses, as a run's set-up does
        return BUILT_EXECUTORS[driver]()  # from the harness's cache now
    for prefix, scheme in DRIVER_SCHEMES.items():
        if driver.startswith(prefix):
            return scheme(driver[len(prefix) :])
    return None
