"""The one per-test lifecycle: body under a deadline, single-owner teardown, a verdict.

Spec tests, prose checks and fault campaigns all go through :func:`run_case`.
A test is a :class:`Case`: its :meth:`Case.body` does the work and says what
it found by raising (:class:`~harness.core.errors.TestFailure`,
:class:`~harness.core.errors.TestSkipped`, anything else is an ``error``);
a :class:`~harness.core.ports.DriverLacksFeature` (the format defines what the
test asks, the driver adapter does not implement it) is ``skipped``;
its :meth:`Case.close` closes what the test itself opened (its driver's
clients). The body runs in a worker thread; past the deadline the caller's
thread tears the test down, which closes its clients and so unblocks the
worker, and the verdict is an ``error``. Teardown has one owner: whoever gets
there first (the worker, or the caller after a timeout) does it, the other
does nothing, and a worker still running afterwards can change nothing on
the target (:meth:`Case.guarded`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from harness.core.causes import SET_UP, TIMEOUT, Cause, check
from harness.core.errors import HarnessError, TestFailure, TestSkipped
from harness.core.matching import UnsupportedAssertion
from harness.core.ports import DriverLacksFeature, UnsupportedOperation
from harness.core.verdicts import ERROR, FAILED, PASSED, SKIPPED, Verdict, with_cleanup_problems


class Case:
    """One running test's state: where it is, and whether it has been torn down."""

    def __init__(self) -> None:
        self.current = "set-up"
        #: Serialises teardown against the test's own steps: once torn down (by its worker,
        #: or by the caller after a timeout), a worker still running can neither arm a fault
        #: nor clean up a later test's faults.
        self.lock = threading.Lock()
        self.torn_down = False
        #: Facts for the result record, whatever the verdict (how the test was run).
        self.details: dict[str, Any] = {}

    def body(self) -> Verdict | None:
        """Run the test; ``None`` is a pass. Raise to say what went wrong."""
        raise NotImplementedError

    def close(self) -> list[str]:
        """Close what the test opened (its clients); returns problems. Called once."""
        return []

    def failure_message(self, failure: TestFailure) -> str:
        return str(failure)

    def check_alive(self) -> None:
        if self.torn_down:
            raise HarnessError("the test was torn down (timed out) before this step")

    @contextlib.contextmanager
    def guarded(self) -> Iterator[None]:
        """For steps that change the target (arming a fault): never after teardown, never during it."""
        with self.lock:
            self.check_alive()
            yield


def verdict_of(case: Case) -> Verdict:
    """The body's verdict, with the case's details; a harness defect is an ``error``, never a crash."""
    verdict = _raw_verdict(case)
    if case.details:
        verdict.details = {**case.details, **verdict.details}
    return verdict


def _raw_verdict(case: Case) -> Verdict:
    try:
        return case.body() or Verdict(PASSED)
    except TestSkipped as exc:
        return Verdict(SKIPPED, str(exc))
    except DriverLacksFeature as exc:  # a feature the driver lacks is a skip with the reason, never an error
        return Verdict(SKIPPED, f"{case.current}: the driver adapter does not implement this: {exc}")
    except TestFailure as exc:
        message = case.failure_message(exc)
        causes = list(exc.causes) or [check(str(exc), step=case.current)]
        return Verdict(FAILED, message, [str(m) for m in exc.mismatches], causes=causes, not_reached=exc.not_reached)
    except (HarnessError, UnsupportedOperation, UnsupportedAssertion) as exc:
        return _error(f"{case.current}: {exc}", case.current)
    except Exception as exc:
        return _error(f"{case.current}: internal error {type(exc).__name__}: {exc}", case.current)


def _error(message: str, step: str, clause: str = SET_UP) -> Verdict:
    """An ``error`` verdict: the harness could not carry the test out (its one cause says where and why)."""
    return Verdict(ERROR, message, causes=[Cause(clause, step=step, fact=message)])


#: After a timeout's teardown, how long the worker gets to notice its clients were closed before the
#: driver is restarted (an executor process still busy would otherwise answer the next test's requests late).
ABANDON_GRACE_S = 1.0
#: After a timeout, how long the teardown may take before the verdict is given without it: a target that
#: stopped answering would otherwise hold the run in the harness's own clean-up (its admin client's timeouts).
TEARDOWN_BOUND_S = 5.0
#: How often a running test asks whether it should stop early (``run_case``'s ``stop_if``).
STOP_POLL_S = 0.2


