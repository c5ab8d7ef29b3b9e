"""The change-stream prose tests as pytest tests: one per check, judged on the selected target.

Verdicts map onto pytest outcomes exactly as for spec items
(:func:`harness.app.pytest_harness.report_to_pytest`): expected passes pass, skips
carry the check's reason, listed deviations are xfail with their reason, and
anything unexpected (an unexpected pass too) fails with the check's message.
"""

from __future__ import annotations

import pytest

from harness.app.pytest_harness import report_to_pytest
from harness.engine.run import CodeDefinedTest, HarnessRun
from prose_tests import CHECKS, check_id


@pytest.mark.parametrize("check", CHECKS, ids=check_id)
def test_prose(prose_run: HarnessRun, check: CodeDefinedTest, request: pytest.FixtureRequest) -> None:
    report_to_pytest(prose_run.run_test(check), request.node)
