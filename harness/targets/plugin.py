"""Plug-in: the targets, by the name ``--target`` takes: ``NAME`` or ``NAME=ARGUMENT``.

``embedded[=PATH]``      SecantusDB in-process, in-memory (the default), or on disk at PATH
``embedded-on-disk[=PATH]``  the same on disk: in a scratch directory removed at the end, or at PATH
``embedded-standalone``  the same as a standalone server (``single`` topology; change streams refused)
``embedded-no-test-commands[=PATH]``  the same, refusing ``configureFailPoint`` (fail points are emulated)
``secantusdb-daemon[=test-commands,standalone,on-disk]``  SecantusDB as a separate process, test commands
                        off by default; any of the switches, comma-separated
``uri=<connection>``    any running deployment
``testcontainers[=image]``  a real mongod replica set in Docker (needs a Docker engine)
``mongo-java-server[=RELEASE][,server=X.Y][,present=replicaset]``  the mongo-java-server emulator (Java)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.core.ports import Target, TargetUnavailable
from harness.engine.plugins import Releases, TargetEntry


def _embedded(argument: str | None) -> Target:
    from harness.targets.embedded import EmbeddedSecantus

    if argument:
        return EmbeddedSecantus(storage_path=argument)
    return EmbeddedSecantus()


def _embedded_on_disk(argument: str | None) -> Target:
    """On-disk storage, restartable (fault campaigns): at PATH (kept), or in a scratch directory (removed)."""
    from harness.targets.embedded import EmbeddedSecantus

    if argument:
        return EmbeddedSecantus(storage_path=argument)
    return EmbeddedSecantus(scratch_storage=True)


def _embedded_standalone(argument: str | None) -> Target:
    """A standalone server: the ``single``-topology tests get verdicts; its own expected outcomes file."""
    from harness.targets.embedded import EmbeddedSecantus

    return EmbeddedSecantus(STANDALONE_NAME, storage_path=argument or ":memory:", standalone=True)


def _embedded_without_test_commands(argument: str | None) -> Target:
    """SecantusDB as an operator would expose it: ``configureFailPoint`` refused."""
    from harness.targets.embedded import EmbeddedSecantus

    return EmbeddedSecantus(storage_path=argument or ":memory:", enable_test_commands=False)


#: ``secantusdb-daemon=...``'s switches, comma-separated.
DAEMON_SWITCHES = ("test-commands", "standalone", "on-disk")
#: The target name (so the expected-outcomes file) of a SecantusDB that says it is a standalone.
STANDALONE_NAME = "secantusdb-standalone"


def daemon_switches(argument: str | None) -> set[str]:
    """``test-commands,on-disk`` -> its switches; an unknown or repeated one is refused before anything starts."""
    given = [part.strip() for part in (argument or "").split(",") if part.strip()]
    unknown = [part for part in given if part not in DAEMON_SWITCHES]
    if unknown or len(set(given)) != len(given):
        raise TargetUnavailable(
            f"secantusdb-daemon takes any of {', '.join(DAEMON_SWITCHES)} (comma-separated, each once), "
            f"got {argument!r}"
        )
    return set(given)


def _daemon(argument: str | None) -> Target:
    """``secantusdb-daemon`` (test commands off, replica set, in memory) or with switches: ``=test-commands``,
    ``=standalone``, ``=on-disk``, comma-separated."""
    from harness.targets.daemon import SecantusDaemon

    switches = daemon_switches(argument)
    standalone = "standalone" in switches
    return SecantusDaemon(
        STANDALONE_NAME if standalone else "secantusdb",
        test_commands="test-commands" in switches,
        standalone=standalone,
        scratch_storage="on-disk" in switches,
    )


def _uri(argument: str | None) -> Target:
    from harness.targets.uri_target import UriTarget

    if not argument:
        raise TargetUnavailable("--target uri=<connection string> needs a connection string")
    return UriTarget(_from_environment(argument) if argument.startswith(URI_FROM_ENV) else argument)


#: ``--target uri=env:NAME``: the connection string is the environment variable NAME's value, so a URI holding a
#: password or a token never appears on a command line (``ps`` shows every process's), neither the user's nor
#: those of the runs ``harness certify`` and ``harness matrix`` start (they inherit the environment).
URI_FROM_ENV = "env:"


def _from_environment(argument: str) -> str:
    import os

    name = argument[len(URI_FROM_ENV) :]
    value = os.environ.get(name, "")
    if not name or not value:
        raise TargetUnavailable(f"--target uri={argument}: the environment variable {name!r} is not set or empty")
    return value


def _mongo_java_server(argument: str | None) -> Target:
    """``mongo-java-server[=RELEASE][,server=X.Y][,present=replicaset]`` (parsed in the target's module)."""
    from harness.targets.mongo_java_server import MongoJavaServer, parse_argument

    return MongoJavaServer(parse_argument(argument))


def _warm_up_mongo_java_server() -> None:
    from harness.targets.mongo_java_server import warm_up

    warm_up()


def _testcontainers(argument: str | None) -> Target:
    from harness.targets.containers import MongoContainerTarget

    return MongoContainerTarget(image=argument or DEFAULT_IMAGE)


def _warm_up_embedded() -> None:
    from harness.targets.embedded import warm_up

    warm_up()


#: The SecantusDB release a matrix cell installs into its environment (``harness matrix --secantusdb``).
SECANTUSDB_RELEASES = Releases("pip: secantusdb==VERSION in the matrix cell's environment", "0.7.0b3", "secantusdb")
#: ``secantusdb-daemon``'s arguments a matrix takes (a cell's deployment is its own: no path, each switch alone
#: or the test commands on disk).
DAEMON_MATRIX_ARGUMENTS = (None, "test-commands", "on-disk", "standalone", "test-commands,on-disk")
#: What testcontainers runs without an argument.
DEFAULT_IMAGE = "mongo:8.0"


def _daemon_matrix_argument(argument: str | None) -> str | None:
    if argument not in DAEMON_MATRIX_ARGUMENTS:
        raise TargetUnavailable(f"target secantusdb-daemon does not take {argument!r} in a matrix")
    return argument


def _mongo_java_server_matrix_argument(argument: str | None) -> str | None:
    from harness.targets.mongo_java_server import parse_argument

    parse_argument(argument)  # a bad release or switch is refused before anything is built
    return argument


def _image(argument: str | None) -> str | None:
    return argument or DEFAULT_IMAGE


def _uri_matrix_argument(argument: str | None) -> str | None:
    """A connection string as written (an SRV URI checked without resolving it); ``env:NAME`` is for runs."""
    from harness.shared.connection_strings import ConnectionStringError, validate

    if not (argument or "").startswith(("mongodb://", "mongodb+srv://")):
        raise TargetUnavailable("uri= needs a mongodb:// or mongodb+srv:// connection string")
    try:
        validate(str(argument))
    except ConnectionStringError as exc:
        raise TargetUnavailable(str(exc)) from None
    return argument


def _embedded_entry(name: str, help: str, make: Callable[[str | None], Target], argument: str = "") -> TargetEntry:
    """SecantusDB in the harness's process: storage opened once in a parent makes each forked worker's first open
    cheap; its release is the matrix cell's ``secantusdb``."""
    return TargetEntry(name, help, make, argument, warm_up=_warm_up_embedded, releases=SECANTUSDB_RELEASES)


TARGETS: tuple[TargetEntry, ...] = (
    _embedded_entry("embedded", "SecantusDB in-process (=PATH: on-disk storage)", _embedded, "PATH"),
    _embedded_entry(
        "embedded-on-disk", "the same on disk, restartable (scratch directory, or =PATH)", _embedded_on_disk, "PATH"
    ),
    _embedded_entry(
        "embedded-standalone", "the same as a standalone server (single topology)", _embedded_standalone, "PATH"
    ),
    _embedded_entry(
        "embedded-no-test-commands", "the same, refusing configureFailPoint", _embedded_without_test_commands, "PATH"
    ),
    TargetEntry(
        "secantusdb-daemon",
        "SecantusDB as a separate process (=test-commands,standalone,on-disk: any of them, comma-separated)",
        _daemon,
        ",".join(DAEMON_SWITCHES),
        releases=SECANTUSDB_RELEASES,
        matrix_argument=_daemon_matrix_argument,
    ),
    TargetEntry(
        "uri",
        "any running deployment, by connection string",
        _uri,
        "CONNECTION-STRING|env:NAME",
        isolated=False,  # a deployment the user runs: parallel workers would share it
        matrix_argument=_uri_matrix_argument,
    ),
    TargetEntry(
        "testcontainers",
        f"a real mongod replica set in Docker (=IMAGE, default {DEFAULT_IMAGE})",
        _testcontainers,
        "IMAGE",
        matrix_argument=_image,
        extras=("containers",),
    ),
    TargetEntry(
        "mongo-java-server",
        "the mongo-java-server emulator (=RELEASE[,server=X.Y][,present=replicaset]: a presented replica set)",
        _mongo_java_server,
        "RELEASE[,server=X.Y][,present=replicaset]",
        warm_up=_warm_up_mongo_java_server,
        releases=Releases("Maven: the RELEASE in its argument, resolved into the harness's cache", "1.47.0"),
        matrix_argument=_mongo_java_server_matrix_argument,
    ),
)


def _permit_destructive(target: Target, options: Any) -> Target:
    """Hand the run's ``--allow-destructive`` to a target the harness does not start (it refuses otherwise).

    Another plug-in's wrapper (Toxiproxy) may already hold the target as ``inner``: the flag goes to the
    connection-string target inside, which checks it when it starts, before it connects.
    """
    from harness.targets.safety import allowed_by
    from harness.targets.uri_target import UriTarget

    if allowed_by(options):
        found: Any = target
        while not isinstance(found, UriTarget) and found.inner is not None:
            found = found.inner
        if isinstance(found, UriTarget):
            found.allow_destructive = True
    return target


def install(registry: Any) -> None:
    registry.add_target_wrapper(_permit_destructive)
    for entry in TARGETS:
        registry.add_target(entry)
