"""The harness run the prose tests share: one target and driver for the whole pytest session.

The options ``--target``, ``--driver``, ``--results`` and ``--expected`` belong to the
harness's pytest plugin (``harness.pytest_plugin``); this file never declares
them, it only reads them with defaults, so it works with or without the plugin.
When the plugin is active its ``harness_run`` fixture is reused, so spec tests
and prose tests of one session share a target and a results file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.session import HarnessRun, RunOptions


@pytest.fixture(scope="session")
def prose_run(request: pytest.FixtureRequest) -> Iterator[HarnessRun]:
    try:
        yield request.getfixturevalue("harness_run")
        return
    except pytest.FixtureLookupError:
        pass
    config = request.config
    results = config.getoption("--results", default=None)
    options = RunOptions(
        target=config.getoption("--target", default="embedded"),
        driver=config.getoption("--driver", default="pymongo"),
        results=Path(results) if results else None,
        expected=config.getoption("--expected", default="auto"),
    )
    with HarnessRun(options) as run:
        yield run
