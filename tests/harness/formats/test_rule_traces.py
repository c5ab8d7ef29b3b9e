"""The assertion traces (specs/coverage/traces.yml): every project scenario and every known deviation is traced.

Each assertion of a supplementary scenario names the rule it answers to, the level it holds it to and the
conditions that make it fair; each expected-outcome entry names the MUST its test breaks. The checks run on
the committed files, and on small written ones so that each problem is shown to be found.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.expectations import RULELESS_KINDS
from harness.core.rules import Rule, rules_from_description
from harness.formats.expectations_file import load_expectations
from harness.formats.loaders import load_paths
from harness.formats.rule_files import RuleFileError, load_catalogues
from harness.formats.rule_traces import TRACES, Traces, load_traces, trace_problems
from harness.formats.spec_rules import normalise, parse_sentences
from tests.paths import REPO, SHARED_SPECS

SUPPLEMENTARY = REPO / "specs" / "scenarios" / "supplementary"
EXPECTATIONS = REPO / "specs" / "expectations"
REFERENCE = SHARED_SPECS / "reference"
#: The reference texts the project paraphrases and must not copy (their licence is non-commercial).
REFERENCE_TEXTS = (
    "change-streams.md",
    "mongodb-server-change-streams-overview.md",
    "unified-test-format.md",
    "resume-tokens-and-startAfter.txt",
)


def scenario_rules() -> dict[str, list[str]]:
    """Each traced test's id and the rules its name gives: the supplementary scenarios and the server checks."""
    from prose_tests.server_checks import load_server_checks

    rules = {test.test_id: rules_from_description(test.description) for test in load_paths([SUPPLEMENTARY])}
    checks = {f"{c.format}/{c.file}::{c.name}": rules_from_description(c.name) for c in load_server_checks()}
    return {**rules, **checks}


def expected_entries() -> list[tuple[str, str]]:
    return [
        (entry.ref, entry.rule)
        for path in sorted(EXPECTATIONS.rglob("*.yml"))
        for entry in load_expectations(path).known
        if entry.kind not in RULELESS_KINDS  # a push mode's read-ahead names no rule (the loader holds it to that)
    ]


def all_rules() -> list[Rule]:
    return [rule for catalogue in load_catalogues() for rule in catalogue.rules]


def test_every_scenario_assertion_and_known_deviation_is_traced_on_the_committed_files():
    traces = load_traces()
    assert trace_problems(traces, all_rules(), scenario_rules(), expected_entries()) == []
    assert expected_entries(), "the known deviations are checked (every expectation entry names a catalogued MUST)"


def test_a_scenario_that_names_a_rule_no_run_can_observe_is_a_problem(tmp_path):
    """CS-RESUME-BARE-NOPOINT needs a reply the spec calls malformed; a scenario checking it is a false alarm."""
    rules = {rule.id: rule for rule in all_rules()}
    assert rules["CS-RESUME-BARE-NOPOINT"].not_checkable and rules["CS-RESUME-BARE-ORIGINAL"].not_checkable
    bare = "unified/resume-without-point::CS-RESUME-BARE-NOPOINT: the resume is the original aggregate"
    traces = _traces(
        f"""
traces:
  - test: "{bare}"
    server: any
    topology: any
    asserts:
      - {{that: no resume point, rule: CS-RESUME-BARE-NOPOINT, level: MUST, sent: neither token nor operationTime}}
""",
        tmp_path,
    )
    problems = trace_problems(traces, rules.values(), {bare: ["CS-RESUME-BARE-NOPOINT"]}, [])
    assert len(problems) == 1 and "CS-RESUME-BARE-NOPOINT is not checkable" in problems[0], problems


def _traces(text: str, tmp_path: Path) -> Traces:
    path = tmp_path / "traces.yml"
    path.write_text(text)
    return load_traces(path)


RULES = [
    Rule(id="CS-API-OPEN", level="MUST", section="s", paraphrase="p"),
    Rule(id="CS-API-LOG", level="SHOULD", section="s", paraphrase="p"),
]


