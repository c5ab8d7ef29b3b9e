"""A wire proxy in one test's path: the run's, or one started for that test alone.

Reply shaping needs the driver under test to talk through a wire proxy from
the moment its clients are created. A run with emulated fail points already
has one in every driver's path; otherwise a test that shapes replies gets a
proxy of its own in front of the target, for its length only, with its own
:class:`~harness.shared.wire.shaping_owner.ReplyShapingOwner` (fail points stay the
target's own). :func:`proxy_for_test` gives either as a :class:`TestProxy`;
:meth:`TestProxy.close` turns off what the test armed in it, checks, and stops
a proxy the test started.

:func:`replica_set_for_test` presents the target as several replica-set
members instead (an emulation, :mod:`harness.shared.wire.replica_set`), for the
checks that need a choice of servers (prose test 6).

Used by the prose checks (:class:`prose_tests.support.ProseContext`), and
meant for the spec runner once the engine can give one test a driver URI of its
own (:func:`route_for`; see docs/wire-proxy.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.shared.wire.shaping_owner import ReplyShapingOwner, owner_for, register, unregister


@dataclass
class TestProxy:
    """Where one test's clients connect, and the shaping owner of that proxy."""

    __test__ = False  # not a pytest test class

    uri: str
    owner: ReplyShapingOwner
    #: The proxy this test started (None: the run's proxy, owned by the run).
    own_proxy: Any = None
    #: Fail points armed in ``own_proxy``, turned off when the test closes.
    fail_points: list[str] = field(default_factory=list)

    def arm_fail_point(self, command: dict[str, Any]) -> None:
        """A fail point in this test's own proxy (a second one beside the target's); see ``close``."""
        assert self.own_proxy is not None, "the run's proxy has a fail-point manager: arm through it"
        self.fail_points.append(str(command.get("configureFailPoint")))
        self.own_proxy.configure_fail_point(dict(command))

    def close(self) -> list[str]:
        """Shaping off and fail points off in a proxy this test started, both confirmed; then stop it."""
        if self.own_proxy is None:
            return []  # the run's teardown check clears the run's proxy after every test
        problems = self.owner.clear_all()
        for name in self.fail_points:
            self.own_proxy.disable(name)
        for name in self.own_proxy.armed():  # asked, not assumed, as for the run's fail points
            self.own_proxy.disable(name)
            problems.append(f"fail point {name!r} was still armed in the test's wire proxy; turned off now")
        unregister(self.owner)
        self.own_proxy.stop()
        return problems


def proxy_for_test(target: Any, run_driver_uri: str) -> TestProxy:
    """The run's proxy if it has one (``run_driver_uri`` then goes through it), else a new one for this test."""
    from harness.shared.wire import WireProxy
    from harness.shared.wire.upstream import driver_facing_address

    owner = owner_for(target)
    if owner is not None:
        return TestProxy(run_driver_uri, owner)
    host, port = driver_facing_address(target)
    proxy = WireProxy(host, port)
    proxy.start()
    return TestProxy(proxy.uri, register(ReplyShapingOwner(proxy, target)), proxy)


def route_for(test: Any, target: Any, run_driver_uri: str) -> TestProxy | None:
    """For a spec test that uses ``shapeReplies``: the proxy its clients must use (None: no proxy needed)."""
    from harness.shared.wire.shaping_ops import uses_reply_shaping

    return proxy_for_test(target, run_driver_uri) if uses_reply_shaping(test) else None


@dataclass
class TestReplicaSet:
    """One test's emulated replica set (harness/shared/wire/replica_set.py) in front of the target, and its clean-up."""

    __test__ = False  # not a pytest test class

    uri: str
    replica_set: Any
    #: (member, fail point name) armed by the test, turned off when it closes.
    fail_points: list[tuple[int, str]] = field(default_factory=list)

    def arm_fail_point(self, index: int, command: dict[str, Any]) -> None:
        """A fail point in member ``index`` only (its own proxy); turned off when the test closes."""
        self.fail_points.append((index, str(command.get("configureFailPoint"))))
        self.replica_set.configure_fail_point(index, dict(command))

    def close(self) -> list[str]:
        """Turn off the test's fail points; any other still armed is turned off and reported; stop every listener."""
        problems = []
        for index, name in self.fail_points:
            self.replica_set.members[index].proxy.disable(name)
        for index, names in self.replica_set.armed().items():  # asked, not assumed
            for name in names:
                self.replica_set.members[index].proxy.disable(name)
                problems.append(f"fail point {name!r} was still armed in emulated member {index}; turned off now")
        self.replica_set.stop()
        return problems


def replica_set_for_test(target: Any, roles: tuple[str, ...] = ("primary", "secondary", "secondary")) -> TestReplicaSet:
    """The target presented as a replica set of ``len(roles)`` members, for one test (an emulation).

    Raises ``ReplicaSetConfigError`` when the target is no replica-set member (its hello has no
    ``setName``): only a replica-set member can be shown as several.
    """
    from harness.shared.wire.replica_set import EmulatedReplicaSet, ReplicaSetConfigError
    from harness.shared.wire.upstream import driver_facing_address

    set_name = target.info.details.get("setName")
    if not set_name:
        raise ReplicaSetConfigError(
            f"the target ({target.info.topology}) reports no replica-set name, so it "
            "cannot be presented as several members"
        )
    host, port = driver_facing_address(target)
    replica_set = EmulatedReplicaSet(host, port, roles)
    replica_set.start()
    return TestReplicaSet(replica_set.uri(set_name), replica_set)
