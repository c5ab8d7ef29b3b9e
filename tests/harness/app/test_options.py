"""The one options table: the CLI and pytest declare the same rows and build the same RunOptions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.app.cli import build_parser
from harness.app.options import from_namespace, from_pytest_config
from tests.paths import REPO


class _Config:
    """A pytest config stand-in: values by dest, KeyError-free defaults as pytest's getoption gives."""

    def __init__(self, values: dict[str, object]) -> None:
        self.values = values

    def getoption(self, name: str, default: object = None) -> object:
        return self.values.get(name, default)


def test_cli_and_pytest_build_the_same_run_options(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    args = build_parser().parse_args(
        [
            "run",
            "--target",
            "uri=mongodb://127.0.0.1:1",
            "--results",
            str(results),
            "--expected",
            "none",
            "--failpoints",
            "emulated",
            "--network-faults",
            "--timeout",
            "12",
            "--iteration-timeout",
            "3",
        ]
    )
    config = _Config(
        {
            "target": "uri=mongodb://127.0.0.1:1",
            "results": str(results),
            "expected": "none",
            "failpoints": "emulated",
            "network_faults": True,
            "spec_timeout": 12.0,
            "iteration_timeout": 3.0,
            "driver": "pymongo",
        }
    )
    cli, plugin = from_namespace(args), from_pytest_config(config)
    assert cli == plugin
    assert cli.settings.test_timeout_s == 12.0 and cli.settings.iteration_timeout_s == 3.0
    assert cli.results == results and cli.network_faults is True and cli.failpoints == "emulated"


def test_defaults_are_the_same_everywhere() -> None:
    cli = from_namespace(build_parser().parse_args(["run"]))
    undeclared = from_pytest_config(_Config({}))  # the prose tests without the plugin: every default
    assert cli == undeclared
    assert (cli.target, cli.driver, cli.expected, cli.failpoints) == ("embedded", "pymongo", "auto", "auto")


def test_the_cli_refuses_an_unknown_failpoint_mode() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--failpoints", "sometimes"])


_PROBE = (
    "import argparse, sys; {first}from harness.app.options import add_cli_options; "
    "parser = argparse.ArgumentParser(); add_cli_options(parser); parser.format_help(); "
    "print('harness.app.compose' in sys.modules)"
)


def _compose_loaded(first: str = "") -> str:
    probe = _PROBE.format(first=first)
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_options_table_reads_the_plug_ins_without_the_composition_root():
    """options -> compose was a cycle (compose imports options): the help's plug-in lists come from the plug-in
    table itself, and building every option (help included) loads no harness.app.compose."""
    assert _compose_loaded() == "False"


def test_the_probe_sees_the_composition_root_when_it_is_loaded():
    assert _compose_loaded("import harness.app.compose; ") == "True"
