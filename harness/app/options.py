"""The run options, declared once for every front end.

The ``harness run`` CLI, the pytest plugin and the prose tests' conftest used
to declare ``--target``, ``--driver``, ``--results``... each on its own, with
drifting defaults and help. Each option is one row of :data:`RUN_OPTIONS`
(or, for ``harness run`` only, of :data:`ATTEMPT_OPTIONS`);
:func:`add_cli_options` and :func:`add_pytest_options` declare the rows, and
:func:`run_options` turns the values, however they were read, into one
:class:`~harness.engine.run.RunOptions`.

Choices that depend on plug-ins (the fail-point modes) are
computed when the parser is built, so importing this module stays cheap.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def _failpoint_modes() -> list[str]:
    from harness.engine.plugins import load_plugins

    return list(load_plugins().failpoint_modes)


def _driver_help() -> str:
    from harness.app.catalogue import driver_help
    from harness.engine.plugins import load_plugins

    return driver_help(load_plugins(), default="pymongo")


def _target_help() -> str:
    from harness.app.catalogue import target_help
    from harness.engine.plugins import load_plugins

    return target_help(load_plugins(), default="embedded")


def _count(least: int) -> Callable[[str], int]:
    """A whole number of at least ``least``, or the parser's error saying so."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(f"needs a whole number of at least {least}, got {text!r}")
        return value

    return parse


def _iteration_modes() -> list[str]:
    from harness.core.ports import ITERATION_MODES

    return list(ITERATION_MODES)


@dataclass(frozen=True)
class RunOption:
    """One option of a run, as the CLI and pytest spell it."""

    dest: str
    cli: tuple[str, ...]
    #: The pytest flag; differs where pytest or a common plugin owns the CLI's name (``--timeout``).
    pytest: str
    #: The help, or what makes it when the parser is built (the catalogue's drivers and targets).
    help: str | Callable[[], str]
    default: Any = None
    type: Callable[[str], Any] | None = None
    action: str | None = None
    choices: Callable[[], Sequence[str]] | None = None

    @property
    def pytest_dest(self) -> str:
        return self.pytest.lstrip("-").replace("-", "_")

    def declaration(self, *, for_cli: bool) -> dict[str, Any]:
        keywords: dict[str, Any] = {
            "help": self.help if isinstance(self.help, str) else self.help(),
            "default": self.default,
        }
        if self.action:
            keywords["action"] = self.action
        if self.type is not None and (for_cli or self.type is not Path):
            keywords["type"] = self.type
        if self.choices is not None and for_cli:
            keywords["choices"] = list(self.choices())
        if self.action == "append":
            keywords["default"] = []
            keywords["metavar"] = "PATH"
        return keywords


RUN_OPTIONS: tuple[RunOption, ...] = (
    RunOption(
        "specs",
        ("--specs",),
        "--specs",
        "spec file or directory, or a source to fetch: pypi:pymongo==4.20.0, "
        "git:URL@COMMIT (repeatable; see harness specs fetch)",
        type=str,
        action="append",
    ),
    RunOption(
        "target",
        ("--target",),
        "--target",
        _target_help,
        default="embedded",
    ),
    RunOption(
        "driver",
        ("--driver",),
        "--driver",
        _driver_help,
        default="pymongo",
    ),
    RunOption("results", ("--results",), "--results", "append one JSON line per test to this file", type=Path),
    RunOption(
        "expected",
        ("--expected",),
        "--expected",
        "expected-outcomes file; 'auto' picks specs/expectations/<target>.yml, 'none' expects all to pass",
        default="auto",
    ),
    RunOption(
        "failpoints",
        ("--failpoints",),
        "--failpoints",
        "native: configureFailPoint on the target; emulated: a wire proxy in front of it fails commands "
        "itself; auto (default): native when the target accepts it",
        default="auto",
        choices=_failpoint_modes,
    ),
    RunOption(
        "iteration_mode",
        ("--iteration-mode",),
        "--iteration-mode",
        "how the driver under test consumes change streams (docs/executor-protocol.md 6.4.1); a mode the driver "
        "does not offer refuses the run (exit 2, naming the driver's modes); default: the driver's own, recorded in "
        "every result's driver.iteration_mode",
        choices=_iteration_modes,
    ),
    RunOption(
        "network_faults",
        ("--network-faults",),
        "--network-faults",
        "run drivers through a Toxiproxy server so scenarios can inject network faults",
        default=False,
        action="store_true",
    ),
    RunOption(
        "require_schema",
        ("--require-schema",),
        "--require-schema",
        "a unified file loaded without its JSON schema (none found) is an error, not a warning",
        default=False,
        action="store_true",
    ),
    RunOption(
        "strict",
        ("--strict",),
        "--harness-strict",
        "what CI and certifications use: every note is a failure (exit 1) with the same words: an "
        "expected-outcomes entry that matched no test, pinned tests that produced no result, a unified file "
        "run with no schema, a plug-in that failed to install (pytest's own --strict is another thing)",
        default=False,
        action="store_true",
    ),
    RunOption(
        "allow_destructive",
        ("--allow-destructive",),
        "--allow-destructive",
        "run against a deployment the harness did not start (uri=...) that is not on the loopback interface: "
        "the tests drop and recreate the databases and collections they name. Refused without this flag, "
        "before anything connects; recorded in every result's provenance",
        default=False,
        action="store_true",
    ),
    RunOption(
        "timeout",
        ("--timeout",),
        "--spec-timeout",
        "per-test timeout in seconds (default 30)",
        default=30.0,
        type=float,
    ),
    RunOption(
        "iteration_timeout",
        ("--iteration-timeout",),
        "--iteration-timeout",
        "how long to wait for one change-stream document (default 10)",
        default=10.0,
        type=float,
    ),
    RunOption(
        "no_early_verdict",
        ("--no-early-verdict",),
        "--no-early-verdict",
        "every iteration that gets no change waits its whole budget: the pymongo drivers' early no-change "
        "verdict (a lost change fails once the stream has passed the test's last write) is off (docs/causes.md 4)",
        default=False,
        action="store_true",
    ),
)

