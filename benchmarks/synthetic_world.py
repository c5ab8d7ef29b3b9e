"""The made-up world the synthetic results describe: a year of nightly matrices.

Everything here is a plain, deterministic description (no I/O beyond the
test catalog, no randomness of its own), so the writer in
``synthetic_results.py`` can turn it into records at speed and any reader
can tell what the data should show:

* the tests are the real ones (``synthetic_tests.json``: every legacy and
  unified change-stream spec test and the prose checks, ~155 ids) with their
  real ``runOnRequirements``; a test is skipped exactly when the harness's
  own :func:`harness.core.requirements.skip_reason` would skip it on that target,
  with the harness's wording (~25% of verdicts);
* the matrix is 8 pymongo releases x 8 targets (SecantusDB embedded at four
  releases, the SecantusDB daemon with emulated fail points, mongod 7.0
  and 8.0 replica sets, one behind Toxiproxy, and a mongod 8.0 sharded
  cluster), 3 repeats a night;
* :data:`BEHAVIOURS` are the failures planted in it: regressions and fixes
  along both version axes, target-specific failures, and flaky tests at
  2-15%, each with a message in the harness's own formats
  (``ErrorInfo.describe``: ``Type, code N (Name): ...``; mismatches; time-outs)
  carrying varying ports, cursor ids, ObjectIds and timestamps, which the
  report's message patterns must fold back into one cluster.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

from harness.core.model import Requirement, SpecTest
from harness.core.ports import TargetInfo
from harness.record.versions import release

CATALOG = Path(__file__).with_name("synthetic_tests.json")

DRIVERS = ("4.9.2", "4.10.1", "4.11.3", "4.13.2", "4.15.5", "4.16.0", "4.18.3", "4.20.0")
SECANTUS_SERVER = {"0.6.4": "8.0.9", "0.7.0b1": "8.2.9", "0.7.0b2": "8.2.10", "0.7.0b3": "8.2.11"}
REPEATS = 3
#: Campaign records per cell per night (written after the cell's first repeat).
CAMPAIGNS_PER_CELL = 1


@dataclass(frozen=True)
class TargetSpec:
    """One target axis value, shaped like the harness's ``TargetInfo`` for that kind of target."""

    kind: str
    name: str
    server_version: str
    topology: str
    failpoints: str
    package_version: str | None = None
    hosts: int = 1
    network_faults: bool = False
    #: The target as ``harness matrix`` (and ``harness run --target``) names it.
    matrix_target: str = "embedded"

    @property
    def version(self) -> str:
        """The target's version on its axis (the package's for SecantusDB, as the report reads it)."""
        return self.package_version or self.server_version

    def info(self, port: int) -> TargetInfo:
        hosts = [f"127.0.0.1:{port + i}" for i in range(self.hosts)]
        details: dict[str, Any] = {
            "setName": None if self.topology == "sharded" else "secantus" if self.package_version else "rs0",
            "hosts": None if self.topology == "sharded" else hosts,
            "gitVersion": "0" * 40 if self.package_version else "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
        }
        if self.package_version:
            details.update(
                {
                    "package": "secantusdb",
                    "package_version": self.package_version,
                    "test_commands": self.failpoints == "native",
                    "log": f"/tmp/secantus-{self.kind}-{port:05d}.log",
                }
            )
        if self.network_faults:  # as faults/network/target.py records the Toxiproxy in the path
            details["network_faults"] = {
                "toxiproxy": "2.12.0",
                "proxy": f"127.0.0.1:{port + 1000}",
                "upstream": hosts[0],
            }
        return TargetInfo(
            kind=self.kind,
            name=self.name,
            version=self.server_version,
            topology=self.topology,
            uri=f"mongodb://{','.join(hosts[:1] if self.topology == 'sharded' else hosts)}/",
            max_wire_version=25
            if self.server_version.startswith("8.0")
            else 21
            if self.server_version.startswith("7.")
            else 27,
            details=details,
        )


