"""The matrix a QA engineer asks for, from a small YAML file and/or flags, validated before anything runs.

Its axes are open: drivers (any ``--driver`` the harness has, each at a
release: ``pymongo@4.18.3``, ``node@6.10.0``, ``java@5.14.0``, ``go@2.10.0``)
x targets (SecantusDB targets at each ``secantusdb`` release,
``mongo-java-server=RELEASE``, and real servers taken as they are) x repeats,
running the main job's suites (legacy, unified, the supplementary scenarios,
prose, code-defined checks) in ``--strict`` mode.

The axes' vocabulary is the plug-in table's catalogue (:mod:`harness.matrix.catalogue`): which drivers there
are and how each gets a release, which targets are SecantusDB's, have a release in their argument, or are real
servers, and which suites the main job runs. Nothing here names a driver or a target.

Every key can come from the file (``--matrix FILE``) or from a flag; a flag
overrides the file. Every value is checked up front and an error names where
the bad value came from (``matrix.yml: pymongo[1]`` or ``--pymongo``), because
a typo found after an hour of environment builds is an hour lost. Versions are
checked as PEP 440 versions only: whether a release exists, or resolves with
the harness's pins, is for the installer to say (a cell that cannot be built
is a result, not a definition error).

The matrix id is a hash of what decides the results of a repeat (versions,
targets, suites, spec paths, campaign, ``-k``, timeout); ``repeat`` and
``jobs`` are left out so a finished matrix can be extended with more repeats
in the same output directory.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.core.ports import TargetUnavailable
from harness.formats.data_yaml import load_data_yaml
from harness.formats.strict_reader import InputError
from harness.matrix import catalogue
from harness.shared.connection_strings import redact as redact_uri


def spec_suites() -> tuple[str, ...]:
    """The suites that are spec files (``--specs`` sources): the spec suite's parts."""
    return tuple(catalogue.spec_parts())


def run_suites() -> tuple[str, ...]:
    """The suites ``harness run`` names itself (``--suite prose,checks``)."""
    return catalogue.run_suites()


def suites() -> tuple[str, ...]:
    """The suites a cell runs, in the main job's order (default: all of them, as ``harness run --suite all`` with
    the main job's ``--specs``)."""
    return (*spec_suites(), *run_suites())


#: A driver release: letters, digits and the characters versions and npm ranges use (``6.10.0``, ``6.x``).
_RELEASE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+~^*<>=| _-]*$")
#: How a default spec source is named in the matrix id.
MAIN_JOB = "main job"
#: A short seeded campaign unless the definition says otherwise.
CAMPAIGN_DEFAULTS = {"events": 300, "faults": 5, "seed": 42}


class DefinitionError(ValueError):
    """The matrix definition is wrong; the message names the file and key, or the flag."""


@dataclass(frozen=True)
class Campaign:
    events: int
    faults: int
    seed: int
    kinds: tuple[str, ...] = ()

    def arguments(self) -> list[str]:
        """The ``harness campaign`` flags for this campaign."""
        args = ["--events", str(self.events), "--faults", str(self.faults), "--seed", str(self.seed)]
        return args + (["--kinds", ",".join(self.kinds)] if self.kinds else [])


@dataclass(frozen=True)
class Driver:
    """One entry of the driver axis: a driver name and the release asked for (None: the one the harness pins)."""

    name: str
    release: str | None = None

    @property
    def package(self) -> str | None:
        """The package a cell installs at this driver's release (``pymongo``); None: the harness builds it."""
        return catalogue.environment_package(self.name)

    def __str__(self) -> str:
        return self.name if self.release is None else f"{self.name}@{self.release}"


