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


def _tests(rule: str):
    found = [t for t in load_paths([SUPPLEMENTARY]) if t.description.startswith(rule + ":")]
    assert found, rule
    return found


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


@pytest.mark.parametrize("rule", ["CS-OPT-MAXAWAIT", "CS-OPT-FULLDOC", "CS-OPT-DEFAULTS", "CS-OPT-BATCHSIZE",
                                  "SRV-UPDATE-DEFAULT"])
def test_each_scenario_passes_on_pymongo(embedded_run, rule):
    for test in _tests(rule):
        verdict = embedded_run.verdict(test)
        assert verdict.outcome == "passed", f"{test.description}: {verdict.message}"


@pytest.mark.parametrize("breakage", sorted(BROKEN))
def test_a_driver_that_breaks_the_rule_fails_its_scenario(embedded_run, monkeypatch, breakage):
    rule, method, change = BROKEN[breakage]
    original = getattr(Stream, method)
    monkeypatch.setattr(Stream, method, lambda self: change(dict(original(self)), self))
    outcomes = [embedded_run.verdict(test) for test in _tests(rule)]
    failed = [v for v in outcomes if v.outcome == "failed"]
    assert failed, f"{breakage}: every {rule} scenario still passed"
    assert all(v.outcome in ("passed", "failed") for v in outcomes), [v.message for v in outcomes]
