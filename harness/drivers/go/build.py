"""``--driver go`` and ``go@VERSION``: the Go executor, compiled once per source digest into the harness's cache.

The executor (the ``.go`` files beside this module) is a Go program linked against one release of
``go.mongodb.org/mongo-driver/v2``. Building takes the Go toolchain some seconds, so the binary is kept in
``<cache>/go-executors/<release>-<digest>/`` where the digest covers the sources, ``go.mod``, ``go.sum``, the
release and the toolchain's version: an edit or another release is another folder, never a stale binary.

- ``""`` builds the release pinned in ``go.mod`` with ``-mod=readonly`` against ``go.sum`` (offline once the
  module cache has it).
- ``"2.8.0"`` builds a copy of the module whose ``go.mod`` requires that release (``go mod edit -require`` and
  ``go mod download``, ``GOFLAGS=-mod=mod``): ``go.sum`` changes in the copy only.

A build goes to a fresh folder that is then renamed into place, so two ``-j`` workers building at once both
end with one complete binary. A failed build raises :class:`ExecutorFailure` with the tail of Go's output.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.drivers.executor.process import ExecutorFailure
from harness.engine import child_processes
from harness.formats.cache import cache_dir

#: The folder of the executor's Go module (its sources, go.mod, go.sum).
SOURCE_DIR = Path(__file__).resolve().parent
#: The driver module whose release ``go@VERSION`` chooses.
DRIVER_MODULE = "go.mongodb.org/mongo-driver/v2"
#: The built program's file name inside its cache folder.
BINARY_NAME = "cs-go-executor"
#: How long one Go command may take (a cold build downloads and compiles the driver).
BUILD_TIMEOUT_S = 600.0
#: A release as ``go@VERSION`` takes it: ``2.10.0``, ``v2.10.0``, ``2.11.0-rc1``.
RELEASE_PATTERN = re.compile(r"^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")


def module_files(source_dir: Path = SOURCE_DIR) -> list[Path]:
    """What the build reads: the module's ``.go`` files, ``go.mod`` and ``go.sum``."""
    files = sorted(path for path in source_dir.glob("*.go") if path.is_file())
    return [*files, source_dir / "go.mod", source_dir / "go.sum"]


def build_digest(release: str, toolchain: str, source_dir: Path = SOURCE_DIR) -> str:
    """The cache key of one build: every file it reads (by name and content), the release and the toolchain."""
    digest = hashlib.sha256()
    for part in (release, toolchain):
        digest.update(part.encode() + b"\0")
    for path in module_files(source_dir):
        digest.update(path.name.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def executor_command(release: str) -> list[str]:
    """The argv of the Go executor built against ``release`` ("" for the one go.mod pins), building it now
    unless the cache has it."""
    return [str(built_executor(release))]


def built_executor(release: str, source_dir: Path = SOURCE_DIR) -> Path:
    """The executor binary for the module in ``source_dir`` and ``release``: from the cache, else built now."""
    release = release.strip()
    if release and not RELEASE_PATTERN.match(release):
        raise ExecutorFailure(f"--driver go@VERSION needs a driver release such as go@2.10.0, got {release!r}")
    go = shutil.which("go")
    if go is None:
        raise ExecutorFailure("--driver go: the Go toolchain (`go`) is not on PATH; install Go 1.25 or newer")
    toolchain = _run([go, "env", "GOVERSION"], source_dir, os.environ.copy(), "go env GOVERSION").strip()
    label = ("v" + release.lstrip("v")) if release else "pinned"
    folder = cache_dir() / "go-executors" / f"{label}-{build_digest(release, toolchain, source_dir)[:16]}"
    binary = folder / BINARY_NAME
    if binary.is_file():
        return binary
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    try:
        _build(go, release, source_dir, staging)
        try:
            staging.rename(folder)  # atomic: a worker that finished first keeps its copy
        except OSError:
            if not binary.is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return binary


def _build(go: str, release: str, source_dir: Path, staging: Path) -> None:
    """Compile into ``staging``: in place for the pinned release, else in a copy of the module."""
    env = os.environ.copy()
    output = staging / BINARY_NAME
    if not release:
        build = [go, "build", "-mod=readonly", "-buildvcs=false", "-trimpath", "-o", str(output), "."]
        _run(build, source_dir, env, "go build")
        return
    module = staging / "module"
    module.mkdir()
    for path in module_files(source_dir):
        shutil.copy2(path, module / path.name)
    env["GOFLAGS"] = "-mod=mod"
    version = "v" + release.lstrip("v")
    _run([go, "mod", "edit", f"-require={DRIVER_MODULE}@{version}"], module, env, "go mod edit")
    _run([go, "mod", "download", DRIVER_MODULE], module, env, f"go mod download {DRIVER_MODULE}@{version}")
    _run([go, "build", "-mod=mod", "-buildvcs=false", "-trimpath", "-o", str(output), "."], module, env, "go build")


def _run(command: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
    """One Go command; its failure is an :class:`ExecutorFailure` quoting the end of its output."""
    try:
        done = child_processes.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise ExecutorFailure(f"the Go executor's build: {what} took over {BUILD_TIMEOUT_S:g}s") from None
    if done.returncode != 0:
        tail = (done.stderr + done.stdout).strip()[-2000:]
        raise ExecutorFailure(f"the Go executor's build failed: {what} (exit {done.returncode}) in {cwd}:\n{tail}")
    return done.stdout
