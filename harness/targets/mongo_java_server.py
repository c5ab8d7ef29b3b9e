"""mongo-java-server as a target: ``--target mongo-java-server[=RELEASE][,server=X.Y][,present=replicaset]``.

A second, independently written emulator (Maven Central ``de.bwaldvogel:mongo-java-server``, Java 17).
The harness resolves the release's jars into its cache with Maven (once; offline after, each jar's
SHA-256 recorded and checked), compiles the few-line launcher beside this module
(``mongo_java_server/Launcher.java``, keyed by its digest and the release), and starts it per run: it
binds 127.0.0.1 on a free port, keeps an oplog (change streams need it) and prints one ready line. It
stops when its stdin closes, so it never outlives the harness; on a failed start its process group is
killed.

The argument, parsed in one place (:func:`parse_argument`):

``RELEASE``            the library release (default :data:`DEFAULT_RELEASE`);
``server=X.Y``         the version it reports, through the library's own ``version(...)`` setter:
                       ``library`` (the library's default), a version the library enumerates (its
                       own wire version), or any X.Y MongoDB released (that release's wire version);
``present=replicaset`` a wire proxy presents it as a one-member replica set
                       (:mod:`harness.shared.wire.presented_topology`): opt-in, recorded as presented.
"""

from __future__ import annotations

import hashlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.ports import TargetInfo, TargetUnavailable, WireVersionRefused
from harness.engine import child_processes
from harness.formats.cache import cache_dir
from harness.shared.target_base import TargetBase, discard_log

DEFAULT_RELEASE = "1.47.0"
#: The reported version when none is asked for: the library's own default (5.0 at wire version 8) is
#: below what current drivers accept (pymongo 4.20 needs wire version 9), so every test would fail.
DEFAULT_SERVER = "6.0"
GROUP = "de.bwaldvogel"
#: The artifact whose dependencies are the whole server (it depends on mongo-java-server-core).
ARTIFACT = "mongo-java-server-memory-backend"
#: SHA-256 of the default release's own jars, as Maven Central serves them (the rest are its pinned dependencies).
PINNED_SHA256 = {
    "mongo-java-server-core-1.47.0.jar": "9a34c9ad6ac6261906295481838256033ec1efc8c93a3e3828e5d47a006b0bd4",
    "mongo-java-server-memory-backend-1.47.0.jar": "82864f8a2ede1514f64c2cd3a70e8022c259eb3d78975cfa208c1668ac1f12bb",
}
#: The versions the library enumerates (``ServerVersion``) and the wire version it reports for each.
LIBRARY_VERSIONS = {"3.6": 6, "4.0": 7, "5.0": 8}
#: The version the library reports when none is set (``AbstractMongoBackend``'s default).
LIBRARY_DEFAULT = "5.0"
#: The wire version each MongoDB release reports (``maxWireVersion``), for a version the library does not enumerate
#: (5.0 is the library's own, at wire version 8, so it is not here).
RELEASE_WIRE_VERSIONS = {"4.2": 8, "4.4": 9, "6.0": 17, "7.0": 21, "8.0": 25}
PRESENTATIONS = ("replicaset",)
#: The target's name (so its expected-outcomes file): natively a standalone, or presented as a replica set.
NATIVE_NAME = "mongo-java-server"
PRESENTED_NAME = "mongo-java-server-presented"
LAUNCHER_SOURCE = Path(__file__).with_name("mongo_java_server") / "Launcher.java"
READY_PREFIX = "mongo-java-server ready port="
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
MAVEN_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Options:
    """The target's argument, parsed: which release, which reported version, which presentation."""

    release: str = DEFAULT_RELEASE
    server: str = DEFAULT_SERVER
    present: str | None = None

    @property
    def wire_version(self) -> int | None:
        """The wire version to claim, or None when the library's own enumeration (or default) decides it."""
        if self.server == "library" or self.server in LIBRARY_VERSIONS:
            return None
        return RELEASE_WIRE_VERSIONS[self.server]

    @property
    def reported_wire_version(self) -> int | None:
        if self.server == "library":
            return None
        return LIBRARY_VERSIONS.get(self.server) or RELEASE_WIRE_VERSIONS[self.server]


def parse_argument(argument: str | None) -> Options:
    """``[RELEASE][,server=X.Y][,present=replicaset]`` (comma-separated, in any order) -> :class:`Options`."""
    values: dict[str, str] = {}
    for index, item in enumerate(part.strip() for part in (argument or "").split(",") if part.strip()):
        key, equals, value = item.partition("=")
        if not equals:
            if index:
                raise TargetUnavailable(f"mongo-java-server: {item!r} needs a name (server=, present=)")
            key, value = "release", item
        if key not in ("release", "server", "present") or key in values:
            raise TargetUnavailable(f"mongo-java-server: unknown or repeated option {key!r} in {argument!r}")
        values[key] = value
    options = Options(**values)
    known = ["library", *LIBRARY_VERSIONS, *RELEASE_WIRE_VERSIONS]
    if options.server not in known:
        raise TargetUnavailable(f"mongo-java-server: server={options.server} is not one of {sorted(set(known))}")
    if options.present is not None and options.present not in PRESENTATIONS:
        raise TargetUnavailable(f"mongo-java-server: present={options.present} is not one of {list(PRESENTATIONS)}")
    return options