#: The options that run a test more than once: the CLI's only (pytest has reruns of its own, and a JUnit test case
#: carries one record); a front end that does not declare them runs every test once.
ATTEMPT_OPTIONS: tuple[RunOption, ...] = (
    RunOption(
        "retry_unexpected",
        ("--retry-unexpected",),
        "--retry-unexpected",
        "run a test whose outcome is unexpected (a failure or error no expected-outcomes entry explains) again, up "
        "to N more times, each in a fresh scope (an executor: a new process); every attempt is recorded, and a test "
        "that both failed and passed is flaky, never passed (default 0)",
        default=0,
        type=_count(0),
    ),
    RunOption(
        "repeat",
        ("--repeat",),
        "--repeat",
        "run every selected test N times (with -k: the chosen ones) to check it is stable; every attempt is "
        "recorded, and one that both failed and passed is flaky (default 1)",
        default=1,
        type=_count(1),
    ),
)


def add_cli_options(parser: argparse.ArgumentParser, only: Sequence[str] | None = None) -> None:
    """Declare every row, or the rows named in ``only`` (a plug-in's command takes some: ``harness campaign``)."""
    for option in (*RUN_OPTIONS, *ATTEMPT_OPTIONS):
        if only is None or option.dest in only:
            parser.add_argument(*option.cli, dest=option.dest, **option.declaration(for_cli=True))


def add_pytest_options(group: Any) -> None:
    """Declare every row in a pytest option group (``parser.getgroup(...)``)."""
    for option in RUN_OPTIONS:
        group.addoption(option.pytest, dest=option.pytest_dest, **option.declaration(for_cli=False))


def run_options(value: Callable[[RunOption], Any], labels: dict[str, str] | None = None) -> Any:
    """A :class:`~harness.engine.run.RunOptions` from ``value(option)``, whichever front end read the values."""
    from harness.core.run_notes import RunNotes
    from harness.engine.run import RunOptions
    from harness.engine.run_settings import RunSettings
    from harness.targets.safety import ALLOW_DESTRUCTIVE

    values = {option.dest: value(option) for option in (*RUN_OPTIONS, *ATTEMPT_OPTIONS)}
    results = values["results"]
    provenance = {ALLOW_DESTRUCTIVE: True} if values["allow_destructive"] else {}
    return RunOptions(
        target=values["target"],
        driver=values["driver"],
        results=Path(results) if results else None,
        expected=values["expected"],
        failpoints=values["failpoints"],
        network_faults=bool(values["network_faults"]),
        labels=dict(labels or {}),
        provenance=provenance,
        notes=RunNotes(strict=bool(values["strict"])),
        settings=RunSettings(
            test_timeout_s=float(values["timeout"]),
            iteration_timeout_s=float(values["iteration_timeout"]),
            iteration_mode=values["iteration_mode"] or None,
            require_schema=bool(values["require_schema"]),
            early_no_change=not values["no_early_verdict"],
        ),
        retry_unexpected=int(values["retry_unexpected"]),
        repeat=int(values["repeat"]),
    )


def from_namespace(args: argparse.Namespace) -> Any:
    """The CLI's values; a row the command did not declare takes its default."""
    return run_options(
        lambda option: getattr(args, option.dest, option.default), labels=dict(getattr(args, "labels", []))
    )


def from_pytest_config(config: Any) -> Any:
    """pytest's values; an option nobody declared (the plugin not loaded) takes its default."""
    return run_options(lambda option: config.getoption(option.pytest_dest, default=option.default))
