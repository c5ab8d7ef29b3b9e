"""The harness run the prose tests share: one target and driver for the whole pytest session.

Loading this conftest asks for the harness's pytest plugin
(:func:`harness.app.pytest_plugin.activate`), which declares the options
(``--target``, ``--driver``, ``--results``, ... from the one options table,
:mod:`harness.app.options`) and owns the session's run; spec tests and prose
tests of one session therefore share a target and a results file.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.app.pytest_plugin import activate


def pytest_addoption(parser: pytest.Parser, pluginmanager: Any) -> None:
    activate(pluginmanager)


@pytest.fixture(scope="session")
def prose_run(harness_run: Any) -> Any:
    return harness_run
