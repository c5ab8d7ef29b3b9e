"""The table of comparators, keyed by the name a :class:`~harness.model.SpecTest` carries."""

from __future__ import annotations

from harness.matching import Comparator
from harness.matching.legacy import LegacyComparator
from harness.unified.comparator import UnifiedComparator

COMPARATORS: dict[str, Comparator] = {
    "legacy": LegacyComparator(),
    "unified": UnifiedComparator(),
}


def comparator_for(name: str) -> Comparator:
    try:
        return COMPARATORS[name]
    except KeyError:
        raise KeyError(f"unknown comparator {name!r}; known: {sorted(COMPARATORS)}") from None
