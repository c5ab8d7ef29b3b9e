"""Prose tests 3, 4, 6, 8, 17 and 18: when the driver resumes, and what it sends when it does.

Errors are injected with ``failCommand`` restricted to the check's own
client (by ``appName``). ``getMore`` failures use CursorNotFound (43), which
is resumable on every server version and leaves no server cursor to kill,
except in test 8, which needs the driver to send ``killCursors``. Test 6 runs
on the target presented as a three-member replica set (an emulation: one
server behind one wire proxy per member, :mod:`harness.shared.wire.replica_set`); the
per-member log of arrived commands says where the resume and the old cursor's
``killCursors`` went, and each member fails its own ``getMore``.
"""

from __future__ import annotations

from typing import Any

from bson import Int64

from harness.core.constants import CURSOR_NOT_FOUND, RESUMABLE_LABEL
from harness.core.errors import TestFailure
from harness.core.matching import show
from prose_tests import observed
from prose_tests.support import ProseContext, TestSkipped, expect, prose_test, require

#: Resumable by label on 4.4+ and by code before; not retryable as a read, not a state change.
RETRY_CHANGE_STREAM = 234


def _one_resume(cx: ProseContext, since: int) -> dict[str, Any]:
    """The single resume ``aggregate`` sent after position ``since``; fails unless exactly one was sent."""
    later = cx.events()[since:]
    require(
        bool(observed.failed(later, "getMore")), f"the injected getMore error never happened: {cx.command_list(later)}"
    )
    resumes = observed.started(later, "aggregate")
    expect(
        len(resumes) == 1,
        f"expected exactly one resume (one aggregate) after the getMore error, "
        f"saw {len(resumes)}: {cx.command_list(later)}",
    )
    return resumes[0].command or {}


def _next_change_later(cx: ProseContext) -> tuple[dict[str, Any] | None, TestFailure | None]:
    """Iterate now, judge later: what the resume sent explains a lost change better than its absence."""
    try:
        return cx.next_change(), None
    except TestFailure as exc:
        return None, exc


def _same_change(change: dict[str, Any] | None, problem: TestFailure | None, n: int) -> None:
    if problem is not None:
        raise problem
    document = (change or {}).get("fullDocument") or {}
    expect(document.get("n") == n, f"expected the change inserting n={n} after the resume, got {show(change)}")


@prose_test(3, "a resumable getMore error makes one resume with the original pipeline and options")
def resumes_once_with_original_command(cx: ProseContext) -> None:
    cx.open_client()
    cx.watch(
        pipeline=[{"$match": {"operationType": "insert"}}], fullDocument="updateLookup", batchSize=5, maxAwaitTimeMS=200
    )
    cx.admin_collection.insert_one({"n": 1})
    cx.next_change()
    token = cx.resume_token()
    expect(
        token is not None,
        "no resume token was cached after the first change (prose test 1's rule; the resume could not be judged)",
    )
    initial = observed.started(cx.events(), "aggregate")[0].command or {}
    mark = len(cx.events())
    cx.fail_commands(["getMore"], errorCode=CURSOR_NOT_FOUND)
    cx.admin_collection.insert_one({"n": 2})
    change, problem = _next_change_later(cx)
    resumed = _one_resume(cx, mark)
    stage = observed.change_stream_stage(resumed)
    expect(
        stage.get("resumeAfter") == token,
        f"the resume's $changeStream should carry resumeAfter = the cached token {show(token)}; sent {show(stage)}",
    )
    expect(
        "startAfter" not in stage and "startAtOperationTime" not in stage,
        f"the resume's $changeStream should name only resumeAfter; sent {show(stage)}",
    )
    expect(
        observed.without_start_options(resumed) == observed.without_start_options(initial),
        "the resume aggregate should repeat the initial pipeline and options, changing only the resume token:"
        f"\n  initial: {show(observed.without_start_options(initial), 600)}"
        f"\n  resume:  {show(observed.without_start_options(resumed), 600)}",
    )
    _same_change(change, problem, 2)


