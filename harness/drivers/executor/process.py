"""One executor process: started in its own process group, JSON lines both ways, one request at a time.

docs/executor-protocol.md, section 1: the harness owns the deadlines. A reply that does not come in time,
a line that is not a JSON object, a reply with another id or an exit all make the process unusable: it is
killed (its whole group) and :class:`ExecutorFailure` says what happened, with the tail of its stderr.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from typing import Any

from bson import json_util

from harness.core.credentials import redact_text
from harness.core.ports import UnsupportedOperation
from harness.engine import child_processes

#: The protocol version this harness speaks (docs/executor-protocol.md, section 9).
PROTOCOL_VERSION = 1
#: How much of an executor's stderr is kept for error messages.
STDERR_LIMIT = 64 * 1024
#: How long an executor gets to answer ``hello`` (it may be starting a runtime) and to exit after EOF.
HELLO_TIMEOUT_S = 30.0
EXIT_TIMEOUT_S = 5.0

_EOF = object()


class ExecutorFailure(UnsupportedOperation):
    """The executor broke the protocol, overran a deadline or died: the test is an ``error``, never a verdict
    on the driver; the process is killed and the next test gets a new one."""


#: The fields that carry BSON values, written as canonical Extended JSON (section 2); every other field of a
#: message is plain JSON (``"id": 7``, ``"iterationTimeoutMS": 10000``), and ``hello`` is plain JSON throughout.
BSON_PARAMS = frozenset({"entity", "operation", "value"})
BSON_REPLY_FIELDS = frozenset({"result", "error", "nested"})


def _line(message: dict[str, Any], bson_fields: frozenset[str]) -> str:
    """``message`` as one JSON object: ``bson_fields`` in canonical Extended JSON, the rest plain JSON."""
    parts = []
    for key, value in message.items():
        if key in bson_fields:
            text = json_util.dumps(value, json_options=json_util.CANONICAL_JSON_OPTIONS)
        else:
            text = json.dumps(value)
        parts.append(f"{json.dumps(key)}: {text}")
    return "{" + ", ".join(parts) + "}\n"


def encode_request(request_id: int, method: str, params: dict[str, Any]) -> str:
    """One request line: a plain JSON envelope whose BSON-valued params are canonical Extended JSON."""
    bson = frozenset() if method == "hello" else BSON_PARAMS
    return f'{{"id": {request_id}, "method": {json.dumps(method)}, "params": {_line(params, bson).rstrip()}}}\n'


def encode_reply(reply: dict[str, Any], method: str | None) -> str:
    """One reply line (an executor's): ``result``, ``error`` and ``nested`` canonical, except ``hello``'s result."""
    bson = BSON_REPLY_FIELDS - {"result"} if method == "hello" else BSON_REPLY_FIELDS
    return _line(reply, bson)


def decode(line: str) -> Any:
    """A line read with an Extended JSON parser: plain and canonical numbers are both accepted (section 2)."""
    return json_util.loads(line)


class ExecutorProcess:
    """The child process and its three pipes; :meth:`request` is the only way to talk to it."""

    def __init__(self, command: str | list[str], env: dict[str, str] | None = None) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        self._stderr: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        self._lines: queue.Queue[Any] = queue.Queue()
        self._lock = threading.Lock()
        self._next_id = 1
        self.failure: str | None = None
        #: The last reply line as it came (executor-check reads its envelope's plain JSON).
        self.last_line = ""
        try:
            self._process = child_processes.popen(  # ends with the harness, however the harness ends
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env={**os.environ, **(env or {}), "HARNESS_EXECUTOR_PROTOCOL": "1"},
            )
        except OSError as exc:
            raise ExecutorFailure(f"executor {redact_text(repr(self.argv))} could not be started: {exc}") from exc
        threading.Thread(target=self._read_stdout, daemon=True, name="executor-stdout").start()
        threading.Thread(target=self._read_stderr, daemon=True, name="executor-stderr").start()

    # -- pipes -----------------------------------------------------------------------------------
    def _read_stdout(self) -> None:
        assert self._process.stdout is not None
        for raw in self._process.stdout:
            self._lines.put(raw)
        self._lines.put(_EOF)

    def _read_stderr(self) -> None:
        assert self._process.stderr is not None
        for raw in self._process.stderr:
            self._stderr.append(raw)
            self._stderr_size += len(raw)
            while self._stderr_size > STDERR_LIMIT and len(self._stderr) > 1:
                self._stderr_size -= len(self._stderr.popleft())

    def stderr_tail(self, limit: int = 2000) -> str:
        text = b"".join(list(self._stderr)).decode("utf-8", errors="replace")
        return text[-limit:]

    # -- requests ---------------------------------------------------------------------------------
    def request(self, method: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request and wait for its reply (a dict with ``ok``); any protocol fault kills the process."""
        if not self._lock.acquire(timeout=timeout_s):
            raise ExecutorFailure(f"{method}: the executor was still busy with another request after {timeout_s:g}s")
        try:
            if self.failure is not None:
                raise ExecutorFailure(f"{method}: the executor is no longer usable ({self.failure})")
            request_id = self._next_id
            self._next_id += 1
            try:
                assert self._process.stdin is not None
                self._process.stdin.write(encode_request(request_id, method, params).encode())
                self._process.stdin.flush()
            except (BrokenPipeError, OSError, ValueError) as exc:
                self._fail(f"{method}: could not write the request (the executor exited?): {exc}")
            return self._reply(method, request_id, timeout_s)
        finally:
            self._lock.release()

    def send_line(self, line: str) -> None:
        """Write one raw line that is not a request (executor-check: a line it must not answer, section 1)."""
        assert self._process.stdin is not None
        self._process.stdin.write(line.encode() + b"\n")
        self._process.stdin.flush()

    def _reply(self, method: str, request_id: int, timeout_s: float) -> dict[str, Any]:
        try:
            raw = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            self._fail(f"{method} (request {request_id}): no reply within {timeout_s:g}s; the executor was killed")
        if raw is _EOF:
            status = self._wait_exit(1.0)
            self._fail(f"{method} (request {request_id}): the executor closed stdout (exit status {status})")
        text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        self.last_line = text
        try:
            reply = decode(text)
        except (ValueError, TypeError) as exc:
            self._fail(
                f"{method} (request {request_id}): stdout line is not JSON ({exc}): {text[:200]!r} "
                "(stdout carries protocol messages only; logs go to stderr)"
            )
        if not isinstance(reply, dict):
            self._fail(f"{method} (request {request_id}): stdout line is not a JSON object: {text[:200]!r}")
        if reply.get("id") != request_id:
            self._fail(
                f"{method}: awaited the reply to request {request_id}, got id {reply.get('id')!r}: {text[:200]!r}"
            )
        if not isinstance(reply.get("ok"), bool) or (reply["ok"] and "result" not in reply):
            self._fail(f"{method} (request {request_id}): reply lacks a boolean 'ok' or its 'result': {text[:200]!r}")
        if not reply["ok"] and not isinstance(reply.get("error"), dict):
            self._fail(f"{method} (request {request_id}): failed reply lacks an 'error' object: {text[:200]!r}")
        return reply

    def _fail(self, what: str) -> Any:
        self.kill()
        self.failure = what
        tail = redact_text(self.stderr_tail())
        raise ExecutorFailure(what + (f"\nexecutor stderr (tail):\n{tail}" if tail.strip() else ""))

    # -- lifetime ------------------------------------------------------------------------------------
    def _wait_exit(self, timeout_s: float) -> int | None:
        try:
            return self._process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """SIGKILL to the executor's whole process group (it may have started children)."""
        if self.failure is None:
            self.failure = "killed by the harness"
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._wait_exit(EXIT_TIMEOUT_S)
        for pipe in (self._process.stdin, self._process.stdout, self._process.stderr):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass

    def finish(self, timeout_s: float = EXIT_TIMEOUT_S) -> int | None:
        """EOF on stdin; the exit status, or None when it had to be killed for not exiting in time."""
        try:
            if self._process.stdin is not None:
                self._process.stdin.close()
        except OSError:
            pass
        status = self._wait_exit(timeout_s)
        if status is None:
            self.kill()
        elif self.failure is None:
            self.failure = f"finished (exit status {status})"
        return status

    def unexpected_output(self, wait_s: float = 0.0) -> list[str]:
        """Lines the executor wrote without being asked (stdout must carry replies only)."""
        found: list[str] = []
        deadline = time.monotonic() + wait_s
        while True:
            try:
                raw = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return found
            if raw is _EOF:
                self._lines.put(_EOF)
                return found
            found.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
