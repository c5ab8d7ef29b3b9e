"""The unified fail-point tests on a SecantusDB daemon without test commands.

The daemon refuses ``configureFailPoint``, so ``--failpoints auto`` puts the
wire proxy in front of it. Every outcome must be the one the embedded
target's expected-outcomes file gives for native fail points (the daemon is
the same server, named ``secantusdb``), so native and emulated verdicts agree.
"""

from __future__ import annotations

import pytest

from harness.engine.run import HarnessRun, RunOptions
from harness.formats.loaders import load_paths
from tests.conftest import UNIFIED_DIR

FAILPOINT_TESTS = [t for t in load_paths([UNIFIED_DIR]) if t.uses_failpoints] if UNIFIED_DIR.is_dir() else []


@pytest.fixture(scope="module")
def daemon_run():
    with HarnessRun(RunOptions(target="secantusdb-daemon", expected="auto", failpoints="auto")) as run:
        assert run.provenance.failpoints == "emulated"
        yield run


@pytest.mark.skipif(not FAILPOINT_TESTS, reason="upstream unified spec files not found")
@pytest.mark.parametrize("test", FAILPOINT_TESTS, ids=[t.test_id for t in FAILPOINT_TESTS])
def test_emulated_verdict_equals_the_native_one(daemon_run, test):
    result = daemon_run.run_test(test)
    assert result.classification.expected, f"{result.outcome}: {result.message}"
    if result.outcome == "skipped":  # only for the server's version or topology, as natively
        assert any(word in result.message for word in ("ServerVersion", "topology")), result.message
