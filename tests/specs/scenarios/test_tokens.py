"""The resume-token checks (rules of specs/coverage/resume-token-rules.yml) pass, and each fails for a broken
server or driver.

Two kinds of check. The scenarios of ``specs/scenarios/supplementary/tokens-*.yml`` run unchanged on every
driver; there a real token reaches the server only through the driver's own resume, since the unified format
cannot put a value saved during a test into an operation's arguments. A token a user hands to ``watch`` (an
event's, a batch's postBatchResumeToken, an invalidate event's, to ``resumeAfter`` and to ``startAfter``) is
given by the token checks instead (prose_tests/token_checks.py, ``--suite checks``): code-defined checks that
drive the driver under test through the driver port with tokens the harness's own client took from the server
moments before; each is named by the rule ids it checks.

The breakages (:data:`BROKEN_TOKENS`, listed in ``specs/coverage/breakages/tokens.yml``) are SecantusDB or
pymongo with one function patched in this process: a token with a field too many, a resume one change late or
one early for one kind of token or one scope, an invalidate token accepted where it must be refused or refused
where it must be accepted, an invalidate forgotten, a cursor left open after it, a stream that resumes past it
(through either of pymongo's APIs: :data:`BROKEN_TOKENS_ASYNC` runs with the asynchronous one as the driver under
test). Each must make at least one check of each rule it names fail, and none error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pymongo import change_stream_shared
from pymongo.asynchronous import change_stream as async_change_stream
from pymongo.synchronous import change_stream as sync_change_stream
from secantus import changestreams
from secantus import commands as secantus_commands

from prose_tests.token_checks import TOKEN_CHECKS
from tests.specs.scenarios.test_supplementary import all_scenarios, rule_ids


@pytest.fixture(scope="module")
def async_run():
    """The embedded SecantusDB with pymongo's asynchronous API as the driver under test."""
    from harness.engine.run import HarnessRun, RunOptions

    with HarnessRun(RunOptions(target="embedded", expected="none", driver="pymongo-async")) as run:
        yield run


@pytest.mark.parametrize("name", sorted(TOKEN_CHECKS))
def test_each_token_check_passes_on_pymongo_and_secantusdb(embedded_run, name):
    _, check = TOKEN_CHECKS[name]
    verdict = embedded_run.verdict(check)
    assert verdict.outcome == "passed", verdict.message


@pytest.mark.parametrize("name", sorted(TOKEN_CHECKS))
def test_each_token_check_passes_on_pymongo_s_asynchronous_api(async_run, name):
    _, check = TOKEN_CHECKS[name]
    verdict = async_run.verdict(check)
    assert verdict.outcome == "passed", verdict.message


# -- the breakages ---------------------------------------------------------------------------------------
Patch = Callable[[pytest.MonkeyPatch], None]


def _parse_shifted(shift: Callable[[Any], int]) -> Patch:
    """A server that reads every resume token ``shift(token data)`` entries later (negative: earlier)."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.parse_resume_token

        def parse(token: Any) -> Any:
            data = original(token)
            data.seq += shift(data)
            return data

        mp.setattr(changestreams, "parse_resume_token", parse)

    return apply


def _is_event_token(data: Any) -> bool:
    return bool(data.document_key) and not data.from_invalidate


def _is_high_water_mark(data: Any) -> bool:
    return not data.document_key and not data.from_invalidate


def _aggregate_wrapped(wrap: Callable[[Any, tuple[Any, ...]], dict[str, Any]]) -> Patch:
    """A server whose change-stream aggregate is ``wrap(original, (doc, ctx, coll, pipeline, batch_size))``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = secantus_commands._aggregate_change_stream
        mp.setattr(secantus_commands, "_aggregate_change_stream", lambda *args: wrap(original, args))

    return apply


def _inclusive_when(applies: Callable[[Any, dict[str, Any]], bool]) -> Patch:
    """A server that, for the aggregates ``applies(coll, stage)`` picks, resumes AT the token's event."""

    def wrap(original: Any, args: tuple[Any, ...]) -> dict[str, Any]:
        _doc, _ctx, coll, pipeline, _batch_size = args
        if not applies(coll, pipeline[0].get("$changeStream", {})):
            return original(*args)
        parse = changestreams.parse_resume_token

        def earlier(token: Any) -> Any:
            data = parse(token)
            data.seq -= 1
            return data

        changestreams.parse_resume_token = earlier
        try:
            return original(*args)
        finally:
            changestreams.parse_resume_token = parse

    return _aggregate_wrapped(wrap)


def _refuses_invalidate_start_after(original: Any, args: tuple[Any, ...]) -> dict[str, Any]:
    stage = args[3][0].get("$changeStream", {})
    token = stage.get("startAfter")
    if isinstance(token, dict) and changestreams.parse_resume_token(token).from_invalidate:
        return {"ok": 0.0, "errmsg": "startAfter refused here", "code": 260, "codeName": "InvalidResumeToken"}
    return original(*args)


