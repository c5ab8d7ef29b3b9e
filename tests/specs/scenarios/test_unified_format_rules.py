"""The unified format's change-stream operations (rules CS-UTF-... of specs/coverage/unified-format-rules.yml) are
carried out as the format asks, and each check fails for a runner that breaks its rule.

The checks are the project's own supplementary scenarios ``specs/scenarios/supplementary/runner-change-streams.yml``
(in the main job, so every driver's runner is judged by them; each description names its rules). The
rules bind the test runner, so each breakage (:data:`BROKEN_RUNNER`, listed in
``specs/coverage/breakages/unified-format.yml``) is the harness's own runner patched in this process: one
operation of the pymongo adapter's table (``harness.drivers.pymongo.operations.OPERATIONS``) replaced by a
plausible mistake (an aggregate deferred to the first iteration, an option dropped, a first document skipped,
an iteration that gives up, waits, or swallows an error, a close that does nothing or raises), or the
engine's result matcher made strict. Each must make at least one test of each rule it names fail, and none
error.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

import pytest
from pymongo.errors import OperationFailure
from pymongo.synchronous import change_stream as sync_change_stream

from harness.core.matching import child_path
from harness.core.matching.unified_comparator import UnifiedComparator
from harness.core.matching.unified_matcher import Matcher
from harness.core.rules import rules_from_description
from harness.drivers.pymongo import operations
from harness.drivers.pymongo.errors import DRIVER_EXCEPTIONS
from harness.formats.loaders import load_paths
from harness.formats.rule_files import load_catalogue
from tests.paths import REPO

RUNNER_FILE = REPO / "specs" / "scenarios" / "supplementary" / "runner-change-streams.yml"
CATALOGUE = REPO / "specs" / "coverage" / "unified-format-rules.yml"


@functools.cache
def runner_tests() -> tuple[Any, ...]:
    return tuple(load_paths([RUNNER_FILE]))


def checks_of_rule(rule: str) -> list[Any]:
    found = [test for test in runner_tests() if rule in rules_from_description(test.description)]
    assert found, f"no test of {RUNNER_FILE.name} names {rule}"
    return found


@pytest.mark.parametrize("test", runner_tests(), ids=lambda test: test.description.split(":", 1)[0])
def test_each_runner_check_passes_unbroken(embedded_run, test):
    assert test.load_error is None, test.load_error
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "passed", verdict.message


def test_every_test_names_its_rules_and_every_rule_of_the_catalogue_is_checked_here():
    """The descriptions are the mapping (harness coverage reads them): each names only catalogued CS-UTF rules."""
    named_by = {test.test_id: rules_from_description(test.description) for test in runner_tests()}
    assert all(test_id.startswith("unified/runner-change-streams::") for test_id in named_by), sorted(named_by)
    assert all(named_by.values()), [test_id for test_id, rules in named_by.items() if not rules]
    rules = {rule.id for rule in load_catalogue(CATALOGUE, "unified-format").rules if not rule.not_checkable}
    assert {rule for named in named_by.values() for rule in named} == rules


# -- the breakages ---------------------------------------------------------------------------------------
Patch = Callable[[pytest.MonkeyPatch], None]
PyMongoCall = Callable[[Any, Any, dict[str, Any]], Any]


def _operation(name: str, make: Callable[[PyMongoCall], PyMongoCall]) -> Patch:
    """The adapter's operation ``name`` replaced by ``make(original)``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        mp.setitem(operations.OPERATIONS, name, make(operations.OPERATIONS[name]))

    return apply


class _LazyStream:
    """What a runner that leaves the aggregate to the first iteration saves: nothing opened yet."""

    def __init__(self, open_stream: Callable[[], Any]) -> None:
        self.open_stream = open_stream


def _deferred_aggregate(original: PyMongoCall) -> PyMongoCall:
    return lambda scope, target, arguments: _LazyStream(lambda: original(scope, target, arguments))


