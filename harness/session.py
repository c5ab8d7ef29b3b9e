"""One harness run: a started target, a driver, fail points, a results store.

Both front ends (the ``harness`` CLI and the pytest plugin) drive tests
through a :class:`HarnessRun`, so they give the same verdicts and write the
same records. Tests come in as :class:`~harness.model.SpecTest` (spec files)
or as :class:`Check` (prose tests and other code-defined checks).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faults.failpoints import EmulatedFailPoints, FailPointBackend, FailPointManager, NativeFailPoints
from faults.network_names import NO_NETWORK_FAULTS, uses_network_faults
from harness.drivers import DriverAdapter, make_driver
from harness.expectations import Classification, Expectations, ExpectationsError
from harness.model import SpecTest
from harness.results import ResultsStore, RunProvenance, make_record, new_run_id, utc_now
from harness.runner import RunSettings, SpecRunner
from harness.verdicts import Verdict
from harness.targets import Target, TargetUnavailable, make_target

FAILPOINT_MODES = ("native", "emulated", "auto")

#: Where the project's expected-outcome files live (``specs/expectations/<target name>.yml``).
EXPECTATIONS_DIR = Path(__file__).resolve().parent.parent / "specs" / "expectations"


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


@dataclass
class Check:
    """A code-defined test (a prose test): a callable judged into a :class:`Verdict`."""

    format: str
    file: str
    name: str
    run: Callable[["HarnessRun"], Verdict]

    @property
    def test_id(self) -> str:
        return f"{self.format}/{self.file}::{self.name}"


@dataclass
class TestResult:
    test_id: str
    file: str
    outcome: str
    message: str
    duration_s: float
    classification: Classification
    record: dict[str, Any]


def default_expectations_path(target: Target) -> Path | None:
    candidate = EXPECTATIONS_DIR / f"{target.info.name}.yml"
    return candidate if candidate.exists() else None


class HarnessRun:
    """Context manager owning everything a run needs; :meth:`run_test` runs one test."""

    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self.run_id = new_run_id()
        self.target: Target = make_target(options.target)
        if options.network_faults:
            from faults.network.target import ThroughToxiproxy

            self.target = ThroughToxiproxy(self.target)
        self.driver: DriverAdapter = make_driver(options.driver)
        self.store = ResultsStore(options.results)
        self.expectations = Expectations.empty()
        self.failpoints: FailPointManager | None = None
        self.runner: SpecRunner | None = None
        self.provenance: RunProvenance | None = None
        self.wire_proxy: Any = None
        #: Where drivers under test connect: the target, or a wire proxy in front of it.
        self.driver_uri = ""

    def __enter__(self) -> "HarnessRun":
        """Start the target and what sits in front of it; any failure stops what started and says why."""
        try:
            self.target.start()
            backend = self._fail_point_backend()
            self.failpoints = FailPointManager(backend)
            self.runner = SpecRunner(self.target, self.driver, self.failpoints, self.options.settings,
                                     driver_uri=self.driver_uri)
            self._attach_network_faults(self.runner)
            self.expectations = self._load_expectations()
        except (TargetUnavailable, ExpectationsError):
            self.__exit__(None, None, None)
            raise
        except Exception as exc:
            self.__exit__(None, None, None)
            raise TargetUnavailable(f"could not start the run on target {self.options.target!r}: "
                                    f"{type(exc).__name__}: {exc}") from exc
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.provenance = RunProvenance(
            run_id=self.run_id,
            target=self.target.info.as_record(),
            driver={"name": self.driver.name, "version": self.driver.version},
            failpoints=backend.name,
            extra={"expectations_file": self.expectations.source, "labels": dict(self.options.labels)},
        )
        return self

    def _attach_network_faults(self, runner: SpecRunner) -> None:
        faults = getattr(self.target, "faults", None)
        if faults is None:
            runner.skip_rules.append(
                lambda test: f"uses networkFault: {NO_NETWORK_FAULTS}" if uses_network_faults(test) else None)
            return
        from faults.network_ops import clear_after_test  # registers networkFault; needs the faults extra

        runner.network_faults = faults
        runner.teardown_hooks.append(lambda: clear_after_test(faults))

    def _fail_point_backend(self) -> FailPointBackend:
        """Native ``configureFailPoint``, or the wire proxy's emulation (``auto``: native when accepted)."""
        assert self.target.admin is not None
        native = NativeFailPoints(self.target.admin)
        mode = self.options.failpoints
        if mode not in FAILPOINT_MODES:
            raise TargetUnavailable(f"--failpoints must be one of {FAILPOINT_MODES}, got {mode!r}")
        if mode == "native" or (mode == "auto" and native.supported()):
            self.driver_uri = self.target.uri
            return native
        from faults.wire import WireProxy

        host, port = self._driver_facing_address()
        self.wire_proxy = WireProxy(host, port)
        self.wire_proxy.start()
        self.driver_uri = self.wire_proxy.uri
        return EmulatedFailPoints(self.wire_proxy)

    def _driver_facing_address(self) -> tuple[str, int]:
        """Where the wire proxy forwards: through Toxiproxy when the run has one, else the primary."""
        if getattr(self.target, "faults", None) is not None:
            from harness.uris import ConnectionStringError, first_host

            try:
                return first_host(self.target.uri)
            except ConnectionStringError as exc:
                raise TargetUnavailable(f"cannot tell which server the wire proxy should front: {exc}") from None
        assert self.target.admin is not None
        address = self.target.admin.address
        if address is None:
            raise TargetUnavailable("cannot tell which server the wire proxy should front")
        return address

    def __exit__(self, *exc: object) -> None:
        """Stop everything that started, in reverse order, even when one step fails."""
        with contextlib.ExitStack() as stack:
            stack.callback(self.target.stop)
            if self.wire_proxy is not None:
                stack.callback(self.wire_proxy.stop)
            stack.callback(self.store.close)
            if self.failpoints is not None:
                stack.callback(self.failpoints.disarm_all)

    def _load_expectations(self) -> Expectations:
        choice = self.options.expected
        if choice in (None, "none"):
            return Expectations.empty()
        if choice == "auto":
            path = default_expectations_path(self.target)
            return Expectations.load(path) if path else Expectations.empty()
        return Expectations.load(Path(choice))

    # -- running ------------------------------------------------------------------
    def run_test(self, test: SpecTest | Check) -> TestResult:
        assert self.runner is not None and self.provenance is not None
        started_at, start = utc_now(), time.perf_counter()
        if isinstance(test, SpecTest):
            verdict = self.runner.run(test)
            identity = dict(format=test.format, file=test.file, test=test.description, test_id=test.test_id,
                            line=test.line)
        else:
            verdict = _run_check(self, test)
            identity = dict(format=test.format, file=test.file, test=test.name, test_id=test.test_id, line=None)
        duration = time.perf_counter() - start
        classification = self.expectations.classify(identity["test_id"], verdict.outcome)
        record = make_record(
            self.provenance, outcome=verdict.outcome, message=verdict.message, started_at=started_at,
            duration_s=duration, mismatches=verdict.mismatches, expectation=classification.as_record(), **identity,
        )
        self.store.append(record)
        return TestResult(identity["test_id"], identity["file"], verdict.outcome, verdict.message, duration,
                          classification, record)


def _run_check(run: HarnessRun, check: Check) -> Verdict:
    problems: list[str] = []
    try:
        try:
            verdict = check.run(run)
        except Exception as exc:  # noqa: BLE001 - a broken check is an error result, not a crashed run
            verdict = Verdict("error", f"internal error {type(exc).__name__}: {exc}")
    finally:
        if run.runner is not None:
            problems = run.runner.cleanup()
    if problems:
        return Verdict("error", "; ".join(problems), verdict.mismatches)
    return verdict
