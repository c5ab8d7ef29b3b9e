"""Shared fixtures for the harness's own tests.

The upstream spec files are read from ``../shared/specs`` beside the
repository (they are never copied into it).
"""

from __future__ import annotations

import pytest

from tests.paths import SHARED_SPECS
from tests.spark_support import spark  # noqa: F401 - the report tests' shared SparkSession

LEGACY_DIR = SHARED_SPECS / "upstream" / "legacy"
UNIFIED_DIR = SHARED_SPECS / "upstream" / "unified"


def require_shared_specs() -> None:
    if not LEGACY_DIR.is_dir():
        pytest.skip(f"upstream spec files not found at {SHARED_SPECS}")


@pytest.fixture(scope="session")
def embedded_run():
    """One embedded SecantusDB for the tests that only need a target (no results file)."""
    from harness.engine.run import HarnessRun, RunOptions

    with HarnessRun(RunOptions(target="embedded", expected="none")) as run:
        yield run
