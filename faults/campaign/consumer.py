"""The driver under test, consuming the change stream the way an application would.

Everything goes through the :class:`~harness.core.ports.DriverAdapter` seam
(entities and operations by their spec names), so any adapter can be put
under a campaign. The loop: ``iterateUntilDocumentOrError``; a document's
``fullDocument.seq`` is appended to :attr:`Consumer.seqs`; an error is
classified (:mod:`faults.campaign.classify`), then the stream is closed and
reopened with ``resumeAfter`` = its last resume token (``getResumeToken``),
which is what the spec tells applications to do after the driver's single
resume attempt failed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from faults.campaign.classify import classify, resumable
from harness.core.model import EntitySpec, Operation
from harness.core.observations import DriverOperationError, ErrorInfo, NoChangeWithin
from harness.core.ports import DriverAdapter

CLIENT = "consumer"
OBSERVED = ["commandStartedEvent", "commandFailedEvent"]


@dataclass
class ReachedApplication:
    """One error the application saw, with the spec's verdict on it."""

    received: int  # events received before it
    stream: str
    operation: str
    error: str
    code: int | None
    labels: tuple[str, ...]
    allowed: bool
    reason: str
    fault: str | None  # the fault in place when it surfaced
    at_s: float = 0.0  # seconds since the consumer opened its first stream

    def as_record(self) -> dict[str, Any]:
        return {
            "received": self.received,
            "stream": self.stream,
            "operation": self.operation,
            "error": self.error,
            "code": self.code,
            "labels": list(self.labels),
            "allowed": self.allowed,
            "reason": self.reason,
            "fault": self.fault,
            "at_s": round(self.at_s, 3),
        }


