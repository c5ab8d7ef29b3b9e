"""Security-sensitive commands, kept out of what an executor's driver observed before anything records it.

An executor sends its driver's command events as the driver published them (docs/executor-protocol.md
section 7.1): an authentication command's body and reply may carry secrets. This module is the one place
that decides which events are sensitive (:func:`harness.core.vocabulary.sensitive_command`) and what is
left of them, so that no executor has to get it right and no secret reaches a record, a report or a log:

- a client's observed command events (``events``): a sensitive command's started, succeeded and failed
  events are left out unless the client's entity says ``observeSensitiveCommands``; an internal command
  (``configureFailPoint``) is always left out;
- the scope's command log (``commandLog``): a sensitive command's entries stay, with ``command``, ``reply``
  and ``failure`` emptied (the early verdict needs to know a command happened, never what it carried).

A succeeded or failed event is paired with its started event by client and ``requestId``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from harness.core.constants import INTERNAL_COMMANDS
from harness.core.vocabulary import sensitive_command

#: What a sensitive command's log entry keeps of its payloads: that it happened, not what it carried.
BLANKED = ("command", "reply", "failure")
_STARTED = "commandStartedEvent"


def _payload(event: Mapping[str, Any]) -> Any:
    return event.get("command") if event.get("kind") == _STARTED else event.get("reply")


class SensitiveCommands:
    """One scope's view of which command requests were sensitive, across every ``events``/``commandLog`` reply."""

    def __init__(self) -> None:
        #: Client ids whose entity said ``observeSensitiveCommands: true``.
        self.observing: set[str] = set()
        #: (client, requestId) of the sensitive commands whose started event has been seen in the command log.
        self._logged: set[tuple[str, Any]] = set()

    def client_created(self, client_id: str, options: Mapping[str, Any]) -> None:
        if options.get("observeSensitiveCommands") is True:
            self.observing.add(client_id)

    def client_events(self, client_id: str, events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """A client's command events less the sensitive (unless observed) and the internal ones."""
        observe_sensitive = client_id in self.observing
        left_out: set[Any] = set()
        kept = []
        for event in events:
            name = str(event.get("commandName", ""))
            request = event.get("requestId")
            if event.get("kind") == _STARTED:
                internal = name in INTERNAL_COMMANDS
                if internal or (not observe_sensitive and sensitive_command(name, _payload(event))):
                    left_out.add(request)
                    continue
            elif request in left_out:
                left_out.discard(request)
                continue
            elif name in INTERNAL_COMMANDS or (not observe_sensitive and sensitive_command(name, _payload(event))):
                continue
            kept.append(event)
        return kept

    def log_entries(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Command log entries with every sensitive command's payloads emptied (new documents; the input stays)."""
        redacted = []
        for entry in entries:
            key = (str(entry.get("client")), entry.get("requestId"))
            name = str(entry.get("commandName", ""))
            if entry.get("kind") == _STARTED:
                sensitive = sensitive_command(name, _payload(entry))
                if sensitive:
                    self._logged.add(key)
            else:
                sensitive = key in self._logged or sensitive_command(name, _payload(entry))
                self._logged.discard(key)
            if sensitive:
                entry = {**entry, **{field: {} for field in BLANKED if field in entry}}
            redacted.append(entry)
        return redacted
