"""The append-only results store: one record per line, durable before the next test starts.

Written and flushed (and fsynced) the moment a test ends, so a run killed at
any point keeps every finished test; a torn last line from such a kill is
kept apart from the next run's records and skipped when reading.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path
from typing import Any

from harness.core.records import record_line


class ResultsStore:
    """Appends records to a JSON-lines file; each write is durable before it returns."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._file = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")
            if _ends_mid_line(path):  # a run killed mid-write: keep its torn line apart from ours
                os.write(self._file.fileno(), b"\n")

    def append(self, record: dict[str, Any]) -> None:
        """One line, written whole: several processes may append to one file (pytest-xdist workers)."""
        if self._file is None:
            return
        data = (record_line(record) + "\n").encode("utf-8")
        with self._lock:
            descriptor = self._file.fileno()
            fcntl.flock(descriptor, fcntl.LOCK_EX)  # another process's line never interleaves with ours
            try:
                written = 0
                while written < len(data):
                    written += os.write(descriptor, data[written:])
                os.fsync(descriptor)
            finally:
                fcntl.flock(descriptor, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _ends_mid_line(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return False
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every complete record in a results file (a torn last line, from a kill mid-write, is ignored)."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return records