class Consumer:
    def __init__(
        self,
        driver: DriverAdapter,
        uri: str,
        database: str,
        collection: str,
        *,
        app_name: str,
        nemesis: Any,
        client_options: dict[str, Any] | None = None,
        max_await_ms: int = 200,
        iteration_timeout_s: float = 1.0,
        reopen_deadline_s: float = 30.0,
    ) -> None:
        self.scope = driver.open_scope(uri, iteration_timeout_s=iteration_timeout_s)
        self.database, self.collection = database, collection
        self.app_name = app_name
        self.nemesis = nemesis
        self.client_options = client_options or {}
        self.max_await_ms = max_await_ms
        self.reopen_deadline_s = reopen_deadline_s
        self.seqs: list[int | None] = []
        self.errors: list[ReachedApplication] = []
        #: Event-index ranges during which the application was opening a stream.
        self.app_opens: list[tuple[int, int]] = []
        self.stream = ""
        self._streams = 0
        self._token: Any = None
        self._mark = 0
        self._origin = time.monotonic()

    # -- set-up -------------------------------------------------------------------
    def open(self) -> None:
        uri_options = {"appName": self.app_name, **self.client_options}
        self.scope.create_entity(EntitySpec("client", CLIENT, {"uriOptions": uri_options, "observeEvents": OBSERVED}))
        self.scope.create_entity(EntitySpec("database", "db", {"client": CLIENT, "databaseName": self.database}))
        self.scope.create_entity(
            EntitySpec("collection", "coll", {"database": "db", "collectionName": self.collection})
        )
        self._origin = time.monotonic()
        self._open_stream()
        self._token = self._resume_token()
        if self._token is None:
            raise RuntimeError("the first change stream has no resume token: the campaign could not reopen it")

    def _events(self) -> list[Any]:
        return self.scope.events(CLIENT)

    def _open_stream(self) -> None:
        name = f"stream{self._streams}"
        arguments: dict[str, Any] = {"maxAwaitTimeMS": self.max_await_ms}
        if self._token is not None:
            arguments["resumeAfter"] = self._token
        start = len(self._events())
        try:
            stream = self.scope.run(Operation("createChangeStream", "coll", arguments))
        finally:
            end = len(self._events())
        self.app_opens.append((start, end))
        self._mark = end
        self.scope.set_entity(name, stream)
        self._streams += 1
        self.stream = name

    def _resume_token(self) -> Any:
        return self.scope.run(Operation("getResumeToken", self.stream))

    # -- the loop --------------------------------------------------------------------
    def run(self, done: Callable[[], bool], deadline: float, gate: Callable[[], float] = lambda: float("inf")) -> None:
        """Iterate until ``done()`` or the monotonic ``deadline``, pausing whenever ``gate()`` events are received.

        The gate is how faults land at their scheduled event: the consumer
        waits at a fault's ``at_event`` until the nemesis has put it in place.
        """
        while not done() and time.monotonic() < deadline:
            if len(self.seqs) >= gate():
                time.sleep(0.001)
                continue
            self.step()

    def getmore_failures(self) -> int:
        return sum(1 for e in self._events() if e.kind == "commandFailedEvent" and e.command_name == "getMore")

    def step(self) -> None:
        # The window an error is judged on starts where the last error's handling ended: reading the
        # event list is a copy, too dear for every document, and errors are rare.
        mark = self._mark
        try:
            document = self.scope.run(Operation("iterateUntilDocumentOrError", self.stream))
        except NoChangeWithin as exc:
            if "closed" in str(exc):  # the stream ended without an error: an application reopens it
                self._record_error(
                    ErrorInfo(message=str(exc), type="NoChangeWithin", is_client_error=True),
                    "iterate",
                    [],
                    forced=(False, "the stream was closed without an error"),
                )
                self._reopen()
            return
        except DriverOperationError as exc:
            self._record_error(exc.info, "iterate", self._events()[mark:])
            self._reopen()
            return
        self.seqs.append(_seq_of(document, self.database, self.collection))
        self._token = document.get("_id", self._token)

    def _record_error(
        self, info: ErrorInfo, operation: str, window: list[Any], forced: tuple[bool, str] | None = None
    ) -> None:
        injected = None
        if not resumable(info.code, info.labels, info.is_client_error) and operation == "iterate":
            injected = self.nemesis.claim_surfacing(info.code)
        if forced is not None:
            allowed, reason = forced
        else:
            verdict = classify(
                code=info.code,
                labels=info.labels,
                message=info.message,
                is_client_error=info.is_client_error,
                window=window,
                injected=injected,
                outage_recent=self.nemesis.outage_recent(),
                opening=operation == "open",
            )
            allowed, reason = verdict.allowed, verdict.reason
        current = self.nemesis.current
        self.errors.append(
            ReachedApplication(
                received=len(self.seqs),
                stream=self.stream,
                operation=operation,
                error=info.describe(),
                code=info.code,
                labels=tuple(info.labels),
                allowed=allowed,
                reason=reason,
                fault=current.describe() if current is not None else None,
                at_s=time.monotonic() - self._origin,
            )
        )

    def _reopen(self) -> None:
        """Close the failed stream and open a new one after its last resume token, retrying while the target is away."""
        try:
            token = self._resume_token()
            if token is not None:
                self._token = token
        except Exception:
            pass
        try:
            self.scope.run(Operation("close", self.stream))
        except DriverOperationError:
            pass
        deadline = time.monotonic() + self.reopen_deadline_s
        while True:
            try:
                self._open_stream()
                return
            except DriverOperationError as exc:
                self._record_error(exc.info, "open", [])
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    # -- counting ---------------------------------------------------------------------
    def aggregates(self) -> int:
        """Change-stream aggregates the consumer's client started (the driver's resumes and the application's opens)."""
        return sum(1 for e in self._events() if e.kind == "commandStartedEvent" and e.command_name == "aggregate")

    def driver_resumes(self) -> int:
        """Aggregates the driver started on its own, i.e. outside the application's opens."""
        events = self._events()
        opens = self.app_opens
        return sum(
            1
            for i, e in enumerate(events)
            if e.kind == "commandStartedEvent"
            and e.command_name == "aggregate"
            and not any(start <= i < end for start, end in opens)
        )

    def close(self) -> None:
        self.scope.close()


def _seq_of(document: Any, database: str, collection: str) -> int | None:
    """The writer's seq in an insert event on the campaign's collection; None for anything else."""
    if not isinstance(document, dict) or document.get("operationType") != "insert":
        return None
    ns = document.get("ns") or {}
    if ns.get("db") != database or ns.get("coll") != collection:
        return None
    seq = (document.get("fullDocument") or {}).get("seq")
    return seq if isinstance(seq, int) else None
