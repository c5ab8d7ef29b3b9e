"""The early no-change verdict of the pymongo adapters (docs/causes.md 4): the scope's clock, told every command
of its clients through pymongo's command monitoring, whatever the test observes.

The rule is :class:`harness.core.stream_clock.StreamClock`'s. What only pymongo can tell is read here: the stream's
current cursor (``stream._cursor``, whose ``_address`` and ``_id`` name it the way the clock keys cursors, by
the connection's address) and whether the driver still holds changes it has not handed out (``_data``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pymongo import monitoring

from harness.core.stream_clock import Judgement
from harness.core.stream_clock import StreamClock as CommandClock

__all__ = ["Judgement", "StreamClock"]


class StreamClock(CommandClock, monitoring.CommandListener):
    """One scope's clock, listening to all its clients."""

    # -- pymongo's listener API --------------------------------------------------------------------------------
    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.command_started(event.command_name, event.command, event.request_id, event.connection_id)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        self.command_succeeded(event.command_name, event.request_id, event.reply)

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        failure = event.failure if isinstance(event.failure, Mapping) else None
        self.command_failed(event.command_name, event.request_id, failure)

    def judge(self, stream: Any) -> Judgement:
        """Whether a change can still come to ``stream`` (a pymongo change stream of this scope's clients)."""
        if self.token_format is None:
            return Judgement(None, "")
        cursor = getattr(stream, "_cursor", None)
        if cursor is None or not stream.alive:
            return self.judge_cursor(None)
        key = (getattr(cursor, "_address", None), int(getattr(cursor, "_id", 0) or 0))
        return self.judge_cursor(key, buffered=bool(len(getattr(cursor, "_data", ()))))
