"""Reading the assertion traces (``specs/coverage/traces.yml``): what each project scenario asserts, and why.

A check that flags a driver or a server for something its spec does not require is worse than no
check. So every assertion of every supplementary scenario is traced to the rule it checks, at the level
the spec gives it (MUST or SHOULD), with the conditions under which it is fair: the server and wire
version, the topology, and what the server must have sent. A known deviation (an entry of
``specs/expectations/``) carries its own trace: the rule it breaks, its signature, its reason and its
reproduction (docs/causes.md); :func:`trace_problems` checks that the rule is catalogued and is a MUST.

:func:`load_traces` checks each entry's shape and raises :class:`~harness.formats.rule_files.RuleFileError`
naming the file and the entry; :func:`trace_problems` checks the traces against the scenarios, the rule
catalogues and the expected-outcome entries, and lists what does not line up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.rules import RULE_ID, Rule
from harness.formats.rule_files import COVERAGE_DIR, LEVELS, RuleFileError, _read_yaml

#: The project's trace file (``specs/coverage/traces.yml``, as installed).
TRACES = COVERAGE_DIR / "traces.yml"

#: ``check``: the assertion judges the rule; ``precondition``: it only makes sure the rule's case arose.
ROLES = ("check", "precondition")
_TRACE_KEYS = {"test", "server", "topology", "asserts", "note"}
_ASSERT_KEYS = {"that", "rule", "level", "role", "sent", "server", "topology", "note"}


@dataclass(frozen=True)
class TracedAssertion:
    """One assertion of a scenario, in the project's words, and the rule it answers to."""

    that: str
    rule: str
    level: str
    role: str
    #: The conditions: server (and wire) version, topology, and what the server must have sent.
    server: str
    topology: str
    sent: str
    note: str = ""


@dataclass(frozen=True)
class TestTrace:
    """The traced assertions of one scenario (by test id)."""

    __test__ = False  # not a pytest test class

    test: str
    asserts: tuple[TracedAssertion, ...]
    where: str


@dataclass(frozen=True)
class Traces:
    tests: tuple[TestTrace, ...]

    def by_test(self) -> dict[str, TestTrace]:
        return {trace.test: trace for trace in self.tests}


