"""A content-addressed cache for loading spec files: decoded documents and schema verdicts.

Reading the upstream corpora costs about a third of a second (YAML, then
JSON-schema validation), which is most of a run's start-up. The work
depends only on its inputs, so each result is stored under the SHA-256 of
those inputs (the file's bytes; the document and the schema's bytes) and of
:data:`CACHE_FORMAT`. An edited file, another schema or another harness
release is a different key, never a stale hit.

Nothing hostile reaches it: a spec file is checked against
:mod:`harness.formats.load_limits` (its size before it is read, then what
it builds), the limits are part of a document's key, and only a document
that loaded within them is stored; a refused file is refused again next time.

Kept in ``$HARNESS_CACHE_DIR/specs`` (default ``~/.cache/cs-harness/specs``).
``HARNESS_NO_CACHE=1`` turns it off. An entry that cannot be read or written
is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

from harness import __version__

#: Part of every key: bump it when what the loaders compute from a file changes.
CACHE_FORMAT = f"cs-harness-specs/1/{__version__}"
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


def get(kind: str, entry: str) -> Any:
    if not enabled():
        return MISSING
    try:
        with open(cache_dir() / "specs" / kind / entry, "rb") as handle:
            return pickle.load(handle)
    except Exception:
        return MISSING


def put(kind: str, entry: str, value: Any) -> None:
    if not enabled():
        return
    folder = cache_dir() / "specs" / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=folder, delete=False) as handle:
            pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(handle.name, folder / entry)
    except OSError:
        pass
