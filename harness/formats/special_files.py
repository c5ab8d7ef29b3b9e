"""Entries of a spec folder that are not regular files: never opened, and named so that a run can say so.

Opening a FIFO waits for a writer that never comes; a link to ``/dev/zero``
reads without end; a device may act on being opened. Such an entry cannot be a
spec file, but a folder of spec files can hold one (by accident, or planted),
and skipping it without a word hides it. So the reader looks at what a path is
(``os.stat``, which follows links and opens nothing) before opening it, and
:func:`unread_entries` lists what discovery leaves out for this reason, whatever
its name, for the run's note (:func:`harness.app.spec_sources.provenance`). A
link to a regular file is a regular file here, read as before.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def irregular(path: Path) -> str | None:
    """None for a regular file (or a link to one) or a path that does not exist; else what it is, in words:
    ``a FIFO``, ``a symbolic link to a character device``, ``a symbolic link to nothing``..."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "a symbolic link to nothing" if path.is_symlink() else None
    if stat.S_ISREG(mode):
        return None
    kind = next((words for test, words in _KINDS if test(mode)), "not a regular file")
    return f"a symbolic link to {kind}" if path.is_symlink() else kind


def unread_entries(roots: Iterable[Path]) -> list[tuple[Path, str]]:
    """Every entry under the given folders that is neither a regular file nor a folder, with what it is, sorted.

    Links to folders are not followed (as discovery does not follow them), and a
    root that is not a folder is left to discovery, which refuses it by name.
    """
    found: list[tuple[Path, str]] = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            kind = irregular(path)
            if kind is not None and kind != "a directory" and not kind.endswith(" to a directory"):
                found.append((path, kind))
    return found


def unread_note(entries: list[tuple[Path, str]], most: int = 10) -> str:
    """The words of the run's note about ``entries`` (at most ``most`` named, then how many more)."""
    named = ", ".join(f"{path} ({kind})" for path, kind in entries[:most])
    more = f", and {len(entries) - most} more" if len(entries) > most else ""
    count = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
    return f"{count} of the spec folders not read, as they are not regular files: {named}{more}"
