"""The server checks (prose_tests/server_checks.py) judge the server alone, and each is proven by a broken server.

SecantusDB 0.7 as shipped opens a change stream for an aggregate naming two start points (a known deviation,
reproduced by harness/targets/repro/secantusdb_two_start_points.py), so the check fails on it and names every
pair; SecantusDB patched to refuse each pair, as mongod does, passes; one that refuses one pair only still
fails, naming the two others (a breakage of one code path of three).
"""

from __future__ import annotations

from typing import Any

import pytest
from secantus import changestreams
from secantus import commands as secantus_commands
from secantus.storage import Storage

from prose_tests.server_checks import START_POINTS, load_server_checks

CHECKS = {check.name.split(":", 1)[0]: check for check in load_server_checks()}


def _refuses(pairs: set[frozenset[str]]):
    """SecantusDB refusing (code 40674, as mongod) an aggregate whose $changeStream names one of ``pairs``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = secantus_commands._aggregate_change_stream

        def aggregate(doc: Any, ctx: Any, coll: Any, pipeline: list[dict[str, Any]], batch_size: int) -> Any:
            named = frozenset(pipeline[0].get("$changeStream", {})) & set(START_POINTS) if pipeline else frozenset()
            if named in pairs:
                return {"ok": 0.0, "errmsg": "only one start point may be given", "code": 40674}
            return original(doc, ctx, coll, pipeline, batch_size)

        mp.setattr(secantus_commands, "_aggregate_change_stream", aggregate)

    return apply


EVERY_PAIR = {
    frozenset(p)
    for p in (
        {"resumeAfter", "startAfter"},
        {"resumeAfter", "startAtOperationTime"},
        {"startAfter", "startAtOperationTime"},
    )
}


def test_two_start_points_accepted_as_shipped_fails_naming_every_pair(embedded_run):
    """The deviation, pinned: a SecantusDB that fixes it shows up here (and as an unexpected pass in runs)."""
    verdict = embedded_run.verdict(CHECKS["SRV-START-EXCLUSIVE"])
    assert verdict.outcome == "failed", verdict.message
    for pair in (
        "resumeAfter with startAfter",
        "resumeAfter with startAtOperationTime",
        "startAfter with startAtOperationTime",
    ):
        assert pair in verdict.message, verdict.message


def test_a_server_that_refuses_every_pair_passes(embedded_run, monkeypatch):
    _refuses(EVERY_PAIR)(monkeypatch)
    verdict = embedded_run.verdict(CHECKS["SRV-START-EXCLUSIVE"])
    assert verdict.outcome == "passed", verdict.message


def test_a_server_that_refuses_one_pair_only_fails_naming_the_others(embedded_run, monkeypatch):
    _refuses({frozenset({"resumeAfter", "startAfter"})})(monkeypatch)
    verdict = embedded_run.verdict(CHECKS["SRV-START-EXCLUSIVE"])
    assert verdict.outcome == "failed", verdict.message
    assert "resumeAfter with startAfter" not in verdict.message
    assert "startAfter with startAtOperationTime" in verdict.message, verdict.message


def _start_at_operation_time_exclusive(mp: pytest.MonkeyPatch) -> None:
    """startAtOperationTime resolved to the oplog entry after the one at that time."""
    original = Storage.find_seq_for_ts
    mp.setattr(Storage, "find_seq_for_ts", lambda self, ts, **kwargs: original(self, ts, **kwargs) + 1)


def _tokens_not_bound_to_their_stream(mp: pytest.MonkeyPatch) -> None:
    """Every namespace matches every stream's scope, so a token of another collection is found in this one."""
    mp.setattr(changestreams, "_scope_matches", lambda ns, scope: True)


#: breakage -> (the rule whose server check must fail, the patch); specs/coverage/breakages/server-checks.yml
BROKEN_SERVER_CHECKS = {
    "startAtOperationTime exclusive": ("SRV-START-AT-TIME", _start_at_operation_time_exclusive),
    "tokens not bound to their stream": ("SRV-TOKEN-MUST-EXIST", _tokens_not_bound_to_their_stream),
}


@pytest.mark.parametrize("rule", ["SRV-START-AT-TIME", "SRV-TOKEN-MUST-EXIST"])
def test_each_check_passes_on_secantusdb(embedded_run, rule):
    verdict = embedded_run.verdict(CHECKS[rule])
    assert verdict.outcome == "passed", verdict.message


@pytest.mark.parametrize("breakage", sorted(BROKEN_SERVER_CHECKS))
def test_a_server_that_breaks_the_rule_fails_its_check(embedded_run, monkeypatch, breakage):
    rule, patch = BROKEN_SERVER_CHECKS[breakage]
    patch(monkeypatch)
    verdict = embedded_run.verdict(CHECKS[rule])
    assert verdict.outcome == "failed", f"{breakage}: {verdict.outcome} {verdict.message}"


def test_the_check_is_skipped_where_change_streams_cannot_run(embedded_run, monkeypatch):
    monkeypatch.setattr(embedded_run.target.info, "topology", "single")
    verdict = embedded_run.verdict(CHECKS["SRV-START-EXCLUSIVE"])
    assert verdict.outcome == "skipped" and "topology single" in verdict.message, verdict.message
