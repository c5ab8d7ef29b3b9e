"""The matrix a QA engineer asks for, from a small YAML file and/or flags, validated before anything runs.

Its axes are open: drivers (any ``--driver`` the harness has, each at a
release: ``pymongo@4.18.3``, ``node@6.10.0``, ``java@5.14.0``, ``go@2.10.0``)
x targets (SecantusDB targets at each ``secantusdb`` release,
``mongo-java-server=RELEASE``, and real servers taken as they are) x repeats,
running the main job's suites (legacy, unified, the supplementary scenarios,
prose, code-defined checks) in ``--strict`` mode.

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

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.formats.data_yaml import load_data_yaml
from harness.formats.strict_reader import InputError
from harness.shared.connection_strings import redact as redact_uri

#: The suites a cell runs, in the main job's order (default: all of them, as ``harness run --suite all`` with the
#: main job's ``--specs``).
SUITES = ("legacy", "unified", "supplementary", "prose", "checks")
#: The suites that are spec files (``--specs`` sources); the others are ``harness run --suite`` names.
SPEC_SUITES = ("legacy", "unified", "supplementary")
#: The suites ``harness run`` names itself.
RUN_SUITES = ("prose", "checks")
#: Drivers by name (what ``harness run --driver`` takes) -> the family deciding how a release is installed:
#: ``python`` releases go into the cell's environment (pip), the others are built by the harness on first use
#: (``node@SPEC``: npm, ``java@VERSION``: Maven, ``go@VERSION``: the Go toolchain, ``rust@VERSION``: cargo) into its
#: cache.
DRIVER_FAMILIES = {
    "pymongo": "python",
    "pymongo-async": "python",
    "pymongo-executor": "python",
    "node": "node",
    "java": "java",
    "go": "go",
    "rust": "rust",
}
#: Targets whose version is the SecantusDB release installed in the cell, with the arguments they may take.
VERSIONED_TARGETS: dict[str, tuple[str | None, ...]] = {
    "embedded": (None,),
    "embedded-on-disk": (None,),
    "embedded-standalone": (None,),
    "embedded-no-test-commands": (None,),
    "secantusdb-daemon": (None, "test-commands", "on-disk", "standalone", "test-commands,on-disk"),
}
#: Targets with a release of their own in their argument (``mongo-java-server=1.47.0[,server=6.0]``).
RELEASED_TARGETS = ("mongo-java-server",)
#: Real servers, taken as they are.
SERVER_TARGETS = ("uri", "testcontainers")
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
    def family(self) -> str:
        return DRIVER_FAMILIES[self.name]

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
        if name not in DRIVER_FAMILIES:
            raise DefinitionError(f"{where}: unknown driver {name!r}; drivers: {', '.join(DRIVER_FAMILIES)}")
        if at and not _RELEASE.match(release):
            raise DefinitionError(f"{where}: {item!r}: {release!r} is not a release (e.g. {name}@{_EXAMPLE[name]})")
        if at and DRIVER_FAMILIES[name] == "python":
            _versions(release, f"{where}: {name}", base)
        drivers.append(Driver(name, release if at else None))
    return tuple(drivers)


#: A release of each driver, for error messages.
_EXAMPLE = {
    "pymongo": "4.18.3",
    "pymongo-async": "4.18.3",
    "pymongo-executor": "4.18.3",
    "node": "6.10.0",
    "java": "5.14.0",
    "go": "2.10.0",
    "rust": "3.9.1",
}


def _pymongo(value: Any, where: str, base: Path) -> tuple[Driver, ...]:
    """``--pymongo V1,V2``: shorthand for ``--driver pymongo@V1,pymongo@V2``."""
    return tuple(Driver("pymongo", version) for version in _versions(value, where, base))


def _targets(value: Any, where: str, base: Path) -> tuple[str, ...]:
    """SecantusDB targets and ``mongo-java-server[=RELEASE,...]``; a real server given here goes to ``servers``."""
    targets = []
    for item in _items(value if isinstance(value, list) else _split_targets(value, where), where, split=False):
        name, _, argument = item.partition("=")
        if name in SERVER_TARGETS:
            targets.append(_server(item, where))
        elif name in RELEASED_TARGETS:
            from harness.core.ports import TargetUnavailable
            from harness.targets.mongo_java_server import parse_argument

            try:
                parse_argument(argument or None)
            except TargetUnavailable as exc:
                raise DefinitionError(f"{where}: {exc}") from None
            targets.append(item)
        elif name in VERSIONED_TARGETS:
            if (argument or None) not in VERSIONED_TARGETS[name]:
                raise DefinitionError(f"{where}: target {name} does not take {argument!r} in a matrix")
            targets.append(item)
        else:
            known = [*VERSIONED_TARGETS, *RELEASED_TARGETS, *SERVER_TARGETS]
            raise DefinitionError(f"{where}: unknown target {name!r}; targets: {', '.join(known)}")
    return tuple(targets)


def _split_targets(value: Any, where: str) -> list[str]:
    """``embedded,mongo-java-server=1.47.0,server=6.0``: a comma starts a new target only before a target name
    (a ``mongo-java-server`` argument has commas of its own)."""
    if not isinstance(value, str):
        raise DefinitionError(f"{where}: expected a list or a comma-separated string, got {type(value).__name__}")
    names = (*VERSIONED_TARGETS, *RELEASED_TARGETS, *SERVER_TARGETS)
    targets: list[str] = []
    for part in value.split(","):
        if targets and part.strip().partition("=")[0] not in names:
            targets[-1] += f",{part.strip()}"
        else:
            targets.append(part.strip())
    return targets


def _server(item: str, where: str) -> str:
    name, _, argument = item.partition("=")
    if name == "testcontainers":
        return f"testcontainers={argument or 'mongo:8.0'}"
    if name == "uri":
        if not argument.startswith(("mongodb://", "mongodb+srv://")):
            raise DefinitionError(f"{where}: uri= needs a mongodb:// or mongodb+srv:// connection string")
        from harness.shared.connection_strings import ConnectionStringError, validate

        try:
            validate(argument)  # an SRV URI is checked without resolving it
        except ConnectionStringError as exc:
            raise DefinitionError(f"{where}: {exc}") from None
        return item
    raise DefinitionError(f"{where}: a server is testcontainers[=IMAGE] or uri=mongodb://..., got {item!r}")


def _servers(value: Any, where: str, base: Path) -> tuple[str, ...]:
    # Never split on commas: a connection string lists hosts with them.
    raw = value if isinstance(value, list) else [value]
    items = [item for entry in raw for item in _items(entry, where, split=False)]
    return tuple(_server(item, where) for item in items)


def _suites(value: Any, where: str, base: Path) -> tuple[str, ...]:
    items = _items(value, where)
    unknown = [item for item in items if item not in SUITES]
    if unknown:
        raise DefinitionError(f"{where}: unknown suite(s) {', '.join(unknown)}; suites: {', '.join(SUITES)}")
    return tuple(suite for suite in SUITES if suite in items)


def _source(value: Any, where: str, base: Path) -> str:
    """A ``--specs`` value: a source (``project:``, ``pypi:``, ``git:``) as written, or a path made absolute."""
    if not isinstance(value, str) or not value.strip():
        raise DefinitionError(f"{where}: expected a path or a spec source, got {value!r}")
    from harness.formats.source_names import is_source

    if is_source(value.strip()):
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
    from faults.campaign.schedule import KINDS

    kinds = value.replace("+", ",") if isinstance(value, str) else value
    items = _items(kinds, where)
    unknown = [kind for kind in items if kind not in KINDS]
    if unknown:
        raise DefinitionError(f"{where}: unknown fault kind(s) {', '.join(unknown)}; kinds: {', '.join(KINDS)}")
    return tuple(items)


def default_sources() -> dict[str, str]:
    """Each spec suite's default: the main job's sources (``harness.formats.source_names.main_job_sources``), the same
    whatever the working directory."""
    from harness.formats.source_names import main_job_sources

    return dict(zip(SPEC_SUITES, main_job_sources(), strict=True))


def _default_source(suite: str) -> str:
    """For the help text: where the default comes from, without looking at the disk."""
    return {
        "legacy": "../shared/specs/upstream/legacy beside the checkout",
        "unified": "../shared/specs/upstream/unified beside the checkout",
        "supplementary": "project:scenarios/supplementary",
    }[suite]


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


FIELDS = (
    Field(
        "drivers",
        "--driver",
        "drivers",
        _drivers,
        "D1,D2",
        f"drivers under test, each NAME[@RELEASE]: {', '.join(DRIVER_FAMILIES)} (e.g. pymongo@4.18.3,node@6.10.0,"
        "java@5.14.0,go@2.10.0; no release: the one the harness pins)",
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
        f"targets: SecantusDB's ({', '.join(VERSIONED_TARGETS)}), mongo-java-server[=RELEASE][,server=X.Y]"
        "[,present=replicaset], or a real server (default: embedded)",
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
    Field("suites", "--suites", "suites", _suites, "S1,S2", f"of {','.join(SUITES)} (default: all, the main job)"),
    *(
        Field(
            f"specs-{suite}",
            f"--specs-{suite}",
            f"specs_{suite}",
            _source,
            "PATH|SOURCE",
            f"the {suite} spec files (default: the main job's, {_default_source(suite)})",
        )
        for suite in SPEC_SUITES
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
        raise DefinitionError(f"{path}: expected a mapping of keys ({', '.join(f.key for f in FIELDS)})")
    known = {f.key for f in FIELDS}
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
        for f in FIELDS:
            if f.key in data:
                values[f.key] = f.parse(data[f.key], f"{matrix_file}: {f.key}", matrix_file.resolve().parent)
                given[f.key], written[f.key] = f"{matrix_file}: {f.key}", data[f.key]
    for f in FIELDS:
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
    servers = tuple(dict.fromkeys((*values.get("servers", ()), *(t for t in chosen if _name(t) in SERVER_TARGETS))))
    targets = tuple(t for t in chosen if _name(t) not in SERVER_TARGETS)
    if not targets and not servers:
        targets = ("embedded",)
    secantus_targets = [t for t in targets if _name(t) in VERSIONED_TARGETS]
    if values.get("secantusdb") and not secantus_targets:
        raise DefinitionError(
            f"{given['secantusdb']}: SecantusDB versions need a SecantusDB --target ({', '.join(VERSIONED_TARGETS)})"
        )
    suites = values.get("suites", SUITES)
    defaults = default_sources() if any(f"specs-{s}" not in values for s in suites if s in SPEC_SUITES) else {}
    specs = {suite: values.get(f"specs-{suite}") or defaults[suite] for suite in suites if suite in SPEC_SUITES}
    names = {suite: str(written.get(f"specs-{suite}", MAIN_JOB)) for suite in specs}
    return MatrixDefinition(
        drivers=drivers,
        secantusdb=values.get("secantusdb") or ((None,) if secantus_targets else ()),
        targets=targets,
        servers=servers,
        suites=suites,
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

    releases = [(d.name, Version(d.release) if d.release and d.family == "python" else d.release) for d in merged]
    if len(set(releases)) != len(releases):
        where = " and ".join(given[key] for key in ("drivers", "pymongo") if key in given)
        raise DefinitionError(
            f"{where}: the same version listed twice under different spellings: {', '.join(map(str, merged))}"
        )
    return merged
