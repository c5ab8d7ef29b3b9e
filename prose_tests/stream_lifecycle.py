"""Prose tests 2, 7 and 19: errors reach the application, cursors live, large events arrive split.

Test 19 is gated twice: on the server versions the README names, and on a
probe of the target itself, because a server may refuse
``$changeStreamSplitLargeEvent`` whatever version it reports.
"""

from __future__ import annotations

from pymongo.errors import OperationFailure

from harness.core.matching import show
from harness.record.versions import release
from prose_tests import observed
from prose_tests.support import ProseContext, TestSkipped, expect, prose_test, require

#: Server wire version from which a change without its ``_id`` is refused by the server itself.
SERVER_CHECKS_RESUME_TOKEN_WIRE = 8
LARGE_VALUE_BYTES = 10 * 1024 * 1024


@prose_test(2, "a change whose resume token was projected away raises an error")
def missing_resume_token_raises(cx: ProseContext) -> None:
    cx.open_client()
    cx.watch(pipeline=[{"$project": {"_id": 0}}], maxAwaitTimeMS=200)
    cx.admin_collection.insert_one({"n": 1})
    change, error = cx.attempt("iterateUntilDocumentOrError", "stream")
    expect(
        error is not None,
        f"iterating a change stream whose pipeline removes _id should raise an error; it "
        f"returned {show(change)}; commands sent: {cx.command_list()}",
    )
    wire = cx.run.target.info.max_wire_version or 0
    if error is not None and wire >= SERVER_CHECKS_RESUME_TOKEN_WIRE:
        expect(
            not error.is_client_error,
            f"a server with wire version {wire} refuses the change itself, so the "
            f"error should be the server's; got {error.describe()}",
        )


@prose_test(
    2,
    "a change that arrives without its _id raises, closes the stream and is not resumed",
    variant="driver-side",
    shaping=True,
)
def missing_resume_token_driver_side(cx: ProseContext) -> None:
    """The driver's own check: the server sends the change, the wire proxy strips its ``_id``.

    Servers before wire version 8 did not refuse such a change, so the driver
    must: raise on that change, close the stream and not resume (the error is
    not resumable: it is the driver's own).
    """
    cx.open_client()
    cx.shape("unchecked-event-ids")
    cx.watch(maxAwaitTimeMS=200)
    cx.admin_collection.insert_one({"n": 1})
    change, error = cx.attempt("iterateUntilDocumentOrError", "stream")
    expect(
        error is not None,
        f"a change without _id should raise an error; iteration returned {show(change)}; "
        f"commands sent: {cx.command_list()}",
    )
    require(
        any(
            b.documents and not any("_id" in d for d in b.documents if isinstance(d, dict))
            for b in observed.batches(cx.events())
        ),
        "no reply reached the driver with a change stripped of its _id (shaping did not apply)",
    )
    expect(
        error is not None and error.is_client_error,
        f"the server sent the change without complaint, so the error must be the driver's own; got "
        f"{error.describe() if error else None}",
    )
    mark = len(cx.events())
    cx.admin_collection.insert_one({"n": 2})
    again, later_error = cx.attempt("iterateOnce", "stream")
    later = cx.events()
    resumed = observed.started(later, "aggregate")[1:]
    more = observed.started(later[mark:], "getMore")
    outcome = show(again) if later_error is None else later_error.describe()
    # Two MUSTs, told apart: no resume (the error is the driver's own, not resumable), and the stream closed.
    # Unlike a server's error that is not resumable (after which the spec allows another getMore on the same
    # cursor), a document received without its resume token obliges the driver to close the change stream,
    # so a later iteration goes nowhere: no getMore on the old cursor either.
    expect(
        not resumed,
        "after the error for a change without _id the driver resumed (sent another aggregate), which the spec "
        f"forbids; iterating again gave {outcome}; commands sent: {cx.command_list()}",
    )
    expect(
        not more and again is None,
        "after raising for a change without _id the driver must close the change stream, yet iterating again "
        f"{'sent another getMore on the same cursor' if more else 'returned a change'} (gave {outcome}); "
        f"commands sent: {cx.command_list()}",
    )


@prose_test(7, "a cursor opened with an empty first batch is kept open by the driver")
def empty_first_batch_cursor_kept(cx: ProseContext) -> None:
    cx.open_client()
    cx.watch(maxAwaitTimeMS=200)
    replies = observed.batches(cx.events())
    require(len(replies) == 1 and replies[0].command_name == "aggregate", f"commands sent: {cx.command_list()}")
    first = replies[0]
    require(
        not first.documents and bool(first.cursor_id),
        f"the initial aggregate should return an empty first batch and a cursor id; got "
        f"{len(first.documents)} document(s) and cursor id {first.cursor_id}",
    )
    cx.admin_collection.insert_one({"n": 1})
    cx.next_change()
    events = cx.events()
    expect(
        not observed.started(events, "killCursors") and len(observed.started(events, "aggregate")) == 1,
        f"the cursor {first.cursor_id} from the initial aggregate should be iterated, not closed or replaced; "
        f"commands sent: {cx.command_list()}",
    )
    cursor_ids = [(e.command or {}).get("getMore") for e in observed.started(events, "getMore")]
    expect(
        bool(cursor_ids) and all(c == first.cursor_id for c in cursor_ids),
        f"every getMore should continue cursor {first.cursor_id}; sent getMore for {cursor_ids}",
    )


def _split_large_event_support(cx: ProseContext) -> str | None:
    """Why the target cannot split large events (None when it can), from the versions and a probe."""
    version = release(cx.run.target.info.version)
    if not ((6, 0, 9) <= version < (6, 1) or version >= (7, 0)):
        return f"needs a server >= 6.0.9 and < 6.1, or >= 7.0; the target is {cx.run.target.info.version}"
    database = cx.admin_collection.database
    try:
        reply = database.command(
            {
                "aggregate": cx.collection_name,
                "cursor": {},
                "pipeline": [{"$changeStream": {}}, {"$changeStreamSplitLargeEvent": {}}],
            }
        )
    except OperationFailure as exc:
        return f"the target refuses $changeStreamSplitLargeEvent: {exc.details or exc}"
    cursor_id = reply.get("cursor", {}).get("id")
    if cursor_id:
        database.command({"killCursors": cx.collection_name, "cursors": [cursor_id]})
    return None


@prose_test(19, "a change larger than a BSON document arrives split into fragments")
def large_event_split(cx: ProseContext) -> None:
    reason = _split_large_event_support(cx)
    if reason:
        raise TestSkipped(reason)
    cx.reset_collection(changeStreamPreAndPostImages={"enabled": True})
    cx.admin_collection.insert_one({"value": "q" * LARGE_VALUE_BYTES})
    cx.open_client()
    cx.watch(pipeline=[{"$changeStreamSplitLargeEvent": {}}], fullDocumentBeforeChange="required", maxAwaitTimeMS=200)
    cx.op("updateOne", "collection", filter={}, update={"$set": {"value": "z" * LARGE_VALUE_BYTES}})
    fragments = [cx.next_change().get("splitEvent"), cx.next_change().get("splitEvent")]
    expect(
        fragments == [{"fragment": 1, "of": 2}, {"fragment": 2, "of": 2}],
        "expected the update's event split in two, with splitEvent {fragment: 1, of: 2} then "
        f"{{fragment: 2, of: 2}}; got splitEvent values {show(fragments)}",
    )
