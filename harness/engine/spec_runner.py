"""Runs one :class:`~harness.core.model.SpecTest` against a target through a driver adapter.

The procedure, whatever format the test came from:

1. skip it, with the reason, if its requirements rule the target out (or it uses a
   test-runner operation the format defines and this runner lacks; one nobody defines is an ``error``);
2. reset databases and seed ``initialData`` through the harness's admin client;
3. create the test's entities in a fresh driver scope (new monitored clients);
4. run the operations in order: test-runner operations (``failPoint``...) here,
   everything else through the driver; check each result or error as soon
   as it is known. A mismatch is a cause (docs/causes.md) and the operations go on; a cause that
   breaks the test's flow (an unexpected error, an error not raised, no change) ends them, and the
   checks it leaves are recorded as not reached. What the driver
   adapter lacks (``DriverLacksFeature``) makes the test ``skipped``;
5. unless the flow broke, compare observed events with ``expectEvents``, log messages with
   ``expectLogMessages``, then collection contents with the expected data (``outcome``);
6. always: close the driver scope and turn every fail point off.

Step 1 is :meth:`SpecRunner.preflight`; steps 2 to 5 are the body of a
:class:`~harness.engine.spec_context.SpecContext`; the run drives it
through the one per-test lifecycle (:mod:`harness.engine.lifecycle`), which
owns the deadline and step 6, so a target that hangs gives an ``error``
verdict and the run goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from bson import json_util
from bson.json_util import CANONICAL_JSON_OPTIONS

import harness.engine.runner_operations
import harness.engine.targeted_failpoint  # noqa: F401 - registers targetedFailPoint
from harness.core import causes as cause_of
from harness.core.causes import Findings
from harness.core.errors import HarnessError, TestFailure
from harness.core.matching import Mismatch, UnsupportedAssertion, show
from harness.core.matching.log_messages import match_log_messages
from harness.core.matching.table import comparator_for
from harness.core.model import (
    NOT_GIVEN,
    TEST_RUNNER,
    CollectionData,
    EntitySpec,
    EventExpectation,
    LogExpectation,
    Operation,
    SpecTest,
)
from harness.core.observations import DriverOperationError, ErrorInfo, NoChangeWithin
from harness.core.ports import (
    PUSH_ITERATION_MODES,
    DriverAdapter,
    DriverLacksFeature,
    FailPointError,
    NestedOperations,
    Target,
    TargetAdminError,
    UnsupportedOperation,
    require_capability,
    require_event_family,
)
from harness.core.requirements import skip_reason
from harness.core.resume_tokens import DETAIL as RESUME_TOKENS
from harness.core.resume_tokens import UNREAD
from harness.core.verdicts import ERROR, SKIPPED, Verdict
from harness.engine import read_ahead
from harness.engine.failpoint_manager import FailPointManager
from harness.engine.operation_table import TEST_RUNNER_OPERATIONS, test_runner_operation
from harness.engine.spec_context import SpecContext
from harness.engine.stream_trail import aggregates_trail
from harness.formats.unified_operations import NESTED_OPERATIONS, any_arguments_of
from harness.formats.unified_operations import TEST_RUNNER as FORMAT_RUNNER_OPERATIONS


@dataclass
class RunSettings:
    test_timeout_s: float = 30.0
    iteration_timeout_s: float = 10.0
    #: How every scope consumes its change streams (``--iteration-mode``, a name from
    #: :data:`harness.core.ports.ITERATION_MODES`); None: the driver's default.
    iteration_mode: str | None = None
    #: A test whose file has a schema format but was loaded without one (no schema found) is an error.
    require_schema: bool = False
    #: An iteration that gets no change may end before its budget once the change can no longer come (docs/causes.md
    #: section 4), for a driver that can tell (``DriverAdapter.early_no_change``); False: every one waits its budget.
    early_no_change: bool = True


#: The message of a test refused by ``--require-schema``.
NO_SCHEMA_MESSAGE = (
    "{file}: no JSON schema was found for this file's format, so it was loaded unchecked, and "
    "--require-schema asks for one (give its folder with HARNESS_UNIFIED_SCHEMA_DIR, or fetch "
    "git:https://github.com/mongodb/specifications@COMMIT#source/unified-test-format)"
)


@test_runner_operation("wait")
def _wait(context: SpecContext, operation: Operation) -> None:
    """The unified format's ``wait``: sleep ``ms`` milliseconds (no lock held: teardown may happen meanwhile)."""
    milliseconds = operation.arguments.get("ms")
    if not isinstance(milliseconds, (int, float)) or milliseconds < 0:
        raise HarnessError(f"{operation.label}: wait needs a non-negative 'ms', got {milliseconds!r}")
    time.sleep(milliseconds / 1000)


