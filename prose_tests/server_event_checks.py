"""Server checks of what one stream reports and how a getMore waits, read with raw commands (``--suite checks``).

Each body takes a :class:`prose_tests.server_checks.ServerCheckContext` and judges the server alone: the
harness writes with its admin client and reads the stream with :class:`~prose_tests.raw_stream.RawStream`, so
no driver rule stands between the server's replies and the verdict. Each accepts every answer a conforming
server may give (the reference texts' freedoms, said at each check) and fails naming the rule it breaks.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from pymongo.errors import OperationFailure

from harness.core.errors import HarnessError, TestFailure
from harness.core.matching import show
from prose_tests.raw_stream import RawStream, changes_after

if TYPE_CHECKING:
    from prose_tests.server_checks import ServerCheckContext

#: The document replaced, and what replaces it: a field removed, one changed, one added.
BEFORE_REPLACE = {"_id": 1, "removed": 1, "changed": "old"}
AFTER_REPLACE = {"_id": 1, "changed": "new", "added": 2}
#: The getMores a stream gets to deliver what one drop produces (it is all written before the first).
DROP_GET_MORES = 10
#: The empty getMore's maxTimeMS, and the window its reply must come in: no sooner than half of it (a server's
#: timer may be coarse; one that does not wait at all returns in a few ms), no later than it plus generous slack
#: (a loaded machine; a server that waits its own longer default instead fails).
EMPTY_WAIT_MS = 500
EARLIEST_FRACTION = 0.5
SLACK_MS = 1500
#: Resume tokens no server can use: the option's value is not a token at all (the server's own tokens are
#: documents whose _data is a hexadecimal string). A token of valid hex with content the server cannot decode
#: is left out: tokens are opaque, and for some server's format such a string may name a real position.
MALFORMED_TOKENS: dict[str, Any] = {
    "a string, not a document": "not-a-resume-token",
    "a document without _data": {"notData": "00"},
    "_data that is not a string": {"_data": 42},
    "_data that is not hexadecimal": {"_data": "not hexadecimal"},
}
TOKEN_OPTIONS = ("resumeAfter", "startAfter")


# -- a replacement --------------------------------------------------------------------------------------------


def replace_reported(context: ServerCheckContext) -> None:
    """Replace one document; the event is a ``replace`` with the new document whole, or an ``update`` whose
    description turns the old document into the new one (the spec leaves which to the server); either way its
    documentKey is ``{_id}`` alone."""
    name = context.check.collection
    collection = context.database[name]
    context.current = "set-up: one document, a stream, then the document replaced"
    collection.insert_one(dict(BEFORE_REPLACE))
    changes = changes_after(context.database, name, lambda: collection.replace_one({"_id": 1}, AFTER_REPLACE), 1)
    if not changes:
        raise TestFailure("the replacement produced no event on the collection's stream")
    problems = replace_problems(changes[0], BEFORE_REPLACE, AFTER_REPLACE)
    if problems:
        raise TestFailure("; ".join(problems) + f" (the replacement's event: {show(changes[0])})")


def replace_problems(event: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What is wrong with ``event`` as the report of ``before`` replaced by ``after`` ([] when nothing)."""
    problems = []
    key = {"_id": after["_id"]}
    if event.get("documentKey") != key:
        problems.append(f"SRV-DOCKEY: documentKey should be {show(key)} alone, got {show(event.get('documentKey'))}")
    kind = event.get("operationType")
    if kind == "replace":
        if event.get("fullDocument") != after:
            problems.append(
                f"SRV-FULLDOC-INSERT: a replace event carries the new document {show(after)} as fullDocument, "
                f"got {show(event.get('fullDocument'))}"
            )
    elif kind == "update":
        described = applied(before, event.get("updateDescription"))
        if described != after:
            problems.append(
                "SRV-FULLDOC-INSERT: reported as an update (which the spec allows), but its updateDescription "
                f"{show(event.get('updateDescription'))} does not turn the old document into {show(after)} "
                f"(it gives {show(described)})"
            )
    else:
        problems.append(f"SRV-FULLDOC-INSERT: a replacement is reported as replace (or update), not {kind!r}")
    return problems


