"""Driver-port checks of the resume-token rules: tokens of each kind given to each start option.

The unified format cannot put a token saved during a test into an argument, so these checks are written in
code, through the driver port (as the prose tests are: :class:`prose_tests.support.ProseContext`), with tokens
the harness's own client took from the server moments before: an event's token, an empty batch's
postBatchResumeToken, an invalidate event's token, each given to ``resumeAfter`` and to ``startAfter``
(specs/coverage/resume-token-rules.yml). Each check's name leads with the rule ids it checks, so
``harness coverage`` and the records see them; every driver runs them (``--suite checks``, part of
``--suite all``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from bson.timestamp import Timestamp

from harness.core.matching import show
from harness.core.model import Requirement
from harness.engine.run import CodeDefinedTest
from prose_tests import observed
from prose_tests.raw_stream import RawStream, changes_after
from prose_tests.server_checks import CHECKS_FORMAT
from prose_tests.support import DATABASE, ProseContext, ProseTest, expect, preflight, require

#: The file name of the driver-port checks in test ids (``check/token-kinds::...``).
CHECK_FILE = "token-kinds"
#: A short server wait: every check writes its changes before it iterates.
QUICK_AWAIT_MS = 50


# -- the driver-port checks ------------------------------------------------------------------------------
def _stage_sent(cx: ProseContext) -> dict[str, Any]:
    """The $changeStream stage of the stream's first aggregate, as the driver sent it."""
    aggregates = [
        e.command for e in cx.events() if e.kind == observed.STARTED and e.command_name == "aggregate" and e.command
    ]
    require(bool(aggregates), f"the driver sent no aggregate: {cx.command_list()}")
    return dict(aggregates[0]["pipeline"][0]["$changeStream"])


def _expect_stage(cx: ProseContext, option: str, token: Any) -> None:
    stage = _stage_sent(cx)
    expect(
        stage == {option: token},
        f"the $changeStream stage should be exactly {show({option: token})}, sent {show(stage)}",
    )


def _expect_changes(cx: ProseContext, wanted: list[dict[str, Any]], situation: str) -> None:
    """The stream delivers exactly ``wanted``, in order, each event whole (as the harness's own stream saw it)."""
    for number, event in enumerate(wanted, start=1):
        got = cx.next_change()
        expect(
            got == event,
            f"{situation}: change {number} of {len(wanted)} should be {show(event)}, got {show(got)}",
        )


def _post_batch_resume_token(cx: ProseContext) -> Any:
    """A postBatchResumeToken of an empty first batch, from the harness's own aggregate (a high-water mark)."""
    with RawStream(cx.run.target.admin[DATABASE], cx.collection_name) as stream:
        cursor = stream.last_cursor
    require(not cursor.get("firstBatch"), "the harness's fresh aggregate returned changes")
    require("postBatchResumeToken" in cursor, "the target's aggregate reply has no postBatchResumeToken")
    return cursor["postBatchResumeToken"]


def _event_token(option: str) -> Callable[[ProseContext], None]:
    """``option`` set to the first of three events' token: the stream starts with the second, then the third."""

    def body(cx: ProseContext) -> None:
        cx.open_client()
        history = cx.history(3)
        token = history[0]["_id"]
        cx.watch(**{option: token}, maxAwaitTimeMS=QUICK_AWAIT_MS)
        _expect_stage(cx, option, token)
        _expect_changes(cx, history[1:], f"a stream opened with {option} = the first event's token")

    return body


def _batch_token(option: str) -> Callable[[ProseContext], None]:
    """``option`` set to an empty batch's postBatchResumeToken: the stream starts with the first change after it."""

    def body(cx: ProseContext) -> None:
        cx.open_client()
        token = _post_batch_resume_token(cx)
        history = cx.history(2)
        cx.watch(**{option: token}, maxAwaitTimeMS=QUICK_AWAIT_MS)
        _expect_stage(cx, option, token)
        _expect_changes(cx, history, f"a stream opened with {option} = a postBatchResumeToken taken before the writes")

    return body


def _invalidate_token(cx: ProseContext) -> Any:
    """Rename the check's collection away (the harness's own stream sees rename, then invalidate), write two
    documents to the old name, and return the invalidate event's token."""
    collection = cx.admin_collection

    def rename_then_write() -> None:
        collection.rename(cx.collection_name + "_renamed", dropTarget=True)
        collection.insert_many([{"_id": 1, "sample": "testAfterRename"}, {"_id": 2, "sample": "later"}])

    seen = changes_after(
        collection.database,
        cx.collection_name,
        rename_then_write,
        3,
        until=lambda change: change.get("operationType") == "invalidate",
    )
    kinds = [change["operationType"] for change in seen]
    require(kinds == ["rename", "invalidate"], f"the harness's own stream saw {kinds}, not rename then invalidate")
    return seen[-1]["_id"]


