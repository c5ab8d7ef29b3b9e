"""Plug-in: the prose tests as a suite (``harness run --suite prose``), and the code-defined checks of rules a
unified file cannot hold (``--suite checks``: prose_tests/server_checks.py, prose_tests/token_checks.py)."""

from __future__ import annotations

from typing import Any


def _collect(specs: list[Any]) -> list[Any]:
    from prose_tests import load_prose_checks

    return load_prose_checks()


def _collect_checks(specs: list[Any]) -> list[Any]:
    from prose_tests.server_checks import load_server_checks
    from prose_tests.token_checks import load_token_checks

    return load_server_checks() + load_token_checks()


def install(registry: Any) -> None:
    from harness.engine.plugins import Suite

    registry.add_suite(Suite("prose", "the change-stream prose tests, automated", _collect, order=20))
    registry.add_suite(
        Suite(
            "checks",
            "rules a unified file cannot hold: server checks through the harness's own client, token checks",
            _collect_checks,
            order=30,
        )
    )