# -- the jars and the launcher, in the harness cache --------------------------------------------


def home(release: str) -> Path:
    return cache_dir() / "mongo-java-server" / release


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def resolve_jars(release: str) -> dict[str, str]:
    """The release's jars in the cache, resolved with Maven once (offline after): jar name -> SHA-256.

    A cached jar whose digest differs from the recorded one, or a default-release jar whose digest differs
    from :data:`PINNED_SHA256`, stops the start.
    """
    lib, manifest = home(release) / "lib", home(release) / "artifacts.json"
    if not manifest.exists():
        _maven_copy(release, lib)
        recorded = {jar.name: _sha256(jar) for jar in sorted(lib.glob("*.jar"))}
        manifest.write_text(json.dumps({"artifact": f"{GROUP}:{ARTIFACT}:{release}", "jars": recorded}, indent=1))
    recorded = json.loads(manifest.read_text())["jars"]
    for name, digest in recorded.items():
        actual = _sha256(lib / name) if (lib / name).exists() else "missing"
        pinned = PINNED_SHA256.get(name) if release == DEFAULT_RELEASE else None
        if actual != digest or (pinned and actual != pinned):
            raise TargetUnavailable(
                f"mongo-java-server {release}: {lib / name} has SHA-256 {actual}, expected {pinned or digest} "
                f"(delete {home(release)} to resolve it again)"
            )
    return dict(recorded)


