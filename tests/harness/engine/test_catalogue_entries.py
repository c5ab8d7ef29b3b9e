"""The catalogue's entries: one per driver and target, refused twice whatever the install order, read by name.

A new driver is one entry: the tests below register one written here, with a release axis of its own, and
make it by its name, at a release and with an argument, as ``--driver`` would.
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from harness.core.ports import DriverUnavailable
from harness.drivers.executor import plugin as executor_plugin
from harness.drivers.pymongo import plugin as pymongo_plugin
from harness.engine.plugins import EXECUTOR, DriverEntry, Registry, Releases, install, load_plugins


def _registry(*modules: tuple[str, Any]) -> Registry:
    registry = Registry()
    for name, module in modules:
        install(registry, name, module)
    return registry


def test_the_drivers_are_the_same_whatever_order_their_plug_ins_install_in() -> None:
    first = _registry(("driver-executor", executor_plugin), ("driver-pymongo", pymongo_plugin))
    second = _registry(("driver-pymongo", pymongo_plugin), ("driver-executor", executor_plugin))
    assert first.problems == second.problems == []
    assert sorted(first.drivers) == sorted(second.drivers)
    assert {"pymongo", "pymongo-async", "pymongo-executor", "node", "java", "go", "rust"} == set(first.drivers)


def _copycat() -> types.ModuleType:
    """A plug-in that registers ``node`` again: the second registration is its problem, not a silent replacement."""
    module = types.ModuleType("copycat")

    def install(registry: Registry) -> None:
        registry.add_driver(DriverEntry("node", "another node", EXECUTOR, make=lambda: None))  # type: ignore[arg-type,return-value]

    module.install = install  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize("copycat_first", [False, True])
def test_a_name_registered_twice_is_the_second_plug_in_s_problem(copycat_first: bool) -> None:
    modules = [("driver-executor", executor_plugin), ("copycat", _copycat())]
    registry = _registry(*(reversed(modules) if copycat_first else modules))
    assert len(registry.problems) == 1 and "driver 'node' is registered twice" in registry.problems[0]
    assert registry.problems[0].startswith("driver-executor" if copycat_first else "copycat")


def test_a_new_driver_is_one_entry_made_by_name_release_and_argument() -> None:
    made: list[str] = []
    registry = Registry()
    registry.add_driver(
        DriverEntry(
            "mine",
            "a driver of one's own",
            EXECUTOR,
            make=lambda: made.append("pinned"),  # type: ignore[arg-type,func-returns-value]
            releases=Releases("built from its tag", "1.2.0"),
            make_release=lambda release: made.append(f"release {release}"),  # type: ignore[arg-type,func-returns-value]
            argument="PATH",
            make_with_argument=lambda path: made.append(f"path {path}"),  # type: ignore[arg-type,func-returns-value]
            command=lambda rest: ["mine", rest],
        )
    )
    for spec in ("mine", "mine@1.3.0", "mine=/opt/mine"):
        registry.make_driver(spec)
    assert made == ["pinned", "release 1.3.0", "path /opt/mine"]
    assert registry.executor_command("mine@1.3.0") == ["mine", "@1.3.0"]


def test_a_release_or_argument_the_driver_does_not_take_is_refused_naming_it() -> None:
    registry = load_plugins()
    with pytest.raises(DriverUnavailable, match="the pymongo driver does not take a release"):
        registry.make_driver("pymongo@4.9.2")  # a pymongo release is the environment's (harness matrix)
    with pytest.raises(DriverUnavailable, match="the go driver does not take an argument"):
        registry.check_driver("go=/somewhere")
    with pytest.raises(DriverUnavailable, match=r"unknown driver 'mongosh'; known drivers: exec:\.\.\., go, java"):
        registry.check_driver("mongosh")


def test_an_in_process_driver_has_no_executor_command_and_exec_is_taken_as_written() -> None:
    registry = load_plugins()
    assert registry.executor_command("pymongo") is None
    assert registry.executor_command("exec:node my-executor.js") == "node my-executor.js"
    assert registry.executor_command("pymongo-executor")[-1] == "harness.drivers.executor.pymongo_reference"  # type: ignore[index]
