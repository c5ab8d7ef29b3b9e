"""The matrix a QA engineer asks for, from a small YAML file and/or flags, validated before anything runs.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.targets.connection_strings import redact as redact_uri

SUITES = ("legacy", "unified", "prose")
SPEC_SUITES = ("legacy", "unified")
#: Where the spec corpora are looked for when no ``--specs-*`` is given (relative to the working directory).
DEFAULT_SPECS = {"legacy": Path("../shared/specs/upstream/legacy"), "unified": Path("../shared/specs/upstream/unified")}
#: Targets whose version is the SecantusDB release installed in the cell, with the arguments they may take.
VERSIONED_TARGETS: dict[str, tuple[str | None, ...]] = {
    "embedded": (None,),
    "embedded-no-test-commands": (None,),
    "secantusdb-daemon": (None, "test-commands"),
}
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


@dataclass
class MatrixDefinition:
    pymongo: tuple[str, ...]
    #: ``None`` stands for the release the harness's own pins resolve to.
    secantusdb: tuple[str | None, ...]
    targets: tuple[str, ...]
    servers: tuple[str, ...]
    suites: tuple[str, ...]
    specs: dict[str, Path] = field(default_factory=dict)
    campaign: Campaign | None = None
    keyword: str | None = None
    timeout: float | None = None
    repeat: int = 1
    jobs: int = 1

    def identity(self) -> dict[str, Any]:
        """What decides the results of one repeat; the matrix id hashes it."""
        return {
            "pymongo": list(self.pymongo),
            "secantusdb": list(self.secantusdb),
            "targets": list(self.targets),
            "servers": list(self.servers),
            "suites": list(self.suites),
            "specs": {suite: str(path) for suite, path in sorted(self.specs.items())},
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
        }

    @property
    def matrix_id(self) -> str:
        digest = hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()
        return f"m-{digest[:12]}"

    def describe(self) -> dict[str, Any]:
        """The definition as the manifest keeps it (connection strings without passwords)."""
        described = self.identity()
        described["servers"] = [redact_uri(server) for server in self.servers]
        return {**described, "repeat": self.repeat, "jobs": self.jobs}


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


def _targets(value: Any, where: str, base: Path) -> tuple[str, ...]:
    items = _items(value, where)
    for item in items:
        name, _, argument = item.partition("=")
        if name in ("uri", "testcontainers"):
            raise DefinitionError(f"{where}: {item!r} is a real server; give it as --server {item} (servers: key)")
        if name not in VERSIONED_TARGETS:
            raise DefinitionError(
                f"{where}: unknown target {name!r}; SecantusDB targets: "
                f"{', '.join(VERSIONED_TARGETS)} (real servers go in --server)"
            )
        if (argument or None) not in VERSIONED_TARGETS[name]:
            raise DefinitionError(f"{where}: target {name} does not take {argument!r} in a matrix")
    return tuple(items)


def _server(item: str, where: str) -> str:
    name, _, argument = item.partition("=")
    if name == "testcontainers":
        return f"testcontainers={argument or 'mongo:8.0'}"
    if name == "uri":
        if not argument.startswith(("mongodb://", "mongodb+srv://")):
            raise DefinitionError(f"{where}: uri= needs a mongodb:// or mongodb+srv:// connection string")
        from harness.targets.connection_strings import ConnectionStringError, validate

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


def _path(value: Any, where: str, base: Path) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise DefinitionError(f"{where}: expected a path, got {value!r}")
    return (base / Path(value).expanduser()).resolve()


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
    Field("pymongo", "--pymongo", "pymongo", _versions, "V1,V2", "pymongo releases, e.g. 4.18.3,4.19.0,4.20.0"),
    Field(
        "secantusdb",
        "--secantusdb",
        "secantusdb",
        _versions,
        "V1,V2",
        "SecantusDB releases for the --target (default: the release the harness's pins resolve to)",
    ),
    Field(
        "targets",
        "--target",
        "targets",
        _targets,
        "T1,T2",
        f"SecantusDB targets: {', '.join(VERSIONED_TARGETS)} (default: embedded)",
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
    Field("suites", "--suites", "suites", _suites, "S1,S2", f"of {','.join(SUITES)} (default: all three)"),
    Field(
        "specs-legacy",
        "--specs-legacy",
        "specs_legacy",
        _path,
        "PATH",
        f"legacy spec files (default {DEFAULT_SPECS['legacy']})",
    ),
    Field(
        "specs-unified",
        "--specs-unified",
        "specs_unified",
        _path,
        "PATH",
        f"unified spec files (default {DEFAULT_SPECS['unified']})",
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
        data = yaml.safe_load(text)
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
    if matrix_file is not None:
        data = read_matrix_file(matrix_file)
        for f in FIELDS:
            if f.key in data:
                values[f.key] = f.parse(data[f.key], f"{matrix_file}: {f.key}", matrix_file.resolve().parent)
                given[f.key] = f"{matrix_file}: {f.key}"
    for f in FIELDS:
        raw = getattr(flags, f.dest, None)
        if raw is not None and raw != []:
            values[f.key] = f.parse(raw, f.flag, cwd)
            given[f.key] = f.flag
    return _assemble(values, given, cwd)


def _assemble(values: dict[str, Any], given: dict[str, str], cwd: Path) -> MatrixDefinition:
    if not values.get("pymongo"):
        raise DefinitionError("no pymongo versions: give --pymongo 4.18.3,4.20.0 (or pymongo: in the --matrix file)")
    servers = values.get("servers", ())
    targets = values.get("targets") or (("embedded",) if values.get("secantusdb") or not servers else ())
    if values.get("secantusdb") and not targets:
        raise DefinitionError(
            f"{given['secantusdb']}: SecantusDB versions need a --target ({', '.join(VERSIONED_TARGETS)})"
        )
    suites = values.get("suites", SUITES)
    specs = {}
    for suite in suites:
        if suite not in SPEC_SUITES:
            continue
        key = f"specs-{suite}"
        path = values.get(key) or (cwd / DEFAULT_SPECS[suite]).resolve()
        where = given.get(key, f"--{key} (default {DEFAULT_SPECS[suite]} from {cwd})")
        if not path.exists():
            raise DefinitionError(f"{where}: {path} does not exist; give --{key} PATH or leave {suite} out of --suites")
        specs[suite] = path
    return MatrixDefinition(
        pymongo=values["pymongo"],
        secantusdb=values.get("secantusdb") or ((None,) if targets else ()),
        targets=targets,
        servers=servers,
        suites=suites,
        specs=specs,
        campaign=values.get("campaign"),
        keyword=values.get("keyword"),
        timeout=values.get("timeout"),
        repeat=values.get("repeat", 1),
        jobs=values.get("jobs", 1),
    )
