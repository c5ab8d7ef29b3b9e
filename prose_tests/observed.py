"""Reading a change stream's conversation with the server out of command events.

The prose tests judge a driver by what it sent and what it was told: the
``aggregate`` / ``getMore`` / ``killCursors`` commands in its command-started
events and the batches and ``postBatchResumeToken`` values in its
command-succeeded replies. Everything here works on driver-neutral
:class:`~harness.core.observations.ObservedEvent` lists, so any adapter that
reports command monitoring events can be judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.core.observations import ObservedEvent

STARTED, SUCCEEDED, FAILED = "commandStartedEvent", "commandSucceededEvent", "commandFailedEvent"
#: The commands a change stream cursor is made of.
CURSOR_COMMANDS = ("aggregate", "getMore")
#: ``$changeStream`` options that say where a stream starts; a resume may change only these.
START_OPTIONS = ("resumeAfter", "startAfter", "startAtOperationTime")
#: Command fields that legitimately differ between two sends of "the same" command.
PER_SEND_FIELDS = frozenset({"lsid", "$clusterTime", "txnNumber"})


@dataclass
class Batch:
    """One reply of a change stream cursor: which command, its documents, its postBatchResumeToken."""

    command_name: str
    documents: list[Any]
    cursor_id: int | None
    post_batch_resume_token: Any  # None when the reply carried none

    @property
    def has_post_batch_resume_token(self) -> bool:
        return self.post_batch_resume_token is not None


def started(events: list[ObservedEvent], name: str | None = None) -> list[ObservedEvent]:
    return [e for e in events if e.kind == STARTED and (name is None or e.command_name == name)]


def failed(events: list[ObservedEvent], name: str | None = None) -> list[ObservedEvent]:
    return [e for e in events if e.kind == FAILED and (name is None or e.command_name == name)]


def batches(events: list[ObservedEvent]) -> list[Batch]:
    """Every cursor reply (``aggregate`` first batch, ``getMore`` next batches), in order."""
    found = []
    for event in events:
        if event.kind != SUCCEEDED or event.command_name not in CURSOR_COMMANDS or not event.reply:
            continue
        cursor = event.reply.get("cursor")
        if not isinstance(cursor, dict):
            continue
        documents = cursor.get("firstBatch", cursor.get("nextBatch", []))
        found.append(Batch(event.command_name, list(documents), cursor.get("id"), cursor.get("postBatchResumeToken")))
    return found


def change_stream_stage(command: dict[str, Any] | None) -> dict[str, Any]:
    """The ``$changeStream`` stage's options of an ``aggregate`` command (empty if there is none)."""
    pipeline = (command or {}).get("pipeline") or []
    if pipeline and isinstance(pipeline[0], dict) and "$changeStream" in pipeline[0]:
        return dict(pipeline[0]["$changeStream"])
    return {}


def without_start_options(command: dict[str, Any]) -> dict[str, Any]:
    """An ``aggregate`` command as a resume must repeat it: start options and per-send fields removed."""
    kept = {k: v for k, v in command.items() if k not in PER_SEND_FIELDS}
    pipeline = list(kept.get("pipeline") or [])
    if pipeline and isinstance(pipeline[0], dict) and "$changeStream" in pipeline[0]:
        stage = {k: v for k, v in pipeline[0]["$changeStream"].items() if k not in START_OPTIONS}
        pipeline[0] = {"$changeStream": stage}
    kept["pipeline"] = pipeline
    return kept


def delivering_batch(events: list[ObservedEvent], change: dict[str, Any]) -> tuple[Batch, int]:
    """The latest reply whose batch holds ``change`` (matched by its ``_id``), and its place in it.

    Raises LookupError when no observed reply carries it (the adapter reports no replies,
    or the change did not come from this client's cursor).
    """
    for batch in reversed(batches(events)):
        for index, document in enumerate(batch.documents):
            if isinstance(document, dict) and document.get("_id") == change.get("_id"):
                return batch, index
    raise LookupError(f"no observed aggregate/getMore reply delivered the change with _id {change.get('_id')!r}")


def token_cached_after(events: list[ObservedEvent], change: dict[str, Any]) -> tuple[Any, str]:
    """The resume token the spec says is cached once ``change`` is returned, and why.

    The rule: the last document of a batch whose reply has a postBatchResumeToken
    caches that token; any other document caches its own ``_id``.
    """
    batch, index = delivering_batch(events, change)
    if index == len(batch.documents) - 1 and batch.has_post_batch_resume_token:
        return (
            batch.post_batch_resume_token,
            f"the last document of its {batch.command_name} batch, so that reply's postBatchResumeToken",
        )
    return change.get(
        "_id"
    ), f"document {index + 1} of {len(batch.documents)} in its {batch.command_name} batch, so its _id"
