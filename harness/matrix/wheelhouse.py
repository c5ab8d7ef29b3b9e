"""Fill a wheelhouse for offline matrices: the ``pip download`` commands, and a small command that runs them.

    python -m harness.matrix.wheelhouse --dest .tools/wheels --pymongo 4.9.2,4.20.0 --secantusdb 0.7.0b2,0.7.0b3

A matrix built with ``--find-links DIR --offline`` reaches no index, so the
wheelhouse must hold every distribution every cell installs: the build
requirements of the harness (its editable install is built in an isolated
environment), and for each pymongo x SecantusDB pair the harness's own
dependencies resolved together with both pins (one ``pip download`` per pair:
transitive versions may differ between pairs). A pair that conflicts with the
harness's pins fails here already, as its cell would.

When every download succeeded, ``matrix-versions.json`` in the wheelhouse
lists the versions it was filled for and the commands (the matrix integration
test reads it); run again with the same versions and the same pins, the
command does nothing, so CI can call it on every run.
"""

from __future__ import annotations

import argparse
import platform
import shlex
import sys
from itertools import product
from pathlib import Path

from harness.engine import child_processes
from harness.matrix.files import atomic_write_json, read_json

VERSIONS_FILE = "matrix-versions.json"


def project_requirements(project: Path, extras: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(build requirements, dependencies with those of ``extras``) of the harness, from its ``pyproject.toml``."""
    import tomllib  # Python 3.11+; filling a wheelhouse on 3.10 would need tomli

    data = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    optional = data["project"].get("optional-dependencies", {})
    dependencies = list(data["project"]["dependencies"]) + [dep for extra in extras for dep in optional[extra]]
    return list(data["build-system"]["requires"]), dependencies


def download_commands(
    python: str,
    dest: Path,
    project: Path,
    pymongo: list[str],
    secantusdb: list[str],
    extras: tuple[str, ...] = ("faults",),
) -> list[list[str]]:
    """One download of the build requirements, one per pymongo x SecantusDB pair (``faults``: campaign cells)."""
    build, dependencies = project_requirements(project, extras)
    base = [python, "-m", "pip", "download", "--disable-pip-version-check", "--dest", str(dest)]
    commands = [base + build]
    for driver, release in product(pymongo, secantusdb):
        commands.append(base + dependencies + [f"pymongo=={driver}", f"secantusdb=={release}"])
    return commands


def main(argv: list[str] | None = None) -> int:
    from harness.matrix.cli import project_dir

    parser = argparse.ArgumentParser(prog="python -m harness.matrix.wheelhouse", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, required=True, help="the wheelhouse directory")
    parser.add_argument("--pymongo", required=True, help="comma-separated pymongo releases")
    parser.add_argument("--secantusdb", required=True, help="comma-separated SecantusDB releases")
    parser.add_argument(
        "--python", default=sys.executable, help="the interpreter the cells will use (default: this one)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    args = parser.parse_args(argv)
    pymongo = [v.strip() for v in args.pymongo.split(",") if v.strip()]
    secantusdb = [v.strip() for v in args.secantusdb.split(",") if v.strip()]
    commands = download_commands(args.python, args.dest, project_dir(), pymongo, secantusdb)
    filled = read_json(args.dest / VERSIONS_FILE) or {}
    if not args.dry_run and filled.get("commands") == [shlex.join(c) for c in commands]:
        print(f"wheelhouse: {args.dest} already holds these versions for these pins ({VERSIONS_FILE})")
        return 0
    for command in commands:
        print(shlex.join(command), flush=True)
        if not args.dry_run and child_processes.run(command).returncode != 0:
            print(f"wheelhouse: this download failed; {args.dest} is incomplete", file=sys.stderr)
            return 1
    if not args.dry_run:
        atomic_write_json(
            args.dest / VERSIONS_FILE,
            {
                "pymongo": pymongo,
                "secantusdb": secantusdb,
                "python": platform.python_version(),
                "commands": [shlex.join(c) for c in commands],
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
