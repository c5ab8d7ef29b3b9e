"""Server rules a unified file cannot hold, checked through the harness's own client (``--suite checks``).

A unified test runs every operation through the driver under test, and a driver
may refuse (or quietly drop) an argument before the server sees it: pymongo 4.20
sends only one of two start points it is given (CS-OPT-EXCLUSIVE). What the
*server* does with such a command is then never seen. These checks send the
command themselves, with the harness's admin client (the target port's
``admin``), with real values taken from the run (a change's resume token, its
cluster time), and judge only the server. Each check's name leads with the rule
ids it checks (``SRV-...:``), as the supplementary scenarios' descriptions do,
so ``harness coverage`` and the records see them; the driver under test is not
involved, so every driver gets the same verdict.
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
from harness.engine.run import Check
from prose_tests.support import CHANGE_STREAM_TOPOLOGIES as SUPPORT_TOPOLOGIES

#: The checks' file name in result records and test ids (``check/server-checks::SRV-...: ...``).
CHECKS_FILE = "server-checks"
CHECKS_FORMAT = "check"
DATABASE = "server_checks"
#: The start points of a change stream; a server must refuse an aggregate that names two of them.
START_POINTS = ("resumeAfter", "startAfter", "startAtOperationTime")
#: Change streams need a replica set or a sharded cluster.
CHANGE_STREAM_TOPOLOGIES = Requirement(topologies=SUPPORT_TOPOLOGIES)


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
                self.database.drop_collection(self.check.collection)
                self.database.create_collection(self.check.collection)
            self.check.body(self)
        except PyMongoError as exc:
            raise HarnessError(f"{self.current}: the harness's admin client failed: {exc}") from exc

    def failure_message(self, failure: TestFailure) -> str:
        return f"server check {self.check.name}: {failure}"

    def one_change(self) -> dict[str, Any]:
        """Insert one document and return its change event as the server sent it (a real token and time)."""
        self.current = "set-up: one change read by the harness's own stream"
        collection = self.database[self.check.collection]
        with collection.watch(max_await_time_ms=100) as stream:
            collection.insert_one({"set_up": 1})
            for _ in range(50):
                change = stream.try_next()
                if change is not None:
                    return dict(change)
        raise HarnessError("set-up: the harness's own change stream saw no change for its insert")

    def first_event(self, stage: dict[str, Any]) -> dict[str, Any] | None:
        """Open a change stream with this ``$changeStream`` stage and return its first event (None when none comes
        within a few short getMores); the cursor is killed. The server's refusal is raised (OperationFailure)."""
        name = self.check.collection
        self.current = f"aggregate with $changeStream {sorted(stage)}, then getMore"
        reply = self.database.command("aggregate", name, pipeline=[{"$changeStream": stage}], cursor={})
        cursor_id, batch = reply["cursor"]["id"], reply["cursor"]["firstBatch"]
        try:
            for _ in range(20):
                if batch:
                    return dict(batch[0])
                if not cursor_id:
                    return None
                more = self.database.command("getMore", cursor_id, collection=name, maxTimeMS=100)["cursor"]
                cursor_id, batch = more["id"], more["nextBatch"]
            return None
        finally:
            if cursor_id:
                self.database.command("killCursors", name, cursors=[cursor_id])

    def aggregate(self, stage: dict[str, Any]) -> OperationFailure | None:
        """Open a change stream with this ``$changeStream`` stage; the server's refusal, or None when it accepted
        (the cursor it opened is killed)."""
        self.current = f"aggregate with $changeStream {sorted(stage)}"
        try:
            reply = self.database.command(
                "aggregate", self.check.collection, pipeline=[{"$changeStream": stage}], cursor={}
            )
        except OperationFailure as exc:
            return exc
        cursor_id = reply.get("cursor", {}).get("id", 0)
        if cursor_id:
            self.database.command("killCursors", self.check.collection, cursors=[cursor_id])
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
            "the server opened a change stream for an aggregate naming two start points (each pair must be "
            f"refused): accepted {'; '.join(accepted)}"
        )


def start_at_operation_time_inclusive(context: ServerCheckContext) -> None:
    """A stream started at a change's clusterTime returns that change first; one started an increment later
    starts with the next change."""
    change = context.one_change()
    at = change["clusterTime"]
    first = context.first_event({"startAtOperationTime": at})
    if first is None or first["_id"] != change["_id"]:
        raise TestFailure(
            f"a stream started at the change's own clusterTime {at} should return that change first; "
            f"got {_described(first)}"
        )
    context.current = "a second change, after the first"
    context.database[context.check.collection].insert_one({"after": 1})
    first = context.first_event({"startAtOperationTime": Timestamp(at.time, at.inc + 1)})
    if first is None or first["_id"] == change["_id"] or (first.get("fullDocument") or {}).get("after") != 1:
        raise TestFailure(
            f"a stream started one increment after the change's clusterTime ({at.time}, {at.inc + 1}) should "
            f"start with the next change, not that one; got {_described(first)}"
        )


def token_not_in_the_stream_refused(context: ServerCheckContext) -> None:
    """A token of another collection's change, given to this collection's stream (with a change of its own after
    it): the server must refuse to resume rather than deliver events."""
    other = f"{context.check.collection}_other"
    context.current = "set-up: a change on a second collection, read through a database stream"
    context.database.drop_collection(other)
    context.database.create_collection(other)
    token = None
    with context.database.watch(max_await_time_ms=100) as stream:
        context.database[other].insert_one({"elsewhere": 1})
        for _ in range(50):
            change = stream.try_next()
            if change is not None:
                token = change["_id"]
                break
    if token is None:
        raise HarnessError("set-up: the database stream saw no change on the second collection")
    context.database[context.check.collection].insert_one({"here": 1})
    try:
        first = context.first_event({"resumeAfter": token})
    except OperationFailure:
        return
    raise TestFailure(f"resuming a stream from a token that is not in it delivered {_described(first)}")


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
)


def _preflight(check: ServerCheck, run: Any) -> Verdict | None:
    reason = unmet(check.requirement, run.target)
    return Verdict(SKIPPED, reason) if reason else None


def load_server_checks() -> list[Check]:
    """One :class:`Check` per server check, in registry order."""
    return [
        Check(
            format=CHECKS_FORMAT,
            file=CHECKS_FILE,
            name=check.name,
            open=partial(ServerCheckContext, check=check),
            preflight=partial(_preflight, check),
        )
        for check in CHECKS_REGISTRY
    ]


__all__ = ["CHECKS_REGISTRY", "START_POINTS", "ServerCheck", "ServerCheckContext", "load_server_checks"]
