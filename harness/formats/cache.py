"""A content-addressed cache for loading spec files: decoded documents and schema verdicts, held as data.

Reading the upstream corpora costs about a third of a second (YAML, then
JSON-schema validation), which is most of a run's start-up. The work
depends only on its inputs, so each result is stored under the SHA-256 of
those inputs (the file's bytes; the document and the schema's bytes) and of
:data:`CACHE_FORMAT`, which names this format's version and the harness's. An
edited file, another schema or another harness release is a different key,
never a stale hit.

An entry is JSON, never code: ``{"format": CACHE_FORMAT, "kind": KIND,
"value": ...}``, read with the standard library's parser, so a planted entry
can at worst be wrong, and a wrong one is a miss. Before, entries were pickles,
and a planted pickle ran a shell command on the next run. Each reader passes
:func:`get` a function that turns the entry's ``value`` into what it cached,
raising on any other shape; an entry that is not a regular file, is larger than
:data:`MAX_ENTRY_BYTES`, is not JSON, is of another format or kind, or that
function refuses, is removed, and the fresh result is written in its place.
What each kind holds is its reader's (docs/spec-loading.md).

Kept in ``$HARNESS_CACHE_DIR/specs`` (default ``~/.cache/cs-harness/specs``).
``HARNESS_NO_CACHE=1`` turns it off. An entry that cannot be read or written
is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import __version__

#: Part of every key and of every entry: bump the number when what an entry holds, or what the loaders compute
#: from a file, changes (2: JSON entries instead of pickles).
CACHE_FORMAT = f"cs-harness-specs/2/{__version__}"
#: An entry longer than this is not read (a document's entry is a few times the largest spec file at most).
MAX_ENTRY_BYTES = 8 << 20
MISSING = object()


def cache_dir() -> Path:
    """The harness's cache folder (durations, spec files)."""
    return Path(os.environ.get("HARNESS_CACHE_DIR") or Path.home() / ".cache" / "cs-harness")


def enabled() -> bool:
    return os.environ.get("HARNESS_NO_CACHE", "") in ("", "0")


def key(*parts: bytes) -> str:
    digest = hashlib.sha256(CACHE_FORMAT.encode())
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def _entry_path(kind: str, entry: str) -> Path:
    return cache_dir() / "specs" / kind / entry


def get(kind: str, entry: str, read: Callable[[Any], Any], loads: Callable[[str], Any] = json.loads) -> Any:
    """What ``read`` makes of the entry's value, or :data:`MISSING`; a bad entry is removed (then rewritten).

    ``loads`` parses the entry's JSON text (a reader of Extended JSON passes
    its decoder, so a value is decoded in the same pass); ``read`` raises
    (anything) for a value of another shape: a hostile entry may make a
    decoder raise what it likes, and a bad entry is only a miss.
    """
    if not enabled():
        return MISSING
    path = _entry_path(kind, entry)
    try:
        raw = _read_regular(path)
    except FileNotFoundError:
        return MISSING
    except OSError:
        return _discard(path)
    try:
        envelope = loads(raw.decode("utf-8"))
        if not (
            isinstance(envelope, dict)
            and envelope.keys() == {"format", "kind", "value"}
            and envelope["format"] == CACHE_FORMAT
            and envelope["kind"] == kind
        ):
            return _discard(path)
        return read(envelope["value"])
    except Exception:  # any failure to make sense of an entry is a miss (see the docstring)
        return _discard(path)


def put(kind: str, entry: str, value: Any) -> None:
    """Store ``value`` (JSON-shaped: dicts, lists, strings, numbers, booleans, None) under ``entry``."""
    if not enabled():
        return
    try:
        data = json.dumps({"format": CACHE_FORMAT, "kind": kind, "value": value}, allow_nan=False).encode()
    except (TypeError, ValueError):
        return
    if len(data) > MAX_ENTRY_BYTES:
        return
    folder = cache_dir() / "specs" / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=folder, prefix=".", suffix=".tmp", delete=False) as handle:
            handle.write(data)
        try:
            os.replace(handle.name, folder / entry)
        except OSError:
            os.unlink(handle.name)
            raise
    except OSError:
        pass


def _read_regular(path: Path) -> bytes:
    """The entry's bytes, when it is a regular file of at most :data:`MAX_ENTRY_BYTES` (never a link, a FIFO, a
    device: opened without following a link and without waiting, and checked before it is read)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_ENTRY_BYTES:
            raise OSError(f"{path}: not a cache entry")
        raw = handle.read(MAX_ENTRY_BYTES + 1)
    if len(raw) > MAX_ENTRY_BYTES:  # grown since it was looked at
        raise OSError(f"{path}: not a cache entry")
    return raw


def _discard(path: Path) -> Any:
    try:
        if path.is_dir() and not path.is_symlink():
            os.rmdir(path)
        else:
            path.unlink()
    except OSError:
        pass
    return MISSING
