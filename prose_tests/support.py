"""What every prose check stands on: the registry and a per-check context.

A prose test is a plain function of a :class:`ProseContext`. It drives the
driver under test only through the harness's driver port (entities and
operations by their spec names), makes set-up writes through the harness's
own admin client so they stay out of the observed events, arms fail points
through the run's :class:`~harness.engine.failpoint_manager.FailPointManager`, and
says what it found by raising: :class:`~harness.core.errors.TestFailure` (the
driver did not do what the README asks), :class:`~harness.core.errors.TestSkipped`
(the test cannot apply to this target), anything else (the check could not be
carried out). A :class:`ProseContext` is a :class:`~harness.engine.lifecycle.Case`,
so prose checks go through the same per-test lifecycle as spec tests: the
same deadline, single-owner teardown and verdicts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pymongo.errors import PyMongoError

from harness.core.errors import HarnessError, TestFailure, TestSkipped
from harness.core.matching import show
from harness.core.model import EntitySpec, Operation, Requirement
from harness.core.observations import DriverOperationError, ErrorInfo, NoChangeWithin, ObservedEvent
from harness.core.ports import FailPointError
from harness.core.requirements import unmet
from harness.core.verdicts import SKIPPED, Verdict
from harness.engine.lifecycle import Case
from prose_tests import observed
from prose_tests.raw_stream import changes_after

DATABASE = "prose_change_streams"
CLIENT, DB, COLLECTION, STREAM = "client", "database", "collection", "stream"
ALL_COMMAND_EVENTS = [observed.STARTED, observed.SUCCEEDED, observed.FAILED]
#: The prose tests' file name in result records and test ids.
PROSE_FILE = "change-streams-prose"


@dataclass
class ProseTest:
    """One prose test (or one variant of it) as the README numbers it."""

    number: int
    title: str
    body: Callable[[ProseContext], None]
    variant: str = ""
    requirement: Requirement | None = None
    #: Whether the check needs a wire proxy in the driver's path (to reshape replies, or for fail points
    #: the proxy emulates beside the target's own).
    shaping: bool = False
    #: Where the test comes from when not the live README: an earlier revision's list (its commit).
    revision: str = ""
    #: Whether the check's clients talk to the target presented as a three-member replica set
    #: (primary, two secondaries; an emulation through one wire proxy per member, harness/shared/wire/replica_set.py).
    replica_set: bool = False

    @property
    def name(self) -> str:
        if self.revision:
            return f"{self.number} (README at {self.revision[:7]}): {self.title}"
        return f"{self.number}: {self.title}"

    @property
    def short_id(self) -> str:
        """``11``, ``11-empty-batch`` or ``r51ca03b-9-...``: stable, for pytest ids and collection names."""
        base = f"{self.number}-{self.variant}" if self.variant else str(self.number)
        return f"r{self.revision[:7]}-{base}" if self.revision else base


REGISTRY: list[ProseTest] = []


def prose_test(
    number: int,
    title: str,
    *,
    variant: str = "",
    min_server_version: str | None = None,
    topologies: tuple[str, ...] | None = None,
    shaping: bool = False,
    revision: str = "",
    replica_set: bool = False,
) -> Callable[[Callable[[ProseContext], None]], Any]:
    """Register a function as the check of prose test ``number`` (optionally one variant of it).

    ``shaping``: the check reshapes replies (:meth:`ProseContext.shape`), so its
    clients connect through a wire proxy. ``replica_set``: its clients connect to the
    target presented as a replica set of three members (:attr:`ProseContext.replica_set`).
    ``revision``: the commit of the earlier
    README revision whose list numbers the test (not the live list).
    """

    def register(body: Callable[[ProseContext], None]) -> Callable[[ProseContext], None]:
        requirement = None
        if min_server_version or topologies:
            requirement = Requirement(min_server_version=min_server_version, topologies=topologies)
        REGISTRY.append(ProseTest(number, title, body, variant, requirement, shaping, revision, replica_set))
        return body

    return register


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise TestFailure(message)


def require(condition: bool, message: str) -> None:
    """A precondition of the scenario itself (not of the driver): failing it is an ``error``."""
    if not condition:
        raise HarnessError(f"the scenario's precondition does not hold: {message}")


class ProseContext(Case):
    """One prose check's world: its collection, its driver scope, its observations."""

    def __init__(self, run: Any, test: ProseTest) -> None:
        super().__init__()
        self.run = run
        self.test = test
        self.scope: Any = None
        self.collection_name = "prose_" + test.short_id.replace("-", "_")
        self.app_name = f"prose-{test.short_id}"[:40]
        self.shaping: Any = None  # the ReplyShapingOwner of the proxy in the driver's path (shaping checks)
        self.proxy: Any = None  # the harness.shared.wire.shaping_route.TestProxy in the driver's path (shaping checks)
        #: The emulated replica set in the driver's path (replica-set checks):
        #: harness.shared.wire.replica_set.EmulatedReplicaSet.
        self.replica_set: Any = None
        self._replica_set_route: Any = None
        if test.revision:
            self.details["prose_source"] = (
                f"mongodb/specifications@{test.revision}:"
                f"source/change-streams/tests/README.rst, prose test {test.number}"
            )

    def body(self) -> None:
        settings = self.run.options.settings
        with self.guarded():  # a scope opened after a timeout's teardown would never be closed
            if self.test.replica_set:
                uri = self._replica_set_uri()
            else:
                uri = self._shaping_proxy_uri() if self.test.shaping else self.run.driver_uri
            self.scope = self.run.driver.open_scope(
                uri, iteration_timeout_s=settings.iteration_timeout_s, iteration_mode=settings.iteration_mode
            )
        try:
            self.reset_collection()
            self.test.body(self)
        except PyMongoError as exc:  # the harness's own client, during set-up
            raise HarnessError(f"the harness's admin client failed: {exc}") from exc

    def close(self) -> list[str]:
        """Close the check's clients, then the check's own proxy (shaping off, checked); the run does the rest."""
        if self.scope is not None:
            self.scope.close()
        problems = self.proxy.close() if self.proxy is not None else []
        if self._replica_set_route is not None:
            problems += self._replica_set_route.close()
        return problems

    def _replica_set_uri(self) -> str:
        """The target presented as primary + two secondaries for this check (skipped where it cannot be)."""
        from harness.shared.wire.replica_set import ReplicaSetConfigError
        from harness.shared.wire.shaping_route import replica_set_for_test

        try:
            self._replica_set_route = replica_set_for_test(self.run.target)
        except ReplicaSetConfigError as exc:
            raise TestSkipped(f"needs several replica-set members: {exc}") from exc
        self.replica_set = self._replica_set_route.replica_set
        self.details["replica_set"] = {
            "members_at_start": {str(m.index): m.role for m in self.replica_set.members},
            "note": "emulated: one server behind one wire proxy per member; every member accepts every cursor, so "
            "where a command went is known only from the per-member log of arrived commands",
        }
        return self._replica_set_route.uri

    def _shaping_proxy_uri(self) -> str:
        """Where a shaping check's clients connect: the run's wire proxy, or one started for this check.

        A run with emulated fail points already has a proxy in the path, with
        its shaping owner; otherwise the check puts a proxy of its own in front
        of the target (fail points stay the target's own), owned and cleared
        the same way, for the length of the check (:mod:`harness.shared.wire.shaping_route`).
        """
        from harness.shared.wire.shaping_route import proxy_for_test

        self.proxy = proxy_for_test(self.run.target, self.run.driver_uri)
        self.shaping = self.proxy.owner
        return self.proxy.uri

    def failure_message(self, failure: TestFailure) -> str:
        return f"prose test {self.test.name}: {failure}"

    # -- set-up through the harness's own client: never observed ------------------------
    @property
    def admin_collection(self) -> Any:
        return self.run.target.admin[DATABASE][self.collection_name]

    def reset_collection(self, **create_options: Any) -> None:
        database = self.run.target.admin[DATABASE]
        database.drop_collection(self.collection_name)
        database.create_collection(self.collection_name, **create_options)

    def history(self, count: int) -> list[dict[str, Any]]:
        """Insert ``count`` documents and return their change events, read by the harness itself.

        Gives the tests resume tokens and cluster times that lie in the past
        of the stream under test, without the driver under test seeing them.
        Read with raw commands (:mod:`prose_tests.raw_stream`), so no driver
        helper's own rules stand between the server's replies and the set-up.
        """
        collection = self.admin_collection
        changes = changes_after(
            collection.database,
            self.collection_name,
            lambda: collection.insert_many([{"history": n} for n in range(count)]),
            count,
        )
        if len(changes) < count:
            raise HarnessError(f"set-up: the harness's own change stream saw {len(changes)} of {count} inserts")
        return changes

    # -- the driver under test ---------------------------------------------------------
    def open_client(self, collection_options: dict[str, Any] | None = None, **uri_options: Any) -> None:
        """A monitored client (named by ``appName`` so fail points hit only it), database, collection."""
        options = {"appName": self.app_name, **uri_options}
        self.scope.create_entity(
            EntitySpec("client", CLIENT, {"observeEvents": ALL_COMMAND_EVENTS, "uriOptions": options})
        )
        self.scope.create_entity(EntitySpec("database", DB, {"client": CLIENT, "databaseName": DATABASE}))
        collection = {"database": DB, "collectionName": self.collection_name}
        if collection_options:
            collection["collectionOptions"] = dict(collection_options)
        self.scope.create_entity(EntitySpec("collection", COLLECTION, collection))

    def op(self, name: str, entity: str, **arguments: Any) -> Any:
        """Run one operation; an error from the driver fails the check (none was expected)."""
        self.current = f"{name} on {entity}"
        try:
            return self.scope.run(Operation(name, entity, arguments))
        except DriverOperationError as exc:
            raise TestFailure(
                f"{name} on {entity} raised an unexpected error: {exc.info.describe()}"
                f"\n  commands sent: {self.command_list()}"
            ) from exc
        except NoChangeWithin as exc:
            raise TestFailure(f"{name} on {entity}: {exc}\n  commands sent: {self.command_list()}") from exc

    def attempt(self, name: str, entity: str, **arguments: Any) -> tuple[Any, ErrorInfo | None]:
        """Run one operation that may fail: ``(result, None)`` or ``(None, error)``."""
        self.current = f"{name} on {entity}"
        try:
            result = self.scope.run(Operation(name, entity, arguments))
        except DriverOperationError as exc:
            return None, exc.info
        except NoChangeWithin as exc:
            raise TestFailure(f"{name} on {entity}: {exc}\n  commands sent: {self.command_list()}") from exc
        if name == "createChangeStream":
            self.scope.set_entity(STREAM, result)
        return result, None

    def watch(self, **options: Any) -> None:
        """``createChangeStream`` on the collection, saved as the ``stream`` entity."""
        stream = self.op("createChangeStream", COLLECTION, **options)
        self.scope.set_entity(STREAM, stream)

    def next_change(self) -> dict[str, Any]:
        return self.op("iterateUntilDocumentOrError", STREAM)

    def resume_token(self) -> Any:
        return self.op("getResumeToken", STREAM)

    # -- observations -------------------------------------------------------------------
    def events(self) -> list[ObservedEvent]:
        return self.scope.events(CLIENT)

    def command_list(self, events: list[ObservedEvent] | None = None) -> str:
        events = self.events() if events is None else events
        marks = {observed.STARTED: "", observed.SUCCEEDED: " ok", observed.FAILED: " FAILED"}
        return "[" + ", ".join(f"{e.command_name}{marks.get(e.kind, '')}" for e in events) + "]"

    # -- faults ---------------------------------------------------------------------------
    def shape(self, profile: str | None = None, **shapings: Any) -> None:
        """Reshape this check's client's change-stream replies (the record says so); off after the check."""
        if self.shaping is None:
            raise HarnessError(f"prose test {self.test.name} shapes replies but was not registered with shaping=True")
        config: dict[str, Any] = {"appName": self.app_name, "shapings": shapings}
        if profile:
            config["profile"] = profile
        with self.guarded():
            self.shaping.arm(config)
        self.shaping.attach(self.details)

    def fail_commands(self, commands: list[str], *, times: int = 1, **data: Any) -> None:
        """Arm ``failCommand`` for this check's client only; the run turns it off after the check."""
        self.fail_point(
            {
                "configureFailPoint": "failCommand",
                "mode": {"times": times},
                "data": {"failCommands": commands, "appName": self.app_name, **data},
            }
        )

    def proxy_fail_point(self, command: dict[str, Any]) -> None:
        """Arm a fail point in the wire proxy in this check's path (checks registered with ``shaping=True``).

        For a second fail point beside the target's own (a target may have one
        ``failCommand`` slot for all names): in the check's own proxy it is
        turned off when the check closes; in the run's proxy (emulated fail
        points) the run's manager owns it like any other.
        """
        if self.proxy is None:
            raise HarnessError(
                f"prose test {self.test.name} arms a proxy fail point but was not registered with shaping=True"
            )
        if self.proxy.own_proxy is None:
            self.fail_point(command)
            return
        with self.guarded():
            self.proxy.arm_fail_point(command)

    def member_fail_point(self, index: int, command: dict[str, Any]) -> None:
        """Arm a fail point in one member of the emulated replica set only; turned off when the check closes."""
        if self._replica_set_route is None:
            raise HarnessError(
                f"prose test {self.test.name} arms a member's fail point but was not registered with replica_set=True"
            )
        with self.guarded():
            self._replica_set_route.arm_fail_point(index, command)

    def fail_point(self, command: dict[str, Any]) -> None:
        """Arm any fail point through the run's manager; it is turned off after the check."""
        try:
            with self.guarded():
                self.run.failpoints.arm(command)
        except FailPointError as exc:
            raise TestSkipped(f"needs fail points, and the target refused one: {exc}") from exc


def expect_token(actual: Any, expected: Any, situation: str) -> None:
    expect(actual == expected, f"getResumeToken {situation}: expected {show(expected)}, got {show(actual)}")


#: Every prose check opens a change stream, which needs a replica set or a sharded cluster (a standalone refuses
#: the $changeStream stage): the topologies of a check that names none.
CHANGE_STREAM_TOPOLOGIES = ("replicaset", "sharded", "load-balanced")


def preflight(test: ProseTest, run: Any) -> Verdict | None:
    """A ``skipped`` verdict when the target does not meet the prose test's requirement (by default, a topology
    with change streams)."""
    requirement = test.requirement or Requirement()
    if requirement.topologies is None:
        requirement = dataclasses.replace(requirement, topologies=CHANGE_STREAM_TOPOLOGIES)
    reason = unmet(requirement, run.target)
    return Verdict(SKIPPED, reason) if reason else None


__all__ = ["REGISTRY", "ProseContext", "ProseTest", "expect", "expect_token", "preflight", "prose_test", "require"]
