"""Plug-in: the spec files as a suite (``harness run --suite spec --specs PATH``).

It lives with the app because it joins two layers below it: the loaders
(:mod:`harness.formats`) and the engine's suite table.
"""

from __future__ import annotations

from typing import Any


def _collect(specs: list[Any]) -> list[Any]:
    from harness.formats.loaders import load_paths

    return load_paths(specs) if specs else []


def install(registry: Any) -> None:
    from harness.engine.plugins import Suite

    registry.add_suite(Suite("spec", "the spec files under --specs (legacy and unified formats)", _collect, order=10))
