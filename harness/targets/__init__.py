"""Targets by the name ``--target`` takes: ``NAME`` or ``NAME=ARGUMENT``.

``embedded``            SecantusDB in-process, in-memory (the default)
``embedded-no-test-commands``  the same, refusing ``configureFailPoint`` (fail points are emulated)
``secantusdb-daemon[=test-commands]``  SecantusDB as a separate process, test commands off by default
``uri=<connection>``    any running deployment
``testcontainers[=image]``  a real mongod replica set in Docker (needs a Docker engine)
"""

from __future__ import annotations

from collections.abc import Callable

from harness.targets.base import Target, TargetInfo, TargetUnavailable


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
    from harness.targets.uri import UriTarget

    if not argument:
        raise TargetUnavailable("--target uri=<connection string> needs a connection string")
    return UriTarget(argument)


def _testcontainers(argument: str | None) -> Target:
    from harness.targets.containers import MongoContainerTarget

    return MongoContainerTarget(image=argument or "mongo:8.0")


TARGETS: dict[str, Callable[[str | None], Target]] = {
    "embedded": _embedded,
    "embedded-no-test-commands": _embedded_without_test_commands,
    "secantusdb-daemon": _daemon,
    "uri": _uri,
    "testcontainers": _testcontainers,
}


def make_target(spec: str) -> Target:
    """``"uri=mongodb://..."`` -> a :class:`Target` (not yet started)."""
    name, _, argument = spec.partition("=")
    factory = TARGETS.get(name)
    if factory is None:
        raise TargetUnavailable(f"unknown target {name!r}; known targets: {', '.join(sorted(TARGETS))}")
    return factory(argument or None)


__all__ = ["TARGETS", "Target", "TargetInfo", "TargetUnavailable", "make_target"]
