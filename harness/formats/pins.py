"""Pinned corpora: every known spec file's SHA-256 and how many tests the loaders make of it.

A loader that quietly drops a test leaves a run green with one test fewer; counts pinned beside the
content make that an error. One manifest per spec source lives in the project's data folder
``specs/pins/`` (found through :func:`~harness.core.project_data.project_data`), written by
``harness specs pin SOURCE``::

    source: ../shared/specs/upstream/unified     # as given to harness specs pin
    origin: {kind: path}                         # pypi: the sdist and its SHA-256; git: the commit
    folder: unified                              # the name of the source's root folder
    files:                                       # path under that folder -> content and test count
      change-streams.yml: {sha256: 9c1f..., tests: 22}

A loaded file is looked up by its content (:meth:`PinIndex.status`). Known content with another test
count is :data:`MISCOUNTED`, and :func:`pin_checked` adds one ``error`` test for the file naming both
numbers. A file with unknown content at a pinned path is :data:`CHANGED`, any other unknown file
:data:`UNPINNED`: both are run (a newer corpus), never refused. docs/pins.md has the rules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.core.model import SpecTest
from harness.core.ports import Runnable
from harness.core.project_data import project_data
from harness.formats.data_yaml import load_data_yaml
from harness.formats.loaders import format_of, load_file
from harness.formats.spec_reader import SPEC_SUFFIXES

PINNED, MISCOUNTED, CHANGED, UNPINNED = "pinned", "miscounted", "changed", "unpinned"
#: The description of the error test a miscounted file gets (its test id is ``format/stem::<pin>``).
PIN_ERROR = "<pin>"
#: The description every loader gives the one error test of a file that does not load at all: it counts as
#: no test (the file's pin says how many it should hold).
WHOLE_FILE_ERROR = "<file>"
HEADER = (
    "# Pinned corpus (docs/pins.md): each spec file's SHA-256 and how many tests the harness loads from it.\n"
    "# Written by: harness specs pin {source}\n"
)


class PinFileError(Exception):
    """A manifest that cannot be read; the message names the file and the entry."""


@dataclass(frozen=True)
class PinnedFile:
    manifest: str
    source: str
    #: Its path under the source's root folder, and that folder's name.
    path: str
    folder: str
    sha256: str
    tests: int


@dataclass(frozen=True)
class FileStatus:
    status: str
    #: The pins of its content (pinned, miscounted) or of its path (changed).
    pins: tuple[PinnedFile, ...] = ()


def pins_folder() -> Path:
    return project_data("pins")


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def count_tests(tests: Iterable[SpecTest]) -> int:
    """How many tests a file's loaded list holds (a whole-file error is none)."""
    return sum(1 for test in tests if test.description not in (WHOLE_FILE_ERROR, PIN_ERROR))


@dataclass
class PinIndex:
    """Every manifest's files, by content and by ``folder/path``."""

    files: list[PinnedFile] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_hash: dict[str, list[PinnedFile]] = {}
        for pin in self.files:
            self._by_hash.setdefault(pin.sha256, []).append(pin)

    @classmethod
    def load(cls, folder: Path | None = None) -> PinIndex:
        folder = pins_folder() if folder is None else folder
        paths = sorted(folder.glob("*.yml")) if folder.is_dir() else []
        return cls([pin for path in paths for pin in read_manifest(path)])

    def stems(self) -> set[str]:
        """The name of every pinned file without folder or extension (``x.yml`` and ``x.json`` share one), as
        the file part of a test id spells it (``format/stem``)."""
        return {Path(pin.path).stem for pin in self.files}

    def status(self, path: Path, loaded: int | None = None) -> FileStatus:
        """The file's standing; with ``loaded`` (its test count), known content with another count is miscounted."""
        known = tuple(self._by_hash.get(sha256_of(path), ()))
        if known:
            matching = tuple(pin for pin in known if loaded is None or pin.tests == loaded)
            return FileStatus(PINNED, matching) if matching else FileStatus(MISCOUNTED, known)
        where = path.resolve().as_posix()
        same_path = tuple(pin for pin in self.files if where.endswith(f"/{pin.folder}/{pin.path}"))
        return FileStatus(CHANGED, same_path) if same_path else FileStatus(UNPINNED)


