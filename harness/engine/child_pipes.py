"""A child process's pipes, read and written so that nothing in the harness waits on them past a deadline.

Why (issue 32): a pipe stays open while any process holds its other end, and a child may hand it to processes that
outlive it (a grandchild in a session of its own). A blocking ``read`` or ``readline`` then waits for ever, and
closing a buffered file under a thread blocked in it blocks the closer as well (the buffer's lock). A child that
writes without newlines makes ``readline`` keep everything it wrote.

So one thread per child reads its stdout and stderr with ``os.read`` on non-blocking descriptors, woken by a
selector that also watches a wake-up pipe. It is the only one that reads or closes them, so closing never races a
read (a descriptor closed under a blocked read may be reused by the next ``open``). Callers wait for a line on a
condition, with a timeout. A line is bounded (``line_limit``): past it stdout is declared broken and what it held is
dropped, so memory stays within the limit; stderr keeps only its tail. :func:`write_all` writes under a deadline.
"""

from __future__ import annotations

import collections
import os
import select
import selectors
import threading
import time

#: How much one ``os.read`` takes (a pipe holds 64 KiB by default; a larger read drains a full one at once).
CHUNK = 256 * 1024
#: How much of an unfinished last line an :class:`OutputEnded` quotes.
PARTIAL_QUOTE = 200
#: How long :meth:`ChildOutput.close` waits for the reading thread to finish (it cannot block, so this is a bound).
CLOSE_WAIT_S = 1.0


def mebibytes(size: int) -> str:
    """``16 MiB`` for 16 * 1024 * 1024: limits are named in messages as people write them."""
    return f"{size / (1024 * 1024):g} MiB"


class OutputGone(Exception):
    """stdout will give no more lines."""


class OutputEnded(OutputGone):
    """stdout ended: the child closed it (``partial`` holds an unfinished last line), or the harness closed it."""

    def __init__(self, reason: str, partial: bytes = b"", *, by_harness: bool = False) -> None:
        super().__init__(reason)
        self.partial = partial
        self.by_harness = by_harness


class OutputTooLong(OutputGone):
    """stdout went past the line limit: one line longer than it, or more than it in lines nobody read."""


