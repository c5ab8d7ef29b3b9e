"""One proxied connection: a client socket paired with its own upstream socket.

Two pumps run per pair. The request pump reads the client's messages,
answers ``configureFailPoint`` itself, asks the fail points what to do with
every other command, and forwards. The reply pump reads the target's
messages and forwards them, rewriting only replies the request pump asked
it to look at (remembered by request id in :attr:`Connection.pending`). A
streamed reply (``moreToCome``) keeps its note alive for the next reply, so
awaitable hello and exhaust cursors pass through with every reply handled.
Whichever pump ends first ends the pair.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass, field
from typing import Any

import bson

from harness.core.constants import HANDSHAKE_COMMANDS
from harness.shared.wire import protocol as wire
from harness.shared.wire.failcommand import CommandContext, FailPointConfigError, FailPointSet, error_reply
from harness.shared.wire.rewrite import handshake_reply, handshake_request
from harness.shared.wire.shaping import ReplyShaping

log = logging.getLogger("harness.shared.wire")

_REQUEST_IDS = itertools.count(0x4000_0000)  # replies the proxy makes up; drivers only check responseTo


class CloseConnection(Exception):
    """A fail point says: drop the client without a reply."""


@dataclass
class Route:
    """What every connection of one proxy shares."""

    upstream_host: str
    upstream_port: int
    proxy_address: str
    fail_points: FailPointSet
    connect_timeout_s: float = 10.0
    change_stream_cursors: set[int] = field(default_factory=set)
    shaping: ReplyShaping = field(default_factory=ReplyShaping)
    #: The emulated replica-set member this proxy plays (:class:`harness.shared.wire.replica_set.Member`): it rewrites
    #: hello replies as that member, logs every other command that arrives, refuses writes unless primary.
    member: Any = None

    @property
    def target_names(self) -> set[str]:
        return {f"{self.upstream_host}:{self.upstream_port}"}


@dataclass
class ReplyNote:
    """What the reply pump must do with the reply to one request."""

    handshake: bool = False
    change_stream: bool = False
    shape: bool = False  # a change-stream cursor reply the armed reply shaping rewrites
    write_concern_error: dict[str, Any] | None = None
    labels: list[str] = field(default_factory=list)
    keys: list[int] = field(default_factory=list)  # every id a streamed reply may answer with


@dataclass
class Command:
    """A command request, whichever opcode carried it."""

    header: wire.Header
    payload: bytes
    name: str
    msg: wire.OpMsg | None = None
    query: wire.OpQuery | None = None
    _decoded: dict[str, Any] | None = None

    @property
    def body(self) -> bytes:
        return self.msg.body if self.msg is not None else self.query.query  # type: ignore[union-attr]

    @property
    def document(self) -> dict[str, Any]:
        if self._decoded is None:
            self._decoded = bson.decode(self.body, wire.CODEC)
        return self._decoded

    @property
    def expects_reply(self) -> bool:
        return self.msg is None or not self.msg.flags & wire.MORE_TO_COME

    def rebuilt(self, document: dict[str, Any]) -> bytes:
        body = bson.encode(document)
        rid, to = self.header.request_id, self.header.response_to
        if self.msg is not None:
            return wire.build_op_msg(rid, to, wire.OpMsg(self.msg.flags, body, self.msg.sequences))
        q = self.query
        assert q is not None
        return wire.build_op_query(rid, to, wire.OpQuery(q.flags, q.collection, q.skip, q.limit, body, q.fields))

    def reply(self, document: dict[str, Any]) -> bytes:
        """A reply in the opcode the client used (OP_REPLY answers OP_QUERY)."""
        body, rid = bson.encode(document), next(_REQUEST_IDS) & 0x7FFF_FFFF
        if self.msg is not None:
            return wire.build_op_msg(rid, self.header.request_id, wire.OpMsg(0, body))
        return wire.build_op_reply(rid, self.header.request_id, wire.OpReply(8, 0, 0, [body]))  # 8: AwaitCapable


async def read_frame(reader: asyncio.StreamReader) -> tuple[wire.Header, bytes, bytes]:
    raw_header = await reader.readexactly(wire.HEADER_SIZE)
    header = wire.Header.parse(raw_header)
    payload = await reader.readexactly(header.length - wire.HEADER_SIZE)
    return header, raw_header, payload


class Connection:
    def __init__(self, route: Route, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self.route = route
        self.client_reader, self.client_writer = client_reader, client_writer
        self.upstream_writer: asyncio.StreamWriter | None = None
        self.app_name: str | None = None
        self.pending: dict[int, ReplyNote] = {}
        self.hello_replies = 0  # hello/isMaster replies given on this connection; the first is its handshake

    async def run(self) -> None:
        route = self.route
        try:
            try:
                upstream_reader, self.upstream_writer = await asyncio.wait_for(
                    asyncio.open_connection(route.upstream_host, route.upstream_port), route.connect_timeout_s
                )
            except (OSError, asyncio.TimeoutError) as exc:
                log.warning(
                    "wire proxy: cannot reach upstream %s:%s: %s", route.upstream_host, route.upstream_port, exc
                )
                return
            pumps = [asyncio.ensure_future(self._requests()), asyncio.ensure_future(self._replies(upstream_reader))]
            try:
                await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for pump in pumps:
                    pump.cancel()
                await asyncio.gather(*pumps, return_exceptions=True)
        finally:
            self.close()

    def close(self) -> None:
        for writer in (self.client_writer, self.upstream_writer):
            if writer is not None and not writer.is_closing():
                writer.transport.abort()

    # -- client -> target ------------------------------------------------------------
    async def _requests(self) -> None:
        try:
            while True:
                header, raw_header, payload = await read_frame(self.client_reader)
                command = self._as_command(header, payload)
                if command is None:
                    self._upstream(raw_header, payload)
                else:
                    await self._command(command, raw_header)
                assert self.upstream_writer is not None
                await self.upstream_writer.drain()
        except CloseConnection:
            log.debug("wire proxy: closeConnection fail point dropped a client")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except wire.ProtocolError as exc:
            log.warning("wire proxy: malformed message from client, closing it: %s", exc)

    @staticmethod
    def _as_command(header: wire.Header, payload: bytes) -> Command | None:
        if header.op_code == wire.OP_MSG:
            msg = wire.parse_op_msg(payload)
            return Command(header, payload, wire.first_key(msg.body), msg=msg)
        if header.op_code == wire.OP_QUERY:
            query = wire.parse_op_query(payload)
            if query.is_command:
                return Command(header, payload, wire.first_key(query.query), query=query)
        return None  # OP_COMPRESSED and the rest: passed through undecoded

    async def _command(self, command: Command, raw_header: bytes) -> None:
        name, fail_points = command.name, self.route.fail_points
        if name == "configureFailPoint":  # answered here, never forwarded
            try:
                answer = fail_points.configure(command.document)
            except FailPointConfigError as exc:
                answer = error_reply(exc.code, [], str(exc))
            if command.expects_reply:
                self.client_writer.write(command.reply(answer))
            return
        if self.route.member is not None and self._as_member(command):
            return
        if name in HANDSHAKE_COMMANDS:
            changed, app_name = handshake_request(command.document)
            if app_name is not None:
                self.app_name = app_name
            self.pending[command.header.request_id] = ReplyNote(handshake=True)
            self._upstream(raw_header, command.payload, changed and command.rebuilt(changed))
            return
        note = ReplyNote()
        if name == "aggregate" and _opens_change_stream(command.document):
            note.change_stream = True
        action = fail_points.decide(self._context(command)) if fail_points.watches(name) else None
        if action is not None:
            if action.block_ms:
                await asyncio.sleep(action.block_ms / 1000)
            if action.close_connection:
                raise CloseConnection
            if action.error is not None:
                if command.expects_reply:
                    self.client_writer.write(command.reply(action.error))
                return
            note.write_concern_error, note.labels = action.write_concern_error, action.reply_labels
        if self._answered_by_shaping(command, note):
            return
        if note.change_stream or note.shape or note.write_concern_error is not None:
            self.pending[command.header.request_id] = note
        self._upstream(raw_header, command.payload)

    def _as_member(self, command: Command) -> bool:
        """An emulated member logs the command (handshakes aside); True when it refused it (the reply is sent)."""
        member, name = self.route.member, command.name
        if name in HANDSHAKE_COMMANDS:
            return False
        member.arrived(name, command.document)
        refusal = member.refusal(name)
        if refusal is None:
            return False
        if command.expects_reply:
            self.client_writer.write(command.reply(refusal))
        return True

    def _answered_by_shaping(self, command: Command, note: ReplyNote) -> bool:
        """Reply shaping's part of a request: serve held documents, forget killed cursors, mark replies.

        A ``getMore`` on a cursor with documents held back is answered here,
        never forwarded (the server has already sent those documents).
        """
        shaping, name = self.route.shaping, command.name
        if name == "killCursors":
            cursors = command.document.get("cursors")
            shaping.forget(list(cursors) if isinstance(cursors, list) else [])
            return False
        if name == "getMore":
            cursor_id = command.document.get("getMore")
            if isinstance(cursor_id, int) and shaping.holds(cursor_id):
                held = shaping.held_reply(cursor_id)
                if held is not None:
                    if command.expects_reply:
                        self.client_writer.write(command.reply(held))
                    return True
            on_change_stream = isinstance(cursor_id, int) and int(cursor_id) in self.route.change_stream_cursors
        else:
            on_change_stream = note.change_stream
        note.shape = on_change_stream and shaping.applies_to(self.app_name)
        return False

    def _context(self, command: Command) -> CommandContext:
        document = command.document
        database = document.get("$db") or (command.query.database if command.query else "")
        collection = document.get("collection") if command.name == "getMore" else document.get(command.name)
        cursor = document.get("getMore") if command.name == "getMore" else None
        return CommandContext(
            name=command.name,
            database=database,
            collection=collection if isinstance(collection, str) else None,
            app_name=self.app_name,
            retryable_write="txnNumber" in document and "autocommit" not in document,
            change_stream_cursor=cursor is not None and int(cursor) in self.route.change_stream_cursors,
        )

    def _upstream(self, raw_header: bytes, payload: bytes, rebuilt: bytes | None = None) -> None:
        assert self.upstream_writer is not None
        if rebuilt:
            self.upstream_writer.write(rebuilt)
        else:
            self.upstream_writer.writelines((raw_header, payload))

    # -- target -> client ------------------------------------------------------------
    async def _replies(self, upstream_reader: asyncio.StreamReader) -> None:
        try:
            while True:
                header, raw_header, payload = await read_frame(upstream_reader)
                note = self._note_for(header, payload)
                rebuilt = self._reply(header, payload, note) if note is not None else None
                if rebuilt is not None:
                    self.client_writer.write(rebuilt)
                else:
                    self.client_writer.writelines((raw_header, payload))
                await self.client_writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except wire.ProtocolError as exc:
            log.warning("wire proxy: malformed message from upstream, closing the pair: %s", exc)

    def _note_for(self, header: wire.Header, payload: bytes) -> ReplyNote | None:
        """The note for this reply; kept while a stream (``moreToCome``) goes on.

        Servers differ in what a streamed reply answers: mongod chains
        (``responseTo`` is the previous reply's ``requestID``), others repeat
        the original request's id. The note is filed under both until the
        stream's last reply.
        """
        note = self.pending.get(header.response_to)
        if note is None:
            return None
        streaming = (
            header.op_code == wire.OP_MSG
            and len(payload) >= 4
            and int.from_bytes(payload[:4], "little") & wire.MORE_TO_COME
        )
        if streaming:
            self.pending[header.request_id] = note
            note.keys.append(header.request_id)
        else:
            for key in [header.response_to, *note.keys]:
                self.pending.pop(key, None)
        return note

    def _reply(self, header: wire.Header, payload: bytes, note: ReplyNote) -> bytes | None:
        if header.op_code == wire.OP_MSG:
            msg = wire.parse_op_msg(payload)
            body = self._reply_body(msg.body, note)
            if body is None:
                return None
            return wire.build_op_msg(header.request_id, header.response_to, wire.OpMsg(msg.flags, body, msg.sequences))
        if header.op_code == wire.OP_REPLY and note.handshake:
            reply = wire.parse_op_reply(payload)
            if reply.documents:
                body = self._reply_body(reply.documents[0], note)
                reply.documents[0] = body if body is not None else reply.documents[0]
            return wire.build_op_reply(header.request_id, header.response_to, reply)
        return None

    def _reply_body(self, body: bytes, note: ReplyNote) -> bytes | None:
        """The reply body rewritten as ``note`` asks, or ``None`` to forward it as it came."""
        document = bson.decode(body, wire.CODEC)
        if note.handshake:
            route = self.route
            rewritten = (
                route.member.hello(document)
                if route.member is not None
                else handshake_reply(document, route.target_names, route.proxy_address)
            )
            self.hello_replies += 1
            shaped = route.shaping.shape_hello(rewritten, self.app_name, first_reply=self.hello_replies == 1)
            return bson.encode(shaped if shaped is not None else rewritten)
        if note.change_stream and document.get("ok") and isinstance(document.get("cursor"), dict):
            cursor_id = document["cursor"].get("id")
            if cursor_id:
                self.route.change_stream_cursors.add(int(cursor_id))
        if note.shape:
            shaped = self.route.shaping.shape(document)
            return bson.encode(shaped) if shaped is not None else None
        if note.write_concern_error is not None and document.get("ok"):
            extra: dict[str, Any] = {"writeConcernError": note.write_concern_error}
            if note.labels and "errorLabels" not in document:
                extra["errorLabels"] = note.labels
            return wire.append_fields(body, extra)
        return None


def _opens_change_stream(document: dict[str, Any]) -> bool:
    pipeline = document.get("pipeline")
    return bool(pipeline) and isinstance(pipeline[0], dict) and "$changeStream" in pipeline[0]
