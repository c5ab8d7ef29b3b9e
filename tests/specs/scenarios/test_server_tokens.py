"""Three token-kind checks (prose_tests/token_checks.py) also check rules of the overview
(specs/coverage/test-rules-server.yml): resumeAfter with an event's token (SRV-RESUMEAFTER-EXCLUSIVE), resumeAfter
refusing an invalidate's token (SRV-RESUMEAFTER-NO-INVALIDATE), startAfter taking it (SRV-STARTAFTER-INVALIDATE).
Each fails for a SecantusDB whose resume-token handling is patched to break the overview's rule, and passes
without the patch.
"""

from __future__ import annotations

from typing import Any

import pytest
from secantus import changestreams
from secantus import commands as secantus_commands

from prose_tests.token_checks import TOKEN_CHECKS
from tests.specs.scenarios.test_supplementary_server import Breakage, overview_run_settings

RESUME_AFTER_EVENT = TOKEN_CHECKS["resumeAfter with an event's token starts at the next event"][1]
RESUME_AFTER_INVALIDATE = TOKEN_CHECKS["resumeAfter with an invalidate event's token is refused"][1]
START_AFTER_INVALIDATE = TOKEN_CHECKS["startAfter with an invalidate event's token starts after the invalidate"][1]


@pytest.fixture(scope="module")
def overview_run():
    with overview_run_settings() as run:
        yield run


def _resume_point_moved(by: int) -> Breakage:
    """A token read as pointing ``by`` oplog entries from where it does: -1 repeats its event, +1 skips the next."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.parse_resume_token

        def parse_resume_token(token: Any) -> Any:
            data = original(token)
            data.seq += by
            return data

        mp.setattr(changestreams, "parse_resume_token", parse_resume_token)

    return apply


def _invalidate_flag_lost(mp: pytest.MonkeyPatch) -> None:
    """Tokens read as if no invalidate had made them, so resumeAfter takes an invalidate's token."""
    original = changestreams.parse_resume_token

    def parse_resume_token(token: Any) -> Any:
        data = original(token)
        data.from_invalidate = False
        return data

    mp.setattr(changestreams, "parse_resume_token", parse_resume_token)


def _start_after_refuses_invalidates(mp: pytest.MonkeyPatch) -> None:
    """startAfter held to resumeAfter's rule: an invalidate's token is refused (InvalidResumeToken)."""
    original = secantus_commands._aggregate_change_stream

    def aggregate(doc: Any, ctx: Any, coll: Any, pipeline: list[Any], batch_size: int) -> dict[str, Any]:
        token = pipeline[0]["$changeStream"].get("startAfter")
        if token is not None and changestreams.parse_resume_token(token).from_invalidate:
            return {"ok": 0.0, "errmsg": "an invalidate's token", "code": 260, "codeName": "InvalidResumeToken"}
        return original(doc, ctx, coll, pipeline, batch_size)

    mp.setattr(secantus_commands, "_aggregate_change_stream", aggregate)


#: breakage -> (the rule the check must catch it for, the patch, the check)
BROKEN_TOKENS: dict[str, tuple[str, Breakage, Any]] = {
    "resumeAfter repeats the token's event": ("SRV-RESUMEAFTER-EXCLUSIVE", _resume_point_moved(-1), RESUME_AFTER_EVENT),
    "resumeAfter skips the event after the token": (
        "SRV-RESUMEAFTER-EXCLUSIVE",
        _resume_point_moved(1),
        RESUME_AFTER_EVENT,
    ),
    "resumeAfter takes an invalidate's token": (
        "SRV-RESUMEAFTER-NO-INVALIDATE",
        _invalidate_flag_lost,
        RESUME_AFTER_INVALIDATE,
    ),
    "startAfter refuses an invalidate's token": (
        "SRV-STARTAFTER-INVALIDATE",
        _start_after_refuses_invalidates,
        START_AFTER_INVALIDATE,
    ),
}


@pytest.mark.parametrize(
    "check",
    [RESUME_AFTER_EVENT, RESUME_AFTER_INVALIDATE, START_AFTER_INVALIDATE],
    ids=["resumeAfter-event", "resumeAfter-invalidate", "startAfter-invalidate"],
)
def test_the_token_checks_pass_on_secantusdb(overview_run, check):
    verdict = overview_run.verdict(check)
    assert verdict.outcome == "passed", verdict.message


@pytest.mark.parametrize("breakage", sorted(BROKEN_TOKENS))
def test_a_server_that_breaks_a_token_rule_fails_its_check(overview_run, monkeypatch, breakage):
    _, patch, check = BROKEN_TOKENS[breakage]
    patch(monkeypatch)
    verdict = overview_run.verdict(check)
    assert verdict.outcome == "failed", f"{breakage}: {verdict.outcome}: {verdict.message}"
