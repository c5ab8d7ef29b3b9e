"""One spec test's context: what its test-runner operations (:mod:`harness.engine.operation_table`) see.

The test, its driver scope, what it opened, and the run's services it was handed at construction
(:class:`SpecServices`: the target, the driver, the run's fail points, the driver's URI). It holds no
reference to the runner that built it, so an operation cannot reach back up into the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.core.model import SpecTest
from harness.core.ports import DriverAdapter, Target, require_capability
from harness.engine.failpoint_manager import FailPointManager
from harness.engine.lifecycle import Case


@dataclass(frozen=True)
class SpecServices:
    """What one run hands every spec test, once: its collaborators, never the runner itself."""

    target: Target
    driver: DriverAdapter
    #: The run's fail-point manager (native or emulated).
    failpoints: FailPointManager
    #: Where clients under test connect (a proxy in front of the target, or the target itself).
    driver_uri: str


class MatchingEntities:
    """What the comparators' entity operators (``$$matchesEntity``, ``$$sessionLsid``) may ask of the test's
    driver scope: an lsid only when the adapter declares ``session_lsid`` (else the test is ``skipped``)."""

    def __init__(self, scope: Any, driver: Any) -> None:
        self._scope, self._driver = scope, driver

    def entity(self, entity_id: str) -> Any:
        return self._scope.entity(entity_id)

    def session_lsid(self, entity_id: str) -> Any:
        require_capability(self._driver, "session_lsid", f"$$sessionLsid {entity_id}")
        return self._scope.session_lsid(entity_id)


class SpecContext(Case):
    """One spec test's state as a :class:`~harness.engine.lifecycle.Case`, and what its test-runner operations see.

    ``test`` (the model), the run's ``target``, ``driver``, ``failpoints`` and ``driver_uri`` (handed down in
    :class:`SpecServices`), and ``scope`` (the driver's entities, once created). Its body is
    :class:`~harness.engine.spec_case.SpecCase`'s.
    """

    def __init__(self, test: SpecTest, services: SpecServices) -> None:
        super().__init__()
        self.test = test
        self.target = services.target
        self.driver = services.driver
        self.failpoints = services.failpoints
        self.driver_uri = services.driver_uri
        self.scope: Any = None
        #: What test-runner operations opened for this test alone (a direct client to a pinned mongos and
        #: its fail points): each returns problems, called after the scope is closed.
        self.closers: list[Callable[[], list[str]]] = []
        #: ``targetedFailPoint``'s fail-point managers on servers the run's manager does not reach, by address.
        self.direct_failpoints: dict[tuple[str, int], Any] = {}
        #: Why the driver scope was given no early no-change verdict ("" when it was: docs/causes.md section 4).
        self.no_early_verdict = ""

    @property
    def matching(self) -> MatchingEntities:
        """The driver scope as the comparators see it (their ``context``)."""
        return MatchingEntities(self.scope, self.driver)

    def close(self) -> list[str]:
        if self.scope is not None:
            self.scope.close()
        problems: list[str] = []
        for closer in reversed(self.closers):
            problems.extend(closer())
        return problems
