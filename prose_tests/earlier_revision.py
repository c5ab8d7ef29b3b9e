"""Prose tests 9 and 12 of an earlier revision of the README: servers without postBatchResumeToken.

The live README lists 9 and 12 as "Removed": they applied to servers before
4.0.7, which no longer exist to test against. The spec still requires drivers
to handle such replies, so these checks run them against a modern target
whose change-stream replies the wire proxy strips of ``postBatchResumeToken``
(reply shaping, docs/wire-proxy.md). That emulates an older server's replies;
it is not an older server. The checks keep the earlier list's numbers and say
where they come from: the README at commit :data:`REVISION` of
mongodb/specifications (``source/change-streams/tests/README.rst``), the last
that holds them. Its text is not copied here; the rules are paraphrased:

9.  A stream that has received no result and no ``postBatchResumeToken`` resumes
    with ``startAtOperationTime``: the ``operationTime`` of its initial
    ``aggregate`` (or the one the application gave), and neither ``resumeAfter``
    nor ``startAfter``. Here also: the changes written around the resume all
    arrive, none twice.
12. Without ``postBatchResumeToken``, once a batch is empty or fully iterated,
    ``getResumeToken`` gives the ``_id`` of the last document returned, else
    ``resumeAfter`` (or ``startAfter``) from the options, else nothing.
"""

from __future__ import annotations

from typing import Any

from bson import Timestamp

from harness.core.constants import CURSOR_NOT_FOUND
from harness.core.errors import TestFailure
from harness.core.matching import show
from prose_tests import observed
from prose_tests.resume_tokens import QUICK_AWAIT_MS
from prose_tests.resuming import _one_resume
from prose_tests.support import ProseContext, expect, expect_token, prose_test, require

#: The last commit of mongodb/specifications whose prose list numbers these tests (before "Removed").
REVISION = "51ca03b07d0c6681951d82043aa5b49869a66e87"
#: The reply-shaping profile of a server before 4.0.7.
NO_PBRT = "pre-4.0.7-cursor-replies"


def _initial_aggregate_reply(cx: ProseContext) -> dict[str, Any]:
    replies = [e.reply for e in cx.events() if e.kind == observed.SUCCEEDED and e.command_name == "aggregate"]
    require(bool(replies) and isinstance(replies[0], dict), f"no successful aggregate reply: {cx.command_list()}")
    reply = replies[0]
    cursor = reply.get("cursor") or {}
    require(not cursor.get("firstBatch"), "the initial aggregate returned changes; the stream must start with none")
    require(
        "postBatchResumeToken" not in cursor,
        "the shaped aggregate reply still carries a postBatchResumeToken (reply shaping did not apply)",
    )
    return reply


def _changes_around_a_resume(cx: ProseContext, start_time: Any, where_from: str) -> None:
    """One change written before the resume and one after the getMore error, then one after: each once."""
    require(cx.op("iterateOnce", "stream") is None, "the stream returned a change although none was written")
    token = cx.resume_token()
    expect(
        token is None,
        f"getResumeToken should be empty: the stream has returned nothing and received no "
        f"postBatchResumeToken; got {show(token)}",
    )
    cx.admin_collection.insert_one({"n": 1})  # after the stream's start, before the resume; not yet seen
    mark = len(cx.events())
    cx.fail_commands(["getMore"], errorCode=CURSOR_NOT_FOUND)
    cx.admin_collection.insert_one({"n": 2})
    seen: list[Any] = []
    problem: TestFailure | None = None
    try:
        for _ in range(2):
            seen.append(((cx.next_change() or {}).get("fullDocument") or {}).get("n"))
    except TestFailure as exc:
        problem = exc
    stage = observed.change_stream_stage(_one_resume(cx, mark))
    expect(
        stage.get("startAtOperationTime") == start_time and "resumeAfter" not in stage and "startAfter" not in stage,
        f"a stream with no result and no postBatchResumeToken should resume with startAtOperationTime = "
        f"{where_from} {show(start_time)}, and neither resumeAfter nor startAfter; sent $changeStream {show(stage)}",
    )
    if problem is not None:
        raise TestFailure(
            f"after the resume, the changes written around it did not all arrive (got n = {seen}): {problem}"
        )
    cx.admin_collection.insert_one({"n": 3})
    seen.append(((cx.next_change() or {}).get("fullDocument") or {}).get("n"))
    extra = cx.op("iterateOnce", "stream")
    expect(
        seen == [1, 2, 3] and extra is None,
        f"expected the changes n = 1 (before the resume), 2 and 3 (after it), each once and in order; got n = "
        f"{seen}" + (f" and then {show(extra)}" if extra is not None else ""),
    )


