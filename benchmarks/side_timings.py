"""How a measured benchmark side reports its own phases to the runner.

The runner (:mod:`bench_report`) measures a side from outside (wall time,
memory); only the side knows where its phases begin and end (the JVM's start
against the job itself), so it writes them here as one JSON object. Kept
apart from :mod:`process_meter` so a side needs nothing the runner needs.
"""

from __future__ import annotations

import json
from pathlib import Path


def emit_timings(timings: dict, path: Path | None) -> None:
    """Write ``timings`` to ``path`` (when given) and print them as one line."""
    text = json.dumps(timings)
    if path is not None:
        path.write_text(text)
    print(text)