def _maven_copy(release: str, lib: Path) -> None:
    """``mvn dependency:copy-dependencies`` on a generated pom: the release and its runtime dependencies."""
    if shutil.which("mvn") is None:
        raise TargetUnavailable("mongo-java-server: Maven (mvn) is needed once, to fetch the jars; it is not on PATH")
    pom = (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>cs-harness</groupId><artifactId>mongo-java-server-jars</artifactId><version>1</version>"
        f"<packaging>pom</packaging><dependencies><dependency><groupId>{GROUP}</groupId>"
        f"<artifactId>{ARTIFACT}</artifactId><version>{release}</version></dependency></dependencies></project>"
    )
    with tempfile.TemporaryDirectory(prefix="mongo-java-server-") as work:
        (Path(work) / "pom.xml").write_text(pom)
        staging = Path(work) / "lib"
        command = ["mvn", "-B", "-q", "dependency:copy-dependencies", "-DincludeScope=runtime"]
        try:
            done = child_processes.run(
                [*command, f"-DoutputDirectory={staging}"],
                cwd=work,
                capture_output=True,
                text=True,
                timeout=MAVEN_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise TargetUnavailable(
                f"mongo-java-server {release}: Maven did not finish in {MAVEN_TIMEOUT_S:g}s"
            ) from None
        if done.returncode != 0 or not list(staging.glob("*.jar")):
            tail = (done.stdout + done.stderr)[-1500:]
            raise TargetUnavailable(f"mongo-java-server {release}: Maven could not resolve {GROUP}:{ARTIFACT}: {tail}")
        lib.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(lib, ignore_errors=True)
        shutil.copytree(staging, lib)


def build_launcher(release: str) -> Path:
    """The launcher compiled against ``release`` (cached by the source's digest): the class folder."""
    if not LAUNCHER_SOURCE.exists():
        raise TargetUnavailable(f"mongo-java-server: the launcher's source {LAUNCHER_SOURCE} is not installed")
    source = LAUNCHER_SOURCE.read_bytes()
    folder = home(release) / "launcher" / hashlib.sha256(source + release.encode()).hexdigest()[:16]
    if (folder / "Launcher.class").exists():
        return folder
    if shutil.which("javac") is None:
        raise TargetUnavailable("mongo-java-server: javac (a JDK 17+) is needed to build the launcher")
    staging = Path(tempfile.mkdtemp(prefix="launcher-", dir=folder.parent if folder.parent.exists() else None))
    done = child_processes.run(
        ["javac", "-cp", str(home(release) / "lib" / "*"), "-d", str(staging), str(LAUNCHER_SOURCE)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise TargetUnavailable(f"mongo-java-server: javac failed on {LAUNCHER_SOURCE}: {done.stderr[-1500:]}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        staging.rename(folder)  # atomic: parallel builders race harmlessly
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def prepare(release: str = DEFAULT_RELEASE) -> tuple[dict[str, str], Path]:
    """Jars and launcher, ready (the warm-up a parallel run does once before its workers start)."""
    jars = resolve_jars(release)
    return jars, build_launcher(release)


def warm_up() -> None:
    prepare(DEFAULT_RELEASE)


# -- the target --------------------------------------------------------------------------------


class MongoJavaServer(TargetBase):
    """One mongo-java-server process per run, on a free loopback port."""

    kind = "mongo-java-server"

    def __init__(self, options: Options | None = None, name: str | None = None) -> None:
        self.options = options or Options()
        super().__init__(name or (PRESENTED_NAME if self.options.present else NATIVE_NAME))
        self.process: subprocess.Popen[str] | None = None
        self.port: int | None = None
        self.presentation: Any = None
        self._log = tempfile.NamedTemporaryFile(prefix="mongo-java-server-", suffix=".log", delete=False)

    def start(self) -> TargetInfo:
        if shutil.which("java") is None:
            raise TargetUnavailable("mongo-java-server: java (17+) is not on PATH")
        self._check_wire_version()
        jars, launcher = prepare(self.options.release)
        classpath = os.pathsep.join([str(launcher), str(home(self.options.release) / "lib" / "*")])
        wire = self.options.wire_version
        command = ["java", "-XX:+UseSerialGC", "-cp", classpath, "Launcher", self.options.server]
        command += [str(wire)] if wire is not None else []
        self.process = child_processes.popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            start_new_session=True,
        )
        try:
            self.port = self._wait_for_ready()
            self.uri = f"mongodb://127.0.0.1:{self.port}/"
            native = self._present()
            self.connect_admin()
        except BaseException:
            _kill_group(self.process)  # a launcher that failed to start is not asked politely
            self.stop()
            raise
        self.info.details.update(self._provenance(jars, native))
        return self.info

    def _check_wire_version(self) -> None:
        """A reported version the harness's own client (pymongo) refuses stops the start with the choices that work."""
        from pymongo.common import MIN_SUPPORTED_WIRE_VERSION

        wire = self.options.reported_wire_version or LIBRARY_VERSIONS[LIBRARY_DEFAULT]
        if wire < MIN_SUPPORTED_WIRE_VERSION:
            usable = sorted(v for v, w in RELEASE_WIRE_VERSIONS.items() if w >= MIN_SUPPORTED_WIRE_VERSION)
            raise WireVersionRefused(
                f"mongo-java-server: server={self.options.server} reports wire version {wire}, and the harness's own "
                f"client (pymongo) needs at least {MIN_SUPPORTED_WIRE_VERSION}: choose server= one of {usable}"
            )

    def _wait_for_ready(self) -> int:
        """The port from the launcher's ready line, within :data:`START_TIMEOUT_S` (else the log says why)."""
        assert self.process is not None and self.process.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while (left := deadline - time.monotonic()) > 0:
                if not selector.select(left):
                    break
                line = self.process.stdout.readline()
                if line.startswith(READY_PREFIX):
                    return int(line[len(READY_PREFIX) :].strip())
                if not line:  # end of output: the launcher exited
                    self.process.wait(STOP_TIMEOUT_S)
                    raise TargetUnavailable(
                        f"mongo-java-server exited with {self.process.returncode} before it was ready: "
                        + self._log_tail()
                    )
        raise TargetUnavailable(f"mongo-java-server was not ready within {START_TIMEOUT_S:g}s: {self._log_tail()}")

    def _present(self) -> str | None:
        """With ``present=replicaset``, a proxy in front and the URI through it; the native topology (or None)."""
        if self.options.present is None:
            return None
        from harness.shared.wire.presented_topology import FAILPOINTS_BY_PRESENTATION, PresentedReplicaSet

        self.connect_admin()  # detection on the server itself: its native topology
        native = self.info.topology
        super().stop()
        self.presentation = PresentedReplicaSet("127.0.0.1", int(self.port or 0))
        self.uri = self.presentation.start()
        # The admin client now goes through the presenting proxy, which answers configureFailPoint itself.
        self.admin_failpoints = FAILPOINTS_BY_PRESENTATION
        return native

    def server_address(self) -> tuple[str, int] | None:
        """The server's own port, beneath the presenting proxy when there is one."""
        return ("127.0.0.1", self.port) if self.port is not None else None

    def _provenance(self, jars: dict[str, str], native: str | None) -> dict[str, Any]:
        details: dict[str, Any] = {
            "release": self.options.release,
            "artifact": f"{GROUP}:{ARTIFACT}:{self.options.release}",
            "jars_sha256": jars,
            "server_version_option": self.options.server,
            "reported_wire_version": self.options.reported_wire_version,
            "pid": self.process.pid if self.process is not None else None,
            "log": self._log.name,
        }
        if self.presentation is not None:
            details.update(self.presentation.provenance(native or "unknown"))
        else:
            details["topology_native"] = self.info.topology
        return details

    def _log_tail(self) -> str:
        return Path(self._log.name).read_text(errors="replace")[-2000:] or "(no output)"

    def stop(self) -> None:
        super().stop()
        if self.presentation is not None:
            self.presentation.stop()
            self.presentation = None
            self.admin_failpoints = TargetBase.admin_failpoints
        process, self.process = self.process, None
        if process is None:
            return
        # A server that stopped as asked leaves only SLF4J's start-up warnings in its log: removed. One that died
        # on its own keeps its log (named in the provenance) for whoever looks into why.
        discard_log(self._log.name, keep_if_written=process.poll() is not None)
        if process.stdin is not None and not process.stdin.closed:
            process.stdin.close()  # the launcher's signal to shut down
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            _kill_group(process)
        if process.stdout is not None:
            process.stdout.close()


def _kill_group(process: subprocess.Popen[str] | None) -> None:
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
