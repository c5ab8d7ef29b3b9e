"""The project's network-fault scenarios (specs/scenarios/network-*.yml), run by the real runner.

The run has ``--network-faults``: the network plug-in wraps the embedded
SecantusDB in :class:`ThroughToxiproxy`, registers the operations and clears
and checks the network after each test, as on the command line.
"""

from __future__ import annotations

import pytest

from faults.network import ToxiproxyUnavailable, find_binary
from faults.network.ops import NO_NETWORK_FAULTS, clear_after_test, network_fault, uses_network_faults
from harness.core.errors import HarnessError
from harness.core.model import TEST_RUNNER, Operation, SpecTest
from harness.engine.run import HarnessRun, RunOptions
from harness.formats.loaders import load_file
from tests.paths import REPO

SCENARIOS = REPO / "specs" / "scenarios"
SCENARIO_FILES = sorted(SCENARIOS.glob("network-*.yml"))

try:
    find_binary()
except ToxiproxyUnavailable as exc:
    pytest.skip(f"network fault scenarios need toxiproxy-server: {exc}", allow_module_level=True)


@pytest.fixture(scope="module")
def run():
    with HarnessRun(RunOptions(target="embedded", expected="none", network_faults=True)) as harness_run:
        assert harness_run.target.faults is not None
        yield harness_run


def scenario_tests() -> list[SpecTest]:
    return [test for path in SCENARIO_FILES for test in load_file(path)]


def test_there_are_scenarios_and_they_load():
    tests = scenario_tests()
    assert len(SCENARIO_FILES) >= 3 and len(tests) >= 6
    assert [t.test_id for t in tests if t.load_error] == []
    assert all(uses_network_faults(t) for t in tests)
    assert not uses_network_faults(SpecTest(file="f.yml", format="unified", description="d", comparator="unified"))


@pytest.mark.parametrize("test", scenario_tests(), ids=lambda t: t.test_id)
def test_scenario_passes_and_leaves_the_network_clean(run, test):
    verdict = run.verdict(test)
    left = clear_after_test(run.target.faults)
    assert verdict.outcome == "passed", verdict.message
    assert left == []


def one_operation(name: str, **arguments) -> SpecTest:
    return SpecTest(
        file="inline.yml",
        format="unified",
        description=name,
        comparator="unified",
        operations=[Operation(name=name, object=TEST_RUNNER, arguments=arguments, label="operations[0]")],
    )


def test_without_network_faults_such_tests_are_skipped_saying_why(embedded_run):
    verdict = embedded_run.verdict(one_operation("networkFault", proxy="down"))
    assert verdict.outcome == "skipped" and NO_NETWORK_FAULTS in verdict.message


def test_without_network_faults_the_operation_itself_says_what_is_missing(embedded_run):
    context = embedded_run.runner.case(one_operation("networkFault", proxy="down"))
    with pytest.raises(HarnessError, match=NO_NETWORK_FAULTS):
        network_fault(context, context.test.operations[0])


@pytest.mark.parametrize(
    "arguments, complaint",
    [
        ({}, "exactly one of"),
        ({"proxy": "down", "toxic": {"type": "latency"}}, "exactly one of"),
        ({"proxy": "sideways"}, '"down" or "up"'),
        ({"toxic": {"type": "latency", "attributes": {"latncy": 5}}}, "unknown attribute"),
        ({"removeToxic": "never_added"}, "no toxic named 'never_added'"),
        ({"proxy": "down", "proxyName": "elsewhere"}, "no proxy named 'elsewhere'"),
    ],
)
def test_a_malformed_network_fault_is_a_harness_error_naming_the_problem(run, arguments, complaint):
    verdict = run.verdict(one_operation("networkFault", **arguments))
    assert clear_after_test(run.target.faults) == []
    assert verdict.outcome == "error" and complaint in verdict.message, verdict.message
    assert "operations[0]" in verdict.message