@dataclass
class MatrixDefinition:
    drivers: tuple[Driver, ...]
    #: ``None`` stands for the release the harness's own pins resolve to.
    secantusdb: tuple[str | None, ...]
    targets: tuple[str, ...]
    servers: tuple[str, ...]
    suites: tuple[str, ...]
    #: Suite -> ``--specs`` value: a path, or a source (``project:...``, ``pypi:...``, ``git:...``).
    specs: dict[str, str] = field(default_factory=dict)
    #: Suite -> the source as the definition gave it (``main job`` for a default): what the matrix id hashes, so
    #: that the same definition has the same id on every machine, wherever its checkout is.
    spec_names: dict[str, str] = field(default_factory=dict)
    campaign: Campaign | None = None
    keyword: str | None = None
    timeout: float | None = None
    repeat: int = 1
    jobs: int = 1
    #: ``harness run -j`` inside each cell.
    workers: int = 1
    #: ``--iteration-mode`` of each cell (docs/executor-protocol.md 6.4.1): every driver x target cell once per mode
    #: listed; empty: once, in each driver's default mode (no ``--iteration-mode`` given).
    iteration_modes: tuple[str, ...] = ()

    def identity(self) -> dict[str, Any]:
        """What decides the results of one repeat; the matrix id hashes it."""
        return {
            "drivers": [str(driver) for driver in self.drivers],
            "secantusdb": list(self.secantusdb),
            "targets": list(self.targets),
            "servers": list(self.servers),
            "suites": list(self.suites),
            "specs": dict(sorted((self.spec_names or self.specs).items())),
            "campaign": None
            if self.campaign is None
            else {
                "events": self.campaign.events,
                "faults": self.campaign.faults,
                "seed": self.campaign.seed,
                "kinds": list(self.campaign.kinds),
            },
            "keyword": self.keyword,
            "timeout": self.timeout,
            # Only when given: a definition without modes keeps the id it had before modes existed.
            **({"iteration_modes": list(self.iteration_modes)} if self.iteration_modes else {}),
        }

    @property
    def matrix_id(self) -> str:
        digest = hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()
        return f"m-{digest[:12]}"

    def describe(self) -> dict[str, Any]:
        """The definition as the manifest keeps it (connection strings without passwords)."""
        described = self.identity()
        described["servers"] = [redact_uri(server) for server in self.servers]
        return {**described, "repeat": self.repeat, "jobs": self.jobs, "workers": self.workers}


# -- one parser per key: (raw value, where it came from, directory relative paths are taken from) -> value


def _items(value: Any, where: str, *, split: bool = True) -> list[str]:
    """A list of strings from ``"a,b"`` (flags) or a YAML list; YAML numbers are refused (``4.20`` reads as 4.2)."""
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",")] if split else [value.strip()]
    elif isinstance(value, list):
        items = []
        for index, item in enumerate(value):
            if not isinstance(item, str):
                hint = f"; quote it ('{item}')" if isinstance(item, (int, float)) else ""
                raise DefinitionError(f"{where}[{index}]: {item!r} is a {type(item).__name__}, not a string{hint}")
            items.append(item.strip())
    else:
        raise DefinitionError(f"{where}: expected a list or a comma-separated string, got {type(value).__name__}")
    if not items or any(not item for item in items):
        raise DefinitionError(f"{where}: empty entry in {value!r}")
    duplicates = sorted({item for item in items if items.count(item) > 1})
    if duplicates:
        raise DefinitionError(f"{where}: listed more than once: {', '.join(duplicates)}")
    return items


def _versions(value: Any, where: str, base: Path) -> tuple[str, ...]:
    # Imported here: ``harness run`` builds the whole parser, this module included, and needs no packaging.
    from packaging.version import InvalidVersion, Version

    items = _items(value, where)
    for item in items:
        try:
            Version(item)
        except InvalidVersion:
            raise DefinitionError(f"{where}: {item!r} is not a version (PEP 440, e.g. 4.18.3 or 0.7.0b2)") from None
    if len({Version(item) for item in items}) != len(items):  # 4.9 and 4.9.0 are one release
        raise DefinitionError(f"{where}: the same version listed twice under different spellings: {value!r}")
    return tuple(items)


def _drivers(value: Any, where: str, base: Path) -> tuple[Driver, ...]:
    """``pymongo@4.18.3,node@6.10.0,java,go@2.10.0``: a name the harness runs, and optionally a release."""
    drivers = []
    for item in _items(value, where):
        name, at, release = item.partition("@")
        entry = catalogue.driver(name)
        if entry is None:
            raise DefinitionError(f"{where}: unknown driver {name!r}; drivers: {', '.join(catalogue.driver_names())}")
        if at and entry.releases is None:
            raise DefinitionError(f"{where}: {item!r}: the {name} driver has only the release the harness pins")
        if at and not _RELEASE.match(release):
            example = entry.releases.example if entry.releases else ""
            raise DefinitionError(f"{where}: {item!r}: {release!r} is not a release (e.g. {name}@{example})")
        if at and entry.releases is not None and entry.releases.package is not None:
            _versions(release, f"{where}: {name}", base)
        drivers.append(Driver(name, release if at else None))
    return tuple(drivers)


