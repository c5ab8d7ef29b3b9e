"""The last driver-side MUSTs the coverage map left unchecked, each shown to fail for a broken pymongo.

- CS-CURSOR-TIMEOUTS (specs/scenarios/supplementary/timeouts.yml): a pymongo whose stream creation,
  iteration or resume runs outside the timeout the application set, or whose resume starts a fresh one.
- CS-KILL-RESUME (specs/scenarios/supplementary/resume-points.yml): a pymongo that leaves the old cursor
  open on resume, or kills it in another namespace.
- CS-RESUME-STARTAFTER-NOOPTIME (prose 17, strengthened): a pymongo that adds startAtOperationTime
  beside startAfter when it resumes a stream that has returned nothing.
- CS-OPT-EXCLUSIVE (specs/scenarios/supplementary/start-options.yml): pymongo 4.20 itself fails it,
  sending one start point of the two given; a pymongo that passes both on passes, and one that raises
  its own error fails.

Each broken driver is pymongo with one method patched for the length of one test (``monkeypatch``).
The timeout breakages run the patched method in a copy of the current context with pymongo's
client-side timeout cleared, the way a driver that forgot to carry its deadline would behave.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymongo
import pytest
from pymongo import _csot, change_stream_shared
from pymongo.cursor_shared import _CursorAddress
from pymongo.errors import InvalidOperation
from pymongo.synchronous import change_stream as sync_change_stream
from pymongo.synchronous import command_cursor as sync_command_cursor
from pymongo.synchronous.mongo_client import MongoClient

import prose_tests
from harness.formats.loaders import load_paths
from tests.paths import REPO

SUPPLEMENTARY = REPO / "specs" / "scenarios" / "supplementary"
MY_FILES = (SUPPLEMENTARY / "timeouts.yml", SUPPLEMENTARY / "resume-points.yml")
START_OPTIONS = REPO / "specs" / "scenarios" / "supplementary" / "start-options.yml"

ChangeStream = sync_change_stream.ChangeStream
AnyChangeStream = change_stream_shared._AgnosticChangeStream
Breakage = Callable[[pytest.MonkeyPatch], None]


def scenarios(*paths: Path) -> list[Any]:
    """Freshly loaded tests (a test may not reuse a loaded test another has run)."""
    return list(load_paths(list(paths)))


def scenario(paths: tuple[Path, ...], description_start: str) -> Any:
    (test,) = [t for t in scenarios(*paths) if t.description.startswith(description_start)]
    return test


# -- timeouts --------------------------------------------------------------------------------------
def _outside_timeout(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` run with no client-side timeout in force, whatever the caller set."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        def body() -> Any:
            _csot.reset_all()
            return function(*args, **kwargs)

        return contextvars.copy_context().run(body)

    return run


def _ignores_timeout(method: str) -> Breakage:
    def apply(mp: pytest.MonkeyPatch) -> None:
        mp.setattr(ChangeStream, method, _outside_timeout(getattr(ChangeStream, method)))

    return apply


def _resume_with_a_fresh_timeout(mp: pytest.MonkeyPatch) -> None:
    """The resume gets the whole timeout again instead of what the iteration has left."""
    original = ChangeStream._resume

    def resume(self: Any) -> None:
        total = _csot.get_timeout()

        def body() -> None:
            _csot.reset_all()
            if not total:
                return original(self)
            with pymongo.timeout(total):
                return original(self)

        contextvars.copy_context().run(body)

    mp.setattr(ChangeStream, "_resume", resume)


# -- killing the old cursor ------------------------------------------------------------------------
class _EveryCode:
    """A set that holds every error code."""

    def __contains__(self, code: object) -> bool:
        return True


def _old_cursor_left_open(mp: pytest.MonkeyPatch) -> None:
    """Every getMore error is taken as "the server cursor is gone", so neither the failed cursor nor the
    resume sends killCursors, and the old server cursor stays open (pymongo kills it when the getMore fails)."""
    mp.setattr(sync_command_cursor, "_CURSOR_CLOSED_ERRORS", _EveryCode())


def _kill_in_admin(mp: pytest.MonkeyPatch) -> None:
    """killCursors goes to the admin database, not to the cursor's own namespace."""
    original = MongoClient._close_cursor_now

    def close_cursor_now(self: Any, cursor_id: int, address: Any, session: Any = None, conn_mgr: Any = None) -> None:
        if address is not None:
            address = _CursorAddress(tuple(address), "admin.$cmd")
        original(self, cursor_id, address, session, conn_mgr)

    mp.setattr(MongoClient, "_close_cursor_now", close_cursor_now)


