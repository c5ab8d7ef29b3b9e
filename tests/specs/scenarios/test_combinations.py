"""The generated checks (specs/scenarios/supplementary/generated/) catch breaks on paths only their combination
reaches, which the hand-written checks of the same rule miss.

Each broken driver is pymongo with one function patched for one test (``monkeypatch``), breaking a rule on one
path of several: one option of many lost on the resume, one error class not resumed when met one way, one token
source not cached. For each, the generated scenarios that name the rule and state a combination the break lies
on must see at least one failure and no error; and every other check of the rule (the hand-written scenarios
naming it, the upstream tests and prose checks the mapping names) that passes unbroken must still pass broken:
without the combinations nothing would have caught the break. Registered in
specs/coverage/breakages/combinations.yml (``one_path``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from pymongo import change_stream_shared
from pymongo.errors import CursorNotFound, NetworkTimeout, PyMongoError
from pymongo.synchronous import change_stream as sync_change_stream

from harness.app.combinations import combination_of
from tests.specs.allowances.support import checks_of, open_run
from tests.specs.scenarios.test_driver_upstream import _fresh

ChangeStream = sync_change_stream.ChangeStream
ClusterStream = change_stream_shared._AgnosticClusterChangeStream
Breakage = Callable[[pytest.MonkeyPatch], None]


@pytest.fixture(scope="module")
def run():
    yield from open_run()


def _lost_on_resume(attribute: str, when: Callable[[Any], bool] = lambda value: True) -> Breakage:
    """A resume that rebuilds the stream without one option (the attribute pymongo keeps it in), when ``when``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = ChangeStream._resume

        def resume(self: Any) -> None:
            if when(getattr(self, attribute)):
                setattr(self, attribute, None)
            original(self)

        mp.setattr(ChangeStream, "_resume", resume)

    return apply


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _cluster_flag_lost_on_resume(mp: pytest.MonkeyPatch) -> None:
    """A client-level stream whose resume leaves allChangesForCluster out of the stage."""
    original = ClusterStream._change_stream_options

    def options(self: Any) -> dict[str, Any]:
        found = dict(original(self))
        if "resumeAfter" in found:
            found.pop("allChangesForCluster", None)
        return found

    mp.setattr(ClusterStream, "_change_stream_options", options)


def _resumable_as(rule: Callable[[PyMongoError, bool], bool]) -> Breakage:
    def apply(mp: pytest.MonkeyPatch) -> None:
        original = sync_change_stream._resumable
        mp.setattr(sync_change_stream, "_resumable", lambda exc: rule(exc, original(exc)))

    return apply


def _cursor_not_found_only_resumed_by_next(mp: pytest.MonkeyPatch) -> None:
    """CursorNotFound is resumed inside next() (the blocking call) but raised from try_next() (tryNext)."""
    blocking = threading.local()
    original_next = ChangeStream.next

    def next_(self: Any) -> Any:
        blocking.on = True
        try:
            return original_next(self)
        finally:
            blocking.on = False

    mp.setattr(ChangeStream, "next", next_)
    mp.setattr(ChangeStream, "__next__", next_)
    _resumable_as(lambda exc, real: real and (getattr(blocking, "on", False) or not isinstance(exc, CursorNotFound)))(
        mp
    )


def _empty_batch_after_a_change_ignored(mp: pytest.MonkeyPatch) -> None:
    """Once a change was returned, an empty batch's postBatchResumeToken no longer replaces the cached token."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        before = self._resume_token
        change = original(self)
        if change is not None:
            self._returned_a_change = True
        elif getattr(self, "_returned_a_change", False):
            self._resume_token = before
        return change

    mp.setattr(ChangeStream, "try_next", try_next)


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
def test_a_break_on_one_path_fails_a_generated_check_and_no_other(run, monkeypatch, breakage):
    rules, reach, patch = BROKEN_DRIVER[breakage]
    for rule in rules.split(", "):
        checks = checks_of(rule)
        generated = [t for t in checks if _generated(t) and _on_the_path(t, reach)]
        others = [t for t in checks if not _generated(t)]
        assert generated, f"{breakage}: no generated check of {rule} states {dict(reach)}"
        unbroken = {t.test_id: _verdict(run, t).outcome for t in generated + others}
        passing = {test_id for test_id, outcome in unbroken.items() if outcome == "passed"}
        assert any(t.test_id in passing for t in generated), f"{breakage}: no generated check passes unbroken"
        patch(monkeypatch)
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
