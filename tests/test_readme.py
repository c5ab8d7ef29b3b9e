"""The README is the front page: short, every command it shows accepted by the CLI, every link it makes alive.

The README keeps what the product is, the two set-up commands, a command table and links; the rest lives in
docs/ (issue 34, "Names and pages"). These tests hold it there: at most 200 lines; one table row per
``harness`` subcommand and none for a command the CLI lacks; each row's command line, with its placeholders
filled in, parsed by the CLI's own parser (a row such as ``harness matrix plan FILE FILE``, which the CLI
refuses, fails); and every relative link of the README and the pages of docs/ names a file that exists, and a
heading of it when it names one.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from harness.app.cli import build_parser
from tests.paths import REPO

README = REPO / "README.md"
MAX_LINES = 200

#: A placeholder of the command table and a value the CLI accepts in its place.
PLACEHOLDERS = {
    '"CMD ARGS"': '"python -m harness.drivers.executor.pymongo_reference"',
    "git:URL@COMMIT": "git:https://example.invalid/specs@0123456",
    "D1,D2": "pymongo,node",
    "T1,T2": "embedded,embedded-standalone",
    "SOURCE": "pypi:pymongo==4.20.0",
    "INPUT": "out/results",
    "PATH": "specs/scenarios",
    "FILE": "specs/matrices/drivers-x-targets.yml",
    "NAME": "node",
    "OLD": "out/old",
    "DIR": "out/dir",
    "ID": "cell-1",
    "D": "pymongo",
    "T": "embedded",
    "N": "10",
    "S": "42",
}


def table_commands(text: str) -> list[str]:
    """The first code span of each row of the README's "Commands" table that starts with ``harness``."""
    section = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    spans = [re.match(r"\| `((?:[^`]|\\`)*)`", row) for row in rows]
    return [span.group(1).replace("\\|", "|") for span in spans if span and span.group(1).startswith("harness ")]


def concrete(command: str) -> list[str]:
    """A table row's command as argv: optional parts kept, the first of each choice, placeholders filled in."""
    command = re.sub(r"([^\s|\[]+)(?:\|[^\s|\]]+)+", r"\1", command)  # a|b|c -> a (the first choice)
    command = command.replace("[", "").replace("]", "").replace("...", "")
    for placeholder, value in PLACEHOLDERS.items():
        command = re.sub(rf"(?<![\w-]){re.escape(placeholder)}(?![\w-])", value, command)
    return shlex.split(command)[1:]


def accepted(argv: list[str]) -> str:
    """'' when the CLI's parser takes ``argv``; else what it said."""
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:
        return f"refused (exit {exc.code})"
    return ""


def test_the_readme_is_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines; move detail to docs/ (at most {MAX_LINES})"


def test_the_command_table_has_one_row_per_subcommand_and_no_other() -> None:
    parser = build_parser()
    subcommands = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    shown = {command.split()[1] for command in table_commands(README.read_text(encoding="utf-8"))}
    assert shown == subcommands, f"missing: {sorted(subcommands - shown)}; unknown: {sorted(shown - subcommands)}"


def test_every_command_of_the_table_is_accepted_by_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    commands = table_commands(README.read_text(encoding="utf-8"))
    assert len(commands) >= 10
    refused = {command: accepted(concrete(command)) for command in commands}
    assert not {command: why for command, why in refused.items() if why}, capsys.readouterr().err


def test_a_command_the_cli_refuses_is_caught() -> None:
    """The breakage the check exists for (issue 34: the README showed ``harness matrix plan FILE``, refused then;
    the CLI now takes it, and refuses a definition given twice)."""
    assert accepted(concrete("harness matrix plan FILE FILE")).startswith("refused")
    assert accepted(concrete("harness run --no-such-option")).startswith("refused")
    assert accepted(concrete("harness matrix plan [--matrix FILE]")) == ""


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a Markdown page's headings (lower case, punctuation dropped, spaces as hyphens)."""
    headings = re.findall(r"^#{1,6} (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def dead_links(page: Path) -> list[str]:
    """The relative links of ``page`` whose file, or heading, does not exist."""
    dead = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (anchor and anchor not in anchors(linked)):
            dead.append(target)
    return dead


@pytest.mark.parametrize("page", [README, *sorted((REPO / "docs").glob("*.md"))], ids=lambda page: page.name)
def test_every_relative_link_resolves(page: Path) -> None:
    assert dead_links(page) == []


def test_a_dead_link_is_caught(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# A heading, here\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#a-heading-here) [web](https://example.invalid/x)\n"
        "[gone](missing.md) [no heading](there.md#elsewhere)\n",
        encoding="utf-8",
    )
    assert dead_links(page) == ["missing.md", "there.md#elsewhere"]
