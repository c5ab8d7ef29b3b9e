"""After a deadline, the driver is restarted only when the test's body is still busy (an executor that would
answer the next test's requests late); a body that teardown unblocks leaves the driver alone."""

from __future__ import annotations

import threading

from harness.core.verdicts import PASSED, Verdict
from harness.engine.lifecycle import run_with_deadline


def _run(body_ignores_teardown: bool) -> tuple[Verdict, list[str]]:
    released, calls = threading.Event(), []
    stuck = threading.Event()

    def body() -> Verdict:
        (stuck if body_ignores_teardown else released).wait(10)
        return Verdict(PASSED)

    def teardown() -> list[str]:
        released.set()  # closing the clients unblocks a body that waits on them
        return []

    verdict = run_with_deadline(body, teardown, 0.1, lambda: "step", on_abandoned=lambda: calls.append("restart"))
    stuck.set()
    return verdict, calls


def test_a_body_still_running_after_teardown_restarts_the_driver():
    verdict, calls = _run(body_ignores_teardown=True)
    assert verdict.outcome == "error" and "timed out" in verdict.message
    assert calls == ["restart"]


def test_a_body_that_teardown_unblocks_does_not_restart_the_driver():
    verdict, calls = _run(body_ignores_teardown=False)
    assert verdict.outcome == "error" and calls == []