#: breakage -> (the rule, the scenario (start of its description) that must fail, a piece of the failure
#: message that says it failed for that reason, the patch)
BROKEN_GAPS: dict[str, tuple[str, str, str, Breakage]] = {
    "watch ignores the timeout": (
        "CS-CURSOR-TIMEOUTS",
        "CS-CURSOR-TIMEOUTS: timeoutMS bounds the aggregate",
        "but returned <",
        _ignores_timeout("_initialize_cursor"),
    ),
    "try_next ignores the timeout": (
        "CS-CURSOR-TIMEOUTS",
        "CS-CURSOR-TIMEOUTS: the stream's timeoutMS bounds an iteration",
        "but returned null",
        _ignores_timeout("try_next"),
    ),
    "try_next ignores the timeout (so does its resume)": (
        "CS-CURSOR-TIMEOUTS",
        "CS-CURSOR-TIMEOUTS: a resume inside an iteration",
        "code 280",
        _ignores_timeout("try_next"),
    ),
    "resume ignores the timeout": (
        "CS-CURSOR-TIMEOUTS",
        "CS-CURSOR-TIMEOUTS: a resume inside an iteration",
        "code 280",
        _ignores_timeout("_resume"),
    ),
    "resume gets a fresh timeout": (
        "CS-CURSOR-TIMEOUTS",
        "CS-CURSOR-TIMEOUTS: a resume inside an iteration",
        "code 280",
        _resume_with_a_fresh_timeout,
    ),
    "old cursor left open on resume": (
        "CS-KILL-RESUME",
        "CS-KILL-RESUME:",
        'expected "killCursors", got "getMore"',
        _old_cursor_left_open,
    ),
    "old cursor killed in admin": ("CS-KILL-RESUME", "CS-KILL-RESUME:", 'got "admin"', _kill_in_admin),
}


@pytest.mark.parametrize("test", scenarios(*MY_FILES), ids=lambda test: test.description[:70])
def test_each_scenario_passes_on_pymongo(embedded_run, test):
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "passed", f"{test.description}: {verdict.message}"


@pytest.mark.parametrize("breakage", sorted(BROKEN_GAPS))
def test_a_driver_that_breaks_the_rule_fails_its_scenario(embedded_run, monkeypatch, breakage):
    rule, description_start, reason, patch = BROKEN_GAPS[breakage]
    test = scenario(MY_FILES, description_start)
    assert test.description.startswith(rule + ":")
    patch(monkeypatch)
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and reason in verdict.message, f"{breakage}: {verdict.outcome} {verdict.message}"


def test_a_timeout_that_bounds_nothing_is_noticed_by_each_timeout_scenario(embedded_run, monkeypatch):
    """Every timeout scenario fails when pymongo's timeout block does nothing at all."""
    monkeypatch.setattr(pymongo, "timeout", lambda seconds: _NoTimeout())
    for test in scenarios(SUPPLEMENTARY / "timeouts.yml"):
        verdict = embedded_run.verdict(test)
        assert verdict.outcome == "failed", f"{test.description}: {verdict.outcome} {verdict.message}"


class _NoTimeout:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


# -- no false alarms: skipping a SHOULD fails only the scenarios traced to that SHOULD ----------------
def test_a_driver_that_never_kills_the_old_cursor_fails_only_the_scenario_of_that_recommendation(
    embedded_run, monkeypatch
):
    """Killing the old cursor on a resume is a SHOULD (CS-KILL-RESUME): a driver that skips it may fail the
    scenario traced to that SHOULD and no other (CS-RESUME-SESSION once failed it by listing the kill)."""
    from harness.formats.rule_traces import load_traces

    tests = scenarios(SUPPLEMENTARY)
    before = {test.test_id: embedded_run.verdict(test).outcome for test in tests}
    _old_cursor_left_open(monkeypatch)
    after = {test.test_id: embedded_run.verdict(test).outcome for test in scenarios(SUPPLEMENTARY)}
    changed = {test_id for test_id in after if after[test_id] != before[test_id]}
    should_kill = {
        trace.test
        for trace in load_traces().tests
        if any(a.rule == "CS-KILL-RESUME" and a.level == "SHOULD" and a.role == "check" for a in trace.asserts)
    }
    assert should_kill and changed == should_kill, sorted(changed ^ should_kill)
    assert all(after[test_id] == "failed" for test_id in changed)