@prose_test(4, "an error from the aggregate command is never resumed")
def no_resume_on_aggregate_error(cx: ProseContext) -> None:
    cx.open_client(retryReads=False)  # a retried read is not a resume; keep them apart
    cx.fail_commands(["aggregate"], errorCode=RETRY_CHANGE_STREAM, errorLabels=[RESUMABLE_LABEL])
    _, error = cx.attempt("createChangeStream", "collection")
    if error is None:  # a driver may send the aggregate lazily, at the first iteration
        _, error = cx.attempt("iterateOnce", "stream")
    aggregates = observed.started(cx.events(), "aggregate")
    expect(
        error is not None,
        "the aggregate failed with a resumable-looking error, yet no error reached the "
        f"application; commands sent: {cx.command_list()}",
    )
    expect(
        len(aggregates) == 1,
        f"expected the failed aggregate to be sent once and not resumed, saw "
        f"{len(aggregates)} aggregate commands: {cx.command_list()}",
    )
    expect(
        error is not None and error.code == RETRY_CHANGE_STREAM,
        f"expected the injected error (code {RETRY_CHANGE_STREAM}), got {error.describe() if error else None}",
    )


@prose_test(4, "a network error on the aggregate command is never resumed", variant="network-error")
def no_resume_on_aggregate_network_error(cx: ProseContext) -> None:
    """The other resumable kind of error: the aggregate's connection is closed, retryable reads off."""
    cx.open_client(retryReads=False)
    cx.fail_commands(["aggregate"], closeConnection=True)
    _, error = cx.attempt("createChangeStream", "collection")
    if error is None:  # a driver may send the aggregate lazily, at the first iteration
        _, error = cx.attempt("iterateOnce", "stream")
    aggregates = observed.started(cx.events(), "aggregate")
    expect(
        error is not None,
        "the aggregate's connection was closed, yet no error reached the application; "
        f"commands sent: {cx.command_list()}",
    )
    expect(
        len(aggregates) == 1,
        f"expected the failed aggregate to be sent once and not resumed, saw "
        f"{len(aggregates)} aggregate commands: {cx.command_list()}",
    )
    expect(
        error is not None and error.is_client_error,
        f"expected the network error (a client-side error), got {error.describe() if error else None}",
    )


#: A state-change error ("node is recovering" for SDAM): the driver must mark the member Unknown. Resumable.
INTERRUPTED_DUE_TO_REPL_STATE_CHANGE = 11602
SECONDARY = {"readPreference": {"mode": "secondary"}}


def _member_of_stream(cx: ProseContext, since: int) -> int:
    """The emulated member the stream's aggregate arrived on; it must be a secondary (read preference secondary)."""
    rs = cx.replica_set
    arrived = rs.arrivals("aggregate", since)
    require(
        len(arrived) == 1,
        f"expected the stream's one aggregate in the emulated set's log, saw {[a.describe() for a in arrived]}",
    )
    member = arrived[0].member
    expect(
        rs.role_of(member) == "secondary",
        f"the stream was created with read preference secondary, yet its aggregate went to emulated member "
        f"{member} ({rs.role_of(member)})",
    )
    return member


def _resume_on_emulated_set(cx: ProseContext, *, member_down: bool) -> None:
    """Prose 6 on the emulated set: the serving secondary's getMore fails; where the resume goes is logged.

    ``member_down``: that member also turns into a recovering one (its hello says neither primary nor
    secondary) and the error is a state change (InterruptedDueToReplStateChange), so the driver must mark
    it Unknown: the only member that fits the original read preference is then the other secondary.
    """
    rs = cx.replica_set
    cx.open_client(collection_options=SECONDARY, serverSelectionTimeoutMS=5000)
    start = rs.mark()
    cx.watch(maxAwaitTimeMS=200)
    serving = _member_of_stream(cx, start)
    cx.admin_collection.insert_one({"n": 1})
    cx.next_change()
    mark, log_mark = len(cx.events()), rs.mark()
    code = RETRY_CHANGE_STREAM
    if member_down:
        rs.set_role(serving, "recovering")
        code = INTERRUPTED_DUE_TO_REPL_STATE_CHANGE
    # After cursor checkout: the server cursor stays open, so the driver has a cursor to kill.
    cx.member_fail_point(
        serving,
        {"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": {"times": 1}, "data": {"errorCode": code}},
    )
    cx.admin_collection.insert_one({"n": 2})
    change, problem = _next_change_later(cx)
    _one_resume(cx, mark)
    arrived = rs.arrivals(since=log_mark)
    trace = f"commands by emulated member: {[a.describe() for a in arrived]}"
    resumes = [(at, a) for at, a in enumerate(arrived) if a.name == "aggregate"]
    require(len(resumes) == 1, f"the driver's one resume aggregate is not in the emulated set's log; {trace}")
    resumed_at, resume = resumes[0]
    # Only the resume's aggregate is judged (prose 6: server selection before the resume). The getMores before
    # it are the old cursor's: the one that met the fail point arrived on the serving member (the fail point is
    # armed there alone). The getMores after it read the new cursor, on whichever member the resume selected.
    failed_get_mores = [a for a in arrived[:resumed_at] if a.name == "getMore" and a.member == serving]
    require(
        bool(failed_get_mores),
        f"no getMore reached the serving member {serving} before the resume, so the fail point armed there never "
        f"fired; {trace}",
    )
    old_cursor = failed_get_mores[-1].cursor_ids
    landed, role = resume.member, rs.role_of(resume.member)
    expect(
        role == "secondary",
        f"the resume aggregate went to emulated member {landed}, a {role}: server selection before a resume "
        f"must use the stream's original read preference (secondary)"
        f"{' and skip the member now down' if member_down else ''}; {trace}",
    )
    _kill_cursors_on_own_member(cx, arrived, serving, old_cursor, trace)
    _same_change(change, problem, 2)


