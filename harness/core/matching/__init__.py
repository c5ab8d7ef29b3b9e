"""Comparators: expected spec values against what the driver observed.

A comparator answers three questions for the runner (is this result, this
error, this event what the test expects?) with a list of :class:`Mismatch`,
empty when they agree. :data:`COMPARATORS` maps the name a test carries
(``SpecTest.comparator``) to its implementation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from bson import json_util
from bson.json_util import JSONMode, JSONOptions

from harness.core.model import _Marker

_SHOW = JSONOptions(json_mode=JSONMode.RELAXED)
#: An absent key or index on the actual side, shown as ``<missing>``.
MISSING: Any = _Marker("MISSING")


def show(value: Any, limit: int = 300) -> str:
    """A value as a driver author reads it: relaxed Extended JSON, shortened."""
    if value is MISSING:
        return "<missing>"
    if hasattr(value, "__next__") or hasattr(value, "try_next"):
        return f"<{type(value).__name__}>"  # a cursor or change stream: converting it would iterate it (and block)
    try:
        text = json_util.dumps(value, json_options=_SHOW)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class UnsupportedAssertion(Exception):
    """The test asks for a check this runner cannot make: an ``error`` verdict, never a target failure."""


@dataclass(frozen=True)
class Mismatch:
    """Where expected and actual part ways, and how."""

    path: str
    expected: Any
    actual: Any
    reason: str = ""

    def __str__(self) -> str:
        why = f" ({self.reason})" if self.reason else ""
        return f"{self.path}: expected {show(self.expected)}, got {show(self.actual)}{why}"


def child_path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


class Comparator(Protocol):
    """What the runner needs to judge a test; ``context`` carries entities and the like."""

    def match_result(self, expected: Any, actual: Any, path: str, context: Any) -> list[Mismatch]: ...

    def match_error(self, expected: dict[str, Any], error: Any, path: str, context: Any) -> list[Mismatch]: ...

    def match_event(self, expected: dict[str, Any], actual: Any, path: str, context: Any) -> list[Mismatch]: ...
