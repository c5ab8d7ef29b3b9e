"""One harness run: a started target, a driver, fail points, a results store.

Every front end (the ``harness`` CLI, the pytest plugin, the prose tests'
conftest, ``harness campaign``) drives tests through a :class:`HarnessRun`, so
they give the same verdicts and write the same records. Tests come in as
:class:`~harness.core.model.SpecTest` (spec files) or as :class:`CodeDefinedTest`
(prose tests, campaigns and other code-defined tests); both are a
:class:`~harness.core.ports.Runnable`, and the run asks that, never which kind a test is,
before the one per-test lifecycle (:func:`harness.engine.lifecycle.run_case`). Which
target, driver and fail-point backend a run uses is looked up by name in the
plug-in table (:mod:`harness.engine.plugins`); this module names none.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from harness.core.causes import clauses_of, of_verdict
from harness.core.credentials import redact_text
from harness.core.expectations import Classification, Expectations, ExpectationsError, with_uri_options
from harness.core.ports import (
    DriverAdapter,
    PairIncompatible,
    Runnable,
    Target,
    TargetInfo,
    TargetUnavailable,
    chosen_iteration_mode,
)
from harness.core.project_data import project_data
from harness.core.records import RunProvenance, make_record, new_run_id, utc_now
from harness.core.rules import RuleIndex
from harness.core.run_notes import RunNotes
from harness.core.verdicts import ERROR, FAILED, Verdict
from harness.engine import child_processes
from harness.engine.failpoint_manager import FailPointManager
from harness.engine.lifecycle import Case, run_case
from harness.engine.plugins import FailPointSetup, Registry, load_plugins
from harness.engine.results_store import ResultsStore
from harness.engine.run_settings import RunSettings
from harness.engine.spec_runner import SpecRunner
from harness.formats.expectations_file import load_expectations
from harness.record.outcomes import FAILING, outcome_of

#: Where the project's expected-outcome files live (``specs/expectations/<target name>.yml``, as installed).
EXPECTATIONS_DIR = project_data("expectations")


@dataclass
class RunOptions:
    target: str = "embedded"
    driver: str = "pymongo"
    results: Path | None = None
    expected: str | None = "auto"
    failpoints: str = "auto"
    #: Put a Toxiproxy server between the drivers under test and the target (scenario ``networkFault``).
    network_faults: bool = False
    settings: RunSettings = field(default_factory=RunSettings)
    #: Free-form provenance (``--label KEY=VALUE``), e.g. the matrix cell and repeat a run belongs to.
    labels: dict[str, str] = field(default_factory=dict)
    #: The run's id; parallel workers share their parent's (None: a new one).
    run_id: str | None = None
    #: More facts for every record's provenance (which spec sources the run read).
    provenance: dict[str, Any] = field(default_factory=dict)
    #: Which rules each test checks, for the records' ``rules`` (the composition root loads the project's
    #: mapping); None: only the ids a test names at the start of its description. Its levels make an unlisted
    #: failure of a test that checks only SHOULD-level rules a recommendation not followed (not a run failure).
    rules: RuleIndex | None = None
    #: What the front end noticed besides verdicts (a stale expected-outcomes entry, a file without its schema,
    #: an unpinned file...) and whether that fails the run (``--strict``); every record says ``strict``.
    notes: RunNotes = field(default_factory=RunNotes)
    #: ``--retry-unexpected N``: a test whose outcome is unexpected (a failure or an error no expected-outcomes entry
    #: explains) is run again, up to N more times, each in a fresh scope; every attempt is recorded.
    retry_unexpected: int = 0
    #: ``--repeat N``: every test is run N times (then retried, if its last attempt was unexpected).
    repeat: int = 1


@dataclass
class CodeDefinedTest:
    """A code-defined test (a prose test, a campaign): ``open(run)`` gives the :class:`Case` to run.

    ``preflight(run)`` returns the verdict of a check that must not run here
    (a requirement the target does not meet); ``timeout_s(run)`` overrides the
    run's per-test timeout (a campaign sets its own budget).
    """

    format: str
    file: str
    name: str
    open: Callable[[HarnessRun], Case]
    preflight: Callable[[HarnessRun], Verdict | None] | None = None
    timeout_s: Callable[[HarnessRun], float] | None = None

    @property
    def test_id(self) -> str:
        return f"{self.format}/{self.file}::{self.name}"

    # -- the runnable port (harness.core.ports.Runnable): what a run asks any test --------------------------------
    @property
    def spec_file(self) -> None:
        return None  # code defines it: no spec file to pin, no schema, no line

    @property
    def schema(self) -> None:
        return None

    @property
    def line(self) -> None:
        return None

    @property
    def clauses(self) -> tuple[str, ...]:
        return clauses_of(None)

    @property
    def ends_with_target(self) -> bool:
        return False  # it may restart the target itself (a campaign's restart fault)

    def early_verdict(self, run: HarnessRun) -> Verdict | None:
        return self.preflight(run) if self.preflight else None

    def open_case(self, run: HarnessRun) -> Case:
        return self.open(run)

    def deadline_s(self, run: HarnessRun) -> float | None:
        return self.timeout_s(run) if self.timeout_s else None


@dataclass
class TestResult:
    __test__ = False  # not a pytest test class

    test_id: str
    file: str
    outcome: str
    message: str
    duration_s: float
    classification: Classification
    #: The record that speaks for the test: its only attempt's, or (run more than once) the last failing attempt's,
    #: else the last one's.
    record: dict[str, Any]
    #: Every attempt's record, in order, when the test ran more than once (``outcome`` is then what they come to:
    #: :func:`harness.record.outcomes.outcome_of`, ``flaky`` when some passed and some failed); empty: ``record``.
    attempts: tuple[dict[str, Any], ...] = ()

    @property
    def records(self) -> tuple[dict[str, Any], ...]:
        """Every record the test wrote, in order."""
        return self.attempts or (self.record,)


def of_attempts(results: list[TestResult]) -> TestResult:
    """One test's attempts as its result: the outcome they come to, the speaking attempt's message, classification
    and record (the last failing one, else the last), the time they took together."""
    if len(results) == 1:
        return results[0]
    failing = [result for result in results if result.outcome in FAILING]
    speaking = (failing or results)[-1]
    outcome = outcome_of(result.outcome for result in results)
    seen = ", ".join(result.outcome for result in results)
    message = f"attempts: {seen}" + (f"; attempt {results.index(speaking) + 1}: {speaking.message}" if failing else "")
    return TestResult(
        speaking.test_id,
        speaking.file,
        outcome,
        message,
        sum(result.duration_s for result in results),
        speaking.classification,
        speaking.record,
        tuple(result.record for result in results),
    )


def expectations_for(
    choice: str | None, target_name: str, driver_name: str | None = None, iteration_mode: str | None = None
) -> Expectations:
    """``--expected``: none, auto, or a file.

    auto: the target's known outcomes (``specs/expectations/<target name>.yml``), the driver's
    (``specs/expectations/drivers/<driver name>.yml``: rules the driver under test is known to break) and the
    pair's (``specs/expectations/pairs/<target name>+<driver name>.yml``: a target's fault that only this driver
    shows, such as a wire-protocol detail only its driver checks), each if there is one. With ``iteration_mode``
    (the mode the run consumes its streams in), only the entries that apply in that mode.
    """
    if choice in (None, "none"):
        return Expectations.empty()
    if choice == "auto":
        candidates = [EXPECTATIONS_DIR / f"{target_name}.yml"]
        if driver_name:
            candidates.append(EXPECTATIONS_DIR / "drivers" / f"{driver_name}.yml")
            candidates.append(EXPECTATIONS_DIR / "pairs" / f"{target_name}+{driver_name}.yml")
        found = Expectations.combined([load_expectations(c) for c in candidates if c.exists()])
    else:
        found = load_expectations(Path(choice))
    return found.for_mode(iteration_mode) if iteration_mode else found


def pair_incompatibility(driver: DriverAdapter, target: TargetInfo) -> str | None:
    """Why the driver cannot work with the target at all (it refuses the wire version the target reports), or
    None; unknown versions on either side are no reason."""
    needs, has = driver.min_wire_version, target.max_wire_version
    if needs is None or has is None or has >= needs:
        return None
    return (
        f"{driver.name} {driver.version} needs wire version {needs} or later, and target {target.name} "
        f"{target.version} reports {has}: the pair cannot work"
    )


class HarnessRun:
    """Context manager owning everything a run needs; :meth:`run_test` runs one test."""

    def __init__(self, options: RunOptions, plugins: Registry | None = None) -> None:
        self.options = options
        #: The id and attempt of the last test whose record was written, and the attempt under way.
        self.last_recorded: tuple[str, int] | None = None
        self._attempt = 1
        #: The attempts of the test under way that have finished.
        self._under_way: list[TestResult] = []
        self.plugins = plugins or load_plugins()
        self.run_id = options.run_id or new_run_id()
        self.target: Target = self.plugins.make_target(options.target)
        for wrap in self.plugins.target_wrappers:
            self.target = wrap(self.target, options)
        self.driver: DriverAdapter = self.plugins.make_driver(options.driver)
        self.store = ResultsStore(options.results)
        self.expectations = Expectations.empty()
        self.failpoints: FailPointManager | None = None
        self.runner: SpecRunner | None = None
        self.provenance: RunProvenance | None = None
        self._failpoint_setup: FailPointSetup | None = None
        #: Why the target can serve no more tests (its process exited), once the run has seen it.
        self._target_lost: str | None = None

    @property
    def driver_uri(self) -> str:
        """Where drivers under test connect: the target, or what a fault backend put in front of it, with the URI
        options of the pair's adjustment, if any (``adjust:`` in specs/expectations/pairs/)."""
        uri = self._failpoint_setup.driver_uri if self._failpoint_setup else self.target.uri
        return with_uri_options(uri, self.expectations.uri_options)

    def __enter__(self) -> HarnessRun:
        """Start the target and what sits in front of it; any failure stops what started and says why."""
        try:
            child_processes.ensure_lifeline()  # before the target: whatever it starts ends with this process
            self.target.start()
            refusal = pair_incompatibility(self.driver, self.target.info)
            if refusal is not None:
                raise PairIncompatible(refusal)
            self._failpoint_setup = self.plugins.failpoint_setup(self.options.failpoints, self.target)
            self.failpoints = FailPointManager(self._failpoint_setup.backend)
            self.expectations = self._load_expectations()  # before the runner: it may adjust the driver's URI
            self.runner = SpecRunner(
                self.target,
                self.driver,
                self.failpoints,
                self.options.settings,
                driver_uri=self.driver_uri,
                skip_rules=self.plugins.skip_rules,
                driver_routes=self.plugins.driver_routes,
            )
        except (TargetUnavailable, ExpectationsError):
            self.__exit__(None, None, None)
            raise
        except Exception as exc:
            self.__exit__(None, None, None)
            raise TargetUnavailable(
                f"could not start the run on target {redact_text(self.options.target)!r}: {type(exc).__name__}: "
                f"{redact_text(str(exc))}"
            ) from exc
        except BaseException:
            self.__exit__(None, None, None)
            raise
        extra: dict[str, Any] = {
            "expectations_file": self.expectations.source,
            "labels": dict(self.options.labels),
            "strict": self.options.notes.strict,
            **self.options.provenance,
        }
        if self.options.retry_unexpected:
            extra["retries"] = self.options.retry_unexpected
        if self.options.repeat > 1:
            extra["repeat"] = self.options.repeat
        if self.plugins.problems:
            extra["plugin_problems"] = list(self.plugins.problems)
        if self.expectations.adjustments:
            extra["adjustments"] = [
                {"uri_options": a.uri_options, "reason": a.reason, "source": a.source}
                for a in self.expectations.adjustments
            ]
            for adjustment in self.expectations.adjustments:
                options = ", ".join(f"{k}={v}" for k, v in adjustment.uri_options.items())
                self.options.notes.add("run-adjusted", f"the driver connects with {options} ({adjustment.reason})")
        self.provenance = RunProvenance(
            run_id=self.run_id,
            target=self.target.info.as_record(),
            driver=driver_record(self.driver, self.options.settings.iteration_mode),
            failpoints=self._failpoint_setup.backend.name,
            extra=extra,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop everything that started, in reverse order, even when one step fails."""
        with contextlib.ExitStack() as stack:
            stack.callback(self.target.stop)
            if self._failpoint_setup is not None and self._failpoint_setup.stop is not None:
                stack.callback(self._failpoint_setup.stop)
            stack.callback(self.store.close)
            if self.failpoints is not None:
                stack.callback(self.failpoints.disarm_all)

    def _load_expectations(self) -> Expectations:
        mode = chosen_iteration_mode(self.driver, self.options.settings.iteration_mode)
        return expectations_for(self.options.expected, self.target.info.name, self.driver.name, mode)

    # -- running ------------------------------------------------------------------
    def cleanup(self) -> list[str]:
        """Leave the target as a test found it: fail points off, every plug-in's teardown check run."""
        assert self.failpoints is not None
        problems: list[str] = []
        steps: list[tuple[str, Callable[[], list[str]]]] = [("disarm_all", self.failpoints.disarm_all)]
        steps += [(check.__name__, partial(check, self.target)) for check in self.plugins.teardown_checks]
        for name, step in steps:
            try:
                problems.extend(step())
            except Exception as exc:
                problems.append(f"clean-up step {name!r} failed: {exc}")
        return problems

    def verdict(self, test: Runnable) -> Verdict:
        """The one per-test lifecycle, for a spec test and a code-defined check alike."""
        assert self.runner is not None
        early: Verdict | None = test.early_verdict(self)
        deadline = test.deadline_s(self)
        timeout = self.options.settings.test_timeout_s if deadline is None else deadline
        if early is not None:
            return early
        try:
            case: Case = test.open_case(self)
        except Exception as exc:
            return Verdict(ERROR, f"set-up: {type(exc).__name__}: {exc}")
        # Only a driver that says it can be restarted is (an in-process one would make a timeout wait for nothing).
        restart = self.driver.restart if self.driver.restartable else None
        # A spec test never restarts its target, so its target's process exiting ends it at once; a check may
        # restart the target itself (a campaign's restart fault), so it is looked at only after it ends.
        stop_if = self.target_lost if test.ends_with_target else None
        return run_case(case, self.cleanup, timeout, on_abandoned=restart, stop_if=stop_if)

    def target_lost(self) -> str | None:
        """Why the target cannot serve another test (``target secantusdb-daemon exited (signal 9)``), or None.

        A target that runs as a process the harness started names it in ``info.details["pid"]`` (a restart in
        place names the new one); once that process has exited, every later test of this run is an ``error``
        saying so, at once, instead of each waiting for its deadline. A parallel worker starts a new run.
        A deployment the guard now refuses (a remote member appeared) is lost the same way, for good.
        """
        if self._target_lost is None:
            pid = self.target.info.details.get("pid")
            if isinstance(pid, int):
                how = child_processes.ended(pid)
                if how is not None:
                    self._target_lost = f"target {redact_text(self.options.target.partition('=')[0])} {how}"
        if self._target_lost is None:
            refused = self.target.refusal()
            if refused is not None:
                self._target_lost = redact_text(refused)
        return self._target_lost

    def _verdict_on_target(self, test: Runnable) -> Verdict:
        """The test's verdict, unless the target was gone before it (not run) or went during it (said so)."""
        lost = self.target_lost()
        if lost is not None:
            return Verdict(ERROR, f"{lost}; the test was not run")
        verdict = self.verdict(test)
        lost = self.target_lost()
        if lost is not None and verdict.outcome in (FAILED, ERROR) and not verdict.message.startswith(lost):
            return Verdict(
                ERROR, f"{lost} during this test (the test saw: {verdict.message})", verdict.mismatches, verdict.details
            )
        return verdict

    def run_test(self, test: Runnable) -> TestResult:
        """Run a test, each of its attempts recorded: ``repeat`` times, then again while its last attempt is
        unexpected, up to ``retry_unexpected`` more times (a pass, an explained failure or a lost target ends it);
        every attempt after the first starts in a fresh scope (:meth:`fresh_scope`)."""
        self._under_way, self._attempt = [], 1
        results = self._under_way
        results.append(self.run_attempt(test, 1))
        while self._another_attempt(results):
            self.fresh_scope()
            results.append(self.run_attempt(test, len(results) + 1))
        return of_attempts(results)

    def _another_attempt(self, results: list[TestResult]) -> bool:
        last, count = results[-1], len(results)
        unexpected = last.outcome in FAILING and not last.classification.expected
        wanted = count < self.options.repeat or (
            unexpected and count < max(self.options.repeat, 1) + self.options.retry_unexpected
        )
        return wanted and self.target_lost() is None

    def fresh_scope(self) -> None:
        """Before an attempt after the first: a driver that runs in an executor gets a new executor process (its
        adapter declares it ``restartable``); every attempt opens its own scope, so its clients are new anyway."""
        if self.driver.restartable:
            self.driver.restart()

    def run_attempt(self, test: Runnable, attempt: int) -> TestResult:
        """One run of a test, recorded as its ``attempt`` (from 1)."""
        assert self.provenance is not None
        self._attempt = attempt
        started_at, start = utc_now(), time.perf_counter()
        verdict = self._verdict_on_target(test)
        result = result_of(
            test,
            verdict,
            self.provenance,
            self.expectations,
            self.options.rules,
            started_at,
            time.perf_counter() - start,
            attempt,
        )
        self.store.append(result.record)
        self.last_recorded = (test.test_id, attempt)  # a stop signal after this line must not record it again
        return result

    def record_interrupted(self, test: Runnable, reason: str) -> TestResult | None:
        """The result of a test a stop signal cut short (its teardown already ran): its finished attempts and the
        cut one, an ``error`` saying why. When the signal came after an attempt's own record was written, nothing
        is recorded again: the finished attempts (None when there was one, as a test run once)."""
        assert self.provenance is not None
        finished = [result for result in self._under_way if result.test_id == test.test_id]
        if self.last_recorded == (test.test_id, self._attempt):
            return of_attempts(finished) if len(finished) > 1 else None
        verdict = Verdict(ERROR, f"{reason}; the test did not finish")
        result = result_of(
            test, verdict, self.provenance, self.expectations, self.options.rules, utc_now(), 0.0, self._attempt
        )
        self.store.append(result.record)
        return of_attempts([*finished, result])


def driver_record(driver: DriverAdapter, iteration_mode: str | None = None) -> dict[str, Any]:
    """The ``driver`` of every record: name, version, language, the iteration mode its change streams were consumed
    in (``--iteration-mode``, the driver's default made explicit), and the executor's command line for a driver
    that runs in one (an in-process driver's records have no ``executor``)."""
    record: dict[str, Any] = {
        "name": driver.name,
        "version": driver.version,
        "language": driver.language,
        "iteration_mode": chosen_iteration_mode(driver, iteration_mode),
    }
    if driver.executor is not None:
        record["executor"] = driver.executor
    return record


def result_of(
    test: Runnable,
    verdict: Verdict,
    provenance: RunProvenance,
    expectations: Expectations,
    rules: RuleIndex | None,
    started_at: str,
    duration_s: float,
    attempt: int = 1,
) -> TestResult:
    """A test's verdict as its result and record: the one record builder.

    :meth:`HarnessRun.run_test` uses it, and so does a parallel run for a test whose worker died under it
    (:mod:`harness.app.parallel`), so both records have every field.
    """
    name, line = test.name, test.line
    rules = rules or RuleIndex()
    checked = rules.rules_for(test.test_id, name)
    causes = of_verdict(verdict.outcome, verdict.message, verdict.causes, checked)
    classification = expectations.classify(test.test_id, verdict.outcome, causes, rules.should_only(test.test_id, name))
    record = make_record(
        provenance,
        format=test.format,
        file=test.file,
        test=name,
        test_id=test.test_id,
        line=line,
        outcome=verdict.outcome,
        message=verdict.message,
        started_at=started_at,
        duration_s=duration_s,
        mismatches=verdict.mismatches,
        expectation=classification.as_record(),
        details=verdict.details or None,
        rules=checked,
        causes=[cause.as_record() for cause in classification.causes],
        not_reached=verdict.not_reached,
        attempt=attempt,
    )
    return TestResult(test.test_id, test.file, verdict.outcome, verdict.message, duration_s, classification, record)