def applied(document: dict[str, Any], description: Any) -> dict[str, Any] | None:
    """``document`` with an update description's top-level ``updatedFields`` set and ``removedFields`` removed
    (None when the description is missing or malformed); the check's documents have no embedded fields."""
    if not isinstance(description, dict):
        return None
    updated, removed = description.get("updatedFields"), description.get("removedFields")
    if not isinstance(updated, dict) or not isinstance(removed, list):
        return None
    result = {key: value for key, value in document.items() if key not in removed}
    result.update(updated)
    return result


# -- a drop ------------------------------------------------------------------------------------------------------


def drop_invalidates(context: ServerCheckContext) -> None:
    """Drop the watched collection: the stream reports drop, then invalidate, then nothing; the server closes the
    cursor with the invalidate's reply or, at the latest, the next getMore's (the text does not say which)."""
    name = context.check.collection
    context.current = "a stream on the collection, then the collection dropped"
    with RawStream(context.database, name) as stream:
        context.database.drop_collection(name)
        events = stream.changes(3, until=is_invalidate, get_mores=DROP_GET_MORES)
        after, closed = _after_invalidate(stream) if events and is_invalidate(events[-1]) else ([], False)
    kinds = [event.get("operationType") for event in events]
    context.details["drop_events"] = kinds
    if kinds != ["drop", "invalidate"]:
        raise TestFailure(
            "SRV-INVALIDATE-DROP: dropping the watched collection should end its stream with drop, then invalidate; "
            f"the stream reported {kinds}" + ("" if "invalidate" in kinds else " and no invalidate")
        )
    ns = events[0].get("ns")
    # db and coll name the collection; a later server may add fields beside them (the spec says so), so only
    # these two are compared.
    if not isinstance(ns, dict) or (ns.get("db"), ns.get("coll")) != (context.database.name, name):
        raise TestFailure(f"SRV-INVALIDATE-DROP: the drop event's ns should name the collection, got {show(ns)}")
    if after or not closed:
        raise TestFailure(
            "SRV-INVALIDATE-EVENT: nothing comes after an invalidate and the cursor is closed; "
            + (f"the stream went on with {show(after)}" if after else "the cursor stayed open after the next getMore")
        )


def is_invalidate(event: dict[str, Any]) -> bool:
    return event.get("operationType") == "invalidate"


def _after_invalidate(stream: RawStream) -> tuple[list[dict[str, Any]], bool]:
    """What the stream gives after its invalidate: ``(events, closed)``, the cursor closed by the invalidate's reply
    or by the next getMore (its reply's cursor id 0, or a refusal: the overview's ChangeStreamInvalidated)."""
    after = list(stream.buffered)
    if not stream.alive:
        return after, True
    try:
        after += stream.get_more()
    except OperationFailure:
        stream.cursor_id = 0  # the server ended it
        return after, True
    return after, not stream.alive


# -- an empty getMore waits --------------------------------------------------------------------------------------


def empty_get_more_waits(context: ServerCheckContext) -> None:
    """A getMore with nothing to return comes back empty after about its maxTimeMS, with the cursor open.

    The overview has the server wait up to maxTimeMS for a matching change and return as soon as one comes; with
    nothing written, nothing comes, so the reply may not come early. It names no cap of the server's own.
    """
    name = context.check.collection
    earliest, latest = EMPTY_WAIT_MS * EARLIEST_FRACTION, EMPTY_WAIT_MS + SLACK_MS
    context.current = f"a fresh stream, then a getMore with maxTimeMS {EMPTY_WAIT_MS} and nothing written"
    with RawStream(context.database, name) as stream:
        if stream.buffered or not stream.alive:
            raise HarnessError(
                f"the scenario's precondition does not hold: a fresh stream should be open with an empty first batch, "
                f"got {show(stream.last_cursor)}"
            )
        started = time.monotonic()
        batch = stream.get_more(EMPTY_WAIT_MS)
        waited_ms = (time.monotonic() - started) * 1000
        still_open = stream.alive
    context.details["empty_get_more"] = {
        "maxTimeMS": EMPTY_WAIT_MS,
        "waited_ms": round(waited_ms, 1),
        "accepted_ms": [earliest, latest],
    }
    if batch:
        raise TestFailure(f"SRV-MAXTIME-EMPTY: nothing was written, yet the getMore returned {show(batch)}")
    if waited_ms < earliest:
        raise TestFailure(
            f"SRV-MAXTIME-EMPTY: the getMore with maxTimeMS {EMPTY_WAIT_MS} and nothing to return came back empty "
            f"after {waited_ms:.0f} ms; the server should wait for a change for up to maxTimeMS (accepted: "
            f"{earliest:.0f} to {latest:.0f} ms)"
        )
    if waited_ms > latest:
        raise TestFailure(
            f"SRV-MAXTIME-EMPTY: the getMore with maxTimeMS {EMPTY_WAIT_MS} came back after {waited_ms:.0f} ms, past "
            f"maxTimeMS (accepted: {earliest:.0f} to {latest:.0f} ms)"
        )
    if not still_open:
        raise TestFailure(
            "SRV-MAXTIME-EMPTY: the empty getMore closed the cursor; a stream with nothing new stays open"
        )


