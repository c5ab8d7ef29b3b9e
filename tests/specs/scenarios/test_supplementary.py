"""The supplementary scenarios (specs/scenarios/supplementary/) pass on pymongo, and each fails for a driver
that breaks the rule it checks.

The broken drivers are pymongo with one method patched in this process, the
way a driver author's mistake would look: an option dropped, an option sent
where it must not be, a default sent that must not be.
"""

from __future__ import annotations

import functools

import pytest
import yaml
from pymongo import change_stream_shared

from harness.formats.loaders import load_paths
from harness.formats.rule_files import load_catalogues
from tests.paths import REPO

SUPPLEMENTARY = REPO / "specs" / "scenarios" / "supplementary"
SERVER_RULES = REPO / "specs" / "coverage" / "server-rules.yml"
Stream = change_stream_shared._AgnosticChangeStream


@functools.cache
def all_scenarios():
    return tuple(load_paths([SUPPLEMENTARY]))


def rule_ids(test) -> list[str]:
    """The rule ids a scenario names: the leading "ID[, ID...]:" of its description."""
    head, colon, _ = test.description.partition(":")
    assert colon, f"{test.file}: {test.description!r} names no rule id"
    return [part.strip() for part in head.split(",")]


def scenarios_of(rule: str):
    """The supplementary tests that name ``rule``."""
    found = [test for test in all_scenarios() if rule in rule_ids(test)]
    assert found, f"no supplementary scenario names {rule!r}"
    return found


def assert_rule_fails(run, rules: str, breakage: str) -> None:
    """For each of ``rules`` (ids joined by ", "), at least one scenario naming it fails under ``breakage``,
    and none of them errors (an error proves nothing)."""
    from harness.engine.run import expectations_for

    known = expectations_for("auto", "secantusdb", "pymongo")
    for rule in rules.split(", "):
        # A scenario unbroken pymongo already fails (a known deviation) proves nothing about this breakage.
        tests = [test for test in scenarios_of(rule) if not known.naming(test.test_id)]
        assert tests, f"{breakage}: every {rule} scenario is a known pymongo deviation"
        outcomes = {test.description: run.verdict(test) for test in tests}
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

    return (
        options
        if {"resumeAfter", "startAfter"} & set(options)
        else {"startAtOperationTime": Timestamp(1, 1), **options}
    )


#: breakage -> (the rule whose scenarios must catch it, the pymongo method patched, how it changes the options)
BROKEN = {
    "maxAwaitTimeMS never on getMore": ("CS-OPT-MAXAWAIT", "_command_options", _without("maxAwaitTimeMS")),
    "maxAwaitTimeMS on the aggregate": ("CS-OPT-MAXAWAIT", "_command_options", _max_time_on_the_aggregate),
    "fullDocument: default always sent": (
        "CS-OPT-FULLDOC",
        "_change_stream_options",
        _unasked("fullDocument", "default"),
    ),
    "startAtOperationTime unasked": ("CS-OPT-DEFAULTS", "_change_stream_options", _start_at_operation_time_always),
    "updateLookup by default": (
        "SRV-UPDATE-DEFAULT",
        "_change_stream_options",
        _unasked("fullDocument", "updateLookup"),
    ),
    "batchSize dropped": ("CS-OPT-BATCHSIZE", "_command_options", _without("batchSize")),
    "batchSize sent unasked": ("CS-OPT-BATCHSIZE", "_command_options", _unasked("batchSize", 101)),
}


@pytest.mark.parametrize("test", all_scenarios(), ids=lambda test: test.description.split(":", 1)[0])
def test_each_scenario_passes_on_pymongo_unless_pymongo_is_known_to_break_its_rule(embedded_run, test):
    """Passes; or fails as pymongo's expected outcomes say (a driver deviation, pinned in the test modules);
    or is skipped because it emulates a server older than any pymongo 4.20 supports."""
    from harness.engine.run import expectations_for

    verdict = embedded_run.verdict(test)
    known = expectations_for("auto", "secantusdb", "pymongo").classify(test.test_id, verdict.outcome, verdict.causes)
    old_server = verdict.outcome == "skipped" and "supports no server below wire version" in verdict.message
    assert known.expected or old_server, f"{test.description}: {verdict.outcome}: {verdict.message} ({known.kind})"
    assert verdict.outcome != "skipped" or old_server, verdict.message


@pytest.mark.parametrize("breakage", sorted(BROKEN))
def test_a_driver_that_breaks_the_rule_fails_its_scenario(embedded_run, monkeypatch, breakage):
    rule, method, change = BROKEN[breakage]
    original = getattr(Stream, method)
    monkeypatch.setattr(Stream, method, lambda self: change(dict(original(self)), self))
    assert_rule_fails(embedded_run, rule, breakage)


def test_every_rule_a_scenario_names_is_catalogued():
    """Every id a scenario names is a rule of some catalogue (the spec's, with its SRV-SPEC server rules; the
    server overview's, each entry with its source; the others). A server rule may also be checked by a mapped
    upstream test or be one no run can observe, so not every catalogued rule is named by a scenario."""
    catalogued = {rule.id for catalogue in load_catalogues() for rule in catalogue.rules}
    server = yaml.safe_load(SERVER_RULES.read_text())["rules"]
    assert all(entry.get("source") and entry.get("paraphrase") for entry in server), SERVER_RULES
    named = {rule for test in all_scenarios() for rule in rule_ids(test)}
    assert named <= catalogued, sorted(named - catalogued)
