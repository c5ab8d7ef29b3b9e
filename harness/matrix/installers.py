"""The commands that create a cell's environment and install into it: uv when there is one, else venv + pip.

uv builds an environment from its cache in about a second, which is what makes
a matrix of many cells affordable; ``python -m venv`` and pip do the same job
slowly, and are there so a machine without uv can still run a matrix. Both
take the same inputs, so the choice changes speed, not what is installed.

Offline use (``--offline``) never touches an index: uv gets ``--offline`` (and
``--no-index`` when a ``--find-links`` wheelhouse is given), pip gets
``--no-index`` and needs the wheelhouse.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path


class InstallerUnavailable(Exception):
    """The installer asked for cannot be used here; the message says why."""


def uv_binary() -> str | None:
    """uv from the ``uv`` PyPI package, else ``uv`` on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def env_python(env: Path) -> Path:
    return env / "bin" / "python"


def _editable(project: Path, extras: tuple[str, ...]) -> str:
    return f"{project}[{','.join(extras)}]" if extras else str(project)


class Installer:
    """Creates an environment with ``python`` and installs the harness (editable) plus pins into it."""

    name = "abstract"

    def __init__(self, binary: str) -> None:
        self.binary = binary

    def create_command(self, python: str, env: Path) -> list[str]:
        raise NotImplementedError

    def install_prefix(self, env: Path) -> list[str]:
        raise NotImplementedError

    def source_flags(self, offline: bool, find_links: Path | None) -> list[str]:
        return ["--find-links", str(find_links)] if find_links else []

    def install_command(
        self,
        env: Path,
        project: Path,
        extras: tuple[str, ...],
        requirements: tuple[str, ...],
        *,
        find_links: Path | None = None,
        offline: bool = False,
    ) -> list[str]:
        return [
            *self.install_prefix(env),
            "-e",
            _editable(project, extras),
            *requirements,
            *self.source_flags(offline, find_links),
        ]


class UvInstaller(Installer):
    name = "uv"

    def create_command(self, python: str, env: Path) -> list[str]:
        return [self.binary, "venv", "--python", python, str(env)]

    def install_prefix(self, env: Path) -> list[str]:
        return [self.binary, "pip", "install", "--python", str(env_python(env))]

    def source_flags(self, offline: bool, find_links: Path | None) -> list[str]:
        flags = super().source_flags(offline, find_links)
        return flags + (["--offline"] + (["--no-index"] if find_links else []) if offline else [])


class PipInstaller(Installer):
    name = "pip"

    def create_command(self, python: str, env: Path) -> list[str]:
        return [python, "-m", "venv", str(env)]

    def install_prefix(self, env: Path) -> list[str]:
        return [str(env_python(env)), "-m", "pip", "install", "--disable-pip-version-check"]

    def source_flags(self, offline: bool, find_links: Path | None) -> list[str]:
        return super().source_flags(offline, find_links) + (["--no-index"] if offline else [])


def _uv(python: str) -> Installer:
    binary = uv_binary()
    if binary is None:
        raise InstallerUnavailable("uv is not installed (pip install uv, or put uv on PATH)")
    return UvInstaller(binary)


def _pip(python: str) -> Installer:
    return PipInstaller(python)


INSTALLERS: dict[str, Callable[[str], Installer]] = {"uv": _uv, "pip": _pip}


def choose_installer(name: str, python: str, *, offline: bool = False, find_links: Path | None = None) -> Installer:
    """``auto`` is uv when there is one, else pip; a named one is that or an error."""
    if name == "auto":
        name = "uv" if uv_binary() else "pip"
    if name not in INSTALLERS:
        raise InstallerUnavailable(f"unknown installer {name!r}; installers: auto, {', '.join(INSTALLERS)}")
    if name == "pip" and offline and find_links is None:
        raise InstallerUnavailable("--offline with pip needs --find-links DIR (a wheelhouse)")
    return INSTALLERS[name](python)
