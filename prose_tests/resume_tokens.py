"""Prose tests 1, 11, 13 and 14: which resume token the driver caches, and when.

The spec's caching rules, paraphrased: a stream started with ``startAfter``
or ``resumeAfter`` caches that token; an empty batch with a
postBatchResumeToken caches the postBatchResumeToken; returning a document
caches the batch's postBatchResumeToken if it is the batch's last document,
otherwise the document's ``_id``. Each check drives a stream into one
situation and compares ``getResumeToken`` with the token those rules name,
computed from the replies the driver itself received.
"""

from __future__ import annotations

from collections.abc import Callable

from prose_tests import observed
from prose_tests.support import ProseContext, TestSkipped, expect, expect_token, prose_test, require

#: Short server waits: these streams are iterated only after their changes are written (acknowledged), so an
#: empty getMore only has to come back empty, and need not wait long for it.
QUICK_AWAIT_MS = 50


@prose_test(1, "the change stream keeps track of the last resume token seen")
def tracks_last_seen_token(cx: ProseContext) -> None:
    cx.open_client()
    cx.watch(maxAwaitTimeMS=QUICK_AWAIT_MS)
    for n in range(1, 4):
        cx.admin_collection.insert_one({"n": n})
        change = cx.next_change()
        expected, why = observed.token_cached_after(cx.events(), change)
        expect_token(cx.resume_token(), expected, f"after change {n} of 3 ({why})")


@prose_test(
    11,
    "getResumeToken gives the postBatchResumeToken of an empty batch",
    variant="empty-batch",
    min_server_version="4.0.7",
)
def empty_batch_post_batch_token(cx: ProseContext) -> None:
    cx.open_client()
    cx.watch(maxAwaitTimeMS=QUICK_AWAIT_MS)
    # Activity elsewhere moves the server's postBatchResumeToken on without
    # giving this stream a change, so a stale token is told apart from a fresh one.
    cx.admin_collection.database[cx.collection_name + "_elsewhere"].insert_one({"n": 1})
    change = cx.op("iterateOnce", "stream")
    expect(change is None, f"iterateOnce returned a change although the watched collection was not written: {change}")
    replies = observed.batches(cx.events())
    require(bool(replies), "the driver published no aggregate/getMore reply")
    latest = replies[-1]
    require(not latest.documents, f"the latest {latest.command_name} batch was not empty")
    if not latest.has_post_batch_resume_token:
        raise TestSkipped(f"the target's {latest.command_name} reply carries no postBatchResumeToken")
    expect_token(
        cx.resume_token(),
        latest.post_batch_resume_token,
        f"after an empty {latest.command_name} batch (the postBatchResumeToken of that reply)",
    )


@prose_test(
    11,
    "getResumeToken gives the postBatchResumeToken once a batch is fully iterated",
    variant="iterated-batch",
    min_server_version="4.0.7",
)
def iterated_batch_post_batch_token(cx: ProseContext) -> None:
    cx.open_client()
    # The filtered-out last write lets a server move the batch's
    # postBatchResumeToken past the last returned document's _id.
    cx.watch(pipeline=[{"$match": {"fullDocument.kept": True}}], maxAwaitTimeMS=QUICK_AWAIT_MS)
    cx.admin_collection.insert_many([{"kept": True, "n": 1}, {"kept": True, "n": 2}, {"kept": False, "n": 3}])
    cx.next_change()
    last = cx.next_change()
    batch, index = observed.delivering_batch(cx.events(), last)
    require(index == len(batch.documents) - 1, "the second change was not the last of its batch")
    expect(
        batch.has_post_batch_resume_token,
        f"the {batch.command_name} reply that emptied the batch has no postBatchResumeToken (server >= 4.0.7)",
    )
    expect_token(
        cx.resume_token(),
        batch.post_batch_resume_token,
        f"after iterating the last document of a {batch.command_name} batch of {len(batch.documents)} "
        "(that reply's postBatchResumeToken)",
    )