def _text(entry: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = entry.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise RuleFileError(f"{where}: '{key}' is required, a non-empty string")
    return value


def _level(entry: Mapping[str, Any], where: str) -> str:
    level = entry.get("level")
    if not isinstance(level, str) or level not in LEVELS:
        raise RuleFileError(f"{where}: level is one of {', '.join(LEVELS)}, got {level!r}")
    return level


def _rule(entry: Mapping[str, Any], where: str) -> str:
    rule = entry.get("rule")
    if not isinstance(rule, str) or not RULE_ID.match(rule):
        raise RuleFileError(f"{where}: rule is one rule id (CS-... or SRV-...), got {rule!r}")
    return rule


def _unknown_keys(entry: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(entry) - known)
    if unknown:
        raise RuleFileError(f"{where}: unknown keys {', '.join(unknown)}; known: {', '.join(sorted(known))}")


def _assertion(entry: Any, trace: Mapping[str, Any], where: str) -> TracedAssertion:
    if not isinstance(entry, dict):
        raise RuleFileError(f"{where}: each assertion is a mapping")
    _unknown_keys(entry, _ASSERT_KEYS, where)
    role = entry.get("role", "check")
    if role not in ROLES:
        raise RuleFileError(f"{where}: role is one of {', '.join(ROLES)}, got {role!r}")
    return TracedAssertion(
        that=_text(entry, "that", where),
        rule=_rule(entry, where),
        level=_level(entry, where),
        role=role,
        server=_text(entry, "server", where, trace.get("server")),
        topology=_text(entry, "topology", where, trace.get("topology")),
        sent=_text(entry, "sent", where),
        note=str(entry.get("note") or ""),
    )


def _test_trace(entry: Any, where: str) -> TestTrace:
    if not isinstance(entry, dict) or not isinstance(entry.get("test"), str):
        raise RuleFileError(f"{where}: each trace is a mapping with a 'test' (a test id)")
    where = f"{where} ({entry['test']})"
    _unknown_keys(entry, _TRACE_KEYS, where)
    asserts = entry.get("asserts")
    if not isinstance(asserts, list) or not asserts:
        raise RuleFileError(f"{where}: 'asserts' is a non-empty list")
    return TestTrace(
        test=entry["test"],
        where=where,
        asserts=tuple(
            _assertion(item, entry, f"{where}: assertion {number}") for number, item in enumerate(asserts, start=1)
        ),
    )


def trace_paths() -> list[Path]:
    """``traces.yml`` and every ``traces-*.yml`` beside it (one per area of scenarios)."""
    return [TRACES, *sorted(TRACES.parent.glob("traces-*.yml"))]


def load_traces(path: Path | None = None) -> Traces:
    """The trace files: ``traces``, one entry per scenario.

    ``path`` None: every trace file of the project (:func:`trace_paths`); a scenario traced twice is an error."""
    tests: list[TestTrace] = []
    for one in [path] if path is not None else trace_paths():
        data = _read_yaml(one)
        if not isinstance(data, dict) or not isinstance(data.get("traces"), list):
            raise RuleFileError(f"{one}: expected a mapping with a 'traces' list")
        if "deviations" in data:
            raise RuleFileError(
                f"{one}: 'deviations' are gone: an expected-outcomes entry carries its own rule, signature, reason "
                "and reproduction (docs/causes.md)"
            )
        tests += [_test_trace(entry, f"{one}: trace {number}") for number, entry in enumerate(data["traces"], 1)]
    seen: set[str] = set()
    for trace in tests:
        if trace.test in seen:
            raise RuleFileError(f"{trace.where}: the test is traced twice")
        seen.add(trace.test)
    return Traces(tests=tuple(tests))


def trace_problems(
    traces: Traces, rules: Iterable[Rule], tests: Mapping[str, Iterable[str]], expected: Iterable[tuple[str, str]]
) -> list[str]:
    """What does not line up, one line each (``[]`` when everything does).

    ``rules``: every catalogue's rules; ``tests``: each scenario's test id and the rule ids its description
    names; ``expected``: each expected-outcome entry as (``FILE#id``, the rule it names).
    """
    catalogue = {rule.id: rule for rule in rules}
    problems: list[str] = []
    traced = traces.by_test()
    problems += [f"{test}: a scenario with no trace" for test in tests if test not in traced]
    for trace in traces.tests:
        if trace.test not in tests:
            problems.append(f"{trace.where}: no scenario has this test id")
            continue
        checked = {a.rule for a in trace.asserts if a.role == "check"}
        problems += [
            f"{trace.where}: names {rule} but no assertion checks it"
            for rule in tests[trace.test]
            if rule not in checked
        ]
        for number, assertion in enumerate(trace.asserts, start=1):
            where = f"{trace.where}: assertion {number}"
            problems += _assertion_problems(catalogue.get(assertion.rule), assertion, where)
    for where, rule in expected:
        if rule not in catalogue:
            problems.append(f"{where}: no catalogue has {rule}")
        elif catalogue[rule].level != "MUST":
            problems.append(f"{where}: a known deviation must break a MUST, not a {catalogue[rule].level} ({rule})")
    return problems


def _assertion_problems(rule: Rule | None, assertion: TracedAssertion, where: str) -> list[str]:
    if rule is None:
        return [f"{where}: no catalogue has {assertion.rule}"]
    problems = []
    if rule.level == "SHOULD" and assertion.level == "MUST":
        problems.append(f"{where}: {rule.id} is a SHOULD; an assertion cannot hold it as a MUST")
    if rule.not_checkable and assertion.role == "check":
        problems.append(f"{where}: {rule.id} is not checkable ({rule.not_checkable[:80]}...)")
    return problems
