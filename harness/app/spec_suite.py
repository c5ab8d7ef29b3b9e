"""Plug-in: the spec files as a suite (``harness run --suite spec --specs PATH``).

It lives with the app because it joins two layers below it: the loaders
(:mod:`harness.formats`) and the engine's suite table.
"""

from __future__ import annotations

from typing import Any


def _collect(specs: list[Any]) -> list[Any]:
    """Every test of the files under ``specs``; a file whose pin gives another test count gets an error test."""
    from harness.formats.loaders import load_files
    from harness.formats.pins import PinIndex, pin_checked

    return pin_checked(load_files(specs), PinIndex.load()) if specs else []


def install(registry: Any) -> None:
    from harness.engine.plugins import Suite

    registry.add_suite(Suite("spec", "the spec files under --specs (legacy and unified formats)", _collect, order=10))