# -- a token the server cannot use ----------------------------------------------------------------------------------


def malformed_tokens_refused(context: ServerCheckContext) -> None:
    """Each malformed token, as resumeAfter and as startAfter, is refused by the aggregate itself with a server
    error that has a code. The texts name no code, so any is accepted (the ones seen are recorded)."""
    accepted, uncoded, codes = [], [], {}
    for option in TOKEN_OPTIONS:
        for what, token in MALFORMED_TOKENS.items():
            refusal = context.aggregate({option: token})
            case = f"{option} = {what}"
            if refusal is None:
                accepted.append(case)
            elif not isinstance(refusal.code, int) or isinstance(refusal.code, bool) or refusal.code == 0:
                errmsg = (refusal.details or {}).get("errmsg", str(refusal))
                uncoded.append(f"{case} ({str(errmsg)[:120]!r})")
            else:
                codes[case] = refusal.code
    context.details["malformed_token_codes"] = codes
    problems = []
    if accepted:
        problems.append(f"opened a change stream for {'; '.join(accepted)}")
    if uncoded:
        problems.append(f"refused without an error code: {'; '.join(uncoded)}")
    if problems:
        raise TestFailure(
            "SRV-TOKEN-MALFORMED: an unusable resume token must be refused by the aggregate with a coded server "
            "error; the server " + ", and ".join(problems)
        )


# -- an error a driver tells apart by its code -----------------------------------------------------------------------

#: NamespaceNotFound: what a server that refuses to drop a missing collection answers (mongod before 7.0).
NAMESPACE_NOT_FOUND = 26


def missing_collection_drop(context: ServerCheckContext) -> None:
    """``drop`` of a collection that does not exist either succeeds (mongod 7.0 on, SecantusDB) or is refused with
    NamespaceNotFound (26, mongod before 7.0): drivers and test runners pass over that refusal by its code, so an
    error without it (or with another) stops every test whose set-up drops a collection first."""
    missing = f"{context.check.collection}_never_created"
    context.current = f"drop {missing} (a collection that does not exist)"
    try:
        context.database.command({"drop": missing})
    except OperationFailure as refusal:
        code = refusal.code
        context.details["missing_drop_refusal"] = {"code": code, "errmsg": str((refusal.details or {}).get("errmsg"))}
        if code != NAMESPACE_NOT_FOUND:
            raise TestFailure(
                "SRV-ERROR-CODES: dropping a collection that does not exist must succeed or be refused with "
                f"NamespaceNotFound ({NAMESPACE_NOT_FOUND}); the server refused it "
                + ("without an error code" if code is None else f"with code {code}")
                + f": {show((refusal.details or {}).get('errmsg'))}"
            ) from refusal


__all__ = [
    "MALFORMED_TOKENS",
    "NAMESPACE_NOT_FOUND",
    "applied",
    "drop_invalidates",
    "empty_get_more_waits",
    "malformed_tokens_refused",
    "missing_collection_drop",
    "replace_problems",
    "replace_reported",
]
