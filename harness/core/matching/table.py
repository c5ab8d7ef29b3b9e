"""The table of comparators, keyed by the name a :class:`~harness.core.model.SpecTest` carries."""

from __future__ import annotations

from harness.core.matching import Comparator
from harness.core.matching.legacy import LegacyComparator
from harness.core.matching.unified_comparator import UnifiedComparator

COMPARATORS: dict[str, Comparator] = {
    "legacy": LegacyComparator(),
    "unified": UnifiedComparator(),
}


def comparator_for(name: str) -> Comparator:
    try:
        return COMPARATORS[name]
    except KeyError:
        raise KeyError(f"unknown comparator {name!r}; known: {sorted(COMPARATORS)}") from None
