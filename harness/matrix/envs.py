"""The environment cache: one Python environment per interpreter x requested versions x harness pins x project.

A cell's environment holds the harness (installed editable from the project,
so code changes need no rebuild) with the pymongo and SecantusDB releases the
cell asks for. The cache key hashes everything that decides what would be
installed: the interpreter's implementation and version, the requested pins
and extras, the dependency part of ``pyproject.toml`` (a changed pin means a
new environment), and the project's path. Embedded and daemon cells of the
same versions share one environment.

An environment counts as built only when its marker file exists, and the
marker is written last, after the install and an import check
(``import harness.app.cli, harness.engine.run, pymongo, secantus``, and building
the CLI parser, which imports every subcommand) have succeeded:
an environment left half-built by a crash or a Ctrl-C has no marker and is
removed and rebuilt. Builds of one environment are serialised with an
``fcntl`` lock on a file beside it, across threads and processes alike (two
matrices sharing a cache), so the second waiter finds the first one's marker
and starts in a moment.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.records import utc_now
from harness.engine import child_processes
from harness.matrix.cells import Cell
from harness.matrix.files import atomic_write_json, read_json
from harness.matrix.installers import Installer, env_python
from harness.matrix.process import Children, Interrupted

MARKER = "cs-harness-env.json"
#: Run by the environment's interpreter: the imports a run needs, and the parser ``harness run`` builds
#: (it imports every subcommand's arguments); then what it imported, and which versions, into argv[1].
IMPORT_CHECK = (
    "import json, sys, importlib.metadata as m, harness.app.cli, harness.engine.run, pymongo, secantus\n"
    "from harness.engine.plugins import load_plugins\n"
    "assert not load_plugins().problems, load_plugins().problems\n"
    "harness.app.cli.build_parser()\n"
    "json.dump({'pymongo': pymongo.version, 'secantusdb': m.version('secantusdb'),\n"
    "           'harness': m.version('cs-conformance-harness'), 'python': sys.version.split()[0]},\n"
    "          open(sys.argv[1], 'w'))\n"
)
_LOCK_POLL_S = 0.2


class EnvError(Exception):
    """The cache cannot be used at all (an interpreter that does not run); not a cell's failure."""


def default_envs_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "cs-harness" / "envs"


@functools.cache
def interpreter_identity(python: str) -> str:
    """``CPython 3.11.7 linux`` for the interpreter the environments are made from."""
    probe = "import platform, sys; print(platform.python_implementation(), platform.python_version(), sys.platform)"
    try:
        done = child_processes.run([python, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise EnvError(f"--python {python}: cannot run it: {exc}") from None
    return done.stdout.strip()


def dependency_text(project: Path) -> str:
    """The part of ``pyproject.toml`` that decides what an environment holds.

    With ``tomllib`` (Python 3.11+): the build requirements, dependencies,
    optional dependencies and entry points (an editable install records the
    plug-in table's entry points when it is built, so a new plug-in needs a
    new environment). Without it, the whole file: more rebuilds, never a
    stale environment.
    """
    text = (project / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        return text
    data = tomllib.loads(text)
    project_table = data.get("project", {})
    return json.dumps(
        {
            "build": data.get("build-system", {}).get("requires", []),
            "dependencies": project_table.get("dependencies", []),
            "optional": project_table.get("optional-dependencies", {}),
            "entry_points": project_table.get("entry-points", {}),
            "scripts": project_table.get("scripts", {}),
        },
        sort_keys=True,
    )


def cache_key(
    interpreter: str, requirements: tuple[str, ...], extras: tuple[str, ...], dependencies: str, project: Path
) -> str:
    inputs = {
        "interpreter": interpreter,
        "requirements": sorted(requirements),
        "extras": sorted(extras),
        "dependencies": dependencies,
        "project": str(project),
        "check": IMPORT_CHECK,
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:20]


@dataclass
class EnvOutcome:
    path: Path
    key: str
    cached: bool = False
    seconds: float = 0.0
    installed: dict[str, Any] = field(default_factory=dict)
    #: ``(stage, reason)`` when the environment could not be built: stage ``install`` or ``import``.
    failure: tuple[str, str] | None = None


@contextmanager
def _locked(path: Path, children: Children) -> Iterator[None]:
    """An exclusive ``fcntl`` lock, waited for in small steps so a Ctrl-C is not stuck behind another build."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if children.stopping.is_set():
                    raise Interrupted() from None
                time.sleep(_LOCK_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class EnvCache:
    def __init__(
        self,
        root: Path,
        installer: Installer,
        python: str,
        project: Path,
        children: Children,
        *,
        find_links: Path | None = None,
        offline: bool = False,
    ) -> None:
        self.root = root
        self.installer = installer
        self.python = python
        self.project = project
        self.children = children
        self.find_links = find_links
        self.offline = offline
        self._interpreter = interpreter_identity(python)
        self._dependencies = dependency_text(project)

    def key(self, cell: Cell) -> str:
        return cache_key(self._interpreter, cell.requirements, cell.extras, self._dependencies, self.project)

    def path(self, cell: Cell) -> Path:
        return self.root / self.key(cell)

    def ensure(self, cell: Cell, log: Path) -> EnvOutcome:
        """The cell's environment, from the cache or built now; a build failure is an outcome, not an exception."""
        key = self.key(cell)
        env = self.root / key
        began = time.monotonic()
        with _locked(self.root / f"{key}.lock", self.children):
            marker = read_json(env / MARKER)
            if marker is not None and env_python(env).exists():
                _note(log, f"cached environment {env} (built {marker.get('built_at')} with {marker.get('installer')})")
                return EnvOutcome(
                    env, key, cached=True, seconds=time.monotonic() - began, installed=marker.get("installed", {})
                )
            if env.exists():
                _note(log, f"removing the half-built environment {env} (no marker)")
                shutil.rmtree(env)
            outcome = self._build(cell, env, key, log)
            outcome.seconds = time.monotonic() - began
            if outcome.failure is None:
                atomic_write_json(
                    env / MARKER,
                    {
                        "key": key,
                        "built_at": utc_now(),
                        "build_s": round(outcome.seconds, 3),
                        "installer": self.installer.name,
                        "interpreter": self._interpreter,
                        "requirements": list(cell.requirements),
                        "extras": list(cell.extras),
                        "project": str(self.project),
                        "installed": outcome.installed,
                    },
                )
            else:
                shutil.rmtree(env, ignore_errors=True)
            return outcome

    def _build(self, cell: Cell, env: Path, key: str, log: Path) -> EnvOutcome:
        installed_file = env / "cs-harness-installed.json"
        steps = (
            ("install", self.installer.create_command(self.python, env)),
            (
                "install",
                self.installer.install_command(
                    env, self.project, cell.extras, cell.requirements, find_links=self.find_links, offline=self.offline
                ),
            ),
            ("import", [str(env_python(env)), "-c", IMPORT_CHECK, str(installed_file)]),
        )
        for stage, command in steps:
            # Not from the project directory: ``python -c`` would import the harness from there, installed or not.
            finished = self.children.run(command, log, cwd=self.root)
            if finished.stopped:
                raise Interrupted()
            if finished.returncode != 0:
                reason = finished.stderr_tail or f"{command[0]} exited with {finished.returncode}"
                return EnvOutcome(env, key, failure=(stage, reason))
        return EnvOutcome(env, key, installed=read_json(installed_file) or {})


def _note(log: Path, line: str) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(f"# {line}\n")