@test_runner_operation("failPoint")
def _fail_point(context: SpecContext, operation: Operation) -> None:
    command = operation.arguments.get("failPoint")
    if not isinstance(command, dict):
        raise HarnessError(f"{operation.label}: failPoint needs a 'failPoint' document")
    try:
        with context.guarded():  # a torn-down test must not arm a point the next test would inherit
            context.runner.failpoints.arm(command)
    except FailPointError as exc:
        raise HarnessError(f"{operation.label}: {exc}") from exc


class SpecRunner:
    """Runs tests one after another on one started target with one driver."""

    def __init__(
        self,
        target: Target,
        driver: DriverAdapter,
        failpoints: FailPointManager,
        settings: RunSettings | None = None,
        driver_uri: str | None = None,
        skip_rules: list[Callable[[SpecTest, Any], str | None]] | None = None,
        driver_routes: list[Callable[[SpecTest, Any, str], Any]] | None = None,
    ) -> None:
        self.target = target
        self.driver = driver
        self.failpoints = failpoints
        self.settings = settings or RunSettings()
        #: Where clients under test connect (a proxy in front of the target, or the target itself).
        self.driver_uri = driver_uri or target.uri
        #: Extra reasons to skip a test on this run (plug-ins' rules: it needs network faults the run lacks).
        self.skip_rules: list[Callable[[SpecTest, Any], str | None]] = list(skip_rules or [])
        #: Plug-ins that give one test's clients a path of their own (a wire proxy that shapes replies).
        self.driver_routes: list[Callable[[SpecTest, Any, str], Any]] = list(driver_routes or [])

    # -- public ---------------------------------------------------------------
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

    def case(self, test: SpecTest) -> SpecContext:
        return SpecContext(self, test)

    def body(self, context: SpecContext) -> None:
        """Steps 2 to 5 of the procedure; raises what it finds (the lifecycle makes it a verdict)."""
        test = context.test
        self._prepare_data(context)
        context.current = "creating entities"
        with context.lock:  # a driver scope opened after a timeout's teardown would never be closed
            context.check_alive()
            fast = self.driver.fast_heartbeat_ms is not None and wants_fast_heartbeats(test)
            if fast:
                context.details["fast_heartbeat_ms"] = self.driver.fast_heartbeat_ms
            route = next(
                filter(None, (route_for(test, self.target, self.driver_uri) for route_for in self.driver_routes)), None
            )
            if route is not None:
                context.closers.append(route.close)  # closed with the test, even if opening the scope fails
            uri = route.uri if route is not None else self.driver_uri
            context.no_early_verdict = self._no_early_verdict(route)
            context.scope = self.driver.open_scope(
                uri,
                iteration_timeout_s=self.settings.iteration_timeout_s,
                fast_heartbeats=fast,
                iteration_mode=self.settings.iteration_mode,
                resume_token_format=None if context.no_early_verdict else self._resume_token_format(),
            )
        for entity in test.entities:
            try:
                context.scope.create_entity(entity)
            except DriverOperationError as exc:
                raise HarnessError(f"cannot create {entity.kind} entity {entity.id!r}: {exc.info.describe()}") from exc
        findings = Findings()
        error = self._run_operations(context, findings)
        comparator = comparator_for(test.comparator)
        if test.expect_error is not None and not findings.flow_broken:
            self._collect(findings, lambda: self._check_test_error(context, comparator, error))
        later = [
            *(("checking events", e.label, lambda e=e: self._check_events(context, e)) for e in test.expect_events),
            *(
                ("checking log messages", m.label, lambda m=m: self._check_log_messages(context, m))
                for m in test.expect_log_messages
            ),
            *(
                (
                    "checking collection contents",
                    f"outcome {d.database}.{d.collection}",
                    lambda d=d: self._check_data(d),
                )
                for d in test.expected_data
            ),
        ]
        for current, label, run_check in later:
            if findings.flow_broken:
                findings.not_reached.append(label)
                continue
            context.current = current
            self._collect(findings, run_check, label)
        if findings.causes:
            raise TestFailure(
                "\n".join(findings.messages),
                findings.mismatches,
                findings.causes,
                findings.not_reached,
            )

    @staticmethod
    def _collect(findings: Findings, run_check: Callable[[], None], step: str = "") -> None:
        """Run one check; what it finds joins the test's findings instead of ending the test."""
        try:
            run_check()
        except TestFailure as failure:
            findings.found(failure)
        except (HarnessError, UnsupportedOperation, UnsupportedAssertion) as exc:
            _cannot_go_on(findings, step, exc)

    def _check_test_error(self, context: SpecContext, comparator: Any, error: ErrorInfo | None) -> None:
        """The legacy format's test-level ``result.error``."""
        test = context.test
        if error is None:
            message = f"result.error: expected an error matching {show(test.expect_error)}, but no operation raised one"
            cause = cause_of.Cause(
                cause_of.ERROR_NOT_RAISED, step="result.error", expected=show(test.expect_error), fact=message
            )
            raise TestFailure(message, causes=[cause])
        found = comparator.match_error(test.expect_error, error, "result.error", context.matching)
        if found:
            raise TestFailure(
                _describe("error does not match", found, error=error),
                found,
                [cause_of.from_mismatch(cause_of.ERROR_MATCH, "result.error", m, error) for m in found],
            )

    def _no_early_verdict(self, route: Any) -> str:
        """Why this test's scope gets no early no-change verdict (docs/causes.md section 4), or "" when it does: the
        runner runs a test's operations one at a time, so no write starts while an iteration waits; what is left to
        know is whether the driver can tell and whether its replies are the target's own."""
        if not self.settings.early_no_change:
            return "it is turned off for this run"
        if not self.driver.early_no_change:
            where = " in an executor" if self.driver.executor is not None else ""
            return (
                f"not available for the {self.driver.name} driver{where} (an executor gives it only with the "
                "command_log capability, docs/executor-protocol.md 6.4.2)"
            )
        if route is not None:
            return "a wire proxy in this test's path may hold back or reshape replies"
        return ""

    def _resume_token_format(self) -> str:
        """The format the target's resume tokens are read in (``unread`` when the harness reads none of its)."""
        fmt = self.target.info.details.get(RESUME_TOKENS)
        return fmt if isinstance(fmt, str) else UNREAD

    def _prepare_data(self, context: SpecContext) -> None:
        context.current = "preparing data"
        tasks = self.target.admin_tasks
        try:
            for name in context.test.reset_databases:
                context.check_alive()
                tasks.drop_database(name)
            for data in context.test.initial_data:
                context.check_alive()
                # The specs: set-up goes through the internal client with majority write concern.
                tasks.recreate_collection(data.database, data.collection, data.create_options, data.documents)
        except TargetAdminError as exc:
            raise HarnessError(f"could not prepare databases and collections on the target: {exc}") from exc

    def _run_operations(self, context: SpecContext, findings: Findings) -> ErrorInfo | None:
        """Run the operations until one breaks the test's flow (the rest are not reached); return the error that
        ended them, for a test-level expectation. A mismatch of one operation's result or error is a cause, and
        the next operation still runs."""
        operations = context.test.operations
        for index, operation in enumerate(operations):
            label = operation.label or f"operations[{index}]"
            if findings.flow_broken:
                findings.not_reached.append(_step(label, operation))
                continue
            try:
                error = self._run_one(context, operation, label)
            except TestFailure as failure:
                findings.found(failure, context.current)
                continue
            except (HarnessError, UnsupportedOperation, UnsupportedAssertion) as exc:
                _cannot_go_on(findings, context.current, exc)
                continue
            if error is not None:
                findings.not_reached.extend(
                    _step(later.label or f"operations[{i}]", later)
                    for i, later in enumerate(operations[index + 1 :], start=index + 1)
                )
                return error
        return None

    def _run_one(self, context: SpecContext, operation: Operation, label: str) -> ErrorInfo | None:
        """Run one operation and check its result or error as soon as it is known.

        Returns the error only when the test expects one at test level (legacy). Nested operations
        (``withTransaction``'s callback) are run by the driver and checked by :class:`_NestedCheck`.
        """
        step = context.current = _step(label, operation)
        started = time.monotonic()
        try:
            result = self._execute(context, operation)
        except DriverOperationError as exc:
            return self._check_outcome(context, operation, label, None, exc)
        except NoChangeWithin as exc:
            if operation.ignore_result_and_error:
                # The format: "both the error and result for the operation MUST be ignored"; an iteration that
                # found the stream ended (or nothing within the budget) is such a result.
                return None
            expected = "" if operation.expect_result is NOT_GIVEN else f"; expected {show(operation.expect_result)}"
            waited = round(time.monotonic() - started, 3)
            assert context.scope is not None
            trail = aggregates_trail(context.scope, context.test)
            watched = f"watched {waited:g}s of {self.settings.iteration_timeout_s:g}s"
            if context.no_early_verdict and not exc.early:
                watched += f"; no early verdict: {context.no_early_verdict}"
            cause = cause_of.Cause(
                cause_of.NO_CHANGE,
                step=step,
                expected="" if operation.expect_result is NOT_GIVEN else show(operation.expect_result),
                waited_s=waited,
                fact=f"no change arrived: {exc} ({watched})" + (f"; {trail}" if trail else ""),
            )
            raise TestFailure(f"{label}: {exc}{expected}", causes=[cause]) from exc
        return self._check_outcome(context, operation, label, result, None)

    def _check_outcome(
        self,
        context: SpecContext,
        operation: Operation,
        label: str,
        result: Any,
        error: DriverOperationError | None,
        in_callback: bool = False,
    ) -> ErrorInfo | None:
        """Check one operation's result, or the driver's error; see :meth:`_run_one`."""
        test = context.test
        comparator = comparator_for(test.comparator)
        scope = context.scope
        assert scope is not None
        step = _step(label, operation)
        if error is not None:
            exc = error
            if test.expect_error is not None:
                return exc.info
            if operation.expect_error is not None:
                found = comparator.match_error(
                    operation.expect_error, exc.info, f"{label}.expectError", context.matching
                )
                if found:
                    raise TestFailure(
                        _describe(f"{label}: {operation.name} raised the wrong error", found, error=exc.info),
                        found,
                        [cause_of.from_mismatch(cause_of.ERROR_MATCH, step, m, exc.info) for m in found],
                    ) from exc
            elif not operation.ignore_result_and_error and not in_callback:
                message = f"{label}: {operation.name} raised an unexpected error: {exc.info.describe()}"
                raise TestFailure(
                    message,
                    causes=[cause_of.from_error(cause_of.ERROR_RAISED, step, exc.info, exc.info.describe())],
                ) from exc
            return None
        if operation.expect_error is not None:
            message = (
                f"{label}: {operation.name} was expected to raise an error matching "
                f"{show(operation.expect_error)}, but returned {show(result)}"
            )
            cause = cause_of.Cause(
                cause_of.ERROR_NOT_RAISED,
                step=step,
                expected=show(operation.expect_error),
                actual=show(result),
                fact=message,
            )
            raise TestFailure(message, causes=[cause])
        if operation.save_result_as_entity:
            scope.set_entity(operation.save_result_as_entity, result)
        if operation.expect_result is not NOT_GIVEN and not operation.ignore_result_and_error:
            found = comparator.match_result(operation.expect_result, result, label, context.matching)
            if found:
                raise TestFailure(
                    _describe(f"{label}: {operation.name} result does not match", found),
                    found,
                    [cause_of.from_mismatch(cause_of.RESULT, step, m) for m in found],
                )
        return None

    def _with_callbacks(self, context: SpecContext, operation: Operation) -> Operation:
        """An operation whose argument is a list of operations (``withTransaction``'s ``callback``) gets them
        as :class:`~harness.core.ports.NestedOperations`: the values, and a hook that checks each as the
        adapter reports it (docs/architecture.md, "Nested operations")."""
        key = NESTED_OPERATIONS.get(operation.name)
        inner = operation.arguments.get(key) if key else None
        if key is None or not isinstance(inner, list):
            return operation
        runner_operations = [nested.label or nested.name for nested in inner if nested.object == TEST_RUNNER]
        if runner_operations:
            raise HarnessError(
                f"{operation.label}: {operation.name}: test-runner operations inside {key} are not supported "
                f"(the driver runs the nested operations): {runner_operations}"
            )
        labels = [nested.label or f"{operation.label}.{key}[{index}]" for index, nested in enumerate(inner)]
        hook = _NestedCheck(self, context, list(inner), labels)
        return replace(operation, arguments={**operation.arguments, key: NestedOperations(tuple(inner), hook)})

    def _execute(self, context: SpecContext, operation: Operation) -> Any:
        if operation.object == TEST_RUNNER:
            implementation = TEST_RUNNER_OPERATIONS.get(operation.name)
            if implementation is None:
                raise HarnessError(f"unknown test runner operation {operation.name!r}")
            context.check_alive()
            return implementation(context, operation)
        context.check_alive()
        assert context.scope is not None
        try:
            return context.scope.run(self._with_callbacks(context, operation))
        except DriverLacksFeature as exc:
            if any_arguments_of(operation.name) is None:  # not a feature the driver lacks: a name nobody defines
                raise HarnessError(f"{operation.label}: unknown operation {operation.name!r}: {exc}") from exc
            raise DriverLacksFeature(f"{operation.label}: {exc}") from exc

    def _check_data(self, expected: CollectionData) -> None:
        """The collection holds exactly these documents (by ``_id``; key order aside), read by the admin client."""
        namespace = f"{expected.database}.{expected.collection}"
        try:
            actual = self.target.admin_tasks.collection_documents(expected.database, expected.collection)
        except TargetAdminError as exc:
            raise HarnessError(f"could not read {namespace} to check its contents: {exc}") from exc
        if [_exact(d) for d in actual] != [_exact(d) for d in expected.documents]:
            mismatch = Mismatch(f"outcome {namespace}", expected.documents, actual, "collection contents differ")
            raise TestFailure(
                _describe(f"outcome: {namespace} does not hold the expected documents", [mismatch]),
                [mismatch],
                [cause_of.from_mismatch(cause_of.OUTCOME, f"outcome {namespace}", mismatch)],
            )

    def _check_events(self, context: SpecContext, expectation: EventExpectation) -> None:
        assert context.scope is not None
        comparator = comparator_for(context.test.comparator)
        require_event_family(self.driver, expectation.event_type, expectation.label)
        try:
            published = context.scope.events(expectation.client, event_type=expectation.event_type)
        except DriverLacksFeature:
            raise
        except UnsupportedOperation as exc:
            raise HarnessError(f"{expectation.label}: {exc}") from exc
        observed = [e for e in published if e.command_name not in expectation.skip_commands]
        if self.settings.iteration_mode in PUSH_ITERATION_MODES and expectation.event_type == "command":
            observed, skipped = read_ahead.aligned(expectation.events, observed)
            if skipped:
                counted = context.details.setdefault("read_ahead_getmores", {})
                counted[expectation.client] = counted.get(expectation.client, 0) + skipped
        label = expectation.label
        for index, expected in enumerate(expectation.events):
            path = f"{label}[{index}]"
            if index >= len(observed):
                message = (
                    f"{path}: expected {show(expected)}, but {expectation.client} published only "
                    f"{len(observed)} event(s): {_event_list(observed)}"
                )
                cause = cause_of.Cause(
                    cause_of.EVENT_MISSING,
                    step=label,
                    path=path,
                    expected=show(expected),
                    actual=_event_list(observed),
                    fact=message,
                )
                raise TestFailure(message, causes=[cause])
            found = comparator.match_event(expected, observed[index], path, context.matching)
            if found:
                sent = observed[index]
                raise TestFailure(
                    _describe(f"{path}: event does not match", found)
                    + f"\n  observed {sent.summary()}: {show(sent.command or sent.reply or sent.new_description, 600)}"
                    + f"\n  all events: {_event_list(observed)}",
                    found,
                    [cause_of.from_mismatch(cause_of.EVENT, label, m) for m in found],
                )
        if not expectation.ignore_extra_events and len(observed) > len(expectation.events):
            extra = observed[len(expectation.events) :]
            message = (
                f"{label}: {len(extra)} unexpected extra event(s) after the expected "
                f"{len(expectation.events)}: {_event_list(extra)}"
            )
            cause = cause_of.Cause(
                cause_of.EXTRA_EVENTS, step=label, path=label, actual=_event_list(extra), fact=message
            )
            raise TestFailure(message, causes=[cause])

    def _check_log_messages(self, context: SpecContext, expectation: LogExpectation) -> None:
        """``expectLogMessages``: the client's structured log messages, by the unified format's rules."""
        assert context.scope is not None
        require_capability(self.driver, "log_messages", expectation.label)
        observed = context.scope.log_messages(expectation.client)
        found = match_log_messages(expectation, observed, expectation.label, context.matching)
        if found:
            raise TestFailure(
                _describe(f"{expectation.label}: log messages of {expectation.client} do not match", found)
                + f"\n  observed: {[m.summary() for m in observed]}",
                found,
                [cause_of.from_mismatch(cause_of.LOG_MESSAGES, expectation.label, m) for m in found],
            )


