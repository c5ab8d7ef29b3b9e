"""The supplementary scenarios (specs/scenarios/supplementary/) pass on pymongo, and each fails for a driver
that breaks the rule it checks.

The broken drivers are pymongo with one method patched in this process, the
way a driver author's mistake would look: an option dropped, an option sent
where it must not be, a default sent that must not be.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pymongo import change_stream_shared

from harness.formats.loaders import load_paths

SUPPLEMENTARY = Path(__file__).resolve().parents[1] / "specs" / "scenarios" / "supplementary"
Stream = change_stream_shared._AgnosticChangeStream


def scenarios_of(prefix: str):
    """The supplementary tests whose description starts with ``prefix`` (a rule id and its colon, or "SRV-")."""
    found = [t for t in load_paths([SUPPLEMENTARY]) if t.description.startswith(prefix)]
    assert found, f"no supplementary scenario starts with {prefix!r}"
    return found


def assert_rule_fails(run, rule: str, breakage: str) -> None:
    """At least one scenario of ``rule`` fails under ``breakage``, and none errors (an error proves nothing)."""
    outcomes = {test.description: run.verdict(test) for test in scenarios_of(rule + ":")}
    assert any(v.outcome == "failed" for v in outcomes.values()), f"{breakage}: every {rule} scenario still passed"
    errors = {name: v.message for name, v in outcomes.items() if v.outcome not in ("passed", "failed")}
    assert not errors, errors


def _without(key):
    """An option the caller gave, dropped."""
    return lambda options, stream: {k: v for k, v in options.items() if k != key}


def _unasked(key, value):
    """An option sent although the caller gave none."""
    return lambda options, stream: {key: value, **options}


def _max_time_on_the_aggregate(options, stream):
    """maxAwaitTimeMS also sent as the aggregate's own maxTimeMS."""
    return {**options, "maxTimeMS": stream._max_await_time_ms} if stream._max_await_time_ms else options


def _start_at_operation_time_always(options, stream):
    """Every new stream pinned to an operation time the caller never gave."""
    from bson.timestamp import Timestamp

    return options if {"resumeAfter", "startAfter"} & set(options) else {"startAtOperationTime": Timestamp(1, 1),
                                                                         **options}


#: breakage -> (the rule whose scenarios must catch it, the pymongo method patched, how it changes the options)
BROKEN = {
    "maxAwaitTimeMS never on getMore": ("CS-OPT-MAXAWAIT", "_command_options", _without("maxAwaitTimeMS")),
    "maxAwaitTimeMS on the aggregate": ("CS-OPT-MAXAWAIT", "_command_options", _max_time_on_the_aggregate),
    "fullDocument: default always sent": ("CS-OPT-FULLDOC", "_change_stream_options",
                                          _unasked("fullDocument", "default")),
    "startAtOperationTime unasked": ("CS-OPT-DEFAULTS", "_change_stream_options", _start_at_operation_time_always),
    "updateLookup by default": ("SRV-UPDATE-DEFAULT", "_change_stream_options",
                                _unasked("fullDocument", "updateLookup")),
    "batchSize dropped": ("CS-OPT-BATCHSIZE", "_command_options", _without("batchSize")),
    "batchSize sent unasked": ("CS-OPT-BATCHSIZE", "_command_options", _unasked("batchSize", 101)),
}


@pytest.mark.parametrize("test", scenarios_of(""), ids=lambda test: test.description.split(":", 1)[0])
def test_each_scenario_passes_on_pymongo(embedded_run, test):
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "passed", f"{test.description}: {verdict.message}"


@pytest.mark.parametrize("breakage", sorted(BROKEN))
def test_a_driver_that_breaks_the_rule_fails_its_scenario(embedded_run, monkeypatch, breakage):
    rule, method, change = BROKEN[breakage]
    original = getattr(Stream, method)
    monkeypatch.setattr(Stream, method, lambda self: change(dict(original(self)), self))
    assert_rule_fails(embedded_run, rule, breakage)
