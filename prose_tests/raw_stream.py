"""The harness's own change streams, in raw commands: ``aggregate`` with ``$changeStream``, ``getMore``,
``killCursors``, each sent with the harness's admin client (``database.command``).

Every change stream the harness opens for itself (a set-up that needs a real token or cluster time, a server
check reading what the server sends) goes through :class:`RawStream`, never through a driver helper such as
pymongo's ``watch()``. A helper applies rules of its own to the server's replies: pymongo refuses an aggregate
reply that has no ``operationTime`` from a 4.0+ server (a driver-side rule, PYTHON-2181). A target that breaks
such a rule would then fail the harness's set-up, and every check standing on it would be reported as a
failure of a rule it never ran. ``database.command`` judges nothing but the reply's ``ok``: what the server
sent is what a check sees. The prose tests that test the driver's own ``watch()`` keep using the driver under
test; only the harness's own reads are here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bson.int64 import Int64
from pymongo.errors import OperationFailure

#: The ``getMore`` collection of a database-level stream (``aggregate: 1``), the overview's internal namespace.
DATABASE_STREAM_COLLECTION = "$cmd.aggregate"
#: How long each ``getMore`` of the harness's own reads waits for a change, and how many it sends before it gives
#: up: a change already written comes with the first; the bound only stops a server that never sends it.
AWAIT_MS = 100
MAX_GET_MORES = 50


class RawStream:
    """One change stream on ``database`` (``collection``, or the whole database when None), opened and read with
    raw commands. The server's refusal of a command is raised as the admin client raises it (``OperationFailure``).

    ``with RawStream(database, "c") as stream:`` opens it and kills its cursor at the end (unless the server
    closed it first).
    """

    def __init__(
        self,
        database: Any,
        collection: str | None,
        stage: dict[str, Any] | None = None,
        *,
        pipeline: tuple[dict[str, Any], ...] = (),
        await_ms: int = AWAIT_MS,
    ) -> None:
        self.database = database
        self.collection = collection
        self.stage = dict(stage or {})
        self.pipeline = [{"$changeStream": self.stage}, *pipeline]
        self.await_ms = await_ms
        self.cursor_id = 0
        #: Changes the server has sent that :meth:`changes` has not handed out yet (the first batch, then each
        #: getMore's), in order.
        self.buffered: list[dict[str, Any]] = []
        #: The last cursor document the server sent (the aggregate's, then each getMore's), as it came.
        self.last_cursor: dict[str, Any] = {}
        self.opened = False

    @property
    def get_more_collection(self) -> str:
        return self.collection if self.collection is not None else DATABASE_STREAM_COLLECTION

    @property
    def alive(self) -> bool:
        """Whether the server still holds the cursor (a reply's cursor id 0 closes it)."""
        return bool(self.cursor_id)

    def open(self) -> RawStream:
        """Send the aggregate; its first batch is buffered."""
        target = self.collection if self.collection is not None else 1
        reply = self.database.command("aggregate", target, pipeline=self.pipeline, cursor={})
        self._take(reply, "firstBatch")
        self.opened = True
        return self

    def get_more(self, max_time_ms: int | None = None) -> list[dict[str, Any]]:
        """One ``getMore`` (waiting ``max_time_ms``, by default the stream's ``await_ms``); its batch, also buffered."""
        wait = self.await_ms if max_time_ms is None else max_time_ms
        reply = self.database.command(
            "getMore", Int64(self.cursor_id), collection=self.get_more_collection, maxTimeMS=wait
        )
        return self._take(reply, "nextBatch")

    def changes(
        self, count: int, *, until: Callable[[dict[str, Any]], bool] | None = None, get_mores: int = MAX_GET_MORES
    ) -> list[dict[str, Any]]:
        """The next ``count`` changes: fewer when the server closes the cursor, when ``until`` is true of a change
        (that change included), or when ``get_mores`` getMores brought no more."""
        taken: list[dict[str, Any]] = []
        for attempt in range(get_mores + 1):
            while self.buffered and len(taken) < count:
                taken.append(self.buffered.pop(0))
                if until is not None and until(taken[-1]):
                    return taken
            if len(taken) == count or not self.alive or attempt == get_mores:
                return taken
            self.get_more()
        return taken

    def close(self) -> None:
        """Kill the cursor if the server still holds it (its reply is not judged: this is the harness tidying up)."""
        cursor_id, self.cursor_id = self.cursor_id, 0
        if cursor_id:
            try:
                self.database.command("killCursors", self.get_more_collection, cursors=[Int64(cursor_id)])
            except OperationFailure:
                pass  # a server that refuses to kill a cursor it may already have dropped: nothing to tidy

    def _take(self, reply: dict[str, Any], batch_key: str) -> list[dict[str, Any]]:
        """Keep the reply's cursor (its id is a 64-bit integer on the wire, and is sent back as one)."""
        cursor = reply.get("cursor") or {}
        self.last_cursor = dict(cursor)
        self.cursor_id = int(cursor.get("id") or 0)
        batch = [dict(change) for change in cursor.get(batch_key) or []]
        self.buffered.extend(batch)
        return batch

    def __enter__(self) -> RawStream:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


def changes_after(
    database: Any,
    collection: str | None,
    write: Callable[[], Any],
    count: int,
    *,
    until: Callable[[dict[str, Any]], bool] | None = None,
    await_ms: int = AWAIT_MS,
) -> list[dict[str, Any]]:
    """Open a stream on ``collection`` (None: the database), make ``write``, and return the first ``count`` changes
    the server sends after it (fewer when it closes the cursor or ``until`` stops the read): real tokens and
    cluster times, as the server sent them."""
    with RawStream(database, collection, await_ms=await_ms) as stream:
        write()
        return stream.changes(count, until=until)


__all__ = ["AWAIT_MS", "DATABASE_STREAM_COLLECTION", "MAX_GET_MORES", "RawStream", "changes_after"]
