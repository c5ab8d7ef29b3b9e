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


def _no_max_await_on_getmore(original):
    def command_options(self):
        return {k: v for k, v in original(self).items() if k != "maxAwaitTimeMS"}
    return "_command_options", command_options


def _max_time_on_the_aggregate(original):
    """maxAwaitTimeMS also sent as the aggregate's own maxTimeMS."""
    def command_options(self):
        options = dict(original(self))
        if self._max_await_time_ms is not None:
            options["maxTimeMS"] = self._max_await_time_ms
        return options
    return "_command_options", command_options


def _full_document_always(original):
    def change_stream_options(self):
        return {"fullDocument": "default", **original(self)}
    return "_change_stream_options", change_stream_options


def _update_lookup_by_default(original):
    """A driver that asks for updateLookup when the user asked for nothing."""
    def change_stream_options(self):
        return {"fullDocument": "updateLookup", **original(self)}
    return "_change_stream_options", change_stream_options


def _start_at_operation_time_always(original):
    """A driver that pins every new stream to an operation time the caller never gave."""
    from bson.timestamp import Timestamp

    def change_stream_options(self):
        options = dict(original(self))
        if not {"resumeAfter", "startAfter"} & set(options):
            options.setdefault("startAtOperationTime", Timestamp(1, 1))
        return options
    return "_change_stream_options", change_stream_options


def _batch_size_dropped(original):
    def command_options(self):
        return {k: v for k, v in original(self).items() if k != "batchSize"}
    return "_command_options", command_options


def _batch_size_always(original):
    def command_options(self):
        options = dict(original(self))
        options.setdefault("batchSize", 101)
        return options
    return "_command_options", command_options


BROKEN = {
    "maxAwaitTimeMS never on getMore": ("CS-OPT-MAXAWAIT", "_command_options", _no_max_await_on_getmore),
    "maxAwaitTimeMS on the aggregate": ("CS-OPT-MAXAWAIT", "_command_options", _max_time_on_the_aggregate),
    "fullDocument: default always sent": ("CS-OPT-FULLDOC", "_change_stream_options", _full_document_always),
    "updateLookup by default": ("SRV-UPDATE-DEFAULT", "_change_stream_options", _update_lookup_by_default),
    "startAtOperationTime unasked": ("CS-OPT-DEFAULTS", "_change_stream_options", _start_at_operation_time_always),
    "batchSize dropped": ("CS-OPT-BATCHSIZE", "_command_options", _batch_size_dropped),
    "batchSize sent unasked": ("CS-OPT-BATCHSIZE", "_command_options", _batch_size_always),
}


@pytest.mark.parametrize("rule", ["CS-OPT-MAXAWAIT", "CS-OPT-FULLDOC", "CS-OPT-DEFAULTS", "CS-OPT-BATCHSIZE",
                                  "SRV-UPDATE-DEFAULT"])
def test_each_scenario_passes_on_pymongo(embedded_run, rule):
    for test in _tests(rule):
        verdict = embedded_run.verdict(test)
        assert verdict.outcome == "passed", f"{test.description}: {verdict.message}"


@pytest.mark.parametrize("breakage", sorted(BROKEN))
def test_a_driver_that_breaks_the_rule_fails_its_scenario(embedded_run, monkeypatch, breakage):
    rule, method, make = BROKEN[breakage]
    name, replacement = make(getattr(Stream, method))
    monkeypatch.setattr(Stream, name, replacement)
    outcomes = [embedded_run.verdict(test) for test in _tests(rule)]
    failed = [v for v in outcomes if v.outcome == "failed"]
    assert failed, f"{breakage}: every {rule} scenario still passed"
    assert all(v.outcome in ("passed", "failed") for v in outcomes), [v.message for v in outcomes]