@prose_test(
    9,
    "with no result and no postBatchResumeToken, a resume uses the aggregate's operationTime",
    variant="operation-time",
    shaping=True,
    revision=REVISION,
)
def resumes_at_aggregate_operation_time(cx: ProseContext) -> None:
    cx.open_client()
    cx.shape(NO_PBRT)
    cx.watch(maxAwaitTimeMS=QUICK_AWAIT_MS)
    operation_time = _initial_aggregate_reply(cx).get("operationTime")
    require(operation_time is not None, "the target's aggregate reply has no operationTime")
    _changes_around_a_resume(cx, operation_time, "the operationTime of the initial aggregate")


@prose_test(
    9,
    "with no result and no postBatchResumeToken, a resume uses the startAtOperationTime given",
    variant="start-at-operation-time",
    shaping=True,
    revision=REVISION,
)
def resumes_at_given_operation_time(cx: ProseContext) -> None:
    past = cx.history(1)[0]["clusterTime"]
    start = Timestamp(past.time, past.inc + 1)  # just after the last write, so the first batch is empty
    elsewhere = cx.admin_collection.database[cx.collection_name + "_elsewhere"]
    elsewhere.insert_many([{"n": 1}])
    elsewhere.insert_many([{"n": 2}])  # the clock moves on: the aggregate's operationTime differs from start
    cx.open_client()
    cx.shape(NO_PBRT)
    cx.watch(maxAwaitTimeMS=QUICK_AWAIT_MS, startAtOperationTime=start)
    operation_time = _initial_aggregate_reply(cx).get("operationTime")
    require(
        operation_time != start,
        "the aggregate's operationTime equals the start time given; the check could not tell the two apart",
    )
    _changes_around_a_resume(cx, start, "the startAtOperationTime the application gave")


@prose_test(
    12,
    "without postBatchResumeToken, getResumeToken gives the last returned change's _id",
    variant="last-id",
    shaping=True,
    revision=REVISION,
)
def token_is_last_id(cx: ProseContext) -> None:
    cx.open_client()
    cx.shape(NO_PBRT)
    cx.watch(maxAwaitTimeMS=QUICK_AWAIT_MS)
    cx.admin_collection.insert_many([{"n": 1}, {"n": 2}, {"n": 3}])
    changes = [cx.next_change() for _ in range(3)]
    last = changes[-1]
    batch, index = observed.delivering_batch(cx.events(), last)
    require(index == len(batch.documents) - 1, "the third change was not the last of its batch")
    require(not batch.has_post_batch_resume_token, "the reply carries a postBatchResumeToken (shaping did not apply)")
    expect_token(
        cx.resume_token(),
        last["_id"],
        "after iterating a batch to its end without postBatchResumeToken (the _id of the last change returned)",
    )
    require(cx.op("iterateOnce", "stream") is None, "a change arrived although none was written")
    expect_token(
        cx.resume_token(),
        last["_id"],
        "after a further empty batch without postBatchResumeToken (still the _id of the last change returned)",
    )


def _token_from_options(option: str) -> Any:
    def check(cx: ProseContext) -> None:
        token = cx.history(1)[0]["_id"]
        cx.open_client()
        cx.shape(NO_PBRT)
        cx.watch(maxAwaitTimeMS=QUICK_AWAIT_MS, **{option: token})
        _initial_aggregate_reply(cx)
        expect_token(
            cx.resume_token(), token, f"after an empty first batch without postBatchResumeToken (the {option} token)"
        )
        require(cx.op("iterateOnce", "stream") is None, "a change arrived although none was written")
        expect_token(
            cx.resume_token(),
            token,
            f"after a further empty batch without postBatchResumeToken (still the {option} token)",
        )

    return check


prose_test(
    12,
    "without postBatchResumeToken or results, getResumeToken gives resumeAfter",
    variant="resume-after",
    shaping=True,
    revision=REVISION,
)(_token_from_options("resumeAfter"))
prose_test(
    12,
    "without postBatchResumeToken or results, getResumeToken gives startAfter",
    variant="start-after",
    shaping=True,
    revision=REVISION,
    min_server_version="4.1.1",
)(_token_from_options("startAfter"))


@prose_test(
    12,
    "without postBatchResumeToken, results or start options, getResumeToken is empty",
    variant="empty",
    shaping=True,
    revision=REVISION,
)
def token_is_empty(cx: ProseContext) -> None:
    cx.open_client()
    cx.shape(NO_PBRT)
    cx.watch(maxAwaitTimeMS=QUICK_AWAIT_MS)
    _initial_aggregate_reply(cx)
    expect_token(cx.resume_token(), None, "after an empty first batch without postBatchResumeToken or start options")
    require(cx.op("iterateOnce", "stream") is None, "a change arrived although none was written")
    expect_token(cx.resume_token(), None, "after a further empty batch without postBatchResumeToken")
