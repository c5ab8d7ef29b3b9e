"""Spec files -> :class:`~harness.core.model.SpecTest` list, whatever their format.

Each format has a (recognise, load) pair in :data:`FORMAT_LOADERS`; the
first whose recogniser accepts the decoded document loads it. A file that
cannot be read, that breaks a limit of :mod:`harness.formats.load_limits`
(a hostile file), or that no format recognises, becomes one ``error`` test
naming the file, so the rest of the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.core.model import SpecTest
from harness.formats import legacy as legacy_loader
from harness.formats import unified as unified_loader
from harness.formats.spec_reader import SpecFileError, discover_spec_files, read_spec_file

Recognise = Callable[[Any], bool]
Load = Callable[[str, Any, list[int | None]], list[SpecTest]]

FORMAT_LOADERS: list[tuple[str, Recognise, Load]] = [
    ("legacy", legacy_loader.is_legacy_document, legacy_loader.load_legacy),
    ("unified", unified_loader.is_unified_document, unified_loader.load_unified),
]


def _file_error(path: Path, message: str) -> SpecTest:
    return SpecTest(file=str(path), format="unknown", description="<file>", comparator="legacy", load_error=message)


def load_file(path: Path) -> list[SpecTest]:
    """All tests of one file, or a single error test describing why it cannot load."""
    try:
        document = read_spec_file(path)
    except SpecFileError as exc:
        return [_file_error(path, str(exc))]
    for _, recognise, load in FORMAT_LOADERS:
        if recognise(document.data):
            return load(str(path), document.data, document.test_lines)
    known = ", ".join(name for name, _, _ in FORMAT_LOADERS)
    return [_file_error(path, f"{path}: not a spec test file of any known format ({known})")]


def format_of(path: Path) -> str:
    """The name of the format whose recogniser accepts the file (``unknown`` when none does or it does not read)."""
    try:
        data = read_spec_file(path).data
    except SpecFileError:
        return "unknown"
    return next((name for name, recognise, _ in FORMAT_LOADERS if recognise(data)), "unknown")


def load_files(paths: list[Path]) -> list[tuple[Path, list[SpecTest]]]:
    """Every spec file discovered under ``paths`` with its tests, in a stable order, a file of no tests included
    (the pin check needs to see it); a root that does not exist is itself with its one error test."""
    loaded: list[tuple[Path, list[SpecTest]]] = []
    for root in paths:
        try:
            files = discover_spec_files([root])
        except SpecFileError as exc:
            loaded.append((root, [_file_error(root, str(exc))]))
            continue
        loaded.extend((path, load_file(path)) for path in files)
    return loaded


def load_paths(paths: list[Path]) -> list[SpecTest]:
    """Tests of every spec file under ``paths``, in a stable order."""
    return [test for _, tests in load_files(paths) for test in tests]
