"""``--driver java`` and ``java@VERSION``: the Java executor, built with Maven into the harness's cache on first use.

The executor (``src/``, docs/executor-protocol.md) compiles against one ``org.mongodb:mongodb-driver-sync`` release:
the pom's ``driver.version`` (the pinned one, ``--driver java``) or the one ``java@VERSION`` names. A build copies the
pom and the sources into a staging folder under ``<cache>/java-executor/``, runs ``mvn dependency:build-classpath
compile`` there (offline first, so a warm local Maven repository needs no network; online when that fails), checks
every resolved jar against ``dependencies.lock`` and renames the folder into place. Its name holds a digest of the
sources, the pom, the lock and the release, so an edit or another release is another folder; two ``-j`` workers
that race build under a file lock, and the rename is atomic, so each finds one complete build.

``dependencies.lock`` holds ``<sha256>  <jar file name>`` lines (``sha256sum`` format). Every jar of the pinned
release must be listed with its hash; a jar of another release is checked when listed and recorded beside the build
(``dependencies.resolved``) when not. ``python -m harness.drivers.java.build --lock [VERSION ...]`` writes the lines
of the pinned release (and of the releases named) from a fresh resolution.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

from harness.drivers.executor.process import ExecutorFailure
from harness.engine import child_processes
from harness.formats.cache import cache_dir

JAVA_DIR = Path(__file__).resolve().parent
POM = JAVA_DIR / "pom.xml"
SOURCES = JAVA_DIR / "src"
LOCK = JAVA_DIR / "dependencies.lock"
MAIN_CLASS = "csharness.executor.Main"
#: How long one Maven build may take (the first one downloads the driver and Maven's plug-ins).
BUILD_TIMEOUT_S = 600.0
#: Written last into a finished build folder: a folder without it is never used.
READY = "READY"
CLASSPATH = "classpath.txt"
_RELEASE = re.compile(r"^[0-9][0-9A-Za-z.+-]{0,63}$")
_POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def pinned_release() -> str:
    """The pom's ``driver.version``: the release ``--driver java`` builds against."""
    node = ElementTree.parse(POM).getroot().find("m:properties/m:driver.version", _POM_NS)
    if node is None or not (node.text or "").strip():
        raise ExecutorFailure(f"{POM} has no <driver.version> property")
    return node.text.strip()  # type: ignore[union-attr] - checked just above


def executor_command(release: str) -> list[str]:
    """The argv that starts the executor built against ``release`` ("" for the pinned one), building it if needed."""
    release = release or pinned_release()
    if not _RELEASE.match(release):
        raise ExecutorFailure(f"--driver java@VERSION needs a Maven version of mongodb-driver-sync, got {release!r}")
    java = shutil.which("java")
    if java is None:
        raise ExecutorFailure("--driver java: `java` is not installed (the executor needs a Java 17 runtime)")
    folder = built(release)
    jars = [entry for entry in (folder / CLASSPATH).read_text().strip().split(os.pathsep) if entry]
    return [java, "-XX:TieredStopAtLevel=1", "-cp", os.pathsep.join([str(folder / "classes"), *jars]), MAIN_CLASS]


