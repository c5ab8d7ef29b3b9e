"""How the pymongo adapter waits for a change in each iteration mode it offers (docs/executor-protocol.md 6.4.1).

pymongo offers three of the vocabulary's modes, in both of its APIs, and the adapter drives each through the public
call an application would make:

- ``next``: ``stream.next()`` (``await stream.next()``), the blocking call;
- ``tryNext``: ``stream.try_next()`` called in a loop until a change, an error or the budget;
- ``iterator``: ``iter(stream)`` (``aiter``) once per stream, kept by the scope, then ``next(iterator)``
  (``anext``) for each ``iterateUntilDocumentOrError``: a new iterator per call could restart or close the stream.

Only ``iterateUntilDocumentOrError`` on a change stream differs between them. ``iterateOnce`` is one ``try_next()``
in every mode (the protocol's table: the driver's non-blocking call), and the other cursors (``find``, command
cursors) are polled as ``tryNext`` polls, whatever the mode: they end when the server closes them, and the modes are
about change streams.

**The budget of a blocking call.** pymongo's ``next()`` blocks until a change arrives and takes no timeout that would
leave its behaviour alone: a CSOT ``timeoutMS`` makes the expiry an error the stream reacts to. Its source shows
how it blocks: ``while self.alive: doc = self.try_next(); if doc is not None: return doc``, then ``StopIteration``
(``__next__`` and ``__anext__`` are the same function). So the budget is checked at the one seam that loop has:
for the length of the call, the stream's ``try_next`` attribute is shadowed by one that, once the budget is spent,
raises :class:`BudgetSpent` *instead of starting* another iteration. The driver's own code runs otherwise
unchanged (its ``_csot.apply`` deadline over the whole call, its ``alive`` check, its end of iteration), it sends
the same getMores and resumes in the same order as the ``tryNext`` loop, and the raise never happens inside the
driver's iteration, so the stream stays usable (section 6.4). A pymongo whose ``next()`` stopped going through
``try_next`` would not see the budget (its idle streams would wait for the test's deadline, an ``error``):
``tests/harness/drivers/test_iteration_modes.py`` checks that an idle stream's ``next()`` gives up at the budget.

**A change that can no longer come.** At the same seam (between two iterations, after one brought nothing), the
scope's :class:`~harness.drivers.pymongo.stream_clock.StreamClock` is asked whether a change can still come; when
it cannot, the iteration ends at once with the clock's fact (``NoChangeWithin(..., early=True)``), never inside the
driver's iteration, so the stream stays usable here too. When the budget ends instead, its message says what kept
the early verdict from being given (docs/causes.md section 4).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from harness.core.observations import NoChangeWithin
from harness.drivers.pymongo.api_shims import CHANGE_STREAMS, FIND_CURSORS


class BudgetSpent(Exception):
    """The iteration budget ran out between two of the driver's own iterations (never raised inside one)."""


class CannotCome(Exception):
    """Between two of the driver's own iterations, the scope's clock showed the change can no longer come (the
    message is the fact; :mod:`harness.drivers.pymongo.stream_clock`)."""


def next_or_none(scope: Any, target: Any) -> Any:
    """One non-blocking iteration: a document, or None when a getMore brought nothing (or the cursor is done)."""
    if isinstance(target, FIND_CURSORS):  # find cursors have no try_next
        return scope.api.next_document(target)
    return scope.api.wait(target.try_next())


def polled(scope: Any, target: Any) -> Any:
    """``tryNext``: the non-blocking iteration in a loop, the budget (and, for a change stream, whether a change can
    still come) checked between two of them."""
    deadline = time.monotonic() + scope.iteration_timeout_s
    why = ""
    while True:
        document = next_or_none(scope, target)
        if document is not None:
            return document
        if not target.alive:
            raise NoChangeWithin(_ended(target))
        if isinstance(target, CHANGE_STREAMS):
            judgement = scope.clock.judge(target)
            if judgement.early:
                raise NoChangeWithin(judgement.early, early=True)
            why = judgement.why
        if time.monotonic() >= deadline:
            raise NoChangeWithin(_spent(scope, why))


def blocking_next(scope: Any, stream: Any) -> Any:
    """``next``: the driver's blocking ``next()``, bounded by the budget between its own iterations."""
    return _bounded(scope, stream, lambda: scope.api.wait(stream.next()))


def iterated(scope: Any, stream: Any) -> Any:
    """``iterator``: the next step of the one iterator the scope keeps for this stream."""
    iterator = scope.iterators.get(stream)
    if iterator is None:
        iterator = scope.iterators[stream] = scope.api.iterator(stream)
    return _bounded(scope, stream, lambda: scope.api.step(iterator))


#: Mode name -> how ``iterateUntilDocumentOrError`` waits for a change on a change stream; the first is the default.
UNTIL_DOCUMENT: dict[str, Callable[[Any, Any], Any]] = {
    "next": blocking_next,
    "tryNext": polled,
    "iterator": iterated,
}


def until_document(scope: Any, target: Any) -> Any:
    """``iterateUntilDocumentOrError``: a change stream in the scope's mode, any other cursor polled."""
    if isinstance(target, CHANGE_STREAMS):
        return UNTIL_DOCUMENT[scope.iteration_mode](scope, target)
    return polled(scope, target)


def _bounded(scope: Any, stream: Any, call: Callable[[], Any]) -> Any:
    """``call()`` (a blocking step of the driver's) with the budget checked between its iterations; the end of
    the stream and a spent budget become the protocol's ``noChange``, the driver's errors stay its own."""
    with _budget_between_iterations(scope, stream) as why:
        try:
            return call()
        except (StopIteration, StopAsyncIteration):
            raise NoChangeWithin(_ended(stream)) from None
        except CannotCome as exc:
            raise NoChangeWithin(str(exc), early=True) from None
        except BudgetSpent:
            raise NoChangeWithin(_spent(scope, why[0])) from None


@contextlib.contextmanager
def _budget_between_iterations(scope: Any, stream: Any) -> Iterator[list[str]]:
    """Shadow the stream's ``try_next`` for one call: the first iteration always runs (as the ``tryNext`` loop's
    does); a later one raises :class:`CannotCome` instead when the scope's clock says no change can come any more,
    or :class:`BudgetSpent` once the budget is spent. The driver's own method is what runs otherwise (for the
    asynchronous API it returns the coroutine the driver's loop awaits). Yields where the clock's last word on why a
    change could still come is kept, for the budget's message."""
    deadline = time.monotonic() + scope.iteration_timeout_s
    iterate = stream.try_next
    started = False
    why = [""]

    def try_next() -> Any:
        nonlocal started
        if started:
            judgement = scope.clock.judge(stream)
            if judgement.early:
                raise CannotCome(judgement.early)
            why[0] = judgement.why
            if time.monotonic() >= deadline:
                raise BudgetSpent
        started = True
        return iterate()

    stream.try_next = try_next
    try:
        yield why
    finally:
        del stream.try_next


def _ended(target: Any) -> str:
    what = "change stream was closed by the server" if isinstance(target, CHANGE_STREAMS) else "cursor is exhausted"
    return f"the {what} before a document arrived"


def _spent(scope: Any, why: str) -> str:
    """The budget's message; ``why``: what kept the early verdict from being given (none when the scope has none)."""
    spent = f"no document arrived within {scope.iteration_timeout_s:g}s"
    return f"{spent} (no early verdict: {why})" if why else spent
