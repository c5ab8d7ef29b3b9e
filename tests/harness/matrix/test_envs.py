"""The environment cache: keys, the completion marker, rebuilding half-built environments, locking, installers.

The cache is driven here by a stand-in installer whose "environment" is a
wrapper around this interpreter, so every path through the cache (built,
cached, install failure, import failure, half-built, concurrent) runs in
milliseconds and offline. The real installers are exercised by
``test_matrix_integration.py``.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from harness.matrix.cells import Cell
from harness.matrix.definition import Driver
from harness.matrix.envs import MARKER, EnvCache, cache_key, default_envs_dir, dependency_text, interpreter_identity
from harness.matrix.installers import Installer, InstallerUnavailable, choose_installer
from harness.matrix.process import Children, Interrupted
from tests.paths import REPO

GOOD = Cell(Driver("pymongo", "4.20.0"), "embedded", "0.7.0b3")
UNRESOLVABLE = Cell(Driver("pymongo", "0.0.1"), "embedded", "0.7.0b3")
NOT_IMPORTABLE = Cell(Driver("pymongo", "4.20.0"), "embedded", "0.6.0b17")

# The stand-in installer's two programs. "create" makes bin/python, a wrapper around this interpreter with
# the project on its path (as an editable install puts it); "install" counts its calls, refuses
# pymongo==0.0.1 as a resolver would, and for secantusdb==0.6.0b17 puts a secantus module that cannot be
# imported in front of the real one.
CREATE = """
import os, sys
env, project = sys.argv[1:]
os.makedirs(env + "/bin")
with open(env + "/bin/python", "w") as f:
    f.write("#!/bin/sh\\nPYTHONPATH=" + project + " exec " + sys.executable + ' "$@"\\n')
os.chmod(env + "/bin/python", 0o755)
"""
INSTALL = """
import os, sys
env, project, counter, *requirements = sys.argv[1:]
with open(counter, "a") as f:
    f.write(" ".join(requirements) + "\\n")
if "pymongo==0.0.1" in requirements:
    sys.exit("error: No solution found when resolving dependencies: pymongo==0.0.1 does not exist")
if "secantusdb==0.6.0b17" in requirements:
    os.makedirs(env + "/shadow")
    with open(env + "/shadow/secantus.py", "w") as f:
        f.write("raise ImportError('this secantus cannot be imported')\\n")
    with open(env + "/bin/python", "w") as f:
        f.write("#!/bin/sh\\nPYTHONPATH=" + env + "/shadow:" + project + " exec " + sys.executable + ' "$@"\\n')