TARGETS = (
    *(
        TargetSpec("embedded", "secantusdb", server, "replicaset", "native", package_version=package)
        for package, server in SECANTUS_SERVER.items()
    ),
    TargetSpec(
        "daemon",
        "secantusdb",
        "8.2.11",
        "replicaset",
        "emulated",
        package_version="0.7.0b3",
        matrix_target="secantusdb-daemon",
    ),
    TargetSpec(
        "uri",
        "uri",
        "7.0.14",
        "replicaset",
        "native",
        hosts=3,
        matrix_target="uri=mongodb://127.0.0.1:27017,127.0.0.1:27018,127.0.0.1:27019/?replicaSet=rs70",
    ),
    TargetSpec(
        "uri",
        "uri",
        "8.0.4",
        "replicaset",
        "native",
        hosts=3,
        network_faults=True,
        matrix_target="uri=mongodb://127.0.0.1:27117,127.0.0.1:27118,127.0.0.1:27119/?replicaSet=rs80",
    ),
    TargetSpec(
        "uri",
        "uri",
        "8.0.4",
        "sharded",
        "native",
        hosts=2,
        matrix_target="uri=mongodb://127.0.0.1:27217,127.0.0.1:27218/",
    ),
)


@dataclass(frozen=True)
class Cell:
    driver_version: str
    target: TargetSpec

    def labels(self, matrix_id: str, repeat: int) -> dict[str, str]:
        """The labels ``harness matrix`` gives every record of this cell's run (``--label KEY=VALUE``: text)."""
        from harness.matrix.cells import Cell as MatrixCell
        from harness.matrix.definition import Driver

        cell = MatrixCell(
            driver=Driver("pymongo", self.driver_version),
            target=self.target.matrix_target,
            secantusdb=self.target.package_version,
        )
        return {key: str(value) for key, value in {**cell.labels(matrix_id), "repeat": repeat}.items()}


CELLS = tuple(Cell(driver, target) for target in TARGETS for driver in DRIVERS)


@dataclass(frozen=True)
class CatalogTest:
    format: str
    file: str
    test: str
    test_id: str
    line: int | None
    duration_s: float
    spec: SpecTest


def load_catalog() -> list[CatalogTest]:
    """The real test ids and requirements, as a list of tests in run order."""
    entries = json.loads(CATALOG.read_text(encoding="utf-8"))["tests"]
    tests = []
    for e in entries:
        groups = [
            [
                Requirement(
                    min_server_version=r.get("min"),
                    max_server_version=r.get("max"),
                    topologies=tuple(r["topologies"]) if "topologies" in r else None,
                )
                for r in group
            ]
            for group in e["requires"]
        ]
        spec = SpecTest(
            file=e["file"],
            format=e["format"],
            description=e["test"],
            comparator="",
            line=e["line"],
            requirements=groups,
            uses_failpoints=e["uses_failpoints"],
        )
        tests.append(CatalogTest(e["format"], e["file"], e["test"], e["test_id"], e["line"], e["duration_s"], spec))
    return tests


class _RequirementTarget:
    """Just enough of a harness target for :func:`harness.core.requirements.skip_reason`."""

    def __init__(self, info: TargetInfo) -> None:
        self.info = info

    def server_parameter(self, name: str) -> Any:
        return None


def prose_skip(test: CatalogTest, target: TargetSpec) -> str | None:
    """The prose checks' own skips (code-defined in ``prose_tests``), in their wording."""
    number = test.test.split(":", 1)[0]
    if number == "6":
        if target.topology != "replicaset" or target.hosts < 2:
            return (
                f"needs a replica set with several members to choose from; the target is "
                f"{target.topology} with {target.hosts} host(s)"
            )
        return (
            "not automated yet: judging it needs the server address of each command event, "
            "which the driver seam's ObservedEvent does not carry"
        )
    if number == "14" and target.topology == "sharded":
        return "startAfter and resumeAfter tokens differ per shard on a sharded cluster"
    if number == "19" and release(target.server_version) < (7, 0):
        return "the target refuses $changeStreamSplitLargeEvent: Unrecognized pipeline stage name"
    return None


