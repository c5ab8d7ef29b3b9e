"""``harness matrix``: the command line (``harness/app/cli.py`` wires the subcommand to these two functions).

Exit status: 0 when every cell ran every repeat and its records show the
versions it asked for; 1 when a cell could not be built or run, or its
versions do not match; 2 when the matrix could not start (a bad definition, an
output directory holding another matrix, no usable installer); 130 after
Ctrl-C (rerun the same command to resume).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.core.project_data import checkout_root
from harness.matrix.cells import expand
from harness.matrix.definition import DefinitionError, MatrixDefinition, fields, load_definition
from harness.matrix.envs import EnvCache, EnvError, default_envs_dir
from harness.matrix.installers import INSTALLERS, InstallerUnavailable, choose_installer
from harness.matrix.manifest import Manifest, ManifestError
from harness.matrix.process import Children

#: ``harness matrix ACTION``: ``run`` (the default) runs the cells, here; ``plan`` writes them as a CI job matrix.
ACTIONS = ("run", "plan")


def add_matrix_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=ACTIONS,
        default="run",
        help="run (default): run the cells here (all, or --cell's); plan: print the cells as JSON, one object "
        "per cell in a CI job matrix's include list, for `harness matrix run --cell ID` on other machines",
    )
    parser.add_argument(
        "matrix_file", nargs="?", type=Path, metavar="FILE", help="the matrix definition, as --matrix FILE gives it"
    )
    parser.add_argument(
        "--cell",
        dest="cells",
        action="append",
        default=[],
        metavar="ID",
        help="run only this cell (repeatable, or comma-separated), as `harness matrix plan` names it",
    )
    definition = parser.add_argument_group("the matrix (flags override the --matrix file)")
    definition.add_argument("--matrix", type=Path, metavar="FILE", help="a YAML matrix definition (docs/matrix.md)")
    for field in fields():
        definition.add_argument(
            field.flag,
            dest=field.dest,
            metavar=field.metavar,
            help=field.help,
            action="append" if field.repeatable else "store",
        )
    where = parser.add_argument_group("where and how")
    where.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="results and manifest.json (default out/matrix/<matrix id>); the same DIR resumes",
    )
    where.add_argument("--envs", type=Path, metavar="DIR", help=f"the environment cache (default {default_envs_dir()})")
    where.add_argument("--python", default=sys.executable, help="interpreter for the cells (default: this one)")
    where.add_argument(
        "--installer", default="auto", choices=["auto", *INSTALLERS], help="auto: uv when installed, else venv + pip"
    )
    where.add_argument("--find-links", type=Path, metavar="DIR", help="a wheelhouse for the installer")
    where.add_argument("--offline", action="store_true", help="never reach a package index (use --find-links)")
    where.add_argument("--retry-failed", action="store_true", help="when resuming, run failed cells and repeats again")


def _directory(path: Path, flag: str) -> Path:
    """``path``, resolved and created now, so an unwritable one is a clear error before anything is built."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DefinitionError(f"{flag}: cannot create {path}: {exc.strerror}") from None
    return path.resolve()


def project_dir() -> Path:
    """The harness's source tree, which every cell installs (editable)."""
    root = checkout_root()
    if root is None:
        raise EnvError(
            "harness matrix installs the harness from its source tree, and this harness is an installed "
            "wheel: run it from a checkout's editable install (pip install -e .)"
        )
    return root


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM stops the matrix as Ctrl-C does (children stopped, manifest resumable)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt()

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _header(definition: MatrixDefinition, manifest: Manifest, cells: list, cache: EnvCache, out: Path) -> list[str]:
    """What this run will do: the chosen cells only (a shared manifest under ``--cell`` holds the others too)."""
    repeats = [r for cell in cells for r in manifest.cell(cell.id)["repeats"]]
    todo = sum(1 for r in repeats if r["status"] == "pending")
    return [
        (
            f"harness matrix {definition.matrix_id}: {len(cells)} cell(s) x {definition.repeat} "
            f"repeat(s); {todo} of {len(repeats)} run(s) to do, {definition.jobs} cell(s) at a time"
        ),
        f"  environments: {cache.root} ({cache.installer.name}); results: {out}",
    ]


def _chosen(cells: list, wanted: list[str]) -> list:
    """The cells ``--cell`` names (all without it); an id the definition does not make is an error listing them."""
    ids = [part.strip() for value in wanted for part in value.split(",") if part.strip()]
    if not ids:
        return cells
    known = {cell.id: cell for cell in cells}
    unknown = [cell_id for cell_id in ids if cell_id not in known]
    if unknown:
        raise DefinitionError(
            f"--cell: no cell {', '.join(unknown)} in this matrix (its cells: {', '.join(known)}); "
            "give the same definition `harness matrix plan` was given"
        )
    return [known[cell_id] for cell_id in dict.fromkeys(ids)]


def _matrix_file(args: argparse.Namespace) -> Path | None:
    """``harness matrix plan FILE`` or ``--matrix FILE``: one definition file, however given."""
    if args.matrix is not None and args.matrix_file is not None:
        raise DefinitionError(f"give the definition once: {args.matrix_file} or --matrix {args.matrix}")
    return args.matrix if args.matrix is not None else args.matrix_file


def command_plan(definition: MatrixDefinition, cells: list) -> int:
    """The cells as one line of JSON, ``{"include": [...]}``: what a CI job matrix takes as it is."""
    print(json.dumps({"include": [cell.planned(definition.matrix_id, definition.repeat) for cell in cells]}))
    return 0


def command_matrix(args: argparse.Namespace) -> int:
    # Imported here: every ``harness run`` builds this parser, and needs none of the scheduler.
    from harness.matrix.scheduler import MatrixRun, Printer
    from harness.matrix.summary import exit_status, summary_lines

    say = Printer()
    try:
        definition = load_definition(_matrix_file(args), args, Path.cwd())
        cells = _chosen(expand(definition), args.cells)
        if args.action == "plan":
            return command_plan(definition, cells)
        if args.find_links is not None and not args.find_links.is_dir():
            raise DefinitionError(f"--find-links: {args.find_links} is not a directory")
        find_links = args.find_links.resolve() if args.find_links else None
        installer = choose_installer(args.installer, args.python, offline=args.offline, find_links=find_links)
        envs = _directory(args.envs or default_envs_dir(), "--envs")
        out = _directory(args.out or Path("out") / "matrix" / definition.matrix_id, "--out")
        children = Children()
        cache = EnvCache(
            envs, installer, args.python, project_dir(), children, find_links=find_links, offline=args.offline
        )
        manifest, notes = Manifest.open(
            out, definition, cells, {c.id: (cache.path(c), cache.key(c)) for c in cells}, retry_failed=args.retry_failed
        )
    except (DefinitionError, InstallerUnavailable, EnvError, ManifestError) as exc:
        print(f"harness matrix: {exc}", file=sys.stderr)
        return 2
    for line in _header(definition, manifest, cells, cache, out) + [f"  resume: {note}" for note in notes]:
        say(line)
    with _sigterm_interrupts():
        stopped = MatrixRun(definition, cells, manifest, cache, children, out, say).run()
    say("")
    for line in summary_lines({"cells": [manifest.cell(cell.id) for cell in cells]}):
        say(line)
    say(f"manifest: {manifest.path}")
    if stopped is not None:
        say("interrupted: rerun the same command to resume")
        return stopped
    return exit_status({"cells": [manifest.cell(cell.id) for cell in cells]})
