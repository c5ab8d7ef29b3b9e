"""The early no-change verdict for a driver in an executor (docs/executor-protocol.md 6.4.2, docs/causes.md 4).

The rule is the in-process drivers' (:class:`harness.core.stream_clock.StreamClock`); what differs is how the harness
sees the driver. An executor that lists ``command_log`` keeps every command event of its scope's clients in one
log, and takes a budget per ``iterateUntilDocumentOrError``. So the harness waits for a change in slices: before
the first it reads the log up to now, each slice is an iteration with a short ``budgetMS``, and after a slice that
answered ``noChange`` it reads what is new and asks the clock whether a change can still come. The clock's answer
ends the iteration with its fact; otherwise the next slice goes, until the scope's budget is spent.

What the clock cannot read from commands alone is which cursor is a stream's current one. Operations run one at a
time, so every change-stream ``aggregate`` sent while the harness runs an operation on a stream (or the
``createChangeStream`` that makes one) is that stream's: the log is read before and after each such operation, and
the last cursor opened in between is the stream's. That holds only when no stream reads by itself: in a push mode
(``emitter``, ``stream``) every stream of the scope reads ahead at once, so those scopes keep the budget.
Whether the driver holds a change it has not handed out needs no asking: an executor hands a buffered change out
before it waits, so a slice that answered ``noChange`` had none.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from harness.core.observations import NoChangeWithin
from harness.core.ports import PUSH_ITERATION_MODES
from harness.core.stream_clock import CursorKey, StreamClock

#: One slice's ``budgetMS``: a server's default getMore wait (1 s), so that after a slice a getMore sent after the
#: last write has usually come back; a slice is one round trip and a read of the log, so short slices cost little.
SLICE_MS = 1000
#: A slice answered ``noChange`` before this share of its budget: the executor said the stream is closed.
ENDED_BEFORE = 0.9
#: The operations that touch a change stream's cursors, and the one that waits for a change.
_STREAM_OPERATIONS = frozenset({"createChangeStream", "iterateUntilDocumentOrError", "iterateOnce", "close"})
UNTIL_DOCUMENT = "iterateUntilDocumentOrError"


class ExecutorStreamClock:
    """One executor scope's clock, fed from its command log (``commandLog``), and the streams' current cursors."""

    def __init__(
        self,
        read_log: Callable[[int], list[dict[str, Any]]],
        token_format: str | None,
        iteration_mode: str | None,
        entity_named: Callable[[Any], str | None],
    ) -> None:
        self.clock = StreamClock(token_format)
        self._read_log = read_log
        #: The entity id of ``createChangeStream``'s result, as the executor named it.
        self._entity_named = entity_named
        self._read = 0  # how many log entries the clock was told
        #: Why the scope gives no verdict ("" when it can): a push mode reads ahead on every stream at once.
        self.unavailable = (
            f"the {iteration_mode} mode reads ahead on every stream of the scope at once"
            if iteration_mode in PUSH_ITERATION_MODES
            else ""
        )
        self._streams: dict[str, CursorKey] = {}  # stream entity id -> its current cursor
        self._change_streams: set[str] = set()

    def concerns(self, name: str, obj: str) -> bool:
        """Whether an operation goes through :meth:`around` (it opens, reads or closes a change stream)."""
        return name in _STREAM_OPERATIONS and (name == "createChangeStream" or obj in self._change_streams)

    def catch_up(self) -> CursorKey | None:
        """Tell the clock what the log gained since the last read; the last change-stream cursor opened in it."""
        opened: CursorKey | None = None
        for entry in self._read_log(self._read):
            self._read += 1
            opened = self._told(entry) or opened
        return opened

    def opened(self, stream: str, key: CursorKey | None) -> None:
        """``stream`` (an entity id) was made or read; ``key`` the cursor it opened meanwhile, if any."""
        self._change_streams.add(stream)
        if key is not None:
            self._streams[stream] = key

    def around(self, operation: Any, run: Callable[[int | None], Any], budget_s: float) -> Any:
        """Run ``operation`` (one on a change stream, :meth:`concerns`) with the log read before and after it, so
        the cursors it opened are its stream's; ``run(budget_ms)`` sends it (with ``budgetMS`` when not None)."""
        creates = operation.name == "createChangeStream"
        if self.unavailable:  # no log read, no slices: the stream's own answer, and why no verdict came
            try:
                result = run(None)
            except NoChangeWithin as exc:
                raise NoChangeWithin(f"{exc} (no early verdict: {self.unavailable})") from None
            if creates:
                self._change_streams.add(self._entity_named(result) or "")
            return result
        stream = operation.save_result_as_entity if creates else operation.object
        self.catch_up()  # what came before is not this operation's
        try:
            result = self._sliced(stream, run, budget_s) if operation.name == UNTIL_DOCUMENT else run(None)
        except BaseException:
            with contextlib.suppress(Exception):  # the operation's own error is the one to tell
                self._after(stream)
            raise
        self._after(self._entity_named(result) if creates else stream)
        return result

    def alias(self, name: str, entity: str) -> None:
        """``name`` is another id of the stream ``entity`` (``setEntity``)."""
        if entity in self._change_streams:
            self._change_streams.add(name)
            if entity in self._streams:
                self._streams[name] = self._streams[entity]

    def _after(self, stream: str | None) -> None:
        opened = self.catch_up()
        if stream:
            self.opened(stream, opened)

    def _sliced(self, stream: str, run: Callable[[int | None], Any], budget_s: float) -> Any:
        """``iterateUntilDocumentOrError`` in slices, judged between them."""
        deadline = time.monotonic() + budget_s
        why = ""
        while True:
            slice_ms = max(1, min(SLICE_MS, int((deadline - time.monotonic()) * 1000)))
            sent = time.monotonic()
            try:
                return run(slice_ms)
            except NoChangeWithin:
                if time.monotonic() - sent < slice_ms * ENDED_BEFORE / 1000:
                    # Section 6.4: an open stream answers noChange only at its budget; before it, the stream or
                    # cursor was closed (by the test, or by the server) and nothing can come: the answer stands.
                    raise
                self.opened(stream, self.catch_up())
                key = self._streams.get(stream)
                if key is not None and self.clock.closed(key):
                    raise  # the server ended the cursor (id 0): nothing can come on it
                judgement = self.clock.judge_cursor(key) if key is not None else None
                if judgement is not None and judgement.early:
                    raise NoChangeWithin(judgement.early, early=True) from None
                why = judgement.why if judgement is not None else "the stream's cursor is not known"
                if time.monotonic() >= deadline:
                    spent = f"no document arrived within {budget_s:g}s"
                    raise NoChangeWithin(f"{spent} (no early verdict: {why})" if why else spent) from None

    def _told(self, entry: dict[str, Any]) -> CursorKey | None:
        kind, name = entry.get("kind"), str(entry.get("commandName") or "")
        if not isinstance(entry.get("requestId"), int):
            return None
        request_id = (entry.get("client"), entry["requestId"])  # section 6.4.2: paired within one client
        if kind == "commandStartedEvent":
            # An executor's log names no connection; cursor ids are the server's, unique among its open cursors.
            self.clock.command_started(name, entry.get("command") or {}, request_id, None)
        elif kind == "commandSucceededEvent":
            return self.clock.command_succeeded(name, request_id, entry.get("reply") or {})
        elif kind == "commandFailedEvent":
            return self.clock.command_failed(name, request_id, entry.get("failure"))
        return None