class _NestedCheck:
    """The engine's :class:`~harness.core.ports.NestedOperationHook`: each nested operation the adapter reports
    is checked as a top-level one would be, except that an error is never the test's end: whatever
    ``expectError``/``ignoreResultAndError`` say, it goes back to the driver's loop (the unified format)."""

    def __init__(self, runner: SpecRunner, context: SpecContext, operations: list[Operation], labels: list[str]):
        self.runner, self.context, self.operations, self.labels = runner, context, operations, labels

    def started(self, index: int) -> None:
        operation = self.operations[index]
        self.context.current = _step(self.labels[index], operation)
        self.context.check_alive()

    def finished(self, index: int, result: Any, error: DriverOperationError | None) -> None:
        self.runner._check_outcome(
            self.context, self.operations[index], self.labels[index], result, error, in_callback=True
        )


def _step(label: str, operation: Operation) -> str:
    """How a cause, the record's ``not_reached`` and the live line name an operation: ``label (name on object)``."""
    return f"{label} ({operation.name} on {operation.object})"


def _cannot_go_on(findings: Findings, step: str, exc: Exception) -> None:
    """The harness cannot carry the test further. With nothing found yet that is the test's ``error`` (raised on);
    after a cause it must not hide what was found: a ``set-up`` cause says where the test stopped, and the rest is
    not reached."""
    if not findings.causes:
        raise exc
    message = f"{step}: the test could not go on: {exc}"
    findings.messages.append(message)
    findings.add(cause_of.Cause(cause_of.SET_UP, step=step, fact=message))


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