def _expect_insert(cx: ProseContext, event: Any, document: dict[str, Any], situation: str) -> None:
    """``event`` is the insert of ``document`` into the check's collection, whole: these fields and no other."""
    fields = {"_id", "operationType", "clusterTime", "wallTime", "fullDocument", "ns", "documentKey"}
    token = event.get("_id") if isinstance(event, dict) else None
    ns = event.get("ns") if isinstance(event, dict) else None
    problems = [
        what
        for what, fine in (
            ("its fields", isinstance(event, dict) and set(event) == fields),
            ("operationType", isinstance(event, dict) and event.get("operationType") == "insert"),
            # tokens are opaque: a document whose fields are the server's (SRV-RTOKEN-ID-DOC judges their shape)
            ("_id (a token document)", isinstance(token, dict) and bool(token)),
            ("clusterTime", isinstance(event, dict) and isinstance(event.get("clusterTime"), Timestamp)),
            ("fullDocument", isinstance(event, dict) and event.get("fullDocument") == document),
            ("documentKey", isinstance(event, dict) and event.get("documentKey") == {"_id": document["_id"]}),
            ("ns", isinstance(ns, dict) and (ns.get("db"), ns.get("coll")) == (DATABASE, cx.collection_name)),
        )
        if not fine
    ]
    expect(
        not problems,
        f"{situation}: expected the insert of {show(document)}; {', '.join(problems)} differ in {show(event)}",
    )


def _start_after_invalidate(cx: ProseContext) -> None:
    cx.open_client()
    token = _invalidate_token(cx)
    cx.watch(startAfter=token, maxAwaitTimeMS=QUICK_AWAIT_MS)
    _expect_stage(cx, "startAfter", token)
    situation = "a stream opened with startAfter = the invalidate's token"
    _expect_insert(cx, cx.next_change(), {"_id": 1, "sample": "testAfterRename"}, situation)
    _expect_insert(cx, cx.next_change(), {"_id": 2, "sample": "later"}, situation)


def _resume_after_invalidate(cx: ProseContext) -> None:
    cx.open_client()
    token = _invalidate_token(cx)
    _, error = cx.attempt("createChangeStream", "collection", resumeAfter=token, maxAwaitTimeMS=QUICK_AWAIT_MS)
    if error is None:  # a driver that opens lazily meets the refusal at its first iteration
        _, error = cx.attempt("iterateOnce", "stream")
    _expect_stage(cx, "resumeAfter", token)
    expect(error is not None, "resumeAfter = an invalidate event's token was accepted; the server must refuse it")
    assert error is not None
    expect(error.code is not None, f"the refusal should be the server's error, got {error.describe()}")
    sent = [e.command_name for e in cx.events() if e.kind == observed.STARTED]
    expect("getMore" not in sent, f"no cursor should have been opened, but the driver sent {sent}")


class TokenCheckContext(ProseContext):
    """A prose-style context whose failures name the check, not a README prose test number."""

    def failure_message(self, failure: Any) -> str:
        return f"{CHECK_FILE}: {self.test.title}: {failure}"


def _check(title: str, rules: str, body: Callable[[ProseContext], None], variant: str) -> tuple[str, CodeDefinedTest]:
    """``(rules, the check)``, the check named ``"IDS: title"``: its rules are read from its name, as a scenario's."""
    name = f"{rules}: {title}"
    test = ProseTest(0, name, body, variant, Requirement(min_server_version="4.2", topologies=("replicaset",)))
    check = CodeDefinedTest(
        format=CHECKS_FORMAT,
        file=CHECK_FILE,
        name=name,
        open=partial(TokenCheckContext, test=test),
        preflight=partial(preflight, test),
    )
    return rules, check


#: title -> (the rule ids the check answers to, the check, named "IDS: title" as scenario descriptions are). Tokens
#: of each kind the server hands out, given to each option that takes one.
TOKEN_CHECKS: dict[str, tuple[str, CodeDefinedTest]] = {
    "resumeAfter with an event's token starts at the next event": _check(
        "resumeAfter with an event's token starts at the next event",
        "SRV-RTOKEN-RESUMEAFTER, SRV-RESUMEAFTER-EXCLUSIVE, CS-RTOKEN-START-OPTIONS",
        _event_token("resumeAfter"),
        "ra-event",
    ),
    "startAfter with an event's token starts at the next event": _check(
        "startAfter with an event's token starts at the next event",
        "SRV-RTOKEN-STARTAFTER, SRV-SPEC-STARTAFTER, CS-RTOKEN-START-OPTIONS",
        _event_token("startAfter"),
        "sa-event",
    ),
    "resumeAfter with a postBatchResumeToken starts at the first change after it": _check(
        "resumeAfter with a postBatchResumeToken starts at the first change after it",
        "SRV-RTOKEN-RESUMEAFTER, CS-RTOKEN-START-OPTIONS",
        _batch_token("resumeAfter"),
        "ra-batch",
    ),
    "startAfter with a postBatchResumeToken starts at the first change after it": _check(
        "startAfter with a postBatchResumeToken starts at the first change after it",
        "SRV-RTOKEN-STARTAFTER, CS-RTOKEN-START-OPTIONS",
        _batch_token("startAfter"),
        "sa-batch",
    ),
    "resumeAfter with an invalidate event's token is refused": _check(
        "resumeAfter with an invalidate event's token is refused",
        "SRV-RTOKEN-INVALIDATE-RESUMEAFTER, SRV-RESUMEAFTER-NO-INVALIDATE, CS-RTOKEN-START-OPTIONS",
        _resume_after_invalidate,
        "ra-invalidate",
    ),
    "startAfter with an invalidate event's token starts after the invalidate": _check(
        "startAfter with an invalidate event's token starts after the invalidate",
        "SRV-RTOKEN-STARTAFTER-INVALIDATE, SRV-STARTAFTER-INVALIDATE, SRV-SPEC-STARTAFTER, CS-RTOKEN-START-OPTIONS",
        _start_after_invalidate,
        "sa-invalidate",
    ),
}


def load_token_checks() -> list[CodeDefinedTest]:
    """The token checks, in table order."""
    return [check for _, check in TOKEN_CHECKS.values()]