def run_case(
    case: Case,
    cleanup: Callable[[], list[str]],
    timeout_s: float,
    on_abandoned: Callable[[], None] | None = None,
    stop_if: Callable[[], str | None] | None = None,
) -> Verdict:
    """The lifecycle: body, then teardown (the case's clients, then ``cleanup`` of the target), once.

    ``on_abandoned`` (the driver adapter's ``restart``) is called, before this returns, when the deadline
    passed and the body is still running after teardown and a short grace (:data:`ABANDON_GRACE_S`).
    ``stop_if`` is asked while the body runs (every :data:`STOP_POLL_S`); a reason it gives (the target's
    process exited) ends the test at once, as a timeout would, with that reason.
    """

    def teardown() -> list[str]:
        with case.lock:
            if case.torn_down:
                return []
            case.torn_down = True
            problems: list[str] = []
            try:
                problems.extend(case.close())
            except Exception as exc:
                problems.append(f"closing the test's clients failed: {exc}")
            return problems + cleanup()

    def body() -> Verdict:
        verdict = verdict_of(case)
        return with_cleanup_problems(verdict, teardown())

    return run_with_deadline(body, teardown, timeout_s, lambda: case.current, on_abandoned, stop_if)


def run_with_deadline(
    body: Callable[[], Verdict],
    teardown: Callable[[], list[str]],
    timeout_s: float,
    where: Callable[[], str],
    on_abandoned: Callable[[], None] | None = None,
    stop_if: Callable[[], str | None] | None = None,
) -> Verdict:
    """Run ``body`` in a worker thread; past ``timeout_s``, or once ``stop_if`` gives a reason, tear down from
    here and give ``error``.

    The worker may still be blocked in the target; ``teardown`` closes its
    clients (which unblocks it) and is idempotent, so the worker's own
    teardown, when it finally gets there, does nothing.
    """
    outcome: list[Verdict] = []
    crashed: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(body())
        except BaseException as exc:
            crashed.append(exc)

    worker = threading.Thread(target=work, daemon=True, name="harness-test")
    worker.start()
    try:
        reason = _wait(worker, timeout_s, stop_if)
    except BaseException:  # Ctrl-C while a test runs: leave the target clean, then stop
        teardown()
        raise
    if worker.is_alive():
        at = where()
        problems = _bounded(teardown, TEARDOWN_BOUND_S)
        if on_abandoned is not None:
            worker.join(ABANDON_GRACE_S)
            if worker.is_alive():
                try:
                    on_abandoned()
                except Exception as exc:
                    problems.append(f"restarting the driver after the timeout failed: {type(exc).__name__}: {exc}")
        if reason is not None:  # the clean-up problems follow from the same cause: said after it, not before
            clean_up = f"; clean-up: {'; '.join(problems)}" if problems else ""
            return _error(f"{reason} during {at}{clean_up}", at)
        return with_cleanup_problems(
            _error(f"timed out after {timeout_s:g}s during {at} (the target or driver stopped answering)", at, TIMEOUT),
            problems,
        )
    if crashed or not outcome:
        problems = teardown()
        error = crashed[0] if crashed else RuntimeError("no verdict")
        return with_cleanup_problems(_error(f"internal error {type(error).__name__}: {error}", where()), problems)
    return outcome[0]


def _wait(worker: threading.Thread, timeout_s: float, stop_if: Callable[[], str | None] | None) -> str | None:
    """Wait for ``worker`` until ``timeout_s`` passes; with ``stop_if``, stop early with the reason it gives."""
    if stop_if is None:
        worker.join(timeout_s)
        return None
    deadline = time.monotonic() + timeout_s
    while worker.is_alive():
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        worker.join(min(left, STOP_POLL_S))
        if worker.is_alive():
            reason = stop_if()
            if reason is not None:
                return reason
    return None


def _bounded(teardown: Callable[[], list[str]], bound_s: float) -> list[str]:
    """``teardown()``'s problems, or, past ``bound_s``, one problem saying it did not finish. It goes on in its
    thread, blocked on a target that no longer answers; the verdict says so, since a later test on the same
    target is then not on a clean one either."""
    problems: list[str] = []
    done = threading.Event()

    def work() -> None:
        try:
            problems.extend(teardown())
        except Exception as exc:
            problems.append(f"teardown failed: {type(exc).__name__}: {exc}")
        finally:
            done.set()

    threading.Thread(target=work, daemon=True, name="harness-teardown").start()
    if not done.wait(bound_s):
        return [f"the teardown did not finish within {bound_s:g}s (the target stopped answering?)"]
    return problems