# -- prose 17: no startAtOperationTime beside startAfter -------------------------------------------
def _operation_time_beside_start_after(mp: pytest.MonkeyPatch) -> None:
    """A resume with startAfter also names a startAtOperationTime (the one the driver would have saved)."""
    from bson.timestamp import Timestamp

    original = AnyChangeStream._change_stream_options

    def options(self: Any) -> dict[str, Any]:
        result = dict(original(self))
        if "startAfter" in result and "_cursor" in self.__dict__:  # a resume: the first cursor exists
            result["startAtOperationTime"] = Timestamp(1, 1)
        return result

    mp.setattr(AnyChangeStream, "_change_stream_options", options)


PROSE_17 = next(check for check in prose_tests.CHECKS if prose_tests.check_id(check) == "17")


def test_prose_17_passes_and_fails_for_an_operation_time_beside_start_after(embedded_run, monkeypatch):
    assert embedded_run.run_test(PROSE_17).outcome == "passed"
    _operation_time_beside_start_after(monkeypatch)
    result = embedded_run.run_test(PROSE_17)
    assert result.outcome == "failed" and "startAtOperationTime" in result.message, result.message


# -- CS-OPT-EXCLUSIVE: pymongo 4.20 sends one start point of two ------------------------------------
_WATCH_PARAMETERS = inspect.signature(AnyChangeStream.__init__)
_START_ARGUMENTS = {
    "resume_after": "resumeAfter",
    "start_after": "startAfter",
    "start_at_operation_time": "startAtOperationTime",
}


def _given_start_points(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    bound = _WATCH_PARAMETERS.bind(*args, **kwargs)
    return {
        name: bound.arguments[arg] for arg, name in _START_ARGUMENTS.items() if bound.arguments.get(arg) is not None
    }


def _passes_start_points_as_given(mp: pytest.MonkeyPatch) -> None:
    """The first aggregate carries every start point the application gave (the spec's behaviour)."""
    original_init = AnyChangeStream.__init__
    original_options = AnyChangeStream._change_stream_options

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        self.__dict__["_given_start_points"] = _given_start_points((self, *args), kwargs)
        original_init(self, *args, **kwargs)

    def options(self: Any) -> dict[str, Any]:
        result = dict(original_options(self))
        if "_cursor" not in self.__dict__:  # the first aggregate
            result.update(self.__dict__.get("_given_start_points", {}))
        return result

    mp.setattr(AnyChangeStream, "__init__", init)
    mp.setattr(AnyChangeStream, "_change_stream_options", options)


def _refuses_two_start_points(mp: pytest.MonkeyPatch) -> None:
    """The driver raises its own error for two start points instead of leaving it to the server."""
    original_init = AnyChangeStream.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(_given_start_points((self, *args), kwargs)) > 1:
            raise InvalidOperation("only one of resumeAfter, startAfter and startAtOperationTime may be given")
        original_init(self, *args, **kwargs)

    mp.setattr(AnyChangeStream, "__init__", init)


EXCLUSIVE = scenarios(START_OPTIONS)


@pytest.mark.parametrize("test", EXCLUSIVE, ids=lambda test: test.description[:60])
def test_pymongo_sends_only_one_of_two_start_points(embedded_run, test):
    """The finding, pinned: pymongo 4.20 drops a start point; if a release fixes it, this test says so."""
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "(key is missing)" in verdict.message, verdict.message


@pytest.mark.parametrize("test", EXCLUSIVE, ids=lambda test: test.description[:60])
def test_a_driver_that_passes_both_start_points_on_passes(embedded_run, monkeypatch, test):
    _passes_start_points_as_given(monkeypatch)
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "passed", verdict.message


@pytest.mark.parametrize("test", EXCLUSIVE, ids=lambda test: test.description[:60])
def test_a_driver_with_its_own_error_fails(embedded_run, monkeypatch, test):
    """The driver's own error is a client-side one where the server's refusal is due (and no aggregate goes out)."""
    _refuses_two_start_points(monkeypatch)
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "expectError.isClientError" in verdict.message, verdict.message