def _accepts_invalidate_resume_after(mp: pytest.MonkeyPatch) -> None:
    """A server that forgets which tokens came from an invalidate event, so resumeAfter takes them."""
    original = changestreams.parse_resume_token

    def parse(token: Any) -> Any:
        data = original(token)
        data.from_invalidate = False
        return data

    mp.setattr(changestreams, "parse_resume_token", parse)


def _invalidate_event_changed(change: Callable[[dict[str, Any]], None]) -> Patch:
    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.invalidate_event

        def invalidate_event(seq: int, oplog_entry: Any) -> dict[str, Any]:
            event = original(seq, oplog_entry)
            change(event)
            return event

        mp.setattr(changestreams, "invalidate_event", invalidate_event)

    return apply


def _token_with_type_bits(mp: pytest.MonkeyPatch) -> None:
    """Every token carries a second field beside _data (as 3.6-era tokens did)."""
    original = changestreams.make_resume_token
    mp.setattr(changestreams, "make_resume_token", lambda data: {**original(data), "_typeBits": b"\x00"})


def _no_invalidate_after(operation_type: str) -> Patch:
    """A server that does not end a collection stream after an ``operation_type`` event."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.project

        def project(seq: int, oplog_entry: Any, **options: Any) -> tuple[Any, bool]:
            event, invalidates = original(seq, oplog_entry, **options)
            if event is not None and event.get("operationType") == operation_type:
                return event, False
            return event, invalidates

        mp.setattr(changestreams, "project", project)

    return apply


def _cursor_open_after_invalidate(mp: pytest.MonkeyPatch) -> None:
    """The reply that delivers the invalidate keeps the cursor id, as if the stream went on."""
    original = secantus_commands._change_stream_cursor_doc

    def cursor_doc(entry: Any, cursor_id: int, *args: Any, **kwargs: Any) -> dict[str, Any]:
        cursor = original(entry, cursor_id, *args, **kwargs)
        batch = cursor.get("firstBatch", cursor.get("nextBatch", []))
        if cursor["id"] == 0 and any(event.get("operationType") == "invalidate" for event in batch):
            cursor["id"] = type(cursor["id"])(cursor_id)
        return cursor

    mp.setattr(secantus_commands, "_change_stream_cursor_doc", cursor_doc)


def _resumes_after_invalidate(mp: pytest.MonkeyPatch) -> None:
    """A pymongo that forgets an invalidated stream is closed, so its next iteration resumes it."""
    original = sync_change_stream.ChangeStream.try_next

    def try_next(self: Any) -> Any:
        self._closed = False
        return original(self)

    mp.setattr(sync_change_stream.ChangeStream, "try_next", try_next)


def _async_resumes_after_invalidate(mp: pytest.MonkeyPatch) -> None:
    """The same mistake in pymongo's asynchronous API only."""
    original = async_change_stream.AsyncChangeStream.try_next

    async def try_next(self: Any) -> Any:
        self._closed = False
        return await original(self)

    mp.setattr(async_change_stream.AsyncChangeStream, "try_next", try_next)


def _stream_options(change: Callable[[dict[str, Any]], dict[str, Any]]) -> Patch:
    def apply(mp: pytest.MonkeyPatch) -> None:
        stream = change_stream_shared._AgnosticChangeStream
        original = stream._change_stream_options
        mp.setattr(stream, "_change_stream_options", lambda self: change(dict(original(self))))

    return apply


def _start_after_as_resume_after(options: dict[str, Any]) -> dict[str, Any]:
    if "startAfter" in options:
        options["resumeAfter"] = options.pop("startAfter")
    return options


