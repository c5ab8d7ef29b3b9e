"""One spec test, run: steps 2 to 5 of :mod:`harness.engine.spec_runner`'s procedure, as the body of a
:class:`~harness.engine.lifecycle.Case`.

2. reset databases and seed ``initialData`` through the harness's admin client;
3. create the test's entities in a fresh driver scope (new monitored clients);
4. run the operations in order: test-runner operations (``failPoint``...) from the operation table
   (:mod:`harness.engine.operation_table`), everything else through the driver; check each result or error as
   soon as it is known. A mismatch is a cause (docs/causes.md) and the operations go on; a cause that breaks
   the test's flow (an unexpected error, an error not raised, no change) ends them, and the checks it leaves
   are recorded as not reached. What the driver adapter lacks (``DriverLacksFeature``) makes the test ``skipped``;
5. unless the flow broke, compare observed events with ``expectEvents``, log messages with
   ``expectLogMessages``, then collection contents with the expected data (``outcome``).

A :class:`SpecCase` is built by the run's one :class:`~harness.engine.spec_runner.SpecRunner` with everything it
needs handed down (the target, the driver, the run's fail points, the driver's URI, the settings, the plug-ins'
routes) and knows nothing above it: the walk of a test goes down, never back up (docs/architecture.md,
"The per-test lifecycle").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bson import json_util
from bson.json_util import CANONICAL_JSON_OPTIONS

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
    DriverLacksFeature,
    NestedOperations,
    TargetAdminError,
    UnsupportedOperation,
    require_capability,
    require_event_family,
)
from harness.core.resume_tokens import DETAIL as RESUME_TOKENS
from harness.core.resume_tokens import UNREAD
from harness.engine import read_ahead
from harness.engine.operation_table import TEST_RUNNER_OPERATIONS
from harness.engine.run_settings import RunSettings
from harness.engine.spec_context import SpecContext, SpecServices
from harness.engine.stream_trail import aggregates_trail
from harness.formats.unified_operations import NESTED_OPERATIONS, any_arguments_of

#: A plug-in's route for one test's clients (a wire proxy that shapes replies): ``route(test, target, uri)``.
DriverRoute = Callable[[SpecTest, Any, str], Any]


class SpecCase(SpecContext):
    """One spec test's run: its :class:`SpecContext` (what its test-runner operations see) and the procedure."""

    def __init__(
        self, test: SpecTest, services: SpecServices, settings: RunSettings, driver_routes: list[DriverRoute]
    ) -> None:
        super().__init__(test, services)
        self.settings = settings
        self.driver_routes = driver_routes

    def body(self) -> None:
        """Steps 2 to 5 of the procedure; raises what it finds (the lifecycle makes it a verdict)."""
        test = self.test
        self._prepare_data()
        self.current = "creating entities"
        with self.lock:  # a driver scope opened after a timeout's teardown would never be closed
            self.check_alive()
            fast = self.driver.fast_heartbeat_ms is not None and wants_fast_heartbeats(test)
            if fast:
                self.details["fast_heartbeat_ms"] = self.driver.fast_heartbeat_ms
            route = next(
                filter(None, (route_for(test, self.target, self.driver_uri) for route_for in self.driver_routes)), None
            )
            if route is not None:
                self.closers.append(route.close)  # closed with the test, even if opening the scope fails
            uri = route.uri if route is not None else self.driver_uri
            self.no_early_verdict = self._no_early_verdict(route)
            self.scope = self.driver.open_scope(
                uri,
                iteration_timeout_s=self.settings.iteration_timeout_s,
                fast_heartbeats=fast,
                iteration_mode=self.settings.iteration_mode,
                resume_token_format=None if self.no_early_verdict else self._resume_token_format(),
            )
        for entity in test.entities:
            try:
                self.scope.create_entity(entity)
            except DriverOperationError as exc:
                raise HarnessError(f"cannot create {entity.kind} entity {entity.id!r}: {exc.info.describe()}") from exc
        findings = Findings()
        error = self._run_operations(findings)
        comparator = comparator_for(test.comparator)
        if test.expect_error is not None and not findings.flow_broken:
            self._collect(findings, lambda: self._check_test_error(comparator, error))
        later = [
            *(("checking events", e.label, lambda e=e: self._check_events(e)) for e in test.expect_events),
            *(
                ("checking log messages", m.label, lambda m=m: self._check_log_messages(m))
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
            self.current = current
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

    def _check_test_error(self, comparator: Any, error: ErrorInfo | None) -> None:
        """The legacy format's test-level ``result.error``."""
        test = self.test
        if error is None:
            message = f"result.error: expected an error matching {show(test.expect_error)}, but no operation raised one"
            cause = cause_of.Cause(
                cause_of.ERROR_NOT_RAISED, step="result.error", expected=show(test.expect_error), fact=message
            )
            raise TestFailure(message, causes=[cause])
        found = comparator.match_error(test.expect_error, error, "result.error", self.matching)
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

    def _prepare_data(self) -> None:
        self.current = "preparing data"
        tasks = self.target.admin_tasks
        try:
            for name in self.test.reset_databases:
                self.check_alive()
                tasks.drop_database(name)
            for data in self.test.initial_data:
                self.check_alive()
                # The specs: set-up goes through the internal client with majority write concern.
                tasks.recreate_collection(data.database, data.collection, data.create_options, data.documents)
        except TargetAdminError as exc:
            raise HarnessError(f"could not prepare databases and collections on the target: {exc}") from exc

    def _run_operations(self, findings: Findings) -> ErrorInfo | None:
        """Run the operations until one breaks the test's flow (the rest are not reached); return the error that
        ended them, for a test-level expectation. A mismatch of one operation's result or error is a cause, and
        the next operation still runs."""
        operations = self.test.operations
        for index, operation in enumerate(operations):
            label = operation.label or f"operations[{index}]"
            if findings.flow_broken:
                findings.not_reached.append(_step(label, operation))
                continue
            try:
                error = self._run_one(operation, label)
            except TestFailure as failure:
                findings.found(failure, self.current)
                continue
            except (HarnessError, UnsupportedOperation, UnsupportedAssertion) as exc:
                _cannot_go_on(findings, self.current, exc)
                continue
            if error is not None:
                findings.not_reached.extend(
                    _step(later.label or f"operations[{i}]", later)
                    for i, later in enumerate(operations[index + 1 :], start=index + 1)
                )
                return error
        return None

    def _run_one(self, operation: Operation, label: str) -> ErrorInfo | None:
        """Run one operation and check its result or error as soon as it is known.

        Returns the error only when the test expects one at test level (legacy). Nested operations
        (``withTransaction``'s callback) are run by the driver and checked by :class:`_NestedCheck`.
        """
        step = self.current = _step(label, operation)
        started = time.monotonic()
        try:
            result = self._execute(operation)
        except DriverOperationError as exc:
            return self._check_outcome(operation, label, None, exc)
        except NoChangeWithin as exc:
            if operation.ignore_result_and_error:
                # The format: "both the error and result for the operation MUST be ignored"; an iteration that
                # found the stream ended (or nothing within the budget) is such a result.
                return None
            expected = "" if operation.expect_result is NOT_GIVEN else f"; expected {show(operation.expect_result)}"
            waited = round(time.monotonic() - started, 3)
            assert self.scope is not None
            trail = aggregates_trail(self.scope, self.test)
            watched = f"watched {waited:g}s of {self.settings.iteration_timeout_s:g}s"
            if self.no_early_verdict and not exc.early:
                watched += f"; no early verdict: {self.no_early_verdict}"
            cause = cause_of.Cause(
                cause_of.NO_CHANGE,
                step=step,
                expected="" if operation.expect_result is NOT_GIVEN else show(operation.expect_result),
                waited_s=waited,
                fact=f"no change arrived: {exc} ({watched})" + (f"; {trail}" if trail else ""),
            )
            raise TestFailure(f"{label}: {exc}{expected}", causes=[cause]) from exc
        return self._check_outcome(operation, label, result, None)

    def _check_outcome(
        self,
        operation: Operation,
        label: str,
        result: Any,
        error: DriverOperationError | None,
        in_callback: bool = False,
    ) -> ErrorInfo | None:
        """Check one operation's result, or the driver's error; see :meth:`_run_one`."""
        test = self.test
        comparator = comparator_for(test.comparator)
        scope = self.scope
        assert scope is not None
        step = _step(label, operation)
        if error is not None:
            exc = error
            if test.expect_error is not None:
                return exc.info
            if operation.expect_error is not None:
                found = comparator.match_error(operation.expect_error, exc.info, f"{label}.expectError", self.matching)
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
            found = comparator.match_result(operation.expect_result, result, label, self.matching)
            if found:
                raise TestFailure(
                    _describe(f"{label}: {operation.name} result does not match", found),
                    found,
                    [cause_of.from_mismatch(cause_of.RESULT, step, m) for m in found],
                )
        return None

    def _with_callbacks(self, operation: Operation) -> Operation:
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
        hook = _NestedCheck(self, list(inner), labels)
        return replace(operation, arguments={**operation.arguments, key: NestedOperations(tuple(inner), hook)})

    def _execute(self, operation: Operation) -> Any:
        if operation.object == TEST_RUNNER:
            implementation = TEST_RUNNER_OPERATIONS.get(operation.name)
            if implementation is None:
                raise HarnessError(f"unknown test runner operation {operation.name!r}")
            self.check_alive()
            return implementation(self, operation)
        self.check_alive()
        assert self.scope is not None
        try:
            return self.scope.run(self._with_callbacks(operation))
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

    def _check_events(self, expectation: EventExpectation) -> None:
        assert self.scope is not None
        comparator = comparator_for(self.test.comparator)
        require_event_family(self.driver, expectation.event_type, expectation.label)
        try:
            published = self.scope.events(expectation.client, event_type=expectation.event_type)
        except DriverLacksFeature:
            raise
        except UnsupportedOperation as exc:
            raise HarnessError(f"{expectation.label}: {exc}") from exc
        observed = [e for e in published if e.command_name not in expectation.skip_commands]
        if self.settings.iteration_mode in PUSH_ITERATION_MODES and expectation.event_type == "command":
            observed, skipped = read_ahead.aligned(expectation.events, observed)
            if skipped:
                counted = self.details.setdefault("read_ahead_getmores", {})
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
            found = comparator.match_event(expected, observed[index], path, self.matching)
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

    def _check_log_messages(self, expectation: LogExpectation) -> None:
        """``expectLogMessages``: the client's structured log messages, by the unified format's rules."""
        assert self.scope is not None
        require_capability(self.driver, "log_messages", expectation.label)
        observed = self.scope.log_messages(expectation.client)
        found = match_log_messages(expectation, observed, expectation.label, self.matching)
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

    def __init__(self, case: SpecCase, operations: list[Operation], labels: list[str]):
        self.case, self.operations, self.labels = case, operations, labels

    def started(self, index: int) -> None:
        operation = self.operations[index]
        self.case.current = _step(self.labels[index], operation)
        self.case.check_alive()

    def finished(self, index: int, result: Any, error: DriverOperationError | None) -> None:
        self.case._check_outcome(self.operations[index], self.labels[index], result, error, in_callback=True)


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
