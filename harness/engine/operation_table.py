"""The test-runner operation table (operations with ``object: testRunner``), and their per-test context.

Operations are found by their spec name. The engine's own (``wait``,
``failPoint``, the unified format's assertions) and a plug-in's (network
faults) register the same way, with :func:`test_runner_operation`; the spec
runner looks names up here and knows none of them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from harness.core.errors import HarnessError
from harness.model import Operation, SpecTest


class TestContext:
    """Per-test state shared by the runner and its test-runner operations."""

    __test__ = False  # not a pytest test class

    def __init__(self, runner: Any, test: SpecTest) -> None:
        self.runner = runner
        self.test = test
        self.session: Any = None
        self.current = "set-up"
        #: Serialises teardown against the runner's own operations: once a test is torn
        #: down (by its worker, or by the main thread after a timeout), a worker that is
        #: still running can neither arm a fault nor clean up a later test's faults.
        self.lock = threading.Lock()
        self.torn_down = False

    def check_alive(self) -> None:
        if self.torn_down:
            raise HarnessError("the test was torn down (timed out) before this step")

    @contextlib.contextmanager
    def guarded(self) -> Iterator[None]:
        """For steps that change the target (arming a fault): never after teardown, never during it."""
        with self.lock:
            self.check_alive()
            yield


TestRunnerOperation = Callable[[TestContext, Operation], Any]
TEST_RUNNER_OPERATIONS: dict[str, TestRunnerOperation] = {}


def test_runner_operation(name: str) -> Callable[[TestRunnerOperation], TestRunnerOperation]:
    """Register the decorated function as the test-runner operation ``name``."""

    def register(fn: TestRunnerOperation) -> TestRunnerOperation:
        TEST_RUNNER_OPERATIONS[name] = fn
        return fn

    return register


test_runner_operation.__test__ = False  # type: ignore[attr-defined] - not a pytest test
