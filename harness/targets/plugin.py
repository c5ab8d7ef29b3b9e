"""Plug-in: the targets, by the name ``--target`` takes: ``NAME`` or ``NAME=ARGUMENT``.

``embedded``            SecantusDB in-process, in-memory (the default)
``embedded-no-test-commands``  the same, refusing ``configureFailPoint`` (fail points are emulated)
``secantusdb-daemon[=test-commands]``  SecantusDB as a separate process, test commands off by default
``uri=<connection>``    any running deployment
``testcontainers[=image]``  a real mongod replica set in Docker (needs a Docker engine)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.core.ports import Target, TargetUnavailable


def _embedded(argument: str | None) -> Target:
    from harness.targets.embedded import EmbeddedSecantus

    if argument:
        return EmbeddedSecantus(storage_path=argument)
    return EmbeddedSecantus()


def _embedded_without_test_commands(argument: str | None) -> Target:
    """SecantusDB as an operator would expose it: ``configureFailPoint`` refused."""
    from harness.targets.embedded import EmbeddedSecantus

    return EmbeddedSecantus(storage_path=argument or ":memory:", enable_test_commands=False)


def _daemon(argument: str | None) -> Target:
    """``secantusdb-daemon`` (test commands off) or ``secantusdb-daemon=test-commands``."""
    from harness.targets.daemon import SecantusDaemon

    if argument not in (None, "test-commands"):
        raise TargetUnavailable(f"secantusdb-daemon takes no argument or 'test-commands', got {argument!r}")
    return SecantusDaemon(test_commands=argument == "test-commands")


def _uri(argument: str | None) -> Target:
    from harness.targets.uri_target import UriTarget

    if not argument:
        raise TargetUnavailable("--target uri=<connection string> needs a connection string")
    return UriTarget(argument)


def _testcontainers(argument: str | None) -> Target:
    from harness.targets.containers import MongoContainerTarget

    return MongoContainerTarget(image=argument or "mongo:8.0")


#: name -> (factory, one line of help), as ``--target NAME[=ARGUMENT]`` takes them.
TARGETS: dict[str, tuple[Callable[[str | None], Target], str]] = {
    "embedded": (_embedded, "SecantusDB in-process (=PATH: on-disk storage)"),
    "embedded-no-test-commands": (_embedded_without_test_commands, "the same, refusing configureFailPoint"),
    "secantusdb-daemon": (_daemon, "SecantusDB as a separate process (=test-commands to allow fail points)"),
    "uri": (_uri, "any running deployment, by connection string"),
    "testcontainers": (_testcontainers, "a real mongod replica set in Docker (=IMAGE, default mongo:8.0)"),
}


#: Deployments the user runs: parallel workers would share them.
SHARED = ("uri",)
#: In-process servers: opening storage once in the parent makes each forked worker's first open cheap.
IN_PROCESS = ("embedded", "embedded-no-test-commands")


def _warm_up_embedded() -> None:
    from harness.targets.embedded import warm_up

    warm_up()


def install(registry: Any) -> None:
    for name, (factory, help_text) in TARGETS.items():
        registry.add_target(
            name,
            factory,
            help_text,
            isolated=name not in SHARED,
            warm_up=_warm_up_embedded if name in IN_PROCESS else None,
        )
