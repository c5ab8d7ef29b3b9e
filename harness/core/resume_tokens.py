"""Where a change stream has read up to, from a postBatchResumeToken, for the token formats the harness can prove.

Resume tokens are opaque to drivers, and the harness treats them as opaque everywhere else. The early no-change
verdict (docs/causes.md, section 4) needs one fact from a postBatchResumeToken: the cluster time up to which the
stream has read the target's oplog. A token's ``_data`` holds that time only in a format each server defines for
itself, so it is read only where the format of the target in use is known and was checked against that target:

- ``secantusdb-bson``: SecantusDB 0.7 (the embedded and daemon targets run the installed package). ``_data`` is the
  hex of a BSON document ``{s: oplog seq, t: Timestamp, n: namespace, k: documentKey._id, i: true?}``
  (``secantus.changestreams.make_resume_token``; its documentation says the format is not mongod's). ``t`` is the
  oplog entry's own time when ``s`` is an entry the stream read, or a cluster time minted after the stream's scan
  when the token is a high-water mark; each oplog entry has a time of its own, strictly increasing with ``s``. So a
  token at time ``t`` has read every entry whose time is at most ``t`` that was visible when its getMore scanned:
  the position includes ``t`` itself. ``tests/harness/core/test_resume_tokens.py`` checks this on the embedded
  server: every event's token reads as the event's ``clusterTime``, and a quiet stream's tokens are past the writes
  before them.
- anything else (mongod's KeyString tokens, whose time a real mongod would have to prove here; servers that send
  no postBatchResumeToken): ``unread``. The stream's position is then unknown and every iteration keeps its budget.

A target names its format in ``TargetInfo.details["resume_tokens"]`` (every record carries it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import bson
from bson.timestamp import Timestamp

#: The key of ``TargetInfo.details`` that names the format of the target's resume tokens.
DETAIL = "resume_tokens"
#: The harness does not read this target's tokens: a stream's position is unknown.
UNREAD = "unread"
#: SecantusDB's tokens: ``_data`` is the hex of a BSON document whose ``t`` is the position's cluster time.
SECANTUSDB_BSON = "secantusdb-bson"
#: SecantusDB releases whose tokens were read and checked against the format above (a version prefix each).
SECANTUSDB_CHECKED = ("0.7.",)
_SECANTUSDB_FIELDS = frozenset({"s", "t", "n", "k", "i"})


class UnreadableToken(ValueError):
    """A token that does not have the format its target declared (the message says how it differs)."""


@dataclass(frozen=True)
class StreamPosition:
    """How far a stream has read: every change of a write at or before ``time`` has been scanned."""

    time: Timestamp

    def passed(self, write_time: Timestamp) -> bool:
        """Whether a write made at ``write_time`` is behind this position (its change delivered or never to come)."""
        return self.time >= write_time

    def __str__(self) -> str:
        return f"Timestamp({self.time.time}, {self.time.inc})"


def secantusdb_format(package_version: str) -> str:
    """The format of a SecantusDB release's tokens: :data:`SECANTUSDB_BSON` for a checked release, else unread."""
    return SECANTUSDB_BSON if package_version.startswith(SECANTUSDB_CHECKED) else UNREAD


def read_position(token: Any, token_format: str) -> StreamPosition:
    """The position a postBatchResumeToken stands for, in ``token_format``; :class:`UnreadableToken` otherwise."""
    if token_format != SECANTUSDB_BSON:
        raise UnreadableToken(f"the harness reads no resume tokens of this target (format {token_format!r})")
    data = token.get("_data") if isinstance(token, Mapping) else None
    if not isinstance(data, str):
        raise UnreadableToken(f"the token has no hexadecimal _data: {token!r:.120}")
    try:
        inner = bson.decode(bytes.fromhex(data))
    except Exception as exc:  # not hex, or not one BSON document
        raise UnreadableToken(f"the token's _data is not a {SECANTUSDB_BSON} document: {exc}") from None
    if not set(inner) <= _SECANTUSDB_FIELDS or not isinstance(inner.get("s"), int):
        raise UnreadableToken(f"the token's _data has fields {sorted(inner)}, not {SECANTUSDB_BSON}'s")
    time = inner.get("t")
    if not isinstance(time, Timestamp):
        raise UnreadableToken(f"the token's t is {type(time).__name__}, not a Timestamp")
    return StreamPosition(time)


def show_time(value: Timestamp) -> str:
    """A cluster time as a fact shows it."""
    return f"Timestamp({value.time}, {value.inc})"
