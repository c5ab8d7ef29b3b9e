"""``harness executor-check`` passes every executor the harness knows: the pymongo reference, Node, Java and Go.

The executors come from the catalogue (every driver entry of the executor kind), so an executor added there is
checked here without a new test. Java and Go are built as ``--driver java``/``go`` builds them (into the
harness's cache, once). A missing toolchain skips its executor on a developer's machine and fails on CI, where
.ci/run installs it.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

from harness.drivers.executor.checks.runner import CHECKS, run_checks
from harness.engine.plugins import EXECUTOR, load_plugins
from tests.paths import REPO

#: What each executor needs on the machine besides Python: commands on PATH, and folders.
PREREQUISITES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "node": (("node",), ("harness/drivers/node/node_modules/mongodb",)),
    "java": (("java", "javac", "mvn"), ()),
    "go": (("go",), ()),
    "rust": (("cargo",), ()),
}


def _missing(name: str) -> str | None:
    commands, folders = PREREQUISITES.get(name, ((), ()))
    for command in commands:
        if shutil.which(command) is None:
            return f"`{command}` is not installed (needed by the {name} executor)"
    for folder in folders:
        if not (REPO / folder).is_dir():
            return f"{folder} is missing (needed by the {name} executor)"
    return None


def _command(name: str) -> str | list[str]:
    """The executor ``--driver NAME`` runs, found as ``harness executor-check --driver NAME`` finds it."""
    command = load_plugins().executor_command(name)
    assert command is not None, name
    return command


@pytest.mark.parametrize("name", sorted(n for n, entry in load_plugins().drivers.items() if entry.kind == EXECUTOR))
def test_executor_check_passes_every_known_executor(name: str, embedded_run: Any) -> None:
    missing = _missing(name)
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}, but CI is set and .ci/run installs it", pytrace=False)
        pytest.skip(missing)
    lines: list[str] = []
    status = run_checks(_command(name), embedded_run.target.uri, lines.append)
    out = "\n".join(lines)
    assert status == 0, out
    not_ok = [check for check, _, _ in CHECKS if f"ok   {check}" not in lines]
    assert not not_ok, f"{name}: checks that did not pass: {not_ok}\n{out}"
    assert lines[-1] == f"{len(CHECKS)} checks, 0 failed", out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([], "give the executor's command line or --driver NAME"),
        (["cmd", "--driver", "node"], "give the executor's command line or --driver NAME"),
        (["--driver", "pymongo"], "--driver pymongo: names no driver in an executor (executors: go, java, node, "),
        (["--driver", "no-such-driver"], "unknown driver 'no-such-driver'; known drivers: exec:..., go, java, node"),
        (["--driver", "go=x"], "--driver go=x: the go driver does not take an argument as NAME=ARGUMENT"),
        (["node"], "'node' is a driver's name: give --driver node"),
    ],
)
def test_executor_check_refuses_what_names_no_executor(argv: list[str], said: str, capsys: Any) -> None:
    from harness.app import cli

    assert cli.main(["executor-check", *argv]) == 2
    assert said in capsys.readouterr().out