def test_each_mismatch_between_traces_scenarios_catalogue_and_expectations_is_named(tmp_path):
    traces = _traces(
        """
traces:
  - test: "unified/a::CS-API-OPEN, CS-API-LOG: both"
    server: any
    topology: any
    asserts:
      - {that: opens, rule: CS-API-OPEN, level: MUST, sent: nothing}
      - {that: logs, rule: CS-API-LOG, level: MUST, sent: nothing}
      - {that: unknown, rule: CS-API-GONE, level: MUST, sent: nothing}
  - test: "unified/a::gone"
    server: any
    topology: any
    asserts: [{that: x, rule: CS-API-OPEN, level: MUST, sent: nothing}]
""",
        tmp_path,
    )
    scenarios = {
        "unified/a::CS-API-OPEN, CS-API-LOG: both": ["CS-API-OPEN", "CS-API-LOG"],
        "unified/a::CS-API-OPEN: untraced": ["CS-API-OPEN"],
    }
    entries = [("t.yml#log", "CS-API-LOG"), ("t.yml#gone", "CS-API-GONE")]
    problems = "\n".join(trace_problems(traces, RULES, scenarios, entries))
    assert "unified/a::CS-API-OPEN: untraced: a scenario with no trace" in problems
    assert "(unified/a::gone): no scenario has this test id" in problems
    assert "assertion 2: CS-API-LOG is a SHOULD; an assertion cannot hold it as a MUST" in problems
    assert "assertion 3: no catalogue has CS-API-GONE" in problems
    assert "t.yml#gone: no catalogue has CS-API-GONE" in problems
    assert "t.yml#log: a known deviation must break a MUST, not a SHOULD (CS-API-LOG)" in problems
    unchecked = trace_problems(
        _traces(
            """
traces:
  - test: "unified/a::CS-API-OPEN: x"
    server: any
    topology: any
    asserts: [{that: x, rule: CS-API-OPEN, level: MUST, role: precondition, sent: nothing}]
""",
            tmp_path,
        ),
        RULES,
        {"unified/a::CS-API-OPEN: x": ["CS-API-OPEN"]},
        [],
    )
    where = f"{tmp_path / 'traces.yml'}: trace 1 (unified/a::CS-API-OPEN: x)"
    assert unchecked == [f"{where}: names CS-API-OPEN but no assertion checks it"], "a precondition checks nothing"


@pytest.mark.parametrize(
    "entry,message",
    [
        ("{that: x, rule: CS-API-OPEN, level: MUST}", "assertion 1: 'sent' is required"),
        ("{that: x, rule: CS-API-OPEN, level: must, sent: x}", "level is one of MUST, SHOULD, got 'must'"),
        ("{that: x, rule: cs-api-open, level: MUST, sent: x}", "rule is one rule id"),
        ("{that: x, rule: CS-API-OPEN, level: MUST, sent: x, role: assumption}", "role is one of check, precondition"),
        ("{that: x, rule: CS-API-OPEN, level: MUST, sent: x, when: y}", "unknown keys when"),
    ],
    ids=["no sent", "level", "rule id", "role", "unknown key"],
)
def test_a_malformed_trace_names_the_file_the_trace_and_the_assertion(tmp_path, entry, message):
    with pytest.raises(RuleFileError, match=r"traces.yml: trace 1 \(unified/a::t\): ") as raised:
        _traces(f'traces:\n  - {{test: "unified/a::t", server: any, topology: any, asserts: [{entry}]}}\n', tmp_path)
    assert message in str(raised.value)


def test_conditions_are_inherited_from_the_trace_and_required_somewhere(tmp_path):
    traces = _traces(
        """
traces:
  - test: "unified/a::t"
    server: 4.4+
    topology: any
    asserts: [{that: x, rule: CS-API-OPEN, level: MUST, sent: x, topology: replicaset}]
""",
        tmp_path,
    )
    (assertion,) = traces.tests[0].asserts
    assert (assertion.server, assertion.topology, assertion.role) == ("4.4+", "replicaset", "check")
    with pytest.raises(RuleFileError, match="'server' is required"):
        _traces(
            'traces:\n  - {test: "unified/a::t", asserts: [{that: x, rule: CS-API-OPEN, level: MUST, sent: x}]}\n',
            tmp_path,
        )
    with pytest.raises(RuleFileError, match="the test is traced twice"):
        _traces(
            "traces:\n" + '  - {test: "unified/a::t", server: a, topology: b, '
            "asserts: [{that: x, rule: CS-API-OPEN, level: MUST, sent: x}]}\n" * 2,
            tmp_path,
        )


@pytest.mark.parametrize("name", REFERENCE_TEXTS)
def test_the_coverage_files_copy_no_sentence_of_the_reference_texts(name):
    """Licence: paraphrases only; no run of eight words of a reference sentence appears in specs/coverage/."""
    path = REFERENCE / name
    if not path.is_file():
        pytest.skip(f"no reference text at {path}")
    ours = " ".join(normalise(" ".join(p.read_text() for p in sorted(TRACES.parent.glob("*.yml")))).split())
    for sentence in parse_sentences(path.read_text(encoding="utf-8")):
        words = normalise(sentence.text).split()
        for start in range(max(0, len(words) - 7)):
            assert " ".join(words[start : start + 8]) not in ours, f"{name}:{sentence.line}"
