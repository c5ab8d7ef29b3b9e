"""Server rules a unified file cannot hold, checked through the harness's own client (``--suite checks``).

A unified test runs every operation through the driver under test, and a driver
may refuse (or quietly drop) an argument before the server sees it: pymongo 4.20
sends only one of two start points it is given (CS-OPT-EXCLUSIVE). What the
*server* does with such a command is then never seen. These checks send the
command themselves, with the harness's admin client (the target port's
``admin``), with real values taken from the run (a change's resume token, its
cluster time), and judge only the server. Each check's name leads with the rule
ids it checks (``SRV-...:``), as the supplementary scenarios' descriptions do,
so ``harness coverage`` and the records see them, and so does each failure's
message; the driver under test is not involved, so every driver gets the same
verdict.

Every stream the checks open, for set-up or to read what the server sends, is
raw ``aggregate``/``getMore``/``killCursors`` (:mod:`prose_tests.raw_stream`):
a driver helper such as pymongo's ``watch()`` would apply its own rules to the
replies, and a target that breaks one would fail the set-up of a check that
never ran. The bodies of the checks of events and waits are in
:mod:`prose_tests.server_event_checks`; the check of the server's own fail
points in :mod:`prose_tests.failpoint_check`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from bson.timestamp import Timestamp
from pymongo.errors import OperationFailure, PyMongoError

from harness.core.errors import HarnessError, TestFailure
from harness.core.model import Requirement
from harness.core.requirements import unmet
from harness.core.verdicts import SKIPPED, Verdict
from harness.engine.lifecycle import Case
from harness.engine.run import CodeDefinedTest
from prose_tests import failpoint_check, server_event_checks
from prose_tests.raw_stream import RawStream, changes_after
from prose_tests.support import CHANGE_STREAM_TOPOLOGIES as SUPPORT_TOPOLOGIES

#: The checks' file name in result records and test ids (``check/server-checks::SRV-...: ...``).
CHECKS_FILE = "server-checks"
CHECKS_FORMAT = "check"
DATABASE = "server_checks"
#: The start points of a change stream; a server must refuse an aggregate that names two of them.
START_POINTS = ("resumeAfter", "startAfter", "startAtOperationTime")
#: Change streams need a replica set or a sharded cluster.
CHANGE_STREAM_TOPOLOGIES = Requirement(topologies=SUPPORT_TOPOLOGIES)
#: How many short getMores :meth:`ServerCheckContext.first_event` waits for a stream's first event.
FIRST_EVENT_GET_MORES = 20


@dataclass(frozen=True)
class ServerCheck:
    """One check: its name (rule ids first), what the target must be, and its body."""

    name: str
    collection: str
    body: Callable[[ServerCheckContext], None]
    requirement: Requirement = CHANGE_STREAM_TOPOLOGIES


class ServerCheckContext(Case):
    """One server check's world: its collection, set up and read through the harness's own client."""

    def __init__(self, run: Any, check: ServerCheck) -> None:
        super().__init__()
        self.run = run
        self.check = check

    @property
    def database(self) -> Any:
        return self.run.target.admin[DATABASE]

    def body(self) -> None:
        try:
            with self.guarded():
                # Raw commands, and a drop only of what exists: how a server answers the drop of a missing
                # collection is itself a check (SRV-ERROR-CODES), not something the set-up may stand on.
                listed = self.database.command("listCollections", filter={"name": self.check.collection})
                if self.check.collection in {c.get("name") for c in listed["cursor"]["firstBatch"]}:
                    self.database.command({"drop": self.check.collection})
                self.database.command({"create": self.check.collection})
            self.check.body(self)
        except PyMongoError as exc:
            raise HarnessError(f"{self.current}: the harness's admin client failed: {exc}") from exc

    def failure_message(self, failure: TestFailure) -> str:
        return f"server check {self.check.name}: {failure}"

    def one_change(self) -> dict[str, Any]:
        """Insert one document and return its change event as the server sent it (a real token and time)."""
        self.current = "set-up: one change read by the harness's own raw stream"
        collection = self.database[self.check.collection]
        changes = changes_after(self.database, self.check.collection, lambda: collection.insert_one({"set_up": 1}), 1)
        if not changes:
            raise HarnessError("set-up: the harness's own change stream saw no change for its insert")
        return changes[0]

    def first_event(self, stage: dict[str, Any]) -> dict[str, Any] | None:
        """Open a change stream with this ``$changeStream`` stage and return its first event (None when none comes
        within a few short getMores); the cursor is killed. The server's refusal is raised (OperationFailure)."""
        self.current = f"aggregate with $changeStream {sorted(stage)}, then getMore"
        with RawStream(self.database, self.check.collection, stage) as stream:
            changes = stream.changes(1, get_mores=FIRST_EVENT_GET_MORES)
        return changes[0] if changes else None

    def aggregate(self, stage: dict[str, Any]) -> OperationFailure | None:
        """Open a change stream with this ``$changeStream`` stage; the server's refusal, or None when it accepted
        (the cursor it opened is killed)."""
        self.current = f"aggregate with $changeStream {sorted(stage)}"
        stream = RawStream(self.database, self.check.collection, stage)
        try:
            stream.open()
        except OperationFailure as exc:
            return exc
        stream.close()
        return None


