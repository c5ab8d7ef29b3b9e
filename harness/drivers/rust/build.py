"""``--driver rust`` and ``rust@VERSION``: the Rust executor, compiled once per source digest into the harness's cache.

The executor (``src/``, ``build.rs``, ``Cargo.toml``, ``Cargo.lock`` beside this module) is a Rust program linked
against one release of the ``mongodb`` crate. A cold build compiles the driver and its dependencies (minutes on two
cores), so the binary is kept in ``<cache>/rust-executors/<release>-<digest>/`` where the digest covers the sources,
``build.rs``, ``Cargo.toml``, ``Cargo.lock``, the release and the toolchain's version: an edit or another release is
another folder, never a stale binary. Cargo's own target folder is shared (``<cache>/rust-executors/target``) so that
a second build reuses the compiled dependencies.

- ``""`` builds the release pinned in ``Cargo.lock`` with ``cargo build --release --locked``.
- ``"3.2.0"`` builds a copy of the project whose ``Cargo.lock`` is moved to that release
  (``cargo update -p mongodb --precise 3.2.0``): the lock changes in the copy only.

A build goes to a fresh folder that is then renamed into place, so two ``-j`` workers building at once both end
with one complete binary. A failed build raises :class:`ExecutorFailure` with the tail of cargo's output.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.core.vocabulary import VOCABULARY_FILE
from harness.drivers.executor.process import ExecutorFailure
from harness.engine import child_processes
from harness.formats.cache import cache_dir

#: The folder of the executor's Cargo project.
SOURCE_DIR = Path(__file__).resolve().parent
#: The crate whose release ``rust@VERSION`` chooses.
DRIVER_CRATE = "mongodb"
#: The built program's file name (the Cargo.toml's ``[[bin]]``).
BINARY_NAME = "cs-rust-executor"
#: How long one cargo command may take (a cold build compiles the driver and its dependencies).
BUILD_TIMEOUT_S = 1800.0
#: A release as ``rust@VERSION`` takes it: ``3.2.0``, ``3.3.0-beta``.
RELEASE_PATTERN = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")
#: Parallel compile jobs (``HARNESS_RUST_BUILD_JOBS``); unset: cargo's own choice, one per core. A cold build
#: compiles the driver and its dependencies: about 16 min on one core of the project's 2-core machines.
BUILD_JOBS = os.environ.get("HARNESS_RUST_BUILD_JOBS", "")


def project_files(source_dir: Path = SOURCE_DIR) -> dict[str, Path]:
    """What the build reads, by its path in the build's copy: ``src/**/*.rs`` (not ``repro/``), ``build.rs``,
    ``Cargo.toml``, ``Cargo.lock``, and the shared vocabulary (``vocabulary.json``, compiled in)."""
    sources = sorted(path for path in (source_dir / "src").rglob("*.rs") if path.is_file())
    files = [*sources, source_dir / "build.rs", source_dir / "Cargo.toml", source_dir / "Cargo.lock"]
    return {**{str(path.relative_to(source_dir)): path for path in files}, "vocabulary.json": VOCABULARY_FILE}


def build_digest(release: str, toolchain: str, source_dir: Path = SOURCE_DIR) -> str:
    """The cache key of one build: every file it reads (by relative path and content), the release, the toolchain."""
    digest = hashlib.sha256()
    for part in (release, toolchain):
        digest.update(part.encode() + b"\0")
    for name, path in project_files(source_dir).items():
        digest.update(name.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def executor_command(release: str) -> list[str]:
    """The argv of the Rust executor built against ``release`` ("" for the one Cargo.lock pins), building it now
    unless the cache has it."""
    return [str(built_executor(release))]


def built_executor(release: str, source_dir: Path = SOURCE_DIR) -> Path:
    """The executor binary for the project in ``source_dir`` and ``release``: from the cache, else built now."""
    release = release.strip()
    if release and not RELEASE_PATTERN.match(release):
        raise ExecutorFailure(
            f"--driver rust@VERSION needs a mongodb crate release such as rust@3.2.0, got {release!r}"
        )
    cargo = shutil.which("cargo")
    if cargo is None:
        raise ExecutorFailure("--driver rust: the Rust toolchain (`cargo`) is not on PATH; install it with rustup")
    env = os.environ.copy()
    toolchain = _run([cargo, "--version"], source_dir, env, "cargo --version").strip()
    label = release or "pinned"
    root = cache_dir() / "rust-executors"
    folder = root / f"{label}-{build_digest(release, toolchain, source_dir)[:16]}"
    binary = folder / BINARY_NAME
    if binary.is_file():
        return binary
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=f".{folder.name}-"))
    try:
        _build(cargo, release, source_dir, staging, root / "target", env)
        try:
            staging.rename(folder)  # atomic: a worker that finished first keeps its copy
        except OSError:
            if not binary.is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return binary


def _build(cargo: str, release: str, source_dir: Path, staging: Path, target: Path, env: dict[str, str]) -> None:
    """Compile a copy of the project in ``staging`` (its lock moved to ``release`` when one is named) and keep the
    binary there. The copy keeps ``Cargo.lock`` in the source tree untouched, also for ``rust@VERSION``."""
    project = staging / "project"
    project.mkdir()
    for name, path in project_files(source_dir).items():
        destination = project / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)
    if release:
        _run([cargo, "update", "-p", DRIVER_CRATE, "--precise", release], project, env, f"cargo update {release}")
        locked: list[str] = []
    else:
        locked = ["--locked"]
    # One target folder per release keeps a second build of the same release incremental, and two releases from
    # fighting over one folder's lock while both build.
    target_dir = target / (release or "pinned")
    jobs = ["-j", BUILD_JOBS] if BUILD_JOBS else []
    command = [cargo, "build", "--release", *locked, *jobs, "--target-dir", str(target_dir)]
    _run(command, project, env, "cargo build")
    shutil.copy2(target_dir / "release" / BINARY_NAME, staging / BINARY_NAME)
    shutil.rmtree(project, ignore_errors=True)


def _run(command: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
    """One cargo command; its failure is an :class:`ExecutorFailure` quoting the end of its output."""
    try:
        done = child_processes.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise ExecutorFailure(f"the Rust executor's build: {what} took over {BUILD_TIMEOUT_S:g}s") from None
    if done.returncode != 0:
        tail = (done.stderr + done.stdout).strip()[-2000:]
        raise ExecutorFailure(f"the Rust executor's build failed: {what} (exit {done.returncode}) in {cwd}:\n{tail}")
    return done.stdout
