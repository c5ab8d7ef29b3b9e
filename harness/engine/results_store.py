"""The append-only results store: one record per line, durable before the next test starts.

Written and flushed (and fsynced) the moment a test ends, so a run killed at
any point keeps every finished test; a torn last line from such a kill is
kept apart from the next run's records and skipped when reading.

A results file that cannot be written is said in one line, never a traceback
(:class:`ResultsUnwritable`): at open, before the target starts (a directory,
a read-only folder, a parent that is a file), and at any later write (a full
disk, an I/O error), after which the file is cut back to its last whole line,
so it never ends in a torn record of ours. Missing parent folders are created.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import threading
from pathlib import Path
from typing import Any, BinaryIO

from harness.core.records import record_line


class ResultsUnwritable(Exception):
    """The results file cannot be written: the run must not go on, since its verdicts would be lost.

    Its text is the one line a person reads: the path, the system's reason and, where there is one, the fix.
    """

    def __init__(self, path: Path, error: OSError, written: int | None = None) -> None:
        self.path = path
        self.error = error
        self.written = written
        reason = os.strerror(error.errno) if error.errno else str(error)
        if written is None:
            text = f"cannot write results to {path}: {reason}{_fix(path, error)}"
        else:
            text = (
                f"writing results to {path} failed: {reason}; the run stopped after {written} record(s), and the "
                "file ends with the last whole one"
            )
        super().__init__(text)


def _fix(path: Path, error: OSError) -> str:
    """What to do about a results path refused at open."""
    if error.errno == errno.EISDIR:
        return f" (--results takes a file: give {path}/out.jsonl, say)"
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return " (choose a folder you may write in)"
    if error.errno == errno.ENOTDIR:
        return " (a folder on that path is a file)"
    return ""


def _make_folders(folder: Path) -> None:
    """The results file's folder and any missing above it; a file where a folder should be is ``ENOTDIR``."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder)) from exc


def _open_for_append(path: Path) -> BinaryIO:
    """The file, unbuffered, for appending: each record is one ``write``, nothing waits in a buffer."""
    return open(path, "ab", buffering=0)


class ResultsStore:
    """Appends records to a JSON-lines file; each write is durable before it returns."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        #: How many records this store wrote.
        self.written = 0
        self._lock = threading.Lock()
        self._file: BinaryIO | None = None
        if path is not None:
            try:
                _make_folders(path.parent)
                self._file = _open_for_append(path)
                if _ends_mid_line(path):  # a run killed mid-write: keep its torn line apart from ours
                    self._write_whole(b"\n")
            except OSError as exc:
                self.close()
                raise ResultsUnwritable(path, exc) from exc

    def append(self, record: dict[str, Any]) -> None:
        """One line, written whole: several processes may append to one file (pytest-xdist workers).

        Raises :class:`ResultsUnwritable` when the line cannot be written and made durable; the file then ends
        where it ended before.
        """
        if self._file is None:
            return
        assert self.path is not None
        data = (record_line(record) + "\n").encode("utf-8")
        with self._lock:
            try:
                self._write_whole(data)
            except OSError as exc:
                raise ResultsUnwritable(self.path, exc, self.written) from exc
            self.written += 1

    def _write_whole(self, data: bytes) -> None:
        """``data`` at the end of the file and on disk, or, when that fails, none of it."""
        assert self._file is not None
        descriptor = self._file.fileno()
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # another process's line never interleaves with ours
        try:
            end = _end_of(descriptor)
            try:
                written = 0
                while written < len(data):
                    count = self._file.write(data[written:])
                    if not count:
                        raise OSError(errno.EIO, os.strerror(errno.EIO))
                    written += count
                _sync(descriptor)
            except OSError:
                if end is not None:
                    with contextlib.suppress(OSError):  # a device (/dev/full) cannot be cut: it keeps nothing
                        self._file.truncate(end)
                raise
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):  # nothing is buffered: closing loses nothing
                self._file.close()
            self._file = None


def check_writable(path: Path | None) -> None:
    """Raise :class:`ResultsUnwritable` unless ``path`` can take records; a front end asks before a run starts.

    The one test is the store's own: the file is opened for appending (created if need be), then closed.
    """
    ResultsStore(path).close()


def _end_of(descriptor: int) -> int | None:
    """Where the file ends, to cut a failed write back to; None for a pipe, which cannot be cut (nor torn: a
    line shorter than the pipe's buffer is written whole)."""
    try:
        return os.lseek(descriptor, 0, os.SEEK_END)
    except OSError as exc:
        if exc.errno == errno.ESPIPE:
            return None
        raise


def _sync(descriptor: int) -> None:
    """On disk before it returns; a pipe or a device such as /dev/null has no disk to sync to (EINVAL)."""
    try:
        os.fsync(descriptor)
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise


def _ends_mid_line(path: Path) -> bool:
    """Whether the file's last byte is not a newline (an empty file, or one that cannot be read back, is not)."""
    try:
        with open(path, "rb") as handle:
            end = handle.seek(0, os.SEEK_END)
            if end == 0:
                return False
            handle.seek(end - 1)
            return handle.read(1) != b"\n"
    except OSError:
        return False


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
