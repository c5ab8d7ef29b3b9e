"""The harness run the prose tests share: one target and driver for the whole pytest session.

The options (``--target``, ``--driver``, ``--results``, ...) are the harness's
one options table (:mod:`harness.app.options`), declared by its pytest plugin;
this file never declares them. It reads them through the same table, with
each option's default when the plugin is not loaded. When the plugin is
active its ``harness_run`` fixture is reused, so spec tests and prose tests
of one session share a target and a results file.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.app.options import from_pytest_config
from harness.session import HarnessRun


@pytest.fixture(scope="session")
def prose_run(request: pytest.FixtureRequest) -> Iterator[HarnessRun]:
    try:
        yield request.getfixturevalue("harness_run")
        return
    except pytest.FixtureLookupError:
        pass
    with HarnessRun(from_pytest_config(request.config)) as run:
        yield run
