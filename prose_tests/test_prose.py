"""The change-stream prose tests as pytest tests: one per check, judged on the selected target.

Verdicts map onto pytest outcomes: passed passes, skipped skips with the
check's reason, failed and error fail with the check's message. A failure the
target's expected-outcomes file lists (with its reason) is reported as xfail.
"""

from __future__ import annotations

import pytest

from harness.session import Check, HarnessRun
from prose_tests import CHECKS, check_id


@pytest.mark.parametrize("check", CHECKS, ids=check_id)
def test_prose(prose_run: HarnessRun, check: Check) -> None:
    result = prose_run.run_test(check)
    if result.outcome == "passed":
        return
    if result.outcome == "skipped":
        pytest.skip(result.message)
    if result.classification.expected:
        pytest.xfail(f"known on this target: {result.classification.reason} ({result.outcome}: {result.message})")
    pytest.fail(f"{check.test_id} {result.outcome}: {result.message}", pytrace=False)
