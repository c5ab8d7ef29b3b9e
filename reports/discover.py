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


def discover_inputs(paths: list[str]) -> InputFiles:
    """Sort ``paths`` (files or directories, searched recursively) into the kinds the job reads."""
    found = InputFiles()
    for text in paths:
        path = Path(text)
        if not path.exists():
            found.problems.append((text, "does not exist"))
        elif path.is_dir():
            if not _walk(path, found):
                found.problems.append((text, "directory holds no results (*.jsonl, *.xml or harness verdicts)"))
        elif path.suffix in SUFFIX_KINDS:
            found.add(SUFFIX_KINDS[path.suffix], path)
        else:
            found.problems.append((text, "not a results file (expected *.jsonl, JUnit *.xml or a verdicts directory)"))
    return found


def _walk(root: Path, found: InputFiles) -> bool:
    """Add every results file under ``root``; a verdicts directory is taken whole. True when any was found."""
    before = len(found.jsonl) + len(found.junit) + len(found.parquet)
    for directory, subdirs, files in os.walk(root):
        here = Path(directory)
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
