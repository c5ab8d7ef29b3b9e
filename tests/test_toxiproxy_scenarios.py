"""The project's network-fault scenarios (specs/scenarios/network-*.yml), run by the real runner.

The target is the embedded SecantusDB wrapped in :class:`ThroughToxiproxy`,
and the runner is given ``network_faults`` as the session will give it; after
each test the network is cleared and checked, as the session's teardown will.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import faults.network_ops  # noqa: F401 - registers networkFault / clearNetworkFaults
from faults.failpoints import NativeFailPoints
from harness.engine.failpoints import FailPointManager
from faults.network import ToxiproxyUnavailable, find_binary
from faults.network_names import NO_NETWORK_FAULTS, uses_network_faults
from faults.network_ops import clear_after_test
from harness.drivers import make_driver
from harness.formats.loaders import load_file
from harness.core.model import TEST_RUNNER, Operation, SpecTest
from harness.engine.spec_runner import SpecRunner
from harness.targets import make_target

SCENARIOS = Path(__file__).resolve().parents[1] / "specs" / "scenarios"
SCENARIO_FILES = sorted(SCENARIOS.glob("network-*.yml"))

try:
    find_binary()
except ToxiproxyUnavailable as exc:
    pytest.skip(f"network fault scenarios need toxiproxy-server: {exc}", allow_module_level=True)


@pytest.fixture(scope="module")
def runner():
    from faults.network.target import ThroughToxiproxy

    target = ThroughToxiproxy(make_target("embedded"))
    target.start()
    try:
        spec_runner = SpecRunner(target, make_driver("pymongo"), FailPointManager(NativeFailPoints(target.admin)))
        spec_runner.network_faults = target.faults
        yield spec_runner
    finally:
        target.stop()


def scenario_tests() -> list[SpecTest]:
    return [test for path in SCENARIO_FILES for test in load_file(path)]


def test_there_are_scenarios_and_they_load():
    tests = scenario_tests()
    assert len(SCENARIO_FILES) >= 3 and len(tests) >= 6
    assert [t.test_id for t in tests if t.load_error] == []
    assert all(uses_network_faults(t) for t in tests)
    assert not uses_network_faults(SpecTest(file="f.yml", format="unified", description="d", comparator="unified"))


@pytest.mark.parametrize("test", scenario_tests(), ids=lambda t: t.test_id)
def test_scenario_passes_and_leaves_the_network_clean(runner, test):
    verdict = runner.run(test)
    left = clear_after_test(runner.network_faults)
    assert verdict.outcome == "passed", verdict.message
    assert left == []


def one_operation(name: str, **arguments) -> SpecTest:
    return SpecTest(file="inline.yml", format="unified", description=name, comparator="unified",
                    operations=[Operation(name=name, object=TEST_RUNNER, arguments=arguments, label="operations[0]")])


def test_without_network_faults_the_operation_says_what_is_missing(runner):
    bare = SpecRunner(runner.target, runner.driver, runner.failpoints)
    verdict = bare.run(one_operation("networkFault", proxy="down"))
    assert verdict.outcome == "error" and NO_NETWORK_FAULTS in verdict.message


@pytest.mark.parametrize("arguments, complaint", [
    ({}, "exactly one of"),
    ({"proxy": "down", "toxic": {"type": "latency"}}, "exactly one of"),
    ({"proxy": "sideways"}, "\"down\" or \"up\""),
    ({"toxic": {"type": "latency", "attributes": {"latncy": 5}}}, "unknown attribute"),
    ({"removeToxic": "never_added"}, "no toxic named 'never_added'"),
    ({"proxy": "down", "proxyName": "elsewhere"}, "no proxy named 'elsewhere'"),
])
def test_a_malformed_network_fault_is_a_harness_error_naming_the_problem(runner, arguments, complaint):
    verdict = runner.run(one_operation("networkFault", **arguments))
    assert clear_after_test(runner.network_faults) == []
    assert verdict.outcome == "error" and complaint in verdict.message, verdict.message
    assert "operations[0]" in verdict.message