def source_digest(release: str) -> str:
    """SHA-256 of the release, the pom, the lock and every source file (by relative path): the build's identity."""
    digest = hashlib.sha256(f"java-executor/1\0{release}\0".encode())
    files = [POM, LOCK, *sorted(path for path in SOURCES.rglob("*") if path.is_file())]
    for path in files:
        digest.update(str(path.relative_to(JAVA_DIR)).encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


def build_folder(release: str) -> Path:
    return cache_dir() / "java-executor" / f"{release}-{source_digest(release)[:16]}"


def built(release: str) -> Path:
    """The build folder of ``release`` (``classes/``, ``classpath.txt``), built now unless the cache has it."""
    folder = build_folder(release)
    if (folder / READY).is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(folder.parent / f".{folder.name}.lock"):
        if (folder / READY).is_file():  # another worker built it while this one waited
            return folder
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
        try:
            _build(release, staging)
            (staging / READY).write_text(release + "\n")
            try:
                staging.rename(folder)  # atomic: a folder is complete or absent
            except OSError:
                if not (folder / READY).is_file():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return folder


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """One builder at a time per build folder (where the platform has ``fcntl``; the rename stays atomic anyway)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(release: str, staging: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ExecutorFailure(f"--driver java@{release}: Maven (`mvn`) is not installed and the executor is not built")
    shutil.copy2(POM, staging / "pom.xml")
    shutil.copytree(SOURCES, staging / "src")
    goals = ["dependency:build-classpath", f"-Dmdep.outputFile={CLASSPATH}", "compile"]
    command = [mvn, "-B", "-q", f"-Ddriver.version={release}", *goals]
    done = _maven([*command[:1], "-o", *command[1:]], staging)
    if done.returncode != 0 and "COMPILATION ERROR" not in done.stdout + done.stderr:
        done = _maven(command, staging)  # the local Maven repository lacks something: resolve from Maven Central
    if done.returncode != 0 or not (staging / CLASSPATH).is_file():
        output = (done.stdout + done.stderr).strip()
        raise ExecutorFailure(f"--driver java@{release}: the Maven build failed:\n{output[-3000:]}")
    shutil.move(str(staging / "target" / "classes"), staging / "classes")
    shutil.rmtree(staging / "target", ignore_errors=True)
    jars = [Path(entry) for entry in (staging / CLASSPATH).read_text().strip().split(os.pathsep) if entry]
    resolved = check_lock(release, jars)
    (staging / "dependencies.resolved").write_text("".join(f"{sha}  {name}\n" for name, sha in resolved.items()))


def _maven(command: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    try:
        return child_processes.run(
            command, cwd=folder, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise ExecutorFailure(f"the Java executor's Maven build took over {BUILD_TIMEOUT_S:g}s") from None


def read_lock(path: Path | None = None) -> dict[str, str]:
    """``dependencies.lock``: jar file name -> SHA-256 (``#`` starts a comment)."""
    path = path or LOCK
    entries: dict[str, str] = {}
    for line in path.read_text().splitlines() if path.is_file() else []:
        line = line.split("#", 1)[0].strip()
        if line:
            sha, name = line.split(None, 1)
            entries[name.strip()] = sha.lower()
    return entries


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_lock(release: str, jars: list[Path]) -> dict[str, str]:
    """Each resolved jar's SHA-256 against the lock: a mismatch always fails; an unlisted jar fails for the pinned
    release only. Returns jar name -> SHA-256 of what was resolved."""
    lock = read_lock()
    resolved = {jar.name: sha256_file(jar) for jar in jars}
    pinned = release == pinned_release()
    problems = []
    for name, sha in resolved.items():
        if name in lock and lock[name] != sha:
            problems.append(f"{name}: SHA-256 {sha}, the lock says {lock[name]}")
        elif name not in lock and pinned:
            problems.append(f"{name} (SHA-256 {sha}) is not in the lock")
    if problems:
        raise ExecutorFailure(
            f"--driver java@{release}: resolved jars disagree with {LOCK.name}:\n  "
            + "\n  ".join(problems)
            + "\n(if the pom changed on purpose: python -m harness.drivers.java.build --lock)"
        )
    return resolved


def write_lock(releases: list[str]) -> None:
    """Resolves each release afresh (no cache, no lock check) and writes their jars' lines into the lock."""
    lines = [
        "# The Java executor's resolved jars (mongodb-driver-sync and its dependencies): <sha256>  <jar file name>.",
        "# Checked by harness/drivers/java/build.py on every build; refresh with",
        "# `python -m harness.drivers.java.build --lock [VERSION ...]` after changing the pom's driver.version.",
    ]
    entries: dict[str, str] = {}
    for release in releases:
        with tempfile.TemporaryDirectory() as staging:
            shutil.copy2(POM, Path(staging) / "pom.xml")
            command = [
                "mvn",
                "-B",
                "-q",
                f"-Ddriver.version={release}",
                "dependency:build-classpath",
                f"-Dmdep.outputFile={CLASSPATH}",
            ]
            done = _maven(command, Path(staging))
            if done.returncode != 0:
                raise ExecutorFailure(f"resolving {release} failed:\n{(done.stdout + done.stderr)[-3000:]}")
            for entry in (Path(staging) / CLASSPATH).read_text().strip().split(os.pathsep):
                if entry:
                    entries[Path(entry).name] = sha256_file(Path(entry))
    LOCK.write_text("\n".join(lines + [f"{sha}  {name}" for name, sha in sorted(entries.items())]) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.drivers.java.build", description=__doc__.split("\n")[0])
    parser.add_argument("--lock", action="store_true", help="rewrite dependencies.lock for the pinned release")
    parser.add_argument("--classpath", action="store_true", help="print the driver's jars only (for tests/repro/java/)")
    parser.add_argument("releases", nargs="*", help="more mongodb-driver-sync releases to build (or to lock)")
    options = parser.parse_args(argv)
    if options.lock:
        write_lock([pinned_release(), *options.releases])
        print(f"wrote {LOCK}")
        return 0
    for release in options.releases or [""]:
        if options.classpath:
            print((built(release or pinned_release()) / CLASSPATH).read_text().strip())
        else:
            print(" ".join(executor_command(release)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ExecutorFailure as failure:
        sys.exit(f"{failure}")