def skip_for(test: CatalogTest, target: TargetSpec) -> str | None:
    """Why ``test`` is skipped on ``target`` (None: it runs), exactly as the harness would say it."""
    if test.format == "prose":
        return prose_skip(test, target)
    from harness.core.requirements import skip_reason

    return skip_reason(test.spec, _RequirementTarget(target.info(27017)))


# -- messages ----------------------------------------------------------------------------------------------------
Message = Callable[[Random], str]


def _oid(rng: Random) -> str:
    return f"{rng.getrandbits(96):024x}"


def _port(rng: Random) -> int:
    return rng.randrange(32768, 61000)


def _cursor(rng: Random) -> int:
    return rng.getrandbits(62)


def _ts(rng: Random) -> str:
    return f"Timestamp({1_760_000_000 + rng.randrange(10_000_000)}, {rng.randrange(1, 40)})"


def driver_error(
    where: str, kind: str, code: int, name: str, text: Callable[[Random], str], how: str = "raised an unexpected error"
) -> Message:
    """``operations[i]: op raised ...: OperationFailure, code N (Name): text`` as ``ErrorInfo.describe`` writes it."""
    return lambda rng: f"{where} {how}: {kind}, code {code} ({name}): {text(rng)}"


def fixed(text: str) -> Message:
    return lambda rng: text


@dataclass(frozen=True)
class Behaviour:
    """A planted failure: on which tests and cells, how often, as which outcome, with which message."""

    name: str
    tests: tuple[str, ...]
    applies: Callable[[Cell], bool]
    probability: float
    outcome: str
    message: Message
    mismatches: tuple[str, ...] = field(default=())
    #: Listed in the target's expected-outcomes file (a known failure), with this reason.
    known_reason: str | None = None


def _driver_at_least(version: str) -> Callable[[Cell], bool]:
    return lambda c: release(c.driver_version) >= release(version)


def _secantus(*releases: str) -> Callable[[Cell], bool]:
    """Cells on these SecantusDB releases (embedded or daemon); named, since ``0.7.0b1`` is no tuple."""
    return lambda cell: cell.target.package_version in releases


RESUME_TOKEN_LOST = "Resume of change stream was not possible, as the resume point may no longer be in the oplog."