@prose_test(13, "getResumeToken gives the previous document's _id in the middle of a batch")
def mid_batch_document_id(cx: ProseContext) -> None:
    cx.open_client()
    cx.watch(maxAwaitTimeMS=QUICK_AWAIT_MS)
    cx.admin_collection.insert_many([{"n": 1}, {"n": 2}, {"n": 3}])
    cx.next_change()
    second = cx.next_change()
    batch, index = observed.delivering_batch(cx.events(), second)
    require(
        index < len(batch.documents) - 1,
        f"the three inserts did not arrive in one batch (batch of {len(batch.documents)}, change at {index + 1})",
    )
    expect_token(
        cx.resume_token(),
        second["_id"],
        f"after document {index + 1} of a {batch.command_name} batch of {len(batch.documents)} "
        "(the _id of that document)",
    )


def _cannot_run_on_empty_first_batch(cx: ProseContext) -> None:
    """Test 14 needs a non-empty first batch; the target answered the initial aggregate with an empty one.

    The README says the test cannot be run where the initial aggregate always returns an empty firstBatch (a
    sharded cluster, whose aggregate only opens the shards' cursors). A target that does the same is such a
    place: skipped, with the reason. Unless the driver asked for it: an aggregate sent with ``batchSize: 0``
    (which the check does not ask for) empties the batch on any server, and is not the target's doing.
    """
    aggregates = observed.started(cx.events(), "aggregate")
    cursor = (aggregates[0].command or {}).get("cursor") if aggregates else None
    require(
        not (isinstance(cursor, dict) and cursor.get("batchSize") == 0),
        f"the driver sent the initial aggregate with cursor {cursor}, which asks for an empty first batch; "
        f"commands sent: {cx.command_list()}",
    )
    raise TestSkipped(
        "the target answered the initial aggregate with an empty firstBatch although changes lay after the "
        f"start point (the aggregate asked for cursor {cursor}), as a sharded cluster always does; the README "
        "says test 14 cannot run there"
    )


def _unread_first_batch(start_option: str | None, situation: str) -> Callable[[ProseContext], None]:
    """Test 14 for one way of starting: open the stream so the initial aggregate returns changes, read none.

    ``start_option`` is ``startAfter`` or ``resumeAfter`` (the token getResumeToken
    must give back), or None: then the stream starts at an operation time in
    the past, the one way to a non-empty first batch without naming a token,
    and getResumeToken must give nothing.
    """

    def check(cx: ProseContext) -> None:
        history = cx.history(3)
        start = history[0]["_id"] if start_option else None
        option = {start_option: start} if start_option else {"startAtOperationTime": history[0]["clusterTime"]}
        cx.open_client()
        cx.watch(maxAwaitTimeMS=QUICK_AWAIT_MS, **option)
        replies = observed.batches(cx.events())
        require(
            len(replies) == 1 and replies[0].command_name == "aggregate",
            f"only the initial aggregate should have run; commands sent: {cx.command_list()}",
        )
        if not replies[0].documents:
            _cannot_run_on_empty_first_batch(cx)
        expect_token(cx.resume_token(), start, f"with an unread, non-empty first batch of a stream started {situation}")

    return check


#: The initial aggregate of a sharded cluster only opens the shards' cursors (its first batch is always empty), so
#: 14 runs on no sharded cluster, nor behind a load balancer (which fronts mongoses); change streams need a replica
#: set otherwise.
NOT_SHARDED = ("replicaset",)
prose_test(
    14,
    "getResumeToken before iterating gives the startAfter token",
    variant="startAfter",
    min_server_version="4.1.1",
    topologies=NOT_SHARDED,
)(_unread_first_batch("startAfter", "with startAfter (the startAfter token)"))
prose_test(
    14, "getResumeToken before iterating gives the resumeAfter token", variant="resumeAfter", topologies=NOT_SHARDED
)(_unread_first_batch("resumeAfter", "with resumeAfter (the resumeAfter token)"))
prose_test(
    14,
    "getResumeToken before iterating is empty without startAfter or resumeAfter",
    variant="neither",
    topologies=NOT_SHARDED,
)(_unread_first_batch(None, "with neither startAfter nor resumeAfter (nothing)"))