#: Test-runner operations that configure a fail point (the unified format's condition for fast heartbeats).
FAIL_POINT_OPERATIONS = ("failPoint", "targetedFailPoint")


def wants_fast_heartbeats(test: SpecTest) -> bool:
    """Whether the test's clients may get lowered heartbeats: it configures a fail point, and no client
    it creates sets ``heartbeatFrequencyMS`` itself (the unified format forbids lowering those; rather
    than split one test's clients, such a test keeps the driver's defaults throughout).

    The legacy format gets the same rule: its ``failPoint`` is loaded as a ``failPoint`` operation
    and its clients as client entities, so the decision is made on the one model.
    """
    if not any(op.object == TEST_RUNNER and op.name in FAIL_POINT_OPERATIONS for op in test.operations):
        return False
    clients = [entity for entity in test.entities if entity.kind == "client"]
    for op in test.operations:
        if op.object == TEST_RUNNER and op.name == "createEntities":
            clients += [e for e in op.arguments.get("entities", []) if isinstance(e, EntitySpec) and e.kind == "client"]
    return not any(
        k.lower() == "heartbeatfrequencyms" for client in clients for k in client.options.get("uriOptions", {})
    )


def _exact(document: Any) -> str:
    """A document for exact comparison: BSON types kept (1, 1.0, true and Int64(1) differ), key order aside."""
    return json_util.dumps(document, json_options=CANONICAL_JSON_OPTIONS, sort_keys=True)


def _describe(headline: str, mismatches: list[Mismatch], error: ErrorInfo | None = None) -> str:
    lines = [headline]
    lines.extend(f"  {m}" for m in mismatches[:10])
    if len(mismatches) > 10:
        lines.append(f"  ... and {len(mismatches) - 10} more")
    if error is not None:
        lines.append(f"  actual error: {error.describe()}")
    return "\n".join(lines)


def _event_list(events: list[Any]) -> str:
    return "[" + ", ".join(e.summary() for e in events) + "]"
