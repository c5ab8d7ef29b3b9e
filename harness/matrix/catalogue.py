"""What ``harness matrix`` reads from the plug-in table's catalogue: its axes are the catalogue's drivers and targets.

A driver's release axis is its entry's releases: installed into the cell's environment (``releases.package``:
the pymongo drivers) or got by the harness when the run names ``NAME@RELEASE`` (Node, Java, Go, Rust). A target
is one of three kinds, by its entry's releases: SecantusDB's (the cell installs the ``secantusdb`` release of the
matrix's ``secantusdb`` axis), one with its release in its argument (``mongo-java-server=1.47.0``), or a real
server taken as it is (no releases). The suites are the spec suite's parts (``legacy``, ``unified``,
``supplementary``) then the other suites ``--suite all`` runs (``prose``, ``checks``). Nothing here names a
driver or a target: a new one in the catalogue is in the matrix.
"""

from __future__ import annotations

from harness.engine.plugins import DriverEntry, Registry, Suite, TargetEntry, load_plugins

#: The matrix's SecantusDB axis: the package its SecantusDB targets' releases are.
SECANTUSDB = "secantusdb"
#: The command a matrix's campaign runs, and the option whose values it checks up front.
CAMPAIGN_COMMAND = "campaign"


def registry() -> Registry:
    return load_plugins()


def driver(name: str) -> DriverEntry | None:
    return registry().drivers.get(name)


def driver_names() -> list[str]:
    return sorted(registry().drivers)


def environment_package(name: str) -> str | None:
    """The package a cell installs at the driver's release (``pymongo``); None: the harness builds the release."""
    entry = driver(name)
    return entry.releases.package if entry is not None and entry.releases is not None else None


def target(name: str) -> TargetEntry | None:
    return registry().targets.get(name)


def secantus_targets() -> list[str]:
    """Targets whose release is the SecantusDB one installed in the cell (the ``secantusdb`` axis)."""
    return [t.name for t in registry().targets.values() if t.releases is not None and t.releases.package == SECANTUSDB]


def released_targets() -> list[str]:
    """Targets with a release of their own in their argument (``mongo-java-server=1.47.0``)."""
    return [t.name for t in registry().targets.values() if t.releases is not None and t.releases.package is None]


def server_targets() -> list[str]:
    """Real servers, taken as they are."""
    return [t.name for t in registry().targets.values() if t.releases is None]


def is_secantus(target_name: str) -> bool:
    return target_name in secantus_targets()


def is_server(target_name: str) -> bool:
    return target_name in server_targets()


def _spec_suite() -> Suite:
    for suite in registry().suites.values():
        if suite.parts is not None:
            return suite
    raise LookupError("no suite of spec files is installed (the spec suite plug-in)" + _problems())


def spec_parts() -> dict[str, str]:
    """The spec suite's parts, each with the main job's source for it."""
    parts = _spec_suite().parts
    assert parts is not None
    return parts()


def run_suites() -> tuple[str, ...]:
    """The other suites ``--suite all`` runs, in its order (``prose``, ``checks``)."""
    suites = sorted(registry().suites.values(), key=lambda suite: suite.order)
    return tuple(suite.name for suite in suites if suite.in_all and suite.parts is None)


def is_source(text: str) -> bool:
    """Whether a ``--specs`` value is a source to fetch (``project:``, ``pypi:``, ``git:``) rather than a path."""
    check = _spec_suite().is_source
    return check is not None and check(text)


def campaign_kinds() -> tuple[str, ...]:
    command = registry().commands.get(CAMPAIGN_COMMAND)
    if command is None or command.choices is None:
        raise LookupError("the campaign plug-in is not installed" + _problems())
    return command.choices()["kinds"]


def _problems() -> str:
    problems = registry().problems
    return f" (plug-ins not installed: {'; '.join(problems)})" if problems else ""
