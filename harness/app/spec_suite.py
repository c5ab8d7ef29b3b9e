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


#: The parts of the main job's spec files, in the order of its sources (``harness matrix`` runs them by name).
PARTS = ("legacy", "unified", "supplementary")


def _parts() -> dict[str, str]:
    """Each part with the main job's source for it, as ``--specs`` takes it: the same whatever the working directory."""
    from harness.formats.source_names import main_job_sources

    return dict(zip(PARTS, main_job_sources(), strict=True))


def _is_source(text: str) -> bool:
    from harness.formats.source_names import is_source

    return is_source(text)


def install(registry: Any) -> None:
    from harness.engine.plugins import Suite

    registry.add_suite(
        Suite(
            "spec",
            "the spec files under --specs (legacy and unified formats)",
            _collect,
            order=10,
            parts=_parts,
            is_source=_is_source,
        )
    )
