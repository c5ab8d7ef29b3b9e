"""Which input paths are results files, and of which kind.

``harness report`` takes files and directories. A directory holding the
``_harness_verdicts`` marker is Parquet the job wrote itself (``--append-to``);
any other directory is searched for ``*.jsonl`` and ``*.xml``. A path that does
not exist, or a file that is none of these, is a problem named with the
file, and the rest goes on. Plain Python (no Spark): it only lists files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

#: Written beside the Parquet verdicts by ``--append-to``; how a verdicts directory is recognised.
VERDICTS_MARKER = "_harness_verdicts"

#: File suffix -> input kind (the reader that takes it).
SUFFIX_KINDS = {".jsonl": "jsonl", ".xml": "junit"}


@dataclass
class InputFiles:
    """The inputs sorted by kind, plus the paths that could not be used (path, problem)."""

    jsonl: list[str] = field(default_factory=list)
    junit: list[str] = field(default_factory=list)
    parquet: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)

    def add(self, kind: str, path: Path) -> None:
        bucket = getattr(self, kind)
        text = str(path.resolve())
        if text not in bucket:
            bucket.append(text)

    @property
    def empty(self) -> bool:
        return not (self.jsonl or self.junit or self.parquet)


def discover_inputs(paths: list[str], exclude: Path | None = None) -> InputFiles:
    """Sort ``paths`` (files or directories, searched recursively) into the kinds the job reads.

    Nothing under ``exclude`` (the report's own ``--out``) is an input: a report rerun into a directory
    inside its inputs must not read the verdicts it wrote last time, nor overwrite what it is reading.
    """
    found = InputFiles()
    skip = exclude.resolve() if exclude is not None else None
    for text in paths:
        path = Path(text)
        if not path.exists():
            found.problems.append((text, "does not exist"))
        elif skip is not None and _within(path.resolve(), skip):
            found.problems.append(
                (text, f"is inside the report's own --out {exclude}: a report does not read its own output")
            )
        elif path.is_dir():
            if not _walk(path, found, skip):
                found.problems.append((text, "directory holds no results (*.jsonl, *.xml or harness verdicts)"))
        elif path.suffix in SUFFIX_KINDS:
            found.add(SUFFIX_KINDS[path.suffix], path)
        else:
            found.problems.append((text, "not a results file (expected *.jsonl, JUnit *.xml or a verdicts directory)"))
    return found


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _walk(root: Path, found: InputFiles, skip: Path | None = None) -> bool:
    """Add every results file under ``root``; a verdicts directory is taken whole. True when any was found."""
    before = len(found.jsonl) + len(found.junit) + len(found.parquet)
    for directory, subdirs, files in os.walk(root):
        here = Path(directory)
        if skip is not None and _within(here.resolve(), skip):
            subdirs.clear()
            continue
        if VERDICTS_MARKER in files:
            found.add("parquet", here)
            subdirs.clear()
            continue
        subdirs[:] = sorted(d for d in subdirs if not d.startswith((".", "_")))
        for name in sorted(files):
            kind = SUFFIX_KINDS.get(Path(name).suffix)
            if kind:
                found.add(kind, here / name)
    return len(found.jsonl) + len(found.junit) + len(found.parquet) > before
