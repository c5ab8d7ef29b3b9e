"""One executor process: started in its own process group, JSON lines both ways, one request at a time.

docs/executor-protocol.md, section 1: the harness owns the deadlines. A reply that does not come in time,
a line that is not a JSON object, a line longer than :data:`LINE_LIMIT`, a reply with another id or an exit all
make the process unusable: it is killed and :class:`ExecutorFailure` says what happened, with the tail of its stderr.

Nothing here waits on the executor past a request's deadline (issue 32): its pipes are read by
:class:`~harness.engine.child_pipes.ChildOutput` (a thread that never blocks; callers wait on it with a timeout) and
written under the deadline, and killing it ends its whole :class:`~harness.engine.process_tree.ProcessTree` (its
group, its descendants, whatever carries its token or holds its pipes, in any session) before the harness's ends of
the pipes are closed, so no process the harness cannot see keeps a read waiting.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import threading
import time
from typing import Any, NoReturn

from bson import json_util

from harness.core.credentials import redact_text
from harness.core.ports import UnsupportedOperation
from harness.core.vocabulary import VOCABULARY_FILE
from harness.engine import child_processes, process_tree
from harness.engine.child_pipes import ChildOutput, OutputEnded, OutputTooLong, write_all
from harness.engine.process_tree import ProcessTree

#: The protocol version this harness speaks (docs/executor-protocol.md, section 9).
PROTOCOL_VERSION = 1
#: What every executor finds in its environment besides the harness's own (docs/executor-protocol.md section 1): the
#: protocol's marker, and where the shared vocabulary file is (section 12), for an executor that reads it at start-up.
PROTOCOL_ENVIRONMENT = {"HARNESS_EXECUTOR_PROTOCOL": "1", "HARNESS_VOCABULARY": str(VOCABULARY_FILE)}
#: How much of an executor's stderr is kept for error messages.
STDERR_LIMIT = 64 * 1024
#: The longest stdout line (one message) the harness reads; past it the executor is broken (section 1). The
#: harness holds at most about this much of an executor's stdout at a time. Not 16 MiB: an ``events`` reply
#: legitimately holds several replies of up to 16 MiB each (SRV-BATCH-16MB's is about 20 MiB of Extended JSON),
#: and 64 MiB holds three full batches with Extended JSON's overhead.
LINE_LIMIT = 64 * 1024 * 1024
#: How long an executor gets to answer ``hello`` (it may be starting a runtime) and to exit after EOF.
HELLO_TIMEOUT_S = 30.0
EXIT_TIMEOUT_S = 5.0
#: How long a line that is not a request (executor-check's) may take to write.
SEND_LINE_TIMEOUT_S = 5.0
#: After stdout ends, how long the executor gets to exit before it is called still running and killed.
CLOSED_STDOUT_EXIT_S = 1.0


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
        self._lock = threading.Lock()
        self._end_lock = threading.Lock()
        self._ended = False
        self._writing = False
        self._next_id = 1
        self.failure: str | None = None
        #: The last reply line as it came (executor-check reads its envelope's plain JSON).
        self.last_line = ""
        token = process_tree.new_token()
        stdin_read, self._stdin = os.pipe()
        stdout_read, stdout_write = os.pipe()
        stderr_read, stderr_write = os.pipe()
        try:
            self._process = child_processes.popen(  # ends with the harness, however the harness ends
                self.argv,
                stdin=stdin_read,
                stdout=stdout_write,
                stderr=stderr_write,
                start_new_session=True,
                env=process_tree.environment({**os.environ, **(env or {}), **PROTOCOL_ENVIRONMENT}, token),
            )
        except OSError as exc:
            for fd in (self._stdin, stdout_read, stderr_read):
                os.close(fd)
            raise ExecutorFailure(f"executor {self.name} could not be started: {exc}") from exc
        finally:
            for fd in (stdin_read, stdout_write, stderr_write):  # the child's ends: only the child holds them
                os.close(fd)
        os.set_blocking(self._stdin, False)
        self._tree = ProcessTree(
            self._process.pid, token=token, pipes=process_tree.pipe_inodes((stdout_read, stderr_read)), group=True
        )
        self._output = ChildOutput(
            stdout_read, stderr_read, line_limit=LINE_LIMIT, stderr_limit=STDERR_LIMIT, name="executor"
        )

    @property
    def name(self) -> str:
        """The executor's command line, for messages (credentials redacted)."""
        return redact_text(shlex.join(self.argv))

    def stderr_tail(self, limit: int = 2000) -> str:
        return self._output.stderr_tail(limit)

    # -- requests ---------------------------------------------------------------------------------
    def request(self, method: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request and wait for its reply (a dict with ``ok``); any protocol fault kills the process."""
        deadline = time.monotonic() + timeout_s
        if not self._lock.acquire(timeout=timeout_s):
            raise ExecutorFailure(f"{method}: the executor was still busy with another request after {timeout_s:g}s")
        try:
            if self.failure is not None:
                raise ExecutorFailure(f"{method}: the executor is no longer usable ({self.failure})")
            request_id = self._next_id
            self._next_id += 1
            self._write(
                encode_request(request_id, method, params).encode(), deadline, f"{method} (request {request_id})"
            )
            return self._reply(method, request_id, deadline, timeout_s)
        finally:
            self._lock.release()

    def send_line(self, line: str) -> None:
        """Write one raw line that is not a request (executor-check: a line it must not answer, section 1)."""
        self._write(line.encode() + b"\n", time.monotonic() + SEND_LINE_TIMEOUT_S, "a line that is not a request")

    def _write(self, data: bytes, deadline: float, what: str) -> None:
        """Write within the deadline: an executor that stops reading stdin cannot hold the harness in a full pipe.
        A kill meanwhile leaves the descriptor to this writer to close (closed under it, its number could be
        reused by another file before the write)."""
        with self._end_lock:
            fd = self._stdin
            self._writing = fd >= 0
        try:
            if fd < 0:
                self._fail(f"{what}: the executor's stdin is closed")
            write_all(fd, data, max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            self._fail(f"{what}: the executor did not read the request by its deadline; the executor was killed")
        except OSError as exc:
            self._fail(f"{what}: could not write the request (the executor exited?): {exc}")
        finally:
            with self._end_lock:
                self._writing = False
                if self._ended:
                    self._close_stdin()

    def _reply(self, method: str, request_id: int, deadline: float, timeout_s: float) -> dict[str, Any]:
        try:
            text = self._output.next_line(max(0.0, deadline - time.monotonic()))
        except OutputTooLong as exc:
            self._fail(f"{method} (request {request_id}): executor {self.name} wrote {exc}; the executor was killed")
        except OutputEnded as exc:
            self._fail(f"{method} (request {request_id}): {self._closed_stdout(exc)}")
        if text is None:
            self._fail(f"{method} (request {request_id}): no reply within {timeout_s:g}s; the executor was killed")
        text = text.rstrip("\r")
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

    def _closed_stdout(self, ended: OutputEnded) -> str:
        """What an end of stdout means: a kill of the harness's, an exit, or an executor still running without it."""
        if ended.by_harness or self._ended:  # the harness's kill: its end of stdout may come before the close
            return f"the executor was killed ({self.failure or 'by the harness'})"
        status = self._exit_status(CLOSED_STDOUT_EXIT_S)
        if ended.partial:
            what = f"the executor closed stdout in the middle of a line: {ended.partial.decode(errors='replace')!r}"
        else:
            what = "the executor closed stdout"
        if status is None:
            return what + f" but was still running {CLOSED_STDOUT_EXIT_S:g}s later; the executor was killed"
        return what + f" (exit status {status})"

    def _fail(self, what: str) -> NoReturn:
        self.kill()
        self.failure = what
        tail = redact_text(self.stderr_tail())
        raise ExecutorFailure(what + (f"\nexecutor stderr (tail):\n{tail}" if tail.strip() else ""))

    # -- lifetime ------------------------------------------------------------------------------------
    def _wait_exit(self, timeout_s: float) -> int | None:
        """The exit status once the executor has exited (it is reaped), None while it runs."""
        try:
            return self._process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def _exit_status(self, timeout_s: float) -> int | None:
        """The exit status (``-N`` for signal N, as ``Popen`` says) once the executor has exited, None if it runs
        ``timeout_s`` later. It is not reaped: until then its pid (and its group's id) cannot name another
        process, so its tree can still be ended safely."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                found = os.waitid(os.P_PID, self._process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:  # reaped already
                return self._process.returncode
            if found is not None:
                return found.si_status if found.si_code == os.CLD_EXITED else -found.si_status
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.01)

    def _end(self) -> None:
        """Kill the executor's whole tree (once), reap it, then close the harness's ends of its pipes."""
        with self._end_lock:
            if not self._ended:
                self._ended = True
                self._tree.end()
                self._wait_exit(EXIT_TIMEOUT_S)
            if not self._writing:
                self._close_stdin()
        self._output.close()

    def _close_stdin(self) -> None:
        """EOF for the executor (and for anything of its that still holds stdin); once."""
        if self._stdin >= 0:
            fd, self._stdin = self._stdin, -1
            os.close(fd)

    def kill(self) -> None:
        """SIGKILL to the executor and everything it started, in any session (it may have started children)."""
        if self.failure is None:
            self.failure = "killed by the harness"
        self._end()

    def finish(self, timeout_s: float = EXIT_TIMEOUT_S) -> int | None:
        """EOF on stdin; the exit status, or None when it had to be killed for not exiting in time. What the
        executor leaves running after it exits is killed too: nothing it started outlives it."""
        with self._end_lock:
            if not self._writing:
                self._close_stdin()
        if self._exit_status(timeout_s) is None:
            self.kill()
            return None
        self._end()
        status = self._wait_exit(0)
        if self.failure is None:
            self.failure = f"finished (exit status {status})"
        return status

    def unexpected_output(self, wait_s: float = 0.0) -> list[str]:
        """Lines the executor wrote without being asked (stdout must carry replies only)."""
        found: list[str] = []
        deadline = time.monotonic() + wait_s
        while True:
            try:
                line = self._output.next_line(max(0.0, deadline - time.monotonic()))
            except (OutputEnded, OutputTooLong):
                return found
            if line is None:
                return found
            found.append(line.rstrip("\r"))