def _pymongo(value: Any, where: str, base: Path) -> tuple[Driver, ...]:
    """``--pymongo V1,V2``: shorthand for ``--driver pymongo@V1,pymongo@V2``."""
    return tuple(Driver("pymongo", version) for version in _versions(value, where, base))


def _targets(value: Any, where: str, base: Path) -> tuple[str, ...]:
    """SecantusDB targets and ``mongo-java-server[=RELEASE,...]``; a real server given here goes to ``servers``."""
    targets = []
    for item in _items(value if isinstance(value, list) else _split_targets(value, where), where, split=False):
        name, _, argument = item.partition("=")
        if catalogue.is_server(name):
            targets.append(_server(item, where))
        elif catalogue.target(name) is not None:
            _matrix_argument(name, argument or None, where)
            targets.append(item)
        else:
            raise DefinitionError(f"{where}: unknown target {name!r}; targets: {', '.join(_target_names())}")
    return tuple(targets)


def _target_names() -> list[str]:
    return [*catalogue.secantus_targets(), *catalogue.released_targets(), *catalogue.server_targets()]


def _matrix_argument(name: str, argument: str | None, where: str) -> str | None:
    """The argument a cell of target ``name`` runs with, checked by the target's entry before anything is built."""
    entry = catalogue.target(name)
    assert entry is not None
    try:
        return entry.checked_matrix_argument(argument)
    except TargetUnavailable as exc:
        raise DefinitionError(f"{where}: {exc}") from None


def _split_targets(value: Any, where: str) -> list[str]:
    """``embedded,mongo-java-server=1.47.0,server=6.0``: a comma starts a new target only before a target name
    (a ``mongo-java-server`` argument has commas of its own)."""
    if not isinstance(value, str):
        raise DefinitionError(f"{where}: expected a list or a comma-separated string, got {type(value).__name__}")
    names = _target_names()
    targets: list[str] = []
    for part in value.split(","):
        if targets and part.strip().partition("=")[0] not in names:
            targets[-1] += f",{part.strip()}"
        else:
            targets.append(part.strip())
    return targets


def _server(item: str, where: str) -> str:
    """A real server as a cell runs it: its entry checks (and may complete) the argument."""
    name, _, argument = item.partition("=")
    if not catalogue.is_server(name):
        servers = " or ".join(
            f"{server}[={entry.argument}]" if (entry := catalogue.target(server)) and entry.argument else server
            for server in catalogue.server_targets()
        )
        raise DefinitionError(f"{where}: a server is {servers}, got {item!r}")
    checked = _matrix_argument(name, argument or None, where)
    return name if checked is None else f"{name}={checked}"


def _servers(value: Any, where: str, base: Path) -> tuple[str, ...]:
    # Never split on commas: a connection string lists hosts with them.
    raw = value if isinstance(value, list) else [value]
    items = [item for entry in raw for item in _items(entry, where, split=False)]
    return tuple(_server(item, where) for item in items)


def _suites(value: Any, where: str, base: Path) -> tuple[str, ...]:
    items = _items(value, where)
    known = suites()
    unknown = [item for item in items if item not in known]
    if unknown:
        raise DefinitionError(f"{where}: unknown suite(s) {', '.join(unknown)}; suites: {', '.join(known)}")
    return tuple(suite for suite in known if suite in items)


def _source(value: Any, where: str, base: Path) -> str:
    """A ``--specs`` value: a source (``project:``, ``pypi:``, ``git:``) as written, or a path made absolute."""
    if not isinstance(value, str) or not value.strip():
        raise DefinitionError(f"{where}: expected a path or a spec source, got {value!r}")
    if catalogue.is_source(value.strip()):
        return value.strip()
    path = (base / Path(value).expanduser()).resolve()
    if not path.exists():
        raise DefinitionError(f"{where}: {path} does not exist")
    return str(path)


