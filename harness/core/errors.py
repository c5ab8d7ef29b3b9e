"""The ways a test ends other than passing, shared by every layer that judges one.

:class:`TestFailure` means the target or driver misbehaved (verdict
``failed``); :class:`HarnessError` means the test could not be carried out
(verdict ``error``); :class:`TestSkipped` means it cannot apply to this
target (verdict ``skipped``, with the reason). The spec runner, the test-runner operations, prose checks
and plug-ins raise them; only the per-test lifecycle turns them into verdicts.
"""

from __future__ import annotations

from typing import Any


class TestFailure(Exception):
    """The target or driver did not behave as the test expects."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        message: str,
        mismatches: list[Any] | None = None,
        causes: list[Any] | None = None,
        not_reached: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.mismatches = mismatches or []
        #: The :class:`~harness.core.causes.Cause` values found (docs/causes.md); empty: one ``check`` cause
        #: made of the message, by the lifecycle.
        self.causes = causes or []
        #: Checks a flow-breaking cause left unreached (their labels).
        self.not_reached = not_reached or []


class HarnessError(Exception):
    """The test could not be carried out (bad test, unsupported operation, set-up failure)."""


class TestSkipped(Exception):
    """The test cannot apply to this target; the message is the reason."""

    __test__ = False  # not a pytest test class