#: breakage -> (the rules whose checks must catch it, the patch)
BROKEN_TOKENS: dict[str, tuple[str, Patch]] = {
    "token with a second field": ("SRV-RTOKEN-ID-DOC", _token_with_type_bits),
    "invalidate token with a second field": (
        "SRV-RTOKEN-ID-DOC",
        _invalidate_event_changed(lambda event: event["_id"].update(_typeBits=b"\x00")),
    ),
    "resume from an event token skips a change": (
        "SRV-RTOKEN-RESUMEAFTER, SRV-RTOKEN-STARTAFTER",
        _parse_shifted(lambda data: 1 if _is_event_token(data) else 0),
    ),
    "resume from a postBatchResumeToken skips a change": (
        "SRV-RTOKEN-RESUMEAFTER, SRV-RTOKEN-STARTAFTER",
        _parse_shifted(lambda data: 1 if _is_high_water_mark(data) else 0),
    ),
    "database resume repeats the token's event": (
        "SRV-RTOKEN-RESUMEAFTER",
        _inclusive_when(lambda coll, stage: not isinstance(coll, str) and "resumeAfter" in stage),
    ),
    "startAfter repeats the token's event": (
        "SRV-RTOKEN-STARTAFTER, SRV-SPEC-STARTAFTER",
        _inclusive_when(lambda coll, stage: "startAfter" in stage),
    ),
    "resumeAfter accepts an invalidate token": ("SRV-RTOKEN-INVALIDATE-RESUMEAFTER", _accepts_invalidate_resume_after),
    "startAfter refuses an invalidate token": (
        "SRV-RTOKEN-STARTAFTER-INVALIDATE, SRV-SPEC-STARTAFTER",
        _aggregate_wrapped(_refuses_invalidate_start_after),
    ),
    "startAfter an invalidate skips a change": (
        "SRV-RTOKEN-STARTAFTER-INVALIDATE",
        _parse_shifted(lambda data: 1 if data.from_invalidate else 0),
    ),
    "invalidate event with an ns": (
        "SRV-RTOKEN-INVALIDATE-CAUSES",
        _invalidate_event_changed(lambda event: event.update(ns={"db": "x", "coll": "y"})),
    ),
    "no invalidate after a rename": ("SRV-RTOKEN-INVALIDATE-CAUSES", _no_invalidate_after("rename")),
    "no invalidate after a drop": ("SRV-RTOKEN-INVALIDATE-CAUSES", _no_invalidate_after("drop")),
    "cursor left open after the invalidate": ("SRV-RTOKEN-INVALIDATE-CLOSES", _cursor_open_after_invalidate),
    "stream resumed after the invalidate": ("CS-RTOKEN-INVALIDATE-CLOSED", _resumes_after_invalidate),
    "resumeAfter not sent": (
        "CS-RTOKEN-START-OPTIONS",
        _stream_options(lambda options: {k: v for k, v in options.items() if k != "resumeAfter"}),
    ),
    "startAfter sent as resumeAfter": ("CS-RTOKEN-START-OPTIONS", _stream_options(_start_after_as_resume_after)),
}


def _checks_of(rule: str) -> list[Any]:
    """The supplementary scenarios and the driver-port checks that check ``rule``."""
    scenarios = [test for test in all_scenarios() if rule in rule_ids(test)]
    checks = [check for rules, check in TOKEN_CHECKS.values() if rule in rules.split(", ")]
    assert scenarios or checks, f"nothing checks {rule}"
    return scenarios + checks


def assert_caught(run: Any, rules: str, breakage: str) -> None:
    """Each of ``rules`` has a check that fails under ``breakage``, and none of its checks errors."""
    for rule in rules.split(", "):
        outcomes = {getattr(c, "description", None) or c.name: run.verdict(c) for c in _checks_of(rule)}
        assert any(v.outcome == "failed" for v in outcomes.values()), f"{breakage}: every {rule} check still passed"
        errors = {name: v.message for name, v in outcomes.items() if v.outcome not in ("passed", "failed")}
        assert not errors, errors


@pytest.mark.parametrize("breakage", sorted(BROKEN_TOKENS))
def test_a_broken_server_or_driver_fails_the_token_checks(embedded_run, monkeypatch, breakage):
    rules, patch = BROKEN_TOKENS[breakage]
    patch(monkeypatch)
    assert_caught(embedded_run, rules, breakage)


#: breakages of pymongo's asynchronous API alone, run with it as the driver under test
BROKEN_TOKENS_ASYNC: dict[str, tuple[str, Patch]] = {
    "asynchronous stream resumed after the invalidate": (
        "CS-RTOKEN-INVALIDATE-CLOSED",
        _async_resumes_after_invalidate,
    ),
}


@pytest.mark.parametrize("breakage", sorted(BROKEN_TOKENS_ASYNC))
def test_a_broken_asynchronous_api_fails_the_token_checks(async_run, monkeypatch, breakage):
    rules, patch = BROKEN_TOKENS_ASYNC[breakage]
    patch(monkeypatch)
    assert_caught(async_run, rules, breakage)


def test_the_synchronous_breakage_leaves_the_asynchronous_api_passing(async_run, monkeypatch):
    """ "stream resumed after the invalidate" changes one API of two: the other still passes the same check."""
    _, patch = BROKEN_TOKENS["stream resumed after the invalidate"]
    patch(monkeypatch)
    for check in _checks_of("CS-RTOKEN-INVALIDATE-CLOSED"):
        verdict = async_run.verdict(check)
        assert verdict.outcome == "passed", verdict.message


def test_every_token_scenario_passes_unbroken(embedded_run):
    """The tokens-*.yml scenarios pass on pymongo and SecantusDB (the control for every breakage above)."""
    tests = [test for test in all_scenarios() if test.file_stem.startswith("tokens-")]
    assert len(tests) == 9
    verdicts = {test.description: embedded_run.verdict(test) for test in tests}
    assert {name: v.message for name, v in verdicts.items() if v.outcome != "passed"} == {}
