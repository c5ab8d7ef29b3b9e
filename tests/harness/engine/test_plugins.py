"""The plug-in table: what the installed entry points register, and adding a target or fault backend.

"Adding a target or fault backend is one module plus one registration": the
tests below do exactly that with a module written here, and run a real spec
test through a run built from the resulting table.
"""

from __future__ import annotations

import types
from dataclasses import replace

import pytest

from harness.core.model import TEST_RUNNER, Operation, SpecTest
from harness.core.ports import TargetUnavailable
from harness.engine.plugins import ENTRY_POINT_GROUP, FailPointSetup, Registry, TargetEntry, install, load_plugins
from harness.engine.run import HarnessRun, RunOptions
from tests.paths import REPO

FAIL_INSERTS = {
    "configureFailPoint": "failCommand",
    "mode": {"times": 1},
    "data": {"failCommands": ["insert"], "errorCode": 2},
}


def test_the_installed_entry_points_register_every_plug_in() -> None:
    registry = load_plugins()
    assert registry.problems == []
    assert set(registry.installed) == {
        "driver-pymongo",
        "driver-executor",
        "targets",
        "failpoints",
        "network-faults",
        "suite-spec",
        "suite-prose",
        "campaign",
    }
    assert {"pymongo", "pymongo-async", "pymongo-executor", "node"} <= set(registry.drivers)
    assert {"embedded", "embedded-no-test-commands", "secantusdb-daemon", "uri", "testcontainers"} <= set(
        registry.targets
    )
    assert list(registry.failpoint_modes) == ["native", "emulated", "auto"]
    assert {"spec", "prose"} <= set(registry.suites) and "campaign" in registry.commands
    assert {"networkFault", "clearNetworkFaults"} <= set(_operations())


def _operations() -> dict:
    from harness.engine.operation_table import TEST_RUNNER_OPERATIONS

    return TEST_RUNNER_OPERATIONS


def _copy(registry: Registry) -> Registry:
    """A private table for one test (the process-wide one stays as installed)."""
    return replace(
        registry,
        drivers=dict(registry.drivers),
        targets=dict(registry.targets),
        failpoint_modes=dict(registry.failpoint_modes),
        target_wrappers=list(registry.target_wrappers),
        skip_rules=list(registry.skip_rules),
        teardown_checks=list(registry.teardown_checks),
        suites=dict(registry.suites),
        commands=dict(registry.commands),
        problems=[],
        installed=[],
    )


def _new_plugin_module() -> types.ModuleType:
    """One module, as a user would write it: a target under a new name, and a fault backend that counts."""
    module = types.ModuleType("my_plugin")
    module.armed = []

    class CountingBackend:
        name = "counting"

        def __init__(self, inner):
            self.inner = inner

        def arm(self, command):
            module.armed.append(command["configureFailPoint"])
            self.inner.arm(command)

        def disarm(self, fail_point):
            self.inner.disarm(fail_point)

        def leftovers(self):
            return self.inner.leftovers()

    def my_target(argument):
        from harness.targets.embedded import EmbeddedSecantus

        return EmbeddedSecantus()

    def counting(target):
        from harness.shared.failpoint_backends import NativeFailPoints

        return FailPointSetup(CountingBackend(NativeFailPoints(target.admin)), target.uri)

    def install(registry):
        registry.add_target(TargetEntry("my-target", "the embedded server under another name", my_target))
        registry.add_failpoint_mode("counting", counting)

    module.install = install
    return module


def _fails_one_insert() -> SpecTest:
    return SpecTest(
        file="inline.yml",
        format="unified",
        description="one failed insert",
        comparator="unified",
        operations=[
            Operation("failPoint", TEST_RUNNER, {"client": "c", "failPoint": FAIL_INSERTS}, label="operations[0]")
        ],
    )


def test_a_new_target_and_fault_backend_are_one_module_and_one_registration() -> None:
    registry = _copy(load_plugins())
    module = _new_plugin_module()
    install(registry, "my-plugin", module)
    assert registry.installed == ["my-plugin"] and registry.problems == []
    with HarnessRun(RunOptions(target="my-target", failpoints="counting", expected="none"), registry) as run:
        verdict = run.verdict(_fails_one_insert())
        assert run.provenance is not None and run.provenance.failpoints == "counting"
        assert run.failpoints is not None and run.failpoints.armed == []  # the lifecycle turned it off
    assert verdict.outcome == "passed", verdict.message
    assert module.armed == ["failCommand"]


def test_a_broken_plug_in_is_a_recorded_problem_not_a_crash() -> None:
    registry = Registry()
    install(registry, "no-hook", types.ModuleType("no_hook"))
    assert registry.installed == [] and "no install(registry)" in registry.problems[0]
    with pytest.raises(TargetUnavailable, match=r"unknown target 'embedded'.*no-hook"):
        registry.make_target("embedded")


def test_the_entry_point_group_is_the_one_pyproject_declares() -> None:

    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    declared = pyproject["project"]["entry-points"][ENTRY_POINT_GROUP]
    assert set(declared) == set(load_plugins().installed)
