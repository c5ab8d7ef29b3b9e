"""The start points of the change-stream aggregates a test's clients sent, for the fact of a ``no-change`` cause.

A change that never comes has many possible causes: a stream resumed from the wrong place (or from none), a server
that lost the change, a driver that never sent the getMore. The command monitoring the test already records tells
them apart, so the fact of a ``no-change`` cause carries the start point of every change-stream aggregate the
observed clients sent ("opened with no start point, resumed with no start point"). An expected-outcomes entry can
then name the cause it was reproduced for (docs/causes.md, ``signature.message``) instead of any lost change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.core.model import SpecTest
from harness.core.ports import DriverLacksFeature, DriverScope, UnsupportedOperation

#: The stage options that say where a stream starts, in the spec's order of precedence on a resume.
START_POINTS = ("resumeAfter", "startAfter", "startAtOperationTime")


def start_point(command: Mapping[str, Any] | None) -> str | None:
    """The start option of a change-stream aggregate ("resumeAfter", "startAfter and startAtOperationTime",
    "no start point"), or None when the command opens no change stream."""
    if not command:
        return None
    pipeline = command.get("pipeline")
    if not isinstance(pipeline, list) or not pipeline or not isinstance(pipeline[0], Mapping):
        return None
    stage = pipeline[0].get("$changeStream")
    if not isinstance(stage, Mapping):
        return None
    given = [name for name in START_POINTS if name in stage]
    return " and ".join(given) if given else "no start point"


def aggregates_trail(scope: DriverScope, test: SpecTest) -> str:
    """One clause per client of the test that observes started commands and sent a change-stream aggregate, or ""
    when none did."""
    clients = [
        entity.id
        for entity in test.entities
        if entity.kind == "client" and "commandStartedEvent" in (entity.options.get("observeEvents") or ())
    ]
    clauses = []
    for client in clients:
        try:
            events = scope.events(client)
        except (DriverLacksFeature, UnsupportedOperation):
            continue
        starts = [
            point
            for e in events
            if e.kind == "commandStartedEvent" and e.command_name == "aggregate"
            for point in [start_point(e.command)]
            if point is not None
        ]
        if starts:
            said = [f"opened with {starts[0]}"] + [f"resumed with {p}" for p in starts[1:]]
            clauses.append(f"{client}'s change-stream aggregates: {', '.join(said)}")
    return "; ".join(clauses)
