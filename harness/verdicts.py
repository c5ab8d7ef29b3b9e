"""Verdicts, and running one test body under a deadline.

Shared by the spec runner and code-defined checks (prose tests): the body
runs in a worker thread; past the deadline the caller's thread tears the test
down (which closes its clients and so unblocks the worker) and the verdict is
an ``error``. Teardown is idempotent and single-owner, so the worker's own
teardown, whenever it gets there, does nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

PASSED, FAILED, SKIPPED, ERROR = "passed", "failed", "skipped", "error"


@dataclass
class Verdict:
    outcome: str
    message: str = ""
    mismatches: list[str] = field(default_factory=list)


def run_with_deadline(body: Callable[[], Verdict], teardown: Callable[[], list[str]], timeout_s: float,
                      where: Callable[[], str]) -> Verdict:
    """Run ``body`` in a worker thread; past ``timeout_s``, tear down from here and give ``error``.

    The worker may still be blocked in the target; ``teardown`` closes its
    clients (which unblocks it) and is idempotent, so the worker's own
    teardown, when it finally gets there, does nothing.
    """
    outcome: list[Verdict] = []
    crashed: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(body())
        except BaseException as exc:  # noqa: BLE001 - reported as the test's error below
            crashed.append(exc)

    worker = threading.Thread(target=work, daemon=True, name="harness-test")
    worker.start()
    try:
        worker.join(timeout_s)
    except BaseException:  # Ctrl-C while a test runs: leave the target clean, then stop
        teardown()
        raise
    if worker.is_alive():
        at = where()
        problems = teardown()
        return with_cleanup_problems(Verdict(ERROR, f"timed out after {timeout_s:g}s during {at} "
                                                    "(the target or driver stopped answering)"), problems)
    if crashed or not outcome:
        problems = teardown()
        error = crashed[0] if crashed else RuntimeError("no verdict")
        return with_cleanup_problems(Verdict(ERROR, f"internal error {type(error).__name__}: {error}"), problems)
    return outcome[0]


def with_cleanup_problems(verdict: Verdict, problems: list[str]) -> Verdict:
    """A dirty target taints later tests, so clean-up problems make the verdict an error (keeping its story)."""
    if not problems:
        return verdict
    story = f"\n  (the test itself: {verdict.outcome}: {verdict.message})" if verdict.message or verdict.outcome != PASSED else ""
    return Verdict(ERROR, "clean-up failed: " + "; ".join(problems) + story, verdict.mismatches)
