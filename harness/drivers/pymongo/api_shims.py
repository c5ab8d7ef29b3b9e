"""The few places where pymongo's synchronous and asynchronous APIs differ, one shim per API.

The operation table (:mod:`harness.drivers.pymongo.operations` and its siblings) is written once and
calls the same method names on either API's objects (``insert_one``, ``watch``, ``try_next``...). An
``AsyncMongoClient``'s methods return awaitables where ``MongoClient``'s return values, so every such
call goes through :meth:`SyncApi.wait`, which the scope's shim implements: the identity for the
synchronous API, "run it on the scope's event loop and wait" for the asynchronous one. What cannot be
expressed that way (reading a cursor to the end, the next document of a find cursor, a change stream's
iterator and its steps, ``withTransaction``'s callback, creating a client) is one method each here. The type
tuples name both APIs' classes, so an entity check accepts what either scope creates.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any

from pymongo import MongoClient
from pymongo.change_stream import ChangeStream
from pymongo.client_session import ClientSession
from pymongo.collection import Collection
from pymongo.command_cursor import CommandCursor
from pymongo.cursor import Cursor
from pymongo.database import Database

try:  # pymongo 4.10+; the harness supports older releases (matrix cells), where only the sync API exists
    from pymongo import AsyncMongoClient
    from pymongo.asynchronous.change_stream import AsyncChangeStream
    from pymongo.asynchronous.client_session import AsyncClientSession
    from pymongo.asynchronous.collection import AsyncCollection
    from pymongo.asynchronous.command_cursor import AsyncCommandCursor
    from pymongo.asynchronous.cursor import AsyncCursor
    from pymongo.asynchronous.database import AsyncDatabase

    ASYNC_API: tuple[type[Any], ...] = (AsyncMongoClient,)
    _ASYNC = (AsyncMongoClient, AsyncDatabase, AsyncCollection, AsyncClientSession, AsyncChangeStream, AsyncCursor)
    _ASYNC_COMMAND_CURSOR: tuple[type[Any], ...] = (AsyncCommandCursor,)
except ImportError:
    ASYNC_API = ()
    _ASYNC = ()
    _ASYNC_COMMAND_CURSOR = ()


def _with_async(sync_class: type[Any], index: int) -> tuple[type[Any], ...]:
    return (sync_class, _ASYNC[index]) if _ASYNC else (sync_class,)


#: Entity kinds, each as the classes of both APIs (only the sync one where pymongo has no async API).
CLIENTS: tuple[type[Any], ...] = _with_async(MongoClient, 0)
DATABASES: tuple[type[Any], ...] = _with_async(Database, 1)
COLLECTIONS: tuple[type[Any], ...] = _with_async(Collection, 2)
SESSIONS: tuple[type[Any], ...] = _with_async(ClientSession, 3)
CHANGE_STREAMS: tuple[type[Any], ...] = _with_async(ChangeStream, 4)
FIND_CURSORS: tuple[type[Any], ...] = _with_async(Cursor, 5)
#: What ``watch`` opens a change stream on.
WATCHABLES: tuple[type[Any], ...] = (*CLIENTS, *DATABASES, *COLLECTIONS)
ITERABLES: tuple[type[Any], ...] = (*CHANGE_STREAMS, *FIND_CURSORS, CommandCursor, *_ASYNC_COMMAND_CURSOR)


class SyncApi:
    """pymongo's ``MongoClient``: every call already returned its value."""

    name = "sync"

    def wait(self, value: Any) -> Any:
        return value

    def new_client(self, uri: str, **kwargs: Any) -> Any:
        return MongoClient(uri, **kwargs)

    def documents(self, cursor: Any) -> list[Any]:
        """Every document a cursor has left, read to the end."""
        return list(cursor)

    def next_document(self, cursor: Any) -> Any:
        """The next document of a find cursor (which has no ``try_next``), or None when it is exhausted."""
        try:
            return next(cursor)
        except StopIteration:
            return None

    def iterator(self, stream: Any) -> Any:
        """The language's iterator over a change stream (``iter``), as ``for change in stream`` takes it."""
        return iter(stream)

    def step(self, iterator: Any) -> Any:
        """The iterator's next change (``next``); raises ``StopIteration`` when it ends."""
        return next(iterator)

    def with_transaction(self, session: Any, attempt: Callable[[], None], **kwargs: Any) -> Any:
        """Run ``attempt`` (one try of the callback) inside the driver's own ``with_transaction`` loop."""
        return session.with_transaction(lambda _session: attempt(), **kwargs)

    def close(self) -> None:
        """Release what the shim itself holds (nothing for the synchronous API)."""