def two_start_points_refused(context: ServerCheckContext) -> None:
    """Every pair of start points, with real values, must be refused; the failure names each pair accepted."""
    change = context.one_change()
    values = {"resumeAfter": change["_id"], "startAfter": change["_id"], "startAtOperationTime": change["clusterTime"]}
    accepted = []
    for first, second in itertools.combinations(START_POINTS, 2):
        if context.aggregate({first: values[first], second: values[second]}) is None:
            accepted.append(f"{first} with {second}")
    context.details["start_point_pairs_accepted"] = accepted
    if accepted:
        raise TestFailure(
            "SRV-START-EXCLUSIVE: the server opened a change stream for an aggregate naming two start points "
            f"(each pair must be refused): accepted {'; '.join(accepted)}"
        )


def start_at_operation_time_inclusive(context: ServerCheckContext) -> None:
    """A stream started at a change's clusterTime returns that change first; one started an increment later
    starts with the next change."""
    change = context.one_change()
    at = change["clusterTime"]
    first = context.first_event({"startAtOperationTime": at})
    if first is None or first["_id"] != change["_id"]:
        raise TestFailure(
            f"SRV-START-AT-TIME: a stream started at the change's own clusterTime {at} should return that change "
            f"first; got {_described(first)}"
        )
    context.current = "a second change, after the first"
    context.database[context.check.collection].insert_one({"after": 1})
    first = context.first_event({"startAtOperationTime": Timestamp(at.time, at.inc + 1)})
    if first is None or first["_id"] == change["_id"] or (first.get("fullDocument") or {}).get("after") != 1:
        raise TestFailure(
            "SRV-START-AT-TIME: a stream started one increment after the change's clusterTime "
            f"({at.time}, {at.inc + 1}) should start with the next change, not that one; got {_described(first)}"
        )


def token_not_in_the_stream_refused(context: ServerCheckContext) -> None:
    """A token of another collection's change, given to this collection's stream (with a change of its own after
    it): the server must refuse to resume rather than deliver events."""
    other = f"{context.check.collection}_other"
    context.current = "set-up: a change on a second collection, read through that collection's own stream"
    context.database.drop_collection(other)
    context.database.create_collection(other)
    changes = changes_after(context.database, other, lambda: context.database[other].insert_one({"elsewhere": 1}), 1)
    if not changes:
        raise HarnessError("set-up: the second collection's stream saw no change")
    token = changes[0]["_id"]
    context.database[context.check.collection].insert_one({"here": 1})
    try:
        first = context.first_event({"resumeAfter": token})
    except OperationFailure:
        return
    raise TestFailure(
        f"SRV-TOKEN-MUST-EXIST: resuming a stream from a token that is not in it delivered {_described(first)}"
    )


def _described(event: dict[str, Any] | None) -> str:
    if event is None:
        return "no event"
    return f"{event.get('operationType')} of {event.get('documentKey')}"


CHECKS_REGISTRY: tuple[ServerCheck, ...] = (
    ServerCheck(
        "SRV-START-EXCLUSIVE: an aggregate naming two start points is refused, for each pair, with real values",
        "two_start_points",
        two_start_points_refused,
    ),
    ServerCheck(
        "SRV-START-AT-TIME: a stream started at a change's clusterTime returns that change first, and one started "
        "an increment later does not",
        "start_at_time",
        start_at_operation_time_inclusive,
    ),
    ServerCheck(
        "SRV-TOKEN-MUST-EXIST: resuming from a token that is not in the stream is refused",
        "token_not_in_stream",
        token_not_in_the_stream_refused,
    ),
    ServerCheck(
        "SRV-FULLDOC-INSERT, SRV-DOCKEY: a replacement is reported with the new document and documentKey {_id} alone",
        "replace_event",
        server_event_checks.replace_reported,
    ),
    ServerCheck(
        "SRV-INVALIDATE-DROP, SRV-INVALIDATE-EVENT: dropping the watched collection ends its stream with drop, then "
        "invalidate, then nothing",
        "drop_invalidates",
        server_event_checks.drop_invalidates,
    ),
    ServerCheck(
        "SRV-MAXTIME-EMPTY: a getMore with nothing to return waits about its maxTimeMS, then comes back empty",
        "empty_get_more_waits",
        server_event_checks.empty_get_more_waits,
    ),
    ServerCheck(
        "SRV-TOKEN-MALFORMED: a resume token the server cannot use is refused by the aggregate with a coded error",
        "malformed_tokens",
        server_event_checks.malformed_tokens_refused,
        Requirement(min_server_version="4.2", topologies=SUPPORT_TOPOLOGIES),  # startAfter: 4.2+
    ),
    ServerCheck(
        "SRV-ERROR-CODES: dropping a collection that does not exist succeeds, or is refused with NamespaceNotFound",
        "missing_drop",
        server_event_checks.missing_collection_drop,
        Requirement(),  # any topology: a plain command
    ),
    ServerCheck(
        "SRV-TEST-FAILPOINTS: the server itself supports configureFailPoint, and a failCommand it accepts takes effect",
        "fail_points",
        failpoint_check.fail_points_supported,
        Requirement(),  # any topology: fail points are not a change-stream feature
    ),
)


def _preflight(check: ServerCheck, run: Any) -> Verdict | None:
    reason = unmet(check.requirement, run.target)
    return Verdict(SKIPPED, reason) if reason else None


def load_server_checks() -> list[CodeDefinedTest]:
    """One :class:`CodeDefinedTest` per server check, in registry order."""
    return [
        CodeDefinedTest(
            format=CHECKS_FORMAT,
            file=CHECKS_FILE,
            name=check.name,
            open=partial(ServerCheckContext, check=check),
            preflight=partial(_preflight, check),
        )
        for check in CHECKS_REGISTRY
    ]


__all__ = ["CHECKS_REGISTRY", "START_POINTS", "ServerCheck", "ServerCheckContext", "load_server_checks"]