def _count(value: Any, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise DefinitionError(f"{where}: expected a whole number, got {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise DefinitionError(f"{where}: expected a whole number, got {value!r}") from None
    if number < minimum:
        raise DefinitionError(f"{where}: must be at least {minimum}, got {number}")
    return number


def _positive(value: Any, where: str, base: Path) -> int:
    return _count(value, where, 1)


def _seconds(value: Any, where: str, base: Path) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise DefinitionError(f"{where}: expected a number of seconds, got {value!r}") from None
    if isinstance(value, bool) or seconds <= 0:
        raise DefinitionError(f"{where}: must be a positive number of seconds, got {value!r}")
    return seconds


def _iteration_modes(value: Any, where: str, base: Path) -> tuple[str, ...]:
    """``next,tryNext``: names from the vocabulary (:data:`harness.core.ports.ITERATION_MODES`); whether a cell's
    driver offers a mode is for its run to say (a driver that does not is refused at start: exit 2, the cell fails
    naming the driver's modes)."""
    from harness.core.ports import ITERATION_MODES

    items = _items(value, where)
    unknown = [item for item in items if item not in ITERATION_MODES]
    if unknown:
        raise DefinitionError(
            f"{where}: unknown iteration mode(s) {', '.join(unknown)}; modes: {', '.join(ITERATION_MODES)}"
        )
    return tuple(items)


def _keyword(value: Any, where: str, base: Path) -> str:
    if not isinstance(value, str) or not value:
        raise DefinitionError(f"{where}: expected the text test ids must contain, got {value!r}")
    return value


def _campaign(value: Any, where: str, base: Path) -> Campaign | None:
    """``events=300,faults=5,seed=7[,kinds=a+b]`` or a YAML mapping; ``off`` turns a file's campaign off."""
    if isinstance(value, str) and value.strip().lower() in ("off", "none", "no"):
        return None
    if isinstance(value, str):
        pairs = [part.partition("=") for part in value.split(",") if part.strip()]
        if any(not sep for _, sep, _ in pairs):
            raise DefinitionError(f"{where}: expected KEY=VALUE pairs (events=300,faults=5,seed=7), got {value!r}")
        fields: dict[str, Any] = {key.strip(): item.strip() for key, _, item in pairs}
    elif isinstance(value, dict):
        fields = dict(value)
    else:
        raise DefinitionError(f"{where}: expected events=N,faults=N,seed=N or a mapping, got {value!r}")
    unknown = sorted(set(fields) - {*CAMPAIGN_DEFAULTS, "kinds"})
    if unknown:
        raise DefinitionError(
            f"{where}: unknown campaign key(s) {', '.join(unknown)}; keys: events, faults, seed, kinds"
        )
    numbers = {
        key: _count(fields.get(key, default), f"{where}.{key}", 0 if key != "events" else 1)
        for key, default in CAMPAIGN_DEFAULTS.items()
    }
    return Campaign(**numbers, kinds=_kinds(fields.get("kinds"), f"{where}.kinds"))


def _kinds(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    known = catalogue.campaign_kinds()
    kinds = value.replace("+", ",") if isinstance(value, str) else value
    items = _items(kinds, where)
    unknown = [kind for kind in items if kind not in known]
    if unknown:
        raise DefinitionError(f"{where}: unknown fault kind(s) {', '.join(unknown)}; kinds: {', '.join(known)}")
    return tuple(items)


def default_sources() -> dict[str, str]:
    """Each spec suite's default: the main job's sources (the spec suite's parts), the same whatever the working
    directory."""
    return catalogue.spec_parts()


#: For the help text: where a part's default comes from, without looking at the disk.
_DEFAULT_SOURCE = {
    "legacy": "../shared/specs/upstream/legacy beside the checkout",
    "unified": "../shared/specs/upstream/unified beside the checkout",
    "supplementary": "project:scenarios/supplementary",
}


@dataclass(frozen=True)
class Field:
    """One key of the definition: its YAML key, its flag (the CLI is generated from this table), its parser."""

    key: str
    flag: str
    dest: str
    parse: Callable[[Any, str, Path], Any]
    metavar: str
    help: str
    repeatable: bool = False


def _driver_help() -> str:
    """The ``--driver`` help: the catalogue's drivers, and a release of each way releases are got."""
    examples: dict[str, str] = {}
    for name in catalogue.driver_names():
        entry = catalogue.driver(name)
        if entry is not None and entry.releases is not None:
            examples.setdefault(entry.releases.how, f"{name}@{entry.releases.example}")
    return (
        f"drivers under test, each NAME[@RELEASE]: {', '.join(catalogue.driver_names())} (e.g. "
        f"{','.join(examples.values())}; no release: the one the harness pins)"
    )


@functools.cache
def fields() -> tuple[Field, ...]:
    """The definition's keys; built on first use, from the catalogue (the CLI is generated from them)."""
    return (
        Field(
            "drivers",
            "--driver",
            "drivers",
            _drivers,
            "D1,D2",
            _driver_help(),
        ),
        Field("pymongo", "--pymongo", "pymongo", _pymongo, "V1,V2", "shorthand: --driver pymongo@V1,pymongo@V2"),
        Field(
            "secantusdb",
            "--secantusdb",
            "secantusdb",
            _versions,
            "V1,V2",
            "SecantusDB releases for its targets (default: the release the harness's pins resolve to)",
        ),
        Field(
            "targets",
            "--target",
            "targets",
            _targets,
            "T1,T2",
            _target_help(),
        ),
        Field(
            "servers",
            "--server",
            "servers",
            _servers,
            "testcontainers=IMAGE|uri=URI",
            "a real server, taken as it is (repeatable); its cells use the pinned SecantusDB",
            repeatable=True,
        ),
        Field(
            "suites", "--suites", "suites", _suites, "S1,S2", f"of {','.join(suites())} (default: all, the main job)"
        ),
        *(
            Field(
                f"specs-{suite}",
                f"--specs-{suite}",
                f"specs_{suite}",
                _source,
                "PATH|SOURCE",
                f"the {suite} spec files (default: the main job's, {_DEFAULT_SOURCE.get(suite, 'the spec suite')})",
            )
            for suite in spec_suites()
        ),
        Field(
            "campaign",
            "--campaign",
            "campaign",
            _campaign,
            "events=N,faults=N,seed=N",
            "also a short seeded fault campaign per repeat (SecantusDB targets); 'off' for none",
        ),
        Field("repeat", "--repeat", "repeat", _positive, "N", "runs per cell (default 1)"),
        Field("jobs", "--jobs", "jobs", _positive, "N", "cells at a time (default 1)"),
        Field("workers", "--workers", "workers", _positive, "N", "harness run -j inside each cell (default 1)"),
        Field(
            "iteration_modes",
            "--iteration-modes",
            "iteration_modes",
            _iteration_modes,
            "M1,M2",
            "each cell once per iteration mode (next, tryNext, iterator, emitter, stream; passed to harness run as "
            "--iteration-mode); default: each driver's own default mode",
        ),
        Field("keyword", "-k", "keyword", _keyword, "TEXT", "passed to harness run: only test ids containing it"),
        Field("timeout", "--timeout", "timeout", _seconds, "SECONDS", "passed to harness run: the per-test timeout"),
    )


def _target_help() -> str:
    released = [
        f"{name}[={entry.argument}]" for name in catalogue.released_targets() if (entry := catalogue.target(name))
    ]
    return (
        f"targets: SecantusDB's ({', '.join(catalogue.secantus_targets())}), {', '.join(released)}, or a real "
        "server (default: embedded)"
    )


def read_matrix_file(path: Path) -> dict[str, Any]:
    """The file's mapping, or a DefinitionError naming the file, the line and the problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DefinitionError(f"--matrix {path}: cannot read it: {exc.strerror}") from None
    try:
        data = load_data_yaml(text)
    except InputError as exc:  # a key twice, a number that is not finite
        raise DefinitionError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" line {mark.line + 1}" if mark is not None else ""
        raise DefinitionError(f"{path}:{at} not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise DefinitionError(f"{path}: expected a mapping of keys ({', '.join(f.key for f in fields())})")
    known = {f.key for f in fields()}
    unknown = sorted(str(key) for key in data if key not in known)
    if unknown:
        raise DefinitionError(f"{path}: unknown key(s) {', '.join(unknown)}; known keys: {', '.join(sorted(known))}")
    return data


def load_definition(matrix_file: Path | None, flags: Any, cwd: Path) -> MatrixDefinition:
    """The definition from the file (if any) with every flag that was given laid over it."""
    values: dict[str, Any] = {}
    given: dict[str, str] = {}
    written: dict[str, Any] = {}
    if matrix_file is not None:
        data = read_matrix_file(matrix_file)
        for f in fields():
            if f.key in data:
                values[f.key] = f.parse(data[f.key], f"{matrix_file}: {f.key}", matrix_file.resolve().parent)
                given[f.key], written[f.key] = f"{matrix_file}: {f.key}", data[f.key]
    for f in fields():
        raw = getattr(flags, f.dest, None)
        if raw is not None and raw != []:
            values[f.key] = f.parse(raw, f.flag, cwd)
            given[f.key], written[f.key] = f.flag, raw
    return _assemble(values, given, written)


def _assemble(values: dict[str, Any], given: dict[str, str], written: dict[str, Any]) -> MatrixDefinition:
    drivers = _merge_drivers(values.get("drivers", ()), values.get("pymongo", ()), given)
    if not drivers:
        raise DefinitionError(
            "no drivers: give --driver pymongo,node@6.10.0 (or drivers: in the --matrix file; --pymongo V1,V2 "
            "is shorthand for pymongo releases)"
        )
    chosen = values.get("targets", ())
    servers = tuple(dict.fromkeys((*values.get("servers", ()), *(t for t in chosen if catalogue.is_server(_name(t))))))
    targets = tuple(t for t in chosen if not catalogue.is_server(_name(t)))
    if not targets and not servers:
        targets = ("embedded",)
    secantus_targets = [t for t in targets if catalogue.is_secantus(_name(t))]
    if values.get("secantusdb") and not secantus_targets:
        raise DefinitionError(
            f"{given['secantusdb']}: SecantusDB versions need a SecantusDB --target "
            f"({', '.join(catalogue.secantus_targets())})"
        )
    chosen_suites = values.get("suites", suites())
    parts = spec_suites()
    defaults = default_sources() if any(f"specs-{s}" not in values for s in chosen_suites if s in parts) else {}
    specs = {suite: values.get(f"specs-{suite}") or defaults[suite] for suite in chosen_suites if suite in parts}
    names = {suite: str(written.get(f"specs-{suite}", MAIN_JOB)) for suite in specs}
    return MatrixDefinition(
        drivers=drivers,
        secantusdb=values.get("secantusdb") or ((None,) if secantus_targets else ()),
        targets=targets,
        servers=servers,
        suites=chosen_suites,
        specs=specs,
        spec_names=names,
        campaign=values.get("campaign"),
        keyword=values.get("keyword"),
        timeout=values.get("timeout"),
        repeat=values.get("repeat", 1),
        jobs=values.get("jobs", 1),
        workers=values.get("workers", 1),
        iteration_modes=values.get("iteration_modes", ()),
    )


def _name(target: str) -> str:
    return target.partition("=")[0]


def _merge_drivers(
    drivers: tuple[Driver, ...], pymongo: tuple[Driver, ...], given: dict[str, str]
) -> tuple[Driver, ...]:
    """``--driver`` and the ``--pymongo`` shorthand together, each driver once."""
    merged = tuple(dict.fromkeys((*drivers, *pymongo)))
    if len(merged) < len(drivers) + len(pymongo):
        twice = sorted(str(d) for d in set(drivers) & set(pymongo))
        raise DefinitionError(f"{given['pymongo']} and {given['drivers']}: listed in both: {', '.join(twice)}")
    from packaging.version import Version

    releases = [(d.name, Version(d.release) if d.release and d.package is not None else d.release) for d in merged]
    if len(set(releases)) != len(releases):
        where = " and ".join(given[key] for key in ("drivers", "pymongo") if key in given)
        raise DefinitionError(
            f"{where}: the same version listed twice under different spellings: {', '.join(map(str, merged))}"
        )
    return merged