def pin_checked(files: Iterable[tuple[Path, list[SpecTest]]], index: PinIndex) -> list[SpecTest]:
    """The loaded tests, each miscounted file followed by one ``error`` test naming both counts.

    ``files``: every discovered spec file with its tests (:func:`~harness.formats.loaders.load_files`), so a
    pinned file the loaders made no test of is checked too: grouping the loaded tests would never see it.
    """
    checked: list[SpecTest] = []
    for path, of_file in files:
        checked.extend(of_file)
        if not path.is_file():
            continue  # a --specs root that does not exist: already an error test
        loaded = count_tests(of_file)
        standing = index.status(path, loaded)
        if standing.status == MISCOUNTED:
            checked.append(_pin_error(path, of_file, loaded, standing.pins[0]))
    return checked


def file_statuses(tests: list[Runnable], index: PinIndex) -> dict[str, str]:
    """Each spec file of these tests and its standing; a file with a pin error test is miscounted.

    Needs no test count, so it gives the same answer for every slice of a run (``-k``, a worker's tests).
    """
    files = dict.fromkeys(t.spec_file for t in tests if t.spec_file is not None and Path(t.spec_file).is_file())
    miscounted = {t.spec_file for t in tests if t.spec_file is not None and t.name == PIN_ERROR}
    return {file: MISCOUNTED if file in miscounted else index.status(Path(file)).status for file in files}


def _pin_error(path: Path, of_file: list[SpecTest], loaded: int, pin: PinnedFile) -> SpecTest:
    """The error test of a miscounted file, in its first test's format (a file of no test: its recogniser's)."""
    file = of_file[0].file if of_file else str(path)
    message = (
        f"{file}: the loaders made {loaded} test(s) of it, but its pin says {pin.tests} "
        f"(specs/pins/{pin.manifest}.yml: {pin.path}, the same SHA-256 {pin.sha256[:12]}): a loader dropped "
        f"or added tests. If the loaders changed on purpose, refresh the pin: harness specs pin {pin.source}"
    )
    form, comparator = (of_file[0].format, of_file[0].comparator) if of_file else (format_of(path), "legacy")
    return SpecTest(file=file, format=form, description=PIN_ERROR, comparator=comparator, load_error=message)


# -- manifests ----------------------------------------------------------------------------------------
def pin_entries(root: Path, leave_out: Iterable[Path] = ()) -> dict[str, dict[str, Any]]:
    """``{path under root: {sha256, tests}}`` for every spec file under ``root`` (both encodings of a test
    file), leaving out the folders in ``leave_out`` (pinned as sources of their own)."""
    skipped = [folder.resolve() for folder in leave_out]
    found = [] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in SPEC_SUFFIXES and p.is_file())
    files = [root] if root.is_file() else found
    base = root.parent if root.is_file() else root
    entries = {}
    for path in files:
        if any(folder in path.resolve().parents for folder in skipped):
            continue
        entries[path.relative_to(base).as_posix()] = {"sha256": sha256_of(path), "tests": count_tests(load_file(path))}
    return entries


def write_manifest(
    path: Path, source: str, origin: dict[str, Any], folder: str, entries: dict[str, dict[str, Any]]
) -> None:
    body = {"source": source, "origin": origin, "folder": folder, "files": entries}
    text = yaml.safe_dump(body, sort_keys=False, default_flow_style=None, width=200, allow_unicode=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER.format(source=source) + text, encoding="utf-8")


def read_manifest(path: Path) -> list[PinnedFile]:
    """The pinned files of one manifest; a malformed one is a :class:`PinFileError` naming file and entry."""
    try:
        data = load_data_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:  # the strict reader's errors too (a key twice...)
        raise PinFileError(f"{path}: cannot read the pin manifest: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise PinFileError(f"{path}: a pin manifest needs 'source', 'folder' and a 'files' mapping")
    pins = []
    for name, entry in data["files"].items():
        entry = entry if isinstance(entry, dict) else {}
        if not (isinstance(entry.get("sha256"), str) and isinstance(entry.get("tests"), int)):
            raise PinFileError(f"{path}: files[{name!r}] needs 'sha256' (text) and 'tests' (a whole number)")
        pins.append(
            PinnedFile(
                path.stem,
                str(data.get("source", "")),
                str(name),
                str(data.get("folder", "")),
                entry["sha256"],
                entry["tests"],
            )
        )
    return pins


def read_source(path: Path) -> str:
    """The source a manifest pins (``harness specs pin`` refreshes the others' folders without their files)."""
    try:
        data = load_data_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return ""
    return str(data.get("source") or "") if isinstance(data, dict) else ""
