"""The test-runner operation table (operations with ``object: testRunner``).

Operations are found by their spec name. The engine's own (``wait``,
``failPoint``, the unified format's assertions) and a plug-in's (network
faults) register the same way, with :func:`test_runner_operation`; the spec
runner looks names up here and knows none of them. Each gets the test's
:class:`~harness.engine.spec_context.SpecContext`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.core.model import Operation
from harness.engine.spec_context import SpecContext

TestRunnerOperation = Callable[[SpecContext, Operation], Any]
TEST_RUNNER_OPERATIONS: dict[str, TestRunnerOperation] = {}


def test_runner_operation(name: str) -> Callable[[TestRunnerOperation], TestRunnerOperation]:
    """Register the decorated function as the test-runner operation ``name``."""

    def register(fn: TestRunnerOperation) -> TestRunnerOperation:
        TEST_RUNNER_OPERATIONS[name] = fn
        return fn

    return register


test_runner_operation.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
