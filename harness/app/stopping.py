"""Every way to stop a run is a clean stop: SIGINT, SIGTERM and SIGHUP alike (issue "Safe to point at a real
deployment").

CI cancellation, ``timeout`` and container stops send SIGTERM; a closed terminal sends SIGHUP. Python's default
for both is to die at once, which would leave a fail point the harness armed on the user's deployment. While a
run is under way, :func:`stopping_on_signals` turns each of the three into :class:`RunInterrupted` raised in the
main thread, so the run's own unwinding does the clean-up: the test in flight is torn down (its fail points off),
it gets an ``error`` record naming the signal, the summary is printed, and the exit status is 128 + the signal's
number. A second signal while that clean-up runs ends the process at once, with the same status.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from types import FrameType

#: The signals that stop a run cleanly.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class RunInterrupted(BaseException):
    """A stop signal arrived: a BaseException, like KeyboardInterrupt, so no ``except Exception`` swallows it."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


@contextlib.contextmanager
def stopping_on_signals(second_exits: bool = True) -> Iterator[None]:
    """Within the block, a stop signal raises :class:`RunInterrupted`; the second one exits at once, or, with
    ``second_exits`` false (a ``-j`` worker, which its parent stops and, if asked twice, kills), is ignored."""
    received: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if received:
            if second_exits:
                os._exit(128 + signum)  # the clean-up itself is stuck: stop now, as asked twice
            return
        received.append(signum)
        raise RunInterrupted(signum)

    previous = {number: signal.signal(number, handler) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)
