"""How long each test took last time, so parallel runs start the slowest tests first.

Kept in ``$HARNESS_CACHE_DIR/durations.json`` (default ``~/.cache/cs-harness``),
by test id, updated after every run. A test never seen before is estimated
at the median of the known ones. The cache only orders work: a missing or
unreadable cache changes nothing but the order.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from pathlib import Path

from harness.formats.cache import cache_dir


class Durations:
    def __init__(self, known: dict[str, float], path: Path) -> None:
        self.known = known
        self.path = path
        self._median = statistics.median(known.values()) if known else 0.0

    @classmethod
    def load(cls) -> Durations:
        path = cache_dir() / "durations.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            known = {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
        except (OSError, ValueError, TypeError):
            known = {}
        return cls(known, path)

    def estimate(self, test_id: str) -> float:
        return self.known.get(test_id, self._median)

    def note(self, test_id: str, seconds: float) -> None:
        self.known[test_id] = round(seconds, 4)

    def save(self) -> None:
        """Replace the file atomically; a cache that cannot be written is not an error."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=self.path.parent, delete=False, encoding="utf-8") as handle:
                json.dump(self.known, handle, sort_keys=True)
            os.replace(handle.name, self.path)
        except OSError:
            pass