def _kill_cursors_on_own_member(
    cx: ProseContext, arrived: list[Any], serving: int, old_cursor: tuple[int, ...], trace: str
) -> None:
    """CS-KILL-RESUME: a killCursors for the old cursor goes to the member that served it, never another."""
    kills = [a for a in arrived if a.name == "killCursors"]
    wrong = [a for a in kills if a.member != serving]
    expect(
        not wrong,
        f"the old cursor {list(old_cursor)} was served by emulated member {serving}, yet killCursors "
        f"arrived on member(s) {sorted({a.member for a in wrong})}; {trace}",
    )
    judged = [a for a in kills if set(old_cursor) <= set(a.cursor_ids)]
    cx.details["kill_cursors_member"] = (
        f"killCursors for the old cursor arrived on its own member ({serving})"
        if judged
        else "the driver sent no killCursors for the old cursor (a SHOULD): where a kill goes was not judged"
    )


@prose_test(6, "server selection before a resume uses the initial read preference", replica_set=True)
def resume_selects_with_initial_read_preference(cx: ProseContext) -> None:
    _resume_on_emulated_set(cx, member_down=False)


@prose_test(
    6,
    "a resume selects a member that still fits the read preference when the original one is down",
    variant="member-down",
    replica_set=True,
)
def resume_skips_member_down(cx: ProseContext) -> None:
    _resume_on_emulated_set(cx, member_down=True)


def _failure_code(failure: Any) -> Any:
    """The server code of a command-failed event's failure document (None if it has none)."""
    return failure.get("code") if isinstance(failure, dict) else None


def _kill_cursors_always_fail(cx: ProseContext) -> None:
    """Every killCursors this check's client sends fails, however many and whenever it sends them.

    Armed in the wire proxy, so the target's own fail point stays free for the getMore error.
    """
    cx.proxy_fail_point(
        {
            "configureFailPoint": "failCommand",
            "mode": "alwaysOn",
            "data": {
                "failCommands": ["killCursors"],
                "appName": cx.app_name,
                "errorCode": RETRY_CHANGE_STREAM,
                "errorLabels": [RESUMABLE_LABEL],
            },
        }
    )


def _still_delivers(cx: ProseContext, change: dict[str, Any] | None, problem: TestFailure | None) -> None:
    """The change written across the resume arrives, and so does the next one (no error held back for later)."""
    _same_change(change, problem, 2)
    cx.admin_collection.insert_one({"n": 3})
    _same_change(*_next_change_later(cx), 3)
    cx.proxy_fail_point({"configureFailPoint": "failCommand", "mode": "off"})  # closing the client kills cursors