def _iterates_once(original: PyMongoCall) -> PyMongoCall:
    def create(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
        stream = original(scope, target, arguments)
        scope.api.wait(stream.try_next())  # a runner that "primes" the stream, consuming a getMore
        return stream

    return create


def _drops(option: str) -> Callable[[PyMongoCall], PyMongoCall]:
    def make(original: PyMongoCall) -> PyMongoCall:
        return lambda scope, target, arguments: original(
            scope, target, {k: v for k, v in arguments.items() if k != option}
        )

    return make


def _skips_first(original: PyMongoCall) -> PyMongoCall:
    """The first iteration of each stream advances past one document before it reads."""
    seen: weakref.WeakSet[Any] = weakref.WeakSet()

    def iterate(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
        if target not in seen:
            seen.add(target)
            original(scope, target, dict(arguments))
        return original(scope, target, arguments)

    return iterate


def _one_try(original: PyMongoCall) -> PyMongoCall:
    """iterateUntilDocumentOrError that returns whatever one iteration brought, a document or nothing."""
    return lambda scope, target, arguments: operations.OPERATIONS["iterateOnce"](scope, target, arguments)


def _swallows_errors(original: PyMongoCall) -> PyMongoCall:
    def iterate(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
        try:
            return original(scope, target, arguments)
        except DRIVER_EXCEPTIONS:
            return None

    return iterate


def _waits_for_a_document(original: PyMongoCall) -> PyMongoCall:
    return operations.iterate_until_document_or_error


def _local_batch_only(original: PyMongoCall) -> PyMongoCall:
    """iterateOnce that takes what is already buffered and never asks the server."""

    def iterate(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
        buffered = target._cursor._data
        return buffered.popleft() if buffered else None

    return iterate


def _does_nothing(original: PyMongoCall) -> PyMongoCall:
    return lambda scope, target, arguments: None


def _close_raises_and_runner_passes_it_on(mp: pytest.MonkeyPatch) -> None:
    """A driver whose close raises what killCursors answered, and a runner that lets that through."""
    _close_raises(mp)
    mp.setitem(operations.OPERATIONS, "close", lambda scope, target, arguments: scope.api.wait(target.close()))


def _close_raises(mp: pytest.MonkeyPatch) -> None:
    original = sync_change_stream.ChangeStream.close

    def close(self: Any) -> None:
        original(self)
        raise OperationFailure("killCursors failed (as this driver reports it)", code=2)

    mp.setattr(sync_change_stream.ChangeStream, "close", close)


def _strict_results(mp: pytest.MonkeyPatch) -> None:
    """The engine matches operation results as nested documents: no field beyond those expected."""

    def match_result(self: Any, expected: Any, actual: Any, path: str, context: Any = None) -> Any:
        return Matcher(context).match(expected, actual, child_path(path, "expectResult"), root=False)

    mp.setattr(UnifiedComparator, "match_result", match_result)


#: breakage -> (the rules whose tests must catch it, the patch)
BROKEN_RUNNER: dict[str, tuple[str, Patch]] = {
    "aggregate deferred to the first iteration": (
        "CS-UTF-CREATE-AGGREGATE",
        _operation("createChangeStream", _deferred_aggregate),
    ),
    "createChangeStream primes the stream": (
        "CS-UTF-CREATE-NOITERATE",
        _operation("createChangeStream", _iterates_once),
    ),
    "createChangeStream drops showExpandedEvents": (
        "CS-UTF-CREATE-PROXY",
        _operation("createChangeStream", _drops("showExpandedEvents")),
    ),
    "createChangeStream drops comment": ("CS-UTF-CREATE-PROXY", _operation("createChangeStream", _drops("comment"))),
    "createChangeStream drops startAfter": (
        "CS-UTF-CREATE-PROXY",
        _operation("createChangeStream", _drops("startAfter")),
    ),
    "iterateUntilDocumentOrError skips the first document": (
        "CS-UTF-ITER-FIRST",
        _operation("iterateUntilDocumentOrError", _skips_first),
    ),
    "iterateOnce skips the first document": ("CS-UTF-ITER-FIRST", _operation("iterateOnce", _skips_first)),
    "iterateUntilDocumentOrError gives up after one iteration": (
        "CS-UTF-ITERUNTIL",
        _operation("iterateUntilDocumentOrError", _one_try),
    ),
    "iterateUntilDocumentOrError swallows errors": (
        "CS-UTF-ITERUNTIL",
        _operation("iterateUntilDocumentOrError", _swallows_errors),
    ),
    "results matched as nested documents": ("CS-UTF-ITERUNTIL-ROOT", _strict_results),
    "iterateOnce waits for a document": ("CS-UTF-ITERONCE", _operation("iterateOnce", _waits_for_a_document)),
    "iterateOnce never sends a getMore": ("CS-UTF-ITERONCE", _operation("iterateOnce", _local_batch_only)),
    "close does nothing": ("CS-UTF-CLOSE", _operation("close", _does_nothing)),
    "close passes on killCursors errors": ("CS-UTF-CLOSE-SUPPRESS", _close_raises_and_runner_passes_it_on),
}


@pytest.mark.parametrize("breakage", sorted(BROKEN_RUNNER))
def test_a_broken_runner_fails_the_rule_checks(embedded_run, monkeypatch, breakage):
    rules, patch = BROKEN_RUNNER[breakage]
    patch(monkeypatch)
    for rule in rules.split(", "):
        outcomes = {test.description: embedded_run.verdict(test) for test in checks_of_rule(rule)}
        assert any(v.outcome == "failed" for v in outcomes.values()), f"{breakage}: every {rule} test still passed"
        errors = {name: v.message for name, v in outcomes.items() if v.outcome not in ("passed", "failed")}
        assert not errors, errors


def test_a_driver_whose_close_raises_still_passes_with_the_runner_suppressing(embedded_run, monkeypatch):
    """The control of "close passes on killCursors errors": the driver half alone is not what fails the check."""
    _close_raises(monkeypatch)
    for test in checks_of_rule("CS-UTF-CLOSE-SUPPRESS"):
        verdict = embedded_run.verdict(test)
        assert verdict.outcome == "passed", verdict.message
