"""Iteration modes (docs/executor-protocol.md 6.4.1): pymongo certified on each public way it consumes a stream.

The vocabulary in ``harness.core.ports`` is the protocol's table. pymongo (both APIs) offers ``next``,
``tryNext`` and ``iterator``, and in each of them passes the upstream change-streams unified file on the
embedded target, every record saying the mode. Each mode drives its own API for real: a pymongo broken in one
of them (a public ``try_next`` that gives up on a resumable error, an iterator that restarts the stream) fails
that mode's run and no other. ``next()`` blocks in pymongo, so its budget is checked between the iterations of
its own loop: an idle stream answers ``noChange`` near the budget and stays usable.
"""

from __future__ import annotations

import contextvars
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pymongo.change_stream import ChangeStream

from harness.core.model import EntitySpec, Operation
from harness.core.observations import NoChangeWithin
from harness.core.ports import ITERATION_MODES, DriverUnavailable, chosen_iteration_mode
from harness.drivers.pymongo.adapter import PyMongoAdapter
from harness.drivers.pymongo.api_shims import ASYNC_API
from harness.engine.run import HarnessRun, RunOptions
from harness.engine.run_settings import RunSettings
from harness.formats.loaders import load_paths
from tests.conftest import require_shared_specs
from tests.paths import REPO, SHARED_SPECS

CHANGE_STREAMS = SHARED_SPECS / "upstream" / "unified" / "change-streams.yml"
PYMONGO_MODES = ("next", "tryNext", "iterator")
DRIVERS = ("pymongo", "pymongo-async")
#: A short budget: a mode that loses a change waits this long for it, once per test.
BUDGET_S = 2.0


def _needs(driver: str) -> None:
    require_shared_specs()
    if driver == "pymongo-async" and not ASYNC_API:
        pytest.skip("this pymongo has no AsyncMongoClient")


def _stream_classes(driver: str) -> type[Any]:
    if driver == "pymongo":
        return ChangeStream
    from pymongo.asynchronous.change_stream import AsyncChangeStream

    return AsyncChangeStream


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, HarnessRun]]:
    """One embedded run per driver; a test sets the mode it runs in (``runner.settings``) and puts it back."""
    started: dict[str, HarnessRun] = {}
    try:
        for driver in DRIVERS:
            if driver == "pymongo-async" and not ASYNC_API:
                continue
            settings = RunSettings(iteration_timeout_s=BUDGET_S)
            started[driver] = HarnessRun(
                RunOptions(target="embedded", expected="none", driver=driver, settings=settings)
            )
            started[driver].__enter__()
        yield started
    finally:
        for run in started.values():
            run.__exit__(None, None, None)


def _bad_outcomes(run: HarnessRun, mode: str, only: str | None = None) -> dict[str, str]:
    """The change-streams file (or its test ``only``) in ``mode``: each test that failed or errored, with its
    message."""
    assert run.runner is not None
    tests = [test for test in load_paths([CHANGE_STREAMS]) if only in (None, test.description)]
    assert len(tests) > 20 or (only is not None and len(tests) == 1)
    run.runner.settings.iteration_mode = mode
    try:
        results = [run.run_test(test) for test in tests]
    finally:
        run.runner.settings.iteration_mode = None
    return {r.test_id.split("::")[1]: r.message for r in results if r.outcome in ("failed", "error")}


# -- the vocabulary -------------------------------------------------------------------------------------------------


