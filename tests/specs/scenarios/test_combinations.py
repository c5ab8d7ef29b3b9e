"""The generated checks (specs/scenarios/supplementary/generated/) catch breaks on paths only their combination
reaches, which the hand-written checks of the same rule miss.

Each broken driver is pymongo with one function patched for one test (``monkeypatch``), breaking a rule on one
path of several: one option of many lost on the resume, one error class not resumed when met one way, one token
source not cached. For each, the generated scenarios that name the rule and state a combination the break lies
on must see at least one failure and no error; and every other check of the rule (the hand-written scenarios
naming it, the upstream tests and prose checks the mapping names) that passes unbroken must still pass broken:
without the combinations nothing would have caught the break. Registered in
specs/coverage/breakages/combinations.yml (``one_path``).

pymongo has two APIs, and the harness certifies both (``--driver pymongo``, ``--driver pymongo-async``). Each
breakage is written once against the classes of an API (:class:`~tests.specs.scenarios.test_driver_upstream.Api`)
and proven on each: a run through ``MongoClient`` with ``pymongo.synchronous.change_stream`` patched, and a run
through ``AsyncMongoClient`` with ``pymongo.asynchronous.change_stream`` patched (its coroutine methods by
coroutines), by the same test.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from pymongo.asynchronous import change_stream as async_change_stream
from pymongo.errors import CursorNotFound, NetworkTimeout, PyMongoError
from pymongo.synchronous import change_stream as sync_change_stream

from harness.app.combinations import combination_of
from harness.engine.run import HarnessRun
from tests.specs.allowances.support import checks_of, open_run
from tests.specs.scenarios.test_driver_upstream import ASYNC, SYNC, Api, _fresh

#: The harness's driver name -> the pymongo API it drives, and the module whose ``_resumable`` that API's streams call.
DRIVERS: dict[str, tuple[Api, Any]] = {
    "pymongo": (SYNC, sync_change_stream),
    "pymongo-async": (ASYNC, async_change_stream),
}
#: A broken driver: patches one API of pymongo (the classes and module given) for the length of one test.
Breakage = Callable[[pytest.MonkeyPatch, Api, Any], None]
#: Around one call of a stream's method: entered with the stream, gives what the method's result goes through.
Around = Callable[[Any], contextlib.AbstractContextManager[Callable[[Any], Any]]]


@pytest.fixture(scope="module", params=sorted(DRIVERS))
def run(request: pytest.FixtureRequest) -> Iterator[HarnessRun]:
    yield from open_run(request.param)


def _around(mp: pytest.MonkeyPatch, owner: type, names: tuple[str, ...], around: Around) -> None:
    """Patch ``owner``'s method ``names[0]`` (and its aliases, the other names) to run inside ``around(self)``, its
    result passed through what that gives; a coroutine method (the asynchronous API's) is replaced by a coroutine."""
    original = getattr(owner, names[0])
    if inspect.iscoroutinefunction(original):

        async def method_async(self: Any, *args: Any, **kwargs: Any) -> Any:
            with around(self) as finish:
                return finish(await original(self, *args, **kwargs))

        method: Callable[..., Any] = method_async
    else:

        def method_sync(self: Any, *args: Any, **kwargs: Any) -> Any:
            with around(self) as finish:
                return finish(original(self, *args, **kwargs))

        method = method_sync
    for name in names:
        mp.setattr(owner, name, method)


def _unchanged(result: Any) -> Any:
    return result


def _lost_on_resume(attribute: str, when: Callable[[Any], bool] = lambda value: True) -> Breakage:
    """A resume that rebuilds the stream without one option (the attribute pymongo keeps it in), when ``when``."""

    @contextlib.contextmanager
    def dropped(stream: Any) -> Iterator[Callable[[Any], Any]]:
        if when(getattr(stream, attribute)):
            setattr(stream, attribute, None)
        yield _unchanged

    return lambda mp, api, module: _around(mp, api.stream, ("_resume",), dropped)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _cluster_flag_lost_on_resume(mp: pytest.MonkeyPatch, api: Api, module: Any) -> None:
    """A client-level stream whose resume leaves allChangesForCluster out of the stage (the method is shared by the
    two APIs' classes: it is patched on this API's client-level class only)."""
    original = api.cluster_stream._change_stream_options

    def options(self: Any) -> dict[str, Any]:
        found = dict(original(self))
        if "resumeAfter" in found:
            found.pop("allChangesForCluster", None)
        return found

    mp.setattr(api.cluster_stream, "_change_stream_options", options)


def _resumable_as(rule: Callable[[PyMongoError, bool], bool]) -> Breakage:
    """The API's streams judge an error resumable by ``rule(error, what pymongo judges)``."""

    def apply(mp: pytest.MonkeyPatch, api: Api, module: Any) -> None:
        original = module._resumable
        mp.setattr(module, "_resumable", lambda exc: rule(exc, original(exc)))

    return apply


#: Inside the blocking next() (its thread's context, or its task's for the asynchronous API).
_BLOCKING = contextvars.ContextVar("blocking", default=False)


@contextlib.contextmanager
def _blocking(stream: Any) -> Iterator[Callable[[Any], Any]]:
    token = _BLOCKING.set(True)
    try:
        yield _unchanged
    finally:
        _BLOCKING.reset(token)


def _cursor_not_found_only_resumed_by_next(mp: pytest.MonkeyPatch, api: Api, module: Any) -> None:
    """CursorNotFound is resumed inside next() (the blocking call) but raised from try_next() (tryNext)."""
    _around(mp, api.stream, ("next", "__anext__" if api is ASYNC else "__next__"), _blocking)
    _resumable_as(lambda exc, real: real and (_BLOCKING.get() or not isinstance(exc, CursorNotFound)))(mp, api, module)


@contextlib.contextmanager
def _token_kept_after_a_change(stream: Any) -> Iterator[Callable[[Any], Any]]:
    before = stream._resume_token

    def finish(change: Any) -> Any:
        if change is not None:
            stream._returned_a_change = True
        elif getattr(stream, "_returned_a_change", False):
            stream._resume_token = before
        return change

    yield finish


def _empty_batch_after_a_change_ignored(mp: pytest.MonkeyPatch, api: Api, module: Any) -> None:
    """Once a change was returned, an empty batch's postBatchResumeToken no longer replaces the cached token."""
    _around(mp, api.stream, ("try_next",), _token_kept_after_a_change)


@contextlib.contextmanager
def _close_called(stream: Any) -> Iterator[Callable[[Any], Any]]:
    stream._harness_close_called = True
    yield _unchanged


def _blocking_next_reopens(when: Callable[[Any], bool]) -> Breakage:
    """The blocking next() takes a stream that stopped (as ``when`` says: closed by the application, or ended by an
    invalidate) for one whose cursor died while open, and resumes it from its cached token; try_next leaves it
    stopped."""

    @contextlib.contextmanager
    def reopened(stream: Any) -> Iterator[Callable[[Any], Any]]:
        if stream._closed and when(stream):
            stream._closed = False
        yield _unchanged

    def apply(mp: pytest.MonkeyPatch, api: Api, module: Any) -> None:
        _around(mp, api.stream, ("close",), _close_called)
        _around(mp, api.stream, ("next", "__anext__" if api is ASYNC else "__next__"), reopened)

    return apply


#: breakage -> (the rules (ids joined by ", ") whose generated checks catch it, the combination values the break
#: lies on (dimension -> value ids), the patch)
BROKEN_DRIVER: dict[str, tuple[str, Mapping[str, tuple[str, ...]], Breakage]] = {
    "numeric comment lost on resume": (
        "CS-RESUME-STEPS",
        {"watch-options": ("comment-int", "comment-long", "comment-double")},
        _lost_on_resume("_comment", _is_number),
    ),
    "fullDocumentBeforeChange lost on resume": (
        "CS-RESUME-STEPS",
        {
            "watch-options": (
                "fullDocumentBeforeChange-off",
                "fullDocumentBeforeChange-whenAvailable",
                "fullDocumentBeforeChange-required",
            )
        },
        _lost_on_resume("_full_document_before_change"),
    ),
    "showExpandedEvents lost on resume": (
        "CS-RESUME-STEPS",
        {"watch-options": ("showExpandedEvents",)},
        _lost_on_resume("_show_expanded_events"),
    ),
    "allChangesForCluster lost on resume": (
        "CS-RESUME-STEPS",
        {"watch-options": ("allChangesForCluster",)},
        _cluster_flag_lost_on_resume,
    ),
    "CursorNotFound not resumed by tryNext": (
        "CS-ERR-CURSORNOTFOUND",
        {"error-kinds": ("getMore-cursor-not-found",), "iteration-modes": ("tryNext",)},
        _cursor_not_found_only_resumed_by_next,
    ),
    "read timeouts not resumed": (
        "CS-ERR-NETWORK",
        {"error-kinds": ("getMore-socket-timeout",)},
        _resumable_as(lambda exc, real: real and not isinstance(exc, NetworkTimeout)),
    ),
    "empty-batch token after a change not kept": (
        "CS-TOKEN-CACHE-PBRT-EMPTY",
        {"token-sources": ("pbrt-after-document",)},
        _empty_batch_after_a_change_ignored,
    ),
    "next() resumes after an invalidate": (
        "CS-RTOKEN-INVALIDATE-CLOSED",
        {"iteration-modes": ("invalidate",), "next-calls": ("iterateUntilDocumentOrError",)},
        _blocking_next_reopens(lambda stream: not getattr(stream, "_harness_close_called", False)),
    ),
    "next() reopens a closed stream": (
        "CS-API-CLOSE, CS-UTF-CLOSE",
        {"iteration-modes": ("close",), "next-calls": ("iterateUntilDocumentOrError",)},
        _blocking_next_reopens(lambda stream: getattr(stream, "_harness_close_called", False)),
    ),
}


def _generated(test: Any) -> bool:
    return "/generated/" in str(test.file).replace("\\", "/")


def _on_the_path(test: Any, reach: Mapping[str, tuple[str, ...]]) -> bool:
    stated = combination_of(test.description)
    return all(stated.get(dimension) in values for dimension, values in reach.items())


def _verdict(run: Any, test: Any) -> Any:
    _fresh(run)
    return run.verdict(test)


@pytest.mark.parametrize("breakage", sorted(BROKEN_DRIVER))
def test_a_break_on_one_path_fails_a_generated_check_and_no_other(
    run: HarnessRun, monkeypatch: pytest.MonkeyPatch, breakage: str
) -> None:
    """The same proof through either API (the ``run`` fixture's driver), the breakage applied to that API's code."""
    rules, reach, patch = BROKEN_DRIVER[breakage]
    api, module = DRIVERS[run.driver.name]
    for rule in rules.split(", "):
        checks = checks_of(rule)
        generated = [t for t in checks if _generated(t) and _on_the_path(t, reach)]
        others = [t for t in checks if not _generated(t)]
        assert generated, f"{breakage}: no generated check of {rule} states {dict(reach)}"
        unbroken = {t.test_id: _verdict(run, t).outcome for t in generated + others}
        passing = {test_id for test_id, outcome in unbroken.items() if outcome == "passed"}
        assert any(t.test_id in passing for t in generated), f"{breakage}: no generated check passes unbroken"
        patch(monkeypatch, api, module)
        broken = {t.test_id: _verdict(run, t) for t in generated + others if t.test_id in passing}
        monkeypatch.undo()
        errors = {test_id: v.message for test_id, v in broken.items() if v.outcome not in ("passed", "failed")}
        assert not errors, f"{breakage}: checks errored: {errors}"
        caught = [t.test_id for t in generated if t.test_id in broken and broken[t.test_id].outcome == "failed"]
        assert caught, f"{breakage}: every generated check of {rule} on {dict(reach)} still passed"
        missed_by_others = [t.test_id for t in others if t.test_id in broken and broken[t.test_id].outcome == "failed"]
        assert not missed_by_others, (
            f"{breakage}: a hand-written or upstream check of {rule} catches it too, so it is not one path only "
            f"(drop one_path or the breakage): {missed_by_others}"
        )
