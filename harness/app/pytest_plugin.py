"""The pytest entry point: inert unless a session asks for the harness.

pytest loads this module in every session of every project in an environment
where the harness is installed, so it adds no options and imports nothing
but the standard library, pytest and the options table. A session asks for
the harness by giving one of the harness's options (``--specs``, ``--target``,
``--driver``, ... see :mod:`harness.app.options`), or by a conftest calling
:func:`activate` (the prose tests' conftest does). Only then is the real
plugin, :mod:`harness.app.pytest_harness`, registered; it declares the
options, collects spec files and owns the session's run.
"""

from __future__ import annotations

from typing import Any

import pytest

#: The name the real plugin is registered under (``-p no:changestream_harness_session`` turns it off).
ACTIVE_PLUGIN = "changestream_harness_session"


def activate(pluginmanager: Any) -> None:
    """Register the real plugin once; its options are declared as it registers (``pytest_addoption`` is historic)."""
    if pluginmanager.has_plugin(ACTIVE_PLUGIN) or pluginmanager.is_blocked(ACTIVE_PLUGIN):
        return
    from harness.app import pytest_harness

    pluginmanager.register(pytest_harness, ACTIVE_PLUGIN)


def _flags() -> list[str]:
    from harness.app.options import RUN_OPTIONS

    return [option.pytest for option in RUN_OPTIONS]


def _asks_for_harness(args: list[str]) -> bool:
    flags = _flags()
    return any(arg.split("=", 1)[0] in flags for arg in args)


def _values(args: list[str], flag: str) -> list[str]:
    """The values of ``flag`` in raw arguments (``--flag V`` or ``--flag=V``), before any option is declared."""
    found = []
    for index, arg in enumerate(args):
        if arg == flag and index + 1 < len(args):
            found.append(args[index + 1])
        elif arg.startswith(flag + "="):
            found.append(arg.split("=", 1)[1])
    return found


def _resolve_sources(args: list[str]) -> None:
    """``--specs pypi:pymongo==4.20.0`` (or ``git:...``): fetched if need be, then given as its local folder."""
    from harness.app.spec_sources import resolve
    from harness.formats.source_names import is_source

    for index, arg in enumerate(args):
        if arg == "--specs" and index + 1 < len(args) and is_source(args[index + 1]):
            args[index + 1] = str(resolve(args[index + 1]).path)
        elif arg.startswith("--specs=") and is_source(arg.split("=", 1)[1]):
            args[index] = "--specs=" + str(resolve(arg.split("=", 1)[1]).path)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Activate the harness if asked, and make ``--specs`` paths collection roots, as if given as arguments."""
    if not _asks_for_harness(args):
        return
    activate(early_config.pluginmanager)
    _resolve_sources(args)
    # Not known_args_namespace.file_or_dir: before the options were declared, it took --specs' value for a path.
    elsewhere = {arg for index, arg in enumerate(args) if index == 0 or args[index - 1] != "--specs"}
    for root in _values(args, "--specs"):
        if root not in elsewhere:
            args.append(root)
