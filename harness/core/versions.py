"""Server and driver version strings, parsed and compared one way everywhere.

``runOnRequirements`` bounds, version-dependent prose tests and the
benchmarks' synthetic world all compare versions; they used to do it with
helpers of their own, reached through the target module (which imports pymongo).
"""

from __future__ import annotations

import re


def version_tuple(version: str) -> tuple[int, ...]:
    """``"4.2.0-rc1"`` -> ``(4, 2, 0)``: the leading numeric parts; missing parts count as zero when compared."""
    parts = []
    for piece in re.split(r"[.\-+]", str(version)):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts)


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` is older than, the same as, or newer than ``b`` (``"7.0"`` equals ``"7.0.0"``)."""
    ta, tb = version_tuple(a), version_tuple(b)
    width = max(len(ta), len(tb))
    ta, tb = ta + (0,) * (width - len(ta)), tb + (0,) * (width - len(tb))
    return (ta > tb) - (ta < tb)