class ChildOutput:
    """A child's stdout as bounded lines and its stderr as a bounded tail, read by a thread that never blocks."""

    def __init__(self, stdout: int, stderr: int, *, line_limit: int, stderr_limit: int, name: str) -> None:
        self.line_limit = line_limit
        self.stderr_limit = stderr_limit
        self._fds = (stdout, stderr)
        self._wake_read, self._wake_write = os.pipe()
        for fd in (stdout, stderr, self._wake_read, self._wake_write):
            os.set_blocking(fd, False)
        self._changed = threading.Condition()
        self._lines: collections.deque[bytearray] = collections.deque()
        self._queued = 0  # bytes in _lines
        self._partial = bytearray()  # the line being read (the reading thread's alone)
        self._gone: OutputGone | None = None
        self._tail = bytearray()
        self._tail_lock = threading.Lock()
        self._closing = False
        self._thread = threading.Thread(target=self._pump, daemon=True, name=f"{name}-output")
        self._thread.start()

    # -- the caller's side ----------------------------------------------------------------------------
    def next_line(self, timeout_s: float) -> str | None:
        """The next stdout line (without its newline), None when none came within ``timeout_s``; raises
        :class:`OutputGone` once stdout can give no more lines (after the lines it gave before)."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not self._lines:
                if self._gone is not None:
                    raise _again(self._gone)
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(left)
            line = self._lines.popleft()
            self._queued -= len(line)
        return line.decode("utf-8", errors="replace")

    def stderr_tail(self, limit: int) -> str:
        """The last ``limit`` characters of stderr (of the last ``stderr_limit`` bytes kept)."""
        with self._tail_lock:
            kept = bytes(self._tail[-self.stderr_limit :])
        return kept.decode("utf-8", errors="replace")[-limit:]

    def close(self) -> None:
        """Stop reading: the thread drains what stderr holds now, closes the descriptors and ends; waiting callers
        get :class:`OutputEnded`. Never waits longer than :data:`CLOSE_WAIT_S`."""
        with self._changed:
            first, self._closing = not self._closing, True
        if first:
            try:
                os.write(self._wake_write, b"x")
            except OSError:
                pass  # the thread has ended already (both streams ended) and closed the other end
            finally:
                os.close(self._wake_write)
        self._thread.join(CLOSE_WAIT_S)

    # -- the reading thread ---------------------------------------------------------------------------
    def _pump(self) -> None:
        stdout, stderr = self._fds
        selector = selectors.DefaultSelector()
        try:
            selector.register(stdout, selectors.EVENT_READ, "stdout")
            selector.register(stderr, selectors.EVENT_READ, "stderr")
            selector.register(self._wake_read, selectors.EVENT_READ, "wake")
            while len(selector.get_map()) > 1:
                for key, _ in selector.select():
                    if key.data == "wake":
                        self._drain_stderr(selector)
                        return
                    chunk = _read(key.fd)
                    if chunk is None:
                        continue
                    done = self._keep_stderr(chunk) if key.data == "stderr" else self._take_stdout(chunk)
                    if done:
                        selector.unregister(key.fd)
        except Exception as exc:  # never a thread's traceback on the console: the caller is told instead
            self._end(OutputEnded(f"reading the output failed: {type(exc).__name__}: {exc}"))
        finally:
            selector.close()
            for fd in (stdout, stderr, self._wake_read):
                _close(fd)
            self._end(OutputEnded("stdout was closed by the harness", by_harness=True))

    def _take_stdout(self, chunk: bytes) -> bool:
        """Add a chunk to the lines; True when stdout is done (it ended or went past the limit)."""
        if not chunk:
            partial = bytes(self._partial[:PARTIAL_QUOTE])
            self._partial = bytearray()
            self._end(OutputEnded("the child closed stdout", partial))
            return True
        view = memoryview(chunk)
        start = 0
        while (newline := chunk.find(b"\n", start)) >= 0:
            self._partial += view[start:newline]
            if len(self._partial) > self.line_limit:
                break
            line, self._partial = self._partial, bytearray()
            with self._changed:
                self._lines.append(line)
                self._queued += len(line)
                self._changed.notify_all()
            start = newline + 1
        else:
            self._partial += view[start:]
        if len(self._partial) > self.line_limit:
            return self._overflow(f"a stdout line longer than the limit of {mebibytes(self.line_limit)}")
        if self._queued + len(self._partial) > self.line_limit:
            return self._overflow(f"more than {mebibytes(self.line_limit)} of stdout lines that no request read")
        return False

    def _overflow(self, what: str) -> bool:
        self._partial = bytearray()
        with self._changed:
            self._lines.clear()
            self._queued = 0
        self._end(OutputTooLong(what))
        return True

    def _keep_stderr(self, chunk: bytes) -> bool:
        with self._tail_lock:
            self._tail += chunk
            if len(self._tail) > 2 * self.stderr_limit:
                del self._tail[: len(self._tail) - self.stderr_limit]
        return not chunk

    def _drain_stderr(self, selector: selectors.BaseSelector) -> None:
        """What stderr holds now, before closing: a child that died just wrote why (bounded: a child still writing
        cannot keep this going)."""
        if self._fds[1] not in selector.get_map():
            return
        budget = 2 * self.stderr_limit
        while budget > 0 and (chunk := _read(self._fds[1])):
            self._keep_stderr(chunk)
            budget -= len(chunk)

    def _end(self, gone: OutputGone) -> None:
        with self._changed:
            if self._gone is None:
                self._gone = gone
            self._changed.notify_all()


def _again(gone: OutputGone) -> OutputGone:
    """A fresh copy to raise (one exception object raised in several threads would share its traceback)."""
    if isinstance(gone, OutputEnded):
        return OutputEnded(str(gone), gone.partial, by_harness=gone.by_harness)
    return type(gone)(str(gone))


def _read(fd: int) -> bytes | None:
    """A chunk, ``b""`` at end of file (or a read error: nothing more will come), None when nothing is ready."""
    try:
        return os.read(fd, CHUNK)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def write_all(fd: int, data: bytes, timeout_s: float) -> None:
    """Write ``data`` to a non-blocking ``fd`` within ``timeout_s``: :class:`TimeoutError` when the child stopped
    reading (its pipe is full), ``BrokenPipeError`` when nothing reads it any more."""
    deadline = time.monotonic() + timeout_s
    view = memoryview(data)
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    while view:
        try:
            view = view[os.write(fd, view) :]
            continue
        except BlockingIOError:
            pass
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(max(1, int(left * 1000))):
            raise TimeoutError(f"{len(view)} of {len(data)} bytes not written within {timeout_s:g}s")