class AsyncApi(SyncApi):
    """pymongo's ``AsyncMongoClient``: an event loop in a thread of its own, one per test scope.

    The operation table runs in the caller's thread (the test's body) and hands each awaitable to the
    loop, waiting for its result; the caller's context variables (``pymongo.timeout``) go with it, since
    :func:`asyncio.run_coroutine_threadsafe` runs the coroutine in a copy of the caller's context.
    """

    name = "async"

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="pymongo-async-loop", daemon=True)
        self._thread.start()

    def wait(self, value: Any) -> Any:
        if not asyncio.iscoroutine(value) and not isinstance(value, asyncio.Future):
            return value
        if self._in_loop():
            raise RuntimeError("an awaitable was waited for on the event loop's own thread (it would deadlock)")
        return asyncio.run_coroutine_threadsafe(_awaited(value), self.loop).result()

    def new_client(self, uri: str, **kwargs: Any) -> Any:
        """An ``AsyncMongoClient`` made on the loop's thread (its locks and tasks belong to that loop).

        ``AsyncMongoClient`` ignores ``connect``: it starts monitoring at its first operation, where
        ``MongoClient`` starts at construction. A test's clients must be connecting once created (a test
        may begin by waiting for ``poolReadyEvent``), so it is told to (``aconnect``), as pymongo's own
        asynchronous test runner does, unless the caller asked for ``connect=False`` and connects it later.
        """
        connect = kwargs.pop("connect", True)
        return self.wait(_client(uri, connect, kwargs))

    def documents(self, cursor: Any) -> list[Any]:
        return list(self.wait(cursor.to_list()))

    def next_document(self, cursor: Any) -> Any:
        try:
            return self.wait(cursor.next())
        except StopAsyncIteration:
            return None

    def iterator(self, stream: Any) -> Any:
        """``aiter(stream)``, as ``async for change in stream`` takes it (``__aiter__`` is a plain method)."""
        return aiter(stream)

    def step(self, iterator: Any) -> Any:
        """``await anext(iterator)`` on the loop; raises ``StopAsyncIteration`` when it ends."""
        return self.wait(anext(iterator))

    def with_transaction(self, session: Any, attempt: Callable[[], None], **kwargs: Any) -> Any:
        """The driver's loop runs on the event loop; each try of the callback runs in a worker thread (with the
        caller's context), since the nested operations wait for awaitables of their own on that loop."""
        context = contextvars.copy_context()

        async def callback(_session: Any) -> None:
            await self.loop.run_in_executor(None, context.run, attempt)

        return self.wait(session.with_transaction(callback, **kwargs))

    def close(self) -> None:
        """Stop the loop once the scope's clients are closed. A call still pending (a test torn down at its
        deadline) is cancelled first, so the thread waiting for it gets an error instead of waiting forever."""
        if self.loop.is_closed():
            return
        if self._thread.is_alive() and not self._in_loop():
            try:
                asyncio.run_coroutine_threadsafe(_cancel_pending(), self.loop).result(timeout=5)
            except Exception:  # a loop blocked by a synchronous call: stopped below all the same
                pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()

    def _in_loop(self) -> bool:
        return threading.current_thread() is self._thread


async def _cancel_pending() -> None:
    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not current]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=1)


async def _awaited(value: Any) -> Any:
    return await value


async def _client(uri: str, connect: bool, kwargs: dict[str, Any]) -> Any:
    client = AsyncMongoClient(uri, **kwargs)
    if connect:
        await client.aconnect()
    return client


SYNC = SyncApi()
