"""Runs :class:`~harness.core.model.SpecTest` s against one started target through one driver adapter.

The procedure, whatever format the test came from:

1. skip it, with the reason, if its requirements rule the target out (or it uses a
   test-runner operation the format defines and this runner lacks; one nobody defines is an ``error``);
2. to 5. run it: data, entities, operations, checks (:mod:`harness.engine.spec_case`);
6. always: close the driver scope and turn every fail point off.

The run builds one :class:`SpecRunner` when its target is up. Step 1 is :meth:`SpecRunner.preflight`;
:meth:`SpecRunner.case` builds a test's :class:`~harness.engine.spec_case.SpecCase` with what it needs handed
down (it holds no reference to the runner); the run drives it through the one per-test lifecycle
(:mod:`harness.engine.lifecycle`), which owns the deadline and step 6, so a target that hangs gives an
``error`` verdict and the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import harness.engine.runner_operations
import harness.engine.targeted_failpoint  # noqa: F401 - registers targetedFailPoint
from harness.core.model import TEST_RUNNER, Operation, SpecTest
from harness.core.ports import DriverAdapter, Target
from harness.core.requirements import skip_reason
from harness.core.verdicts import ERROR, SKIPPED, Verdict
from harness.engine.failpoint_manager import FailPointManager
from harness.engine.operation_table import TEST_RUNNER_OPERATIONS
from harness.engine.run_settings import RunSettings
from harness.engine.spec_case import DriverRoute, SpecCase
from harness.engine.spec_context import SpecServices
from harness.formats.unified_operations import NESTED_OPERATIONS
from harness.formats.unified_operations import TEST_RUNNER as FORMAT_RUNNER_OPERATIONS

__all__ = ["NO_SCHEMA_MESSAGE", "SpecRunner"]

#: The message of a test refused by ``--require-schema``.
NO_SCHEMA_MESSAGE = (
    "{file}: no JSON schema was found for this file's format, so it was loaded unchecked, and "
    "--require-schema asks for one (give its folder with HARNESS_UNIFIED_SCHEMA_DIR, or fetch "
    "git:https://github.com/mongodb/specifications@COMMIT#source/unified-test-format)"
)


class SpecRunner:
    """Runs tests one after another on one started target with one driver: built once per run."""

    def __init__(
        self,
        target: Target,
        driver: DriverAdapter,
        failpoints: FailPointManager,
        settings: RunSettings | None = None,
        driver_uri: str | None = None,
        skip_rules: list[Callable[[SpecTest, Any], str | None]] | None = None,
        driver_routes: list[DriverRoute] | None = None,
    ) -> None:
        self.target = target
        self.settings = settings or RunSettings()
        #: What every test's case is handed: the target, the driver, the run's fail points, and where clients
        #: under test connect (a proxy in front of the target, or the target itself).
        self.services = SpecServices(target, driver, failpoints, driver_uri or target.uri)
        #: Extra reasons to skip a test on this run (plug-ins' rules: it needs network faults the run lacks).
        self.skip_rules: list[Callable[[SpecTest, Any], str | None]] = list(skip_rules or [])
        #: Plug-ins that give one test's clients a path of their own (a wire proxy that shapes replies).
        self.driver_routes: list[DriverRoute] = list(driver_routes or [])

    def preflight(self, test: SpecTest) -> Verdict | None:
        """The verdict of a test that must not run here (it did not load, or does not apply), else None."""
        if test.load_error:
            return Verdict(ERROR, test.load_error)
        unknown = _unimplemented_runner_operation(test)
        if unknown:
            return unknown
        if self.settings.require_schema and test.schema == "none":
            return Verdict(ERROR, NO_SCHEMA_MESSAGE.format(file=test.file))
        reason = skip_reason(test, self.target) or next(
            filter(None, (rule(test, self.target) for rule in self.skip_rules)), None
        )
        return Verdict(SKIPPED, reason) if reason else None

    def case(self, test: SpecTest) -> SpecCase:
        """The test's case, for the lifecycle: it gets what it needs now and never calls back here."""
        return SpecCase(test, self.services, self.settings, self.driver_routes)


def _all_operations(operations: list[Operation]) -> Iterator[Operation]:
    """Operations and, depth first, those nested in their arguments (``withTransaction``'s callback)."""
    for operation in operations:
        yield operation
        key = NESTED_OPERATIONS.get(operation.name)
        inner = operation.arguments.get(key) if key else None
        if isinstance(inner, list):
            yield from (op for op in _all_operations(inner) if isinstance(op, Operation))


def _unimplemented_runner_operation(test: SpecTest) -> Verdict | None:
    """Checked before anything runs: a test-runner operation nobody registered is an ``error`` (a typo, or a
    plug-in that is not installed), one the unified format defines but this runner lacks is ``skipped``."""
    for operation in _all_operations(test.operations):
        if operation.object != TEST_RUNNER or operation.name in TEST_RUNNER_OPERATIONS:
            continue
        if operation.name in FORMAT_RUNNER_OPERATIONS:
            return Verdict(
                SKIPPED,
                f"{operation.label}: the test-runner operation {operation.name} is not implemented by this runner",
            )
        return Verdict(
            ERROR,
            f"{test.file}: {operation.label}: unknown test-runner operation {operation.name!r} "
            f"(known: {sorted(TEST_RUNNER_OPERATIONS)})",
        )
    return None
