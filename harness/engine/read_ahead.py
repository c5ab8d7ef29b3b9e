"""The command events of a push mode, aligned with a test's ``expectEvents`` past the getMores read ahead.

In the ``emitter`` and ``stream`` modes (docs/executor-protocol.md 6.4.1) the driver sends getMore after getMore
while the stream is open, whatever the application asks: a getMore may come between a write and the resume's
aggregate, and one more may already be sent when the test counts them. The references fix nothing about when a
push API reads, so in these modes getMore events are compared in order among themselves but not against the other
commands (:func:`aligned`), the ones no expected event takes are left out, and everything else is compared as
written: the resume's aggregate, its stage, each getMore the test names (each needs one of its own). What was left
out is counted in the record (``details.read_ahead_getmores``) so nothing is dropped unseen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.core.observations import ObservedEvent

#: The command-monitoring events a getMore publishes.
_COMMAND_EVENTS = ("commandStartedEvent", "commandSucceededEvent", "commandFailedEvent")


def _may_be(expected: Mapping[str, Any], event: ObservedEvent) -> bool:
    """Whether an expected event may stand for this observed getMore event: the same kind of event (started,
    succeeded, failed), naming getMore or no command at all."""
    body = expected.get(event.kind)
    if body is None:
        return False
    name = body.get("commandName") if isinstance(body, Mapping) else None
    return name in (None, "getMore")


def _is_get_more(event: ObservedEvent) -> bool:
    return event.kind in _COMMAND_EVENTS and event.command_name == "getMore"


def _names_get_more(expected: Mapping[str, Any]) -> str | None:
    """The kind of event (started, succeeded, failed) when the expected event names getMore itself."""
    for kind in _COMMAND_EVENTS:
        body = expected.get(kind)
        if isinstance(body, Mapping) and body.get("commandName") == "getMore":
            return kind
    return None


def aligned(
    expected: Sequence[Mapping[str, Any]], observed: Sequence[ObservedEvent]
) -> tuple[list[ObservedEvent], int]:
    """``observed`` as the expected list can be compared with it in a push mode: getMore events are ordered among
    themselves (each kind apart), not against the other commands.

    Walking the expected list, an observed getMore event standing where the expected event is not that kind of
    event of a getMore is set aside (read ahead: a getMore, or its reply, sent before a command the test expects
    first); an expected event that names getMore takes the next such event if it stands there, else the earliest
    one set aside (the getMore a pull-mode driver would send after a write, sent before it). Set-aside getMore
    events no expected event took, and those after the last expected event, are left out. Returns the events to
    compare and how many were left out."""
    kept: list[ObservedEvent] = []
    aside: list[ObservedEvent] = []
    index = 0
    for wanted in expected:
        while index < len(observed) and _is_get_more(observed[index]) and not _may_be(wanted, observed[index]):
            aside.append(observed[index])
            index += 1
        here = observed[index] if index < len(observed) else None
        kind = _names_get_more(wanted)
        if kind is not None and (here is None or not _is_get_more(here)):
            earlier = next((event for event in aside if event.kind == kind), None)
            if earlier is not None:
                aside.remove(earlier)
                kept.append(earlier)
                continue
        if here is not None:
            kept.append(here)
            index += 1
    kept += [event for event in observed[index:] if not _is_get_more(event)]
    return kept, len(observed) - len(kept)