BEHAVIOURS: tuple[Behaviour, ...] = (
    # Regression in pymongo 4.15.5, fixed in 4.18.3: the comment is no longer sent on getMore.
    Behaviour(
        "getMore comment dropped",
        ("unified/change-streams::Test that comment is set on getMore",),
        lambda c: (4, 15, 5) <= release(c.driver_version) < (4, 18, 3),
        1.0,
        "failed",
        fixed(
            "expectEvents[0].events[1]: event does not match: commandStartedEvent(getMore): "
            "command.comment: expected {'name': 'test1'}, got None (key missing)"
        ),
        ("expectEvents[0].events[1].command.comment: expected {'name': 'test1'}, got None (key missing)",),
    ),
    # Old drivers do not surface wallTime: fixed from pymongo 4.10.1 on.
    Behaviour(
        "wallTime missing",
        ("unified/change-streams::Test wallTime field is set in a change event",),
        lambda c: release(c.driver_version) < (4, 10, 1),
        1.0,
        "failed",
        fixed(
            "operations[2]: iterateUntilDocumentOrError result does not match: wallTime: "
            "expected {'$$exists': True}, got None (key missing)"
        ),
        ("wallTime: expected {'$$exists': True}, got None (key missing)",),
    ),
    # Regression in pymongo 4.18.3: a killCursors error during a resume reaches the application.
    Behaviour(
        "killCursors error raised",
        ("prose/change-streams-prose::8: an error from killCursors during a resume is not raised to the application",),
        _driver_at_least("4.18.3"),
        1.0,
        "failed",
        lambda rng: (
            f"prose test 8: an error from killCursors during a resume is not raised to the application: "
            f"OperationFailure, code 237 (CursorKilled): cursor id {_cursor(rng)} was killed"
        ),
    ),
    # SecantusDB before 0.7.0b2 reports modify events as updates (fixed in 0.7.0b2; a known failure until then).
    Behaviour(
        "modify reported as update",
        ("unified/change-streams-showExpandedEvents::when showExpandedEvents is true, modify events are reported",),
        _secantus("0.6.4", "0.7.0b1"),
        1.0,
        "failed",
        fixed("expectEvents[0].events[1]: event does not match: operationType: expected 'modify', got 'update'"),
        ("expectEvents[0].events[1].operationType: expected 'modify', got 'update'",),
        known_reason="SecantusDB reports collMod as an update event before 0.7.0b2",
    ),
    # Regression in SecantusDB 0.7.0b3: required pre-images are lost after a collMod.
    Behaviour(
        "pre-image lost",
        (
            (
                "unified/change-streams-pre_and_post_images::fullDocumentBeforeChange:required with "
                "changeStreamPreAndPostImages enabled"
            ),
            (
                "unified/change-streams-pre_and_post_images::fullDocument:required with "
                "changeStreamPreAndPostImages enabled"
            ),
        ),
        _secantus("0.7.0b3"),
        1.0,
        "failed",
        driver_error(
            "operations[3]: iterateUntilDocumentOrError",
            "OperationFailure",
            280,
            "ChangeStreamFatalError",
            lambda rng: (
                f"Change stream was configured to require a pre-image for all update, delete "
                f"and replace events, but the pre-image was not found for event "
                f"{{_id: ObjectId('{_oid(rng)}'), ts: {_ts(rng)}}}"
            ),
        ),
    ),
    # On the sharded cluster, enabling pre- and post-images through mongos is refused (every driver, every night).
    Behaviour(
        "pre-images through mongos",
        tuple(
            f"unified/change-streams-pre_and_post_images::{name} with changeStreamPreAndPostImages {state}"
            for name in (
                "fullDocument:whenAvailable",
                "fullDocument:required",
                "fullDocumentBeforeChange:whenAvailable",
                "fullDocumentBeforeChange:required",
                "fullDocumentBeforeChange:off",
            )
            for state in ("enabled", "disabled")
        ),
        lambda c: c.target.topology == "sharded",
        1.0,
        "failed",
        driver_error(
            "operations[0]: createCollection",
            "OperationFailure",
            72,
            "InvalidOptions",
            lambda rng: (
                f"changeStreamPreAndPostImages is not supported through mongos for "
                f"'db{rng.randrange(1, 9)}.coll' (cluster time {_ts(rng)})"
            ),
        ),
    ),
    # The wire proxy's emulated fail points answer these three with the wrong error labels.
    Behaviour(
        "emulated labels",
        tuple(
            f"unified/change-streams-resume-errorLabels::change stream resumes after {n}"
            for n in ("StaleShardVersion", "StaleEpoch", "RetryChangeStream")
        ),
        lambda c: c.target.failpoints == "emulated",
        1.0,
        "error",
        lambda rng: (
            "operations[1]: iterateUntilDocumentOrError raised the wrong error: OperationFailure, "
            "code {} ({}): ".format(*rng.choice(((63, "StaleConfig"), (150, "StaleEpoch"), (234, "RetryChangeStream"))))
            + f"failCommand emulated by the wire proxy at 127.0.0.1:{_port(rng)} without errorLabels"
        ),
    ),
    # Flaky everywhere (2%): the cursor is reaped between two getMores.
    Behaviour(
        "cursor reaped",
        ("unified/change-streams::Test consecutive resume", "legacy/change-streams::Test consecutive resume"),
        lambda c: True,
        0.02,
        "failed",
        driver_error(
            "operations[4]: iterateUntilDocumentOrError",
            "OperationFailure",
            43,
            "CursorNotFound",
            lambda rng: f"cursor id {_cursor(rng)} not found",
        ),
    ),
    # Flaky on the sharded cluster (8%): a network error the resume cannot ride out.
    Behaviour(
        "sharded network error",
        (
            "legacy/change-streams-resume-allowlist::change stream resumes after a network error",
            "unified/change-streams-resume-allowlist::change stream resumes after a network error",
        ),
        lambda c: c.target.topology == "sharded",
        0.08,
        "error",
        driver_error(
            "operations[1]: iterateUntilDocumentOrError",
            "OperationFailure",
            6,
            "HostUnreachable",
            lambda rng: (
                f"Error on remote shard shard0{rng.randrange(3)}-rs:{_port(rng)} :: caused by :: Connection refused"
            ),
        ),
    ),
    # Flaky behind Toxiproxy (4%): the oplog rolled past the resume token while the link was down.
    Behaviour(
        "history lost",
        tuple(
            f"unified/change-streams-resume-errorLabels::change stream resumes after {n}"
            for n in ("HostUnreachable", "NetworkTimeout", "SocketException")
        ),
        lambda c: c.target.network_faults,
        0.04,
        "failed",
        driver_error(
            "operations[2]: iterateUntilDocumentOrError",
            "OperationFailure",
            286,
            "ChangeStreamHistoryLost",
            lambda rng: (
                f"Executor error during getMore :: caused by :: {RESUME_TOKEN_LOST} "
                f'{{_data: "82{rng.getrandbits(128):032X}"}}'
            ),
        ),
    ),
    # Flaky on the daemon (5%): a time-out while the emulated fail point holds the getMore.
    Behaviour(
        "daemon timeout",
        (
            "unified/change-streams-resume-errorLabels::change stream resumes after PrimarySteppedDown",
            "legacy/change-streams-resume-errorLabels::change stream resumes after PrimarySteppedDown",
        ),
        lambda c: c.target.kind == "daemon",
        0.05,
        "error",
        lambda rng: (
            f"timed out after 10s during operations[{rng.randrange(2, 4)}]: iterateUntilDocumentOrError "
            f"(the target or driver stopped answering)"
        ),
    ),
    # Flaky on embedded SecantusDB before 0.7.0b2 (15%), steady after: large events split out of order.
    Behaviour(
        "split fragments",
        ("prose/change-streams-prose::19: a change larger than a BSON document arrives split into fragments",),
        _secantus("0.6.4", "0.7.0b1"),
        0.15,
        "failed",
        lambda rng: (
            f"prose test 19: a change larger than a BSON document arrives split into fragments: "
            f"fragment {rng.randrange(2, 4)} arrived before fragment 1 "
            f"(event {{_id: ObjectId('{_oid(rng)}')}})"
        ),
    ),
    # Flaky on mongod 7.0 (3%): a primary step-down in the middle of the test.
    Behaviour(
        "stepdown",
        (
            "unified/change-streams::Test insert, update, replace, and delete event types",
            (
                "unified/change-streams::Executing a watch helper on a Database results in notifications "
                "for changes to all collections in the specified database."
            ),
        ),
        lambda c: c.target.server_version.startswith("7.0"),
        0.03,
        "error",
        driver_error(
            "initialData",
            "NotPrimaryError",
            10107,
            "NotWritablePrimary",
            lambda rng: (
                f"Not-primary error while processing 'insert' operation on 'db.coll' collection "
                f"(replSetTerm {rng.randrange(2, 90)})"
            ),
            how="failed",
        ),
    ),
)


@dataclass(frozen=True)
class Plan:
    """What can happen to one test in one cell: a fixed skip, or failure modes to draw from."""

    skip: str | None
    failures: tuple[Behaviour, ...]


def plan_for(test: CatalogTest, cell: Cell) -> Plan:
    skip = skip_for(test, cell.target)
    if skip:
        return Plan(skip, ())
    return Plan(None, tuple(b for b in BEHAVIOURS if test.test_id in b.tests and b.applies(cell)))


def check_behaviours(tests: list[CatalogTest]) -> None:
    """Every planted behaviour names real tests (a typo would silently plant nothing)."""
    ids = {t.test_id for t in tests}
    missing = [(b.name, t) for b in BEHAVIOURS for t in b.tests if t not in ids]
    if missing:
        raise ValueError(f"behaviours name tests not in the catalog: {missing}")
