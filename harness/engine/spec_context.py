"""One spec test's context: the :class:`~harness.engine.lifecycle.Case` the spec runner runs, and what its
test-runner operations (:mod:`harness.engine.operation_table`) see."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.core.model import SpecTest
from harness.core.ports import require_capability
from harness.engine.lifecycle import Case


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
    """One spec test as a :class:`~harness.engine.lifecycle.Case`, and what its test-runner operations see.

    ``runner`` (the spec runner: ``target``, ``failpoints``, ``driver``), ``test``
    (the model), and ``scope`` (the driver's entities, once created).
    """

    def __init__(self, runner: Any, test: SpecTest) -> None:
        super().__init__()
        self.runner = runner
        self.test = test
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
        return MatchingEntities(self.scope, self.runner.driver)

    def body(self) -> None:
        self.runner.body(self)

    def close(self) -> list[str]:
        if self.scope is not None:
            self.scope.close()
        problems: list[str] = []
        for closer in reversed(self.closers):
            problems.extend(closer())
        return problems
