"""docs/catalogue.md is what the registry says, and the CLI reads the same entries (``harness catalogue``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from harness.app import cli
from harness.app.catalogue import MARKDOWN_PATH, driver_help, markdown, target_help
from harness.engine.plugins import load_plugins
from tests.paths import REPO


def test_the_committed_catalogue_is_the_registry_s() -> None:
    committed = (REPO / MARKDOWN_PATH).read_text(encoding="utf-8")
    assert committed == markdown(load_plugins()), f"regenerate it: harness catalogue --markdown > {MARKDOWN_PATH}"


def test_a_changed_entry_changes_the_table() -> None:
    registry = load_plugins()
    changed = replace(registry, drivers={**registry.drivers, "go": replace(registry.drivers["go"], help="renamed")})
    assert markdown(changed) != markdown(registry) and "| renamed |" in markdown(changed)


def test_run_s_help_names_every_driver_and_target_of_the_catalogue() -> None:
    registry = load_plugins()
    drivers, targets = driver_help(registry, "pymongo"), target_help(registry, "embedded")
    assert all(name in drivers for name in registry.drivers) and "rust[@RELEASE]" in drivers
    assert all(name in targets for name in registry.targets) and "secantusdb-daemon[=" in targets


def test_harness_catalogue_prints_the_table(capsys: Any) -> None:
    assert cli.main(["catalogue", "--markdown"]) == 0
    assert capsys.readouterr().out == markdown(load_plugins())


def test_every_command_is_one_row_the_plug_ins_included() -> None:
    commands = cli.commands()
    assert {"run", "specs", "matrix", "report", "spark", "executor-check", "coverage", "certify", "catalogue"} <= set(
        commands
    )
    assert "campaign" in commands and commands["campaign"].starts_processes  # the plug-in's own declaration
    assert [name for name, command in commands.items() if command.starts_processes] == [
        "run",
        "matrix",
        "executor-check",
        "certify",
        "campaign",
    ]
    assert set(cli.build_parser()._subparsers._group_actions[0].choices) == set(commands)  # type: ignore[union-attr]
