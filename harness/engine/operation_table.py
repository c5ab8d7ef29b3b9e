"""The test-runner operation table (operations with ``object: testRunner``), and their per-test context.

Operations are found by their spec name. The engine's own (``wait``,
``failPoint``, the unified format's assertions) and a plug-in's (network
faults) register the same way, with :func:`test_runner_operation`; the spec
runner looks names up here and knows none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.core.model import Operation, SpecTest
from harness.engine.lifecycle import Case


class TestContext(Case):
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

    def body(self) -> None:
        self.runner.body(self)

    def close(self) -> list[str]:
        if self.scope is not None:
            self.scope.close()
        problems: list[str] = []
        for closer in reversed(self.closers):
            problems.extend(closer())
        return problems


TestRunnerOperation = Callable[[TestContext, Operation], Any]
TEST_RUNNER_OPERATIONS: dict[str, TestRunnerOperation] = {}


def test_runner_operation(name: str) -> Callable[[TestRunnerOperation], TestRunnerOperation]:
    """Register the decorated function as the test-runner operation ``name``."""

    def register(fn: TestRunnerOperation) -> TestRunnerOperation:
        TEST_RUNNER_OPERATIONS[name] = fn
        return fn

    return register


test_runner_operation.__test__ = False  # type: ignore[attr-defined] - not a pytest test