def test_the_vocabulary_is_the_protocols_table() -> None:
    """The names and their order in ``ITERATION_MODES`` are the first column of section 6.4.1's table."""
    text = (REPO / "docs" / "executor-protocol.md").read_text(encoding="utf-8")
    section = text.split("### 6.4.1 Iteration modes", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `([A-Za-z]+)` \|", section, flags=re.MULTILINE)
    assert rows == list(ITERATION_MODES)


def test_pymongo_offers_next_first_then_try_next_and_its_iterator() -> None:
    from harness.drivers.pymongo.async_scope import AsyncPyMongoAdapter

    assert PyMongoAdapter.iteration_modes == AsyncPyMongoAdapter.iteration_modes == PYMONGO_MODES
    assert set(PYMONGO_MODES) <= set(ITERATION_MODES)
    adapter = PyMongoAdapter()
    assert chosen_iteration_mode(adapter, None) == "next"
    with pytest.raises(DriverUnavailable, match="does not offer it; its iteration modes: next, tryNext, iterator"):
        chosen_iteration_mode(adapter, "emitter")
    with pytest.raises(DriverUnavailable, match="not a mode at all"):
        chosen_iteration_mode(adapter, "push")


# -- every mode passes the upstream file ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", PYMONGO_MODES)
@pytest.mark.parametrize("driver", DRIVERS)
def test_each_mode_passes_the_upstream_change_streams_file(driver: str, mode: str) -> None:
    """A run of its own per mode, so its records say the mode it ran in."""
    _needs(driver)
    settings = RunSettings(iteration_mode=mode)
    with HarnessRun(RunOptions(target="embedded", expected="none", driver=driver, settings=settings)) as run:
        results = [run.run_test(test) for test in load_paths([CHANGE_STREAMS])]
    assert sum(r.outcome == "passed" for r in results) > 20
    assert [(r.test_id, r.message) for r in results if r.outcome in ("failed", "error")] == []
    assert {r.record["driver"]["iteration_mode"] for r in results} == {mode}
    assert {r.record["driver"]["name"] for r in results} == {driver}


# -- each mode drives its own API -----------------------------------------------------------------------------------


@pytest.fixture
def scope_in(runs: dict[str, HarnessRun]) -> Iterator[Any]:
    """``scope_in(driver, mode)``: a scope with a client, a collection and a change stream on it."""
    opened: list[Any] = []

    def open_in(driver: str, mode: str, budget_s: float = BUDGET_S) -> Any:
        _needs(driver)
        run = runs[driver]
        scope = run.driver.open_scope(run.driver_uri, iteration_timeout_s=budget_s, iteration_mode=mode)
        opened.append(scope)
        scope.create_entity(EntitySpec("client", "client0", {"observeEvents": ["commandStartedEvent"]}))
        scope.create_entity(EntitySpec("database", "db", {"client": "client0", "databaseName": "iteration_modes"}))
        scope.create_entity(EntitySpec("collection", "coll", {"database": "db", "collectionName": mode}))
        scope.run(_operation("deleteMany", "coll", filter={}))
        scope.set_entity("stream", scope.run(_operation("createChangeStream", "coll", pipeline=[])))
        return scope

    yield open_in
    for scope in opened:
        scope.close()


def _operation(name: str, target: str, **arguments: Any) -> Operation:
    return Operation(name=name, object=target, arguments=arguments)


def _until(scope: Any) -> Any:
    return scope.run(_operation("iterateUntilDocumentOrError", "stream"))


@pytest.mark.parametrize("driver", DRIVERS)
def test_each_mode_starts_with_its_own_call_of_the_driver(
    driver: str, scope_in: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream_class = _stream_classes(driver)
    calls: list[str] = []
    for name in ("next", "__next__" if driver == "pymongo" else "__anext__", "try_next"):
        original = getattr(stream_class, name)
        monkeypatch.setattr(stream_class, name, _counted(original, name, calls))
    for mode, expected in (("next", "next"), ("tryNext", "try_next"), ("iterator", "__next__")):
        scope = scope_in(driver, mode)
        calls.clear()
        scope.run(_operation("insertOne", "coll", document={"_id": 1}))
        assert _until(scope)["documentKey"] == {"_id": 1}
        called = {"__anext__": "__next__"}.get(calls[0], calls[0])
        assert called == expected, f"{mode}: the driver's first call was {calls}"
        if mode != "tryNext":
            assert "try_next" in calls, f"{mode}: pymongo's blocking call loops over try_next: {calls}"


def _counted(original: Any, name: str, calls: list[str]) -> Any:
    def counted(self: Any, *args: Any) -> Any:
        calls.append(name)
        return original(self, *args)

    return counted


@pytest.mark.parametrize("driver", DRIVERS)
def test_the_iterator_mode_keeps_one_iterator_per_stream(
    driver: str, scope_in: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream_class = _stream_classes(driver)
    name = "__iter__" if driver == "pymongo" else "__aiter__"
    made: list[Any] = []
    original = getattr(stream_class, name)
    monkeypatch.setattr(stream_class, name, lambda self: made.append(self) or original(self))
    scope = scope_in(driver, "iterator")
    scope.run(_operation("insertMany", "coll", documents=[{"_id": 1}, {"_id": 2}]))
    assert [_until(scope)["documentKey"]["_id"] for _ in range(2)] == [1, 2]
    assert len(made) == 1 and made[0] is scope.entity("stream")


@pytest.mark.parametrize("mode", ["next", "iterator"])
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_blocking_call_gives_up_at_the_budget_and_leaves_the_stream_usable(
    driver: str, mode: str, scope_in: Any
) -> None:
    """pymongo's ``next()`` would wait for ever on an idle stream: the budget ends it between two of its own
    iterations (within one getMore's wait), and the next change still arrives through the same call."""
    scope = scope_in(driver, mode, budget_s=1.0)
    started = time.monotonic()
    with pytest.raises(NoChangeWithin, match="no document arrived within 1s"):
        _until(scope)
    assert 1.0 <= time.monotonic() - started < 1.0 + 3.0
    scope.run(_operation("insertOne", "coll", document={"_id": 7}))
    assert _until(scope)["documentKey"] == {"_id": 7}
    assert "try_next" not in vars(scope.entity("stream")), "the budget's seam outlived the call"


# -- a breakage of one mode is seen in that mode only ---------------------------------------------------------------

#: Set while pymongo's own ``next()`` runs, so a broken public ``try_next`` can leave ``next()``'s path alone.
_INSIDE_NEXT: contextvars.ContextVar[bool] = contextvars.ContextVar("inside_next", default=False)


class _GaveUp(Exception):
    """Raised where pymongo would resume: the broken ``try_next`` gives up instead."""


def _give_up() -> None:
    raise _GaveUp


def _try_next_that_gives_up(stream_class: type[Any], asynchronous: bool) -> dict[str, Any]:
    """A pymongo whose public ``try_next`` swallows a resumable error instead of resuming (it answers "no change"
    and the stream is left closed), while ``next()`` and iteration keep a correct path of their own."""
    try_next, next_ = stream_class.try_next, stream_class.next
    if asynchronous:

        async def broken_async(self: Any) -> Any:
            if _INSIDE_NEXT.get():
                return await try_next(self)
            self._resume = _give_up
            try:
                return await try_next(self)
            except _GaveUp:
                return None
            finally:
                del self._resume

        async def own_path_async(self: Any) -> Any:
            token = _INSIDE_NEXT.set(True)
            try:
                return await next_(self)
            finally:
                _INSIDE_NEXT.reset(token)

        return {"try_next": broken_async, "next": own_path_async, "__anext__": own_path_async}

    def broken(self: Any) -> Any:
        if _INSIDE_NEXT.get():
            return try_next(self)
        self._resume = _give_up
        try:
            return try_next(self)
        except _GaveUp:
            return None
        finally:
            del self._resume

    def own_path(self: Any) -> Any:
        token = _INSIDE_NEXT.set(True)
        try:
            return next_(self)
        finally:
            _INSIDE_NEXT.reset(token)

    return {"try_next": broken, "next": own_path, "__next__": own_path}


def _forget_position(stream: Any) -> None:
    """What a restarted stream loses: where it was (its resume token and start time), so it opens at "now"."""
    stream._resume_token = None
    stream._start_at_operation_time = None
    stream._uses_start_after = stream._uses_resume_after = False


class _Restarting:
    """A ``for change in stream`` iterator that reopens its stream from now at its first step."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.restarted = stream, False

    def __iter__(self) -> _Restarting:
        return self

    def __next__(self) -> Any:
        if not self.restarted:
            self.restarted = True
            _forget_position(self.stream)
            self.stream._resume()
        return self.stream.next()

    def __aiter__(self) -> _Restarting:
        return self

    async def __anext__(self) -> Any:
        if not self.restarted:
            self.restarted = True
            _forget_position(self.stream)
            await self.stream._resume()
        return await self.stream.next()


def _iterator_that_restarts(stream_class: type[Any], asynchronous: bool) -> dict[str, Any]:
    """A pymongo whose ``iter(stream)`` (``aiter``) returns an iterator that restarts the stream at its first step."""

    def restarting(self: Any) -> _Restarting:
        return _Restarting(self)

    return {"__aiter__" if asynchronous else "__iter__": restarting}


#: Breakage -> (how it patches a stream class, the only mode that must see it, a test it must fail there, and how).
BREAKAGES = {
    "try_next gives up on a resumable error": (
        _try_next_that_gives_up,
        "tryNext",
        "Test consecutive resume",
        "the change stream was closed by the server before a document arrived",
    ),
    "the iterator restarts the stream": (
        _iterator_that_restarts,
        "iterator",
        "Test insert, update, replace, and delete event types",
        "no document arrived; the stream passed the last write",  # the restarted stream opened past the changes
    ),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_breakage_of_one_mode_fails_that_mode_only(
    driver: str, breakage: str, runs: dict[str, HarnessRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    _needs(driver)
    patch, broken_mode, example, why = BREAKAGES[breakage]
    stream_class = _stream_classes(driver)
    for name, value in patch(stream_class, driver == "pymongo-async").items():
        monkeypatch.setattr(stream_class, name, value)
    # The whole file in the other modes; in the broken one its example only (each lost change costs a wait).
    bad = {mode: _bad_outcomes(runs[driver], mode, example if mode == broken_mode else None) for mode in PYMONGO_MODES}
    assert why in bad[broken_mode].get(example, ""), f"{breakage}: not caught in {broken_mode}: {bad[broken_mode]}"
    assert {mode: found for mode, found in bad.items() if mode != broken_mode} == {
        mode: {} for mode in PYMONGO_MODES if mode != broken_mode
    }, f"{breakage} showed in a mode that does not use the broken call"