@prose_test(8, "an error from killCursors during a resume is not raised to the application", shaping=True)
def kill_cursors_error_suppressed(cx: ProseContext) -> None:
    cx.open_client()
    cx.watch(maxAwaitTimeMS=200)
    cx.admin_collection.insert_one({"n": 1})
    cx.next_change()
    mark = len(cx.events())
    # The getMore fails after the server checked its cursor out, which leaves the cursor open,
    # so a driver has a cursor to kill; every killCursors fails, before or after the new aggregate.
    cx.fail_point(
        {
            "configureFailPoint": "failGetMoreAfterCursorCheckout",
            "mode": {"times": 1},
            "data": {"errorCode": RETRY_CHANGE_STREAM, "errorLabels": [RESUMABLE_LABEL]},
        }
    )
    _kill_cursors_always_fail(cx)
    cx.admin_collection.insert_one({"n": 2})
    change, problem = _next_change_later(cx)
    later = cx.events()[mark:]
    require(
        bool(observed.failed(later, "getMore")), f"the injected getMore error never happened: {cx.command_list(later)}"
    )
    if not observed.started(later, "killCursors"):
        raise TestSkipped(
            "the driver sent no killCursors while resuming (the spec says SHOULD), so there was "
            f"no killCursors error to suppress; commands sent: {cx.command_list(later)}"
        )
    require(
        len(observed.failed(later, "killCursors")) == len(observed.started(later, "killCursors")),
        f"not every killCursors failed: {cx.command_list(later)}",
    )
    _still_delivers(cx, change, problem)


@prose_test(
    8, "a killCursors error is not raised when the server cursor is already gone", variant="cursor-gone", shaping=True
)
def kill_cursors_error_suppressed_cursor_gone(cx: ProseContext) -> None:
    cx.open_client()
    cx.watch(maxAwaitTimeMS=200)
    cx.admin_collection.insert_one({"n": 1})
    cx.next_change()
    cursor_id = observed.batches(cx.events())[-1].cursor_id
    require(bool(cursor_id), "the stream's cursor id is unknown")
    mark = len(cx.events())
    # The server cursor is killed behind the driver's back: its next getMore fails with CursorNotFound.
    cx.admin_collection.database.command({"killCursors": cx.collection_name, "cursors": [Int64(cursor_id)]})
    _kill_cursors_always_fail(cx)
    cx.admin_collection.insert_one({"n": 2})
    change, problem = _next_change_later(cx)
    later = cx.events()[mark:]
    require(
        any(_failure_code(e.failure) == CURSOR_NOT_FOUND for e in observed.failed(later, "getMore")),
        f"the getMore on the killed cursor did not fail with CursorNotFound: {cx.command_list(later)}",
    )
    _still_delivers(cx, change, problem)


def _start_after_history(cx: ProseContext) -> Any:
    token = cx.history(1)[0]["_id"]
    cx.open_client()
    cx.watch(startAfter=token, maxAwaitTimeMS=200)
    return token


@prose_test(17, "resuming before any result keeps startAfter", min_server_version="4.1.1")
def resume_before_results_uses_start_after(cx: ProseContext) -> None:
    _start_after_history(cx)
    token = cx.resume_token()
    mark = len(cx.events())
    cx.fail_commands(["getMore"], errorCode=CURSOR_NOT_FOUND)
    change = cx.op("iterateOnce", "stream")
    require(change is None, f"the stream returned a change although none was written: {show(change)}")
    stage = observed.change_stream_stage(_one_resume(cx, mark))
    # Neither of the other start points goes with it (CS-RESUME-STARTAFTER-NORESUMEAFTER, -NOOPTIME).
    expect(
        stage.get("startAfter") == token and "resumeAfter" not in stage and "startAtOperationTime" not in stage,
        "a stream started with startAfter that has returned nothing should resume with startAfter = the cached "
        f"token {show(token)}, and neither resumeAfter nor startAtOperationTime; sent $changeStream {show(stage)}",
    )


@prose_test(18, "resuming after a result switches to resumeAfter", min_server_version="4.1.1")
def resume_after_results_uses_resume_after(cx: ProseContext) -> None:
    _start_after_history(cx)
    cx.admin_collection.insert_one({"n": 1})
    cx.next_change()
    token = cx.resume_token()
    mark = len(cx.events())
    cx.fail_commands(["getMore"], errorCode=CURSOR_NOT_FOUND)
    cx.admin_collection.insert_one({"n": 2})
    change, problem = _next_change_later(cx)
    stage = observed.change_stream_stage(_one_resume(cx, mark))
    expect(
        stage.get("resumeAfter") == token and "startAfter" not in stage,
        "a stream started with startAfter that has returned a change should resume with resumeAfter = the "
        f"cached token {show(token)} and no startAfter; sent $changeStream {show(stage)}",
    )
    _same_change(change, problem, 2)