"""


class StandInInstaller(Installer):
    name = "stand-in"

    def __init__(self, counter: Path) -> None:
        super().__init__(sys.executable)
        self.counter = counter

    def create_command(self, python: str, env: Path) -> list[str]:
        return [sys.executable, "-c", CREATE, str(env), str(REPO)]

    def install_command(self, env, project, extras, requirements, *, find_links=None, offline=False) -> list[str]:
        return [sys.executable, "-c", INSTALL, str(env), str(project), str(self.counter), *requirements]


@pytest.fixture
def cache(tmp_path):
    installer = StandInInstaller(tmp_path / "installs.txt")
    return EnvCache(tmp_path / "envs", installer, sys.executable, REPO, Children())


def installs(cache: EnvCache) -> list[str]:
    counter = cache.installer.counter
    return counter.read_text().splitlines() if counter.exists() else []


def test_an_environment_is_built_once_then_served_from_the_cache(cache, tmp_path):
    built = cache.ensure(GOOD, tmp_path / "a.log")
    assert built.failure is None and not built.cached and built.path == cache.path(GOOD)
    assert built.installed["pymongo"] and built.installed["secantusdb"] and built.installed["harness"]
    assert (built.path / MARKER).exists()
    again = cache.ensure(GOOD, tmp_path / "b.log")
    assert again.cached and again.installed == built.installed
    assert installs(cache) == ["pymongo==4.20.0 secantusdb==0.7.0b3"]
    assert "cached environment" in (tmp_path / "b.log").read_text()


def test_an_unresolvable_version_is_an_install_failure_with_the_installer_s_reason(cache, tmp_path):
    outcome = cache.ensure(UNRESOLVABLE, tmp_path / "env.log")
    stage, reason = outcome.failure
    assert stage == "install" and "No solution found" in reason and "pymongo==0.0.1" in reason
    assert not outcome.path.exists()  # nothing half-built is left to be mistaken for an environment
    assert "No solution found" in (tmp_path / "env.log").read_text()
    cache.ensure(UNRESOLVABLE, tmp_path / "env.log")
    assert len(installs(cache)) == 2  # a failure is not cached: the next matrix tries again


def test_a_harness_that_does_not_import_is_an_import_failure(cache, tmp_path):
    stage, reason = cache.ensure(NOT_IMPORTABLE, tmp_path / "env.log").failure
    assert stage == "import" and "this secantus cannot be imported" in reason
    assert not (cache.path(NOT_IMPORTABLE) / MARKER).exists()


def test_a_half_built_environment_is_removed_and_rebuilt(cache, tmp_path):
    half = cache.path(GOOD)
    (half / "bin").mkdir(parents=True)
    (half / "leftover").write_text("from a build killed half-way")
    outcome = cache.ensure(GOOD, tmp_path / "env.log")
    assert outcome.failure is None and not outcome.cached and not (half / "leftover").exists()
    assert "removing the half-built environment" in (tmp_path / "env.log").read_text()


def test_concurrent_requests_for_one_environment_build_it_once(cache, tmp_path):
    outcomes = []

    def ensure(n: int) -> None:
        outcomes.append(cache.ensure(GOOD, tmp_path / f"{n}.log"))

    threads = [threading.Thread(target=ensure, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(installs(cache)) == 1
    assert sorted(outcome.cached for outcome in outcomes) == [False, True, True, True]


def test_a_stopping_matrix_does_not_wait_for_another_build_s_lock(cache, tmp_path):
    import fcntl

    lock = cache.root / f"{cache.key(GOOD)}.lock"
    lock.parent.mkdir(parents=True)
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        cache.children.stopping.set()
        with pytest.raises(Interrupted):
            cache.ensure(GOOD, tmp_path / "env.log")


def test_cells_that_install_the_same_things_share_one_environment(cache):
    """The driver built by the harness (Node, Java, Go) lives in its cache, not in the environment; a Python
    driver's release is the environment's pymongo."""
    key = cache.key
    secantus = Cell(Driver("node", "6.10.0"), "embedded", "0.7.0b3")
    assert key(secantus) == key(Cell(Driver("java"), "secantusdb-daemon", "0.7.0b3"))
    assert key(secantus) == key(Cell(Driver("go", "2.10.0"), "embedded-on-disk", "0.7.0b3"))
    assert key(GOOD) == key(Cell(Driver("pymongo-async", "4.20.0"), "embedded", "0.7.0b3"))
    assert key(GOOD) == key(Cell(Driver("pymongo-executor", "4.20.0"), "embedded-standalone", "0.7.0b3"))
    assert key(secantus) != key(GOOD) != key(Cell(Driver("pymongo", "4.19.0"), "embedded", "0.7.0b3"))
    assert key(secantus) != key(Cell(Driver("node", "6.10.0"), "embedded", "0.7.0b2"))
    java_server = Cell(Driver("node", "6.10.0"), "mongo-java-server=1.47.0")
    assert key(java_server) == key(Cell(Driver("go"), "uri=mongodb://db/"))  # the pinned pymongo and SecantusDB
    assert key(java_server) != key(Cell(Driver("node", "6.10.0"), "testcontainers=mongo:8.0"))  # its extra


def test_the_cache_key_changes_with_each_input_and_only_with_them():
    base = {
        "interpreter": "CPython 3.11.7 linux",
        "requirements": ("pymongo==4.20.0", "secantusdb==0.7.0b3"),
        "extras": (),
        "dependencies": '["pymongo>=4.9,<5"]',
        "project": Path("/work/main"),
    }
    key = cache_key(**base)
    assert key == cache_key(**{**base, "requirements": ("secantusdb==0.7.0b3", "pymongo==4.20.0")})
    for change in (
        {"interpreter": "CPython 3.12.1 linux"},
        {"requirements": ("pymongo==4.19.0",)},
        {"extras": ("faults",)},
        {"dependencies": '["pymongo>=4.10,<5"]'},
        {"project": Path("/elsewhere")},
    ):
        assert cache_key(**{**base, **change}) != key, change


def test_dependency_text_follows_the_pins_not_the_rest_of_pyproject(tmp_path):
    pyproject = (REPO / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(pyproject)
    before = dependency_text(tmp_path)
    (tmp_path / "pyproject.toml").write_text(pyproject.replace('addopts = "', 'addopts = "-x '))
    assert dependency_text(tmp_path) == before
    (tmp_path / "pyproject.toml").write_text(pyproject.replace('"PyYAML>=6.0,<7"', '"PyYAML>=6.0.1,<7"'))
    assert dependency_text(tmp_path) != before


def test_interpreter_identity_and_default_cache_location(monkeypatch, tmp_path):
    assert interpreter_identity(sys.executable).split()[1] == ".".join(map(str, sys.version_info[:3]))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_envs_dir() == tmp_path / "cs-harness" / "envs"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_envs_dir() == Path.home() / ".cache" / "cs-harness" / "envs"


def test_installer_commands(monkeypatch):
    monkeypatch.setattr("harness.matrix.installers.uv_binary", lambda: "/bin/uv")
    env, project, wheels = Path("/e"), Path("/p"), Path("/w")
    uv = choose_installer("auto", "/py")
    assert uv.name == "uv" and uv.create_command("/py", env) == ["/bin/uv", "venv", "--python", "/py", "/e"]
    assert uv.install_command(env, project, ("faults",), ("pymongo==4.20.0",), find_links=wheels, offline=True) == [
        "/bin/uv",
        "pip",
        "install",
        "--python",
        "/e/bin/python",
        "-e",
        "/p[faults]",
        "pymongo==4.20.0",
        "--find-links",
        "/w",
        "--offline",
        "--no-index",
    ]
    pip = choose_installer("pip", "/py", offline=True, find_links=wheels)
    assert pip.create_command("/py", env) == ["/py", "-m", "venv", "/e"]
    assert pip.install_command(env, project, (), ("pymongo==4.20.0",), find_links=wheels, offline=True) == [
        "/e/bin/python",
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "-e",
        "/p",
        "pymongo==4.20.0",
        "--find-links",
        "/w",
        "--no-index",
    ]
    monkeypatch.setattr("harness.matrix.installers.uv_binary", lambda: None)
    assert choose_installer("auto", "/py").name == "pip"
    with pytest.raises(InstallerUnavailable, match="uv is not installed"):
        choose_installer("uv", "/py")
    with pytest.raises(InstallerUnavailable, match="--offline with pip needs --find-links"):
        choose_installer("pip", "/py", offline=True)


def test_the_wheelhouse_downloads_build_requirements_then_each_pair_with_the_harness_pins(
    tmp_path, monkeypatch, capsys
):
    import shlex

    from harness.matrix import wheelhouse

    commands = wheelhouse.download_commands("/py", tmp_path, REPO, ["4.19.0", "4.20.0"], ["0.7.0b3"])
    prefix = ["/py", "-m", "pip", "download", "--disable-pip-version-check", "--dest", str(tmp_path)]
    assert [c[: len(prefix)] for c in commands] == [prefix] * 3
    assert any(r.startswith("setuptools") for r in commands[0])
    build, dependencies = wheelhouse.project_requirements(REPO, ("faults",))
    assert commands[0][len(prefix) :] == build and any(d.startswith("requests") for d in dependencies)
    assert commands[1][len(prefix) :] == [*dependencies, "pymongo==4.19.0", "secantusdb==0.7.0b3"]
    assert commands[2][-2:] == ["pymongo==4.20.0", "secantusdb==0.7.0b3"]

    ran = []
    monkeypatch.setattr(
        wheelhouse.child_processes, "run", lambda command: ran.append(command) or type("R", (), {"returncode": 0})
    )
    argv = ["--dest", str(tmp_path), "--pymongo", "4.19.0,4.20.0", "--secantusdb", "0.7.0b3", "--python", "/py"]
    assert wheelhouse.main(argv) == 0 and ran == commands
    listing = json.loads((tmp_path / "matrix-versions.json").read_text())
    assert listing["pymongo"] == ["4.19.0", "4.20.0"] and listing["commands"] == [shlex.join(c) for c in commands]
    assert wheelhouse.main(argv) == 0 and len(ran) == 3  # filled already: nothing runs again
    assert "already holds these versions" in capsys.readouterr().out
