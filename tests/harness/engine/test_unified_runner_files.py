"""Every test of the project's own unified runner files (``tests/data/unified-runner/``: CSOT, log
messages, ``withTransaction``) loads and passes on the embedded SecantusDB; the modules beside this one show
each kind of check able to fail."""

from __future__ import annotations

import pytest

from harness.formats.loaders import load_paths
from tests.helpers import UNIFIED_RUNNER_DATA

TESTS = load_paths([UNIFIED_RUNNER_DATA])


def test_every_file_has_tests():
    assert {t.file_stem for t in TESTS} == {"csot", "log-messages", "with-transaction"}


@pytest.mark.parametrize("test", TESTS, ids=[f"{t.file_stem}::{t.description}" for t in TESTS])
def test_runner_file_test_gets_a_verdict_and_passes(embedded_run, test):
    assert test.load_error is None, test.load_error
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "passed", verdict.message
