"""Find the Java runtime PySpark needs, and say plainly what is missing.

PySpark is a Python front end to a JVM: without ``java`` (or with one too
old) the first Spark call dies deep in a launcher script with an unreadable
trace. ``harness report`` checks first, the way PySpark's launcher looks
(``$JAVA_HOME/bin/java``, else ``java`` on ``PATH``), and stops with exit
status 2 and a message naming what is missing and how to install it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

#: PySpark 4 runs on Java 17 or 21.
MINIMUM_JAVA = 17
INSTALL_HINT = (
    "install one, e.g. `apt-get install -y openjdk-17-jre-headless` (Debian/Ubuntu), "
    "or set JAVA_HOME to a Java 17+ runtime"
)
_VERSION = re.compile(r'version "([^"]+)"')


class JavaMissing(RuntimeError):
    """No usable Java runtime; the message says what is missing and how to install it."""


@dataclass(frozen=True)
class JavaRuntime:
    path: str
    version: str
    major: int


def find_java(env: dict[str, str] | None = None) -> str:
    """The ``java`` PySpark will launch: ``$JAVA_HOME/bin/java`` when JAVA_HOME is set, else the one on PATH."""
    env = os.environ if env is None else env
    home = env.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if not os.access(candidate, os.X_OK):
            raise JavaMissing(
                f"harness report needs Java {MINIMUM_JAVA} or newer for PySpark: "
                f"JAVA_HOME={home} has no bin/java; {INSTALL_HINT}"
            )
        return str(candidate)
    found = shutil.which("java", path=env.get("PATH", ""))
    if not found:
        raise JavaMissing(
            f"harness report needs Java {MINIMUM_JAVA} or newer for PySpark: no `java` on PATH "
            f"and JAVA_HOME is not set; {INSTALL_HINT}"
        )
    return found


def major_version(version: str) -> int:
    """``17.0.15`` -> 17, ``21`` -> 21, ``1.8.0_292`` -> 8 (the old numbering)."""
    parts = re.findall(r"\d+", version)
    if not parts:
        raise ValueError(f"not a Java version: {version!r}")
    first = int(parts[0])
    return int(parts[1]) if first == 1 and len(parts) > 1 else first


def check_java(env: dict[str, str] | None = None) -> JavaRuntime:
    """The Java runtime PySpark will use, checked to be new enough; :class:`JavaMissing` otherwise."""
    java = find_java(env)
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise JavaMissing(f"harness report could not run {java} -version ({exc}); {INSTALL_HINT}") from exc
    match = _VERSION.search(done.stderr + done.stdout)
    if done.returncode != 0 or not match:
        raise JavaMissing(
            f"harness report could not tell the version of {java} "
            f"(exit {done.returncode}: {(done.stderr or done.stdout).strip()[:200]}); {INSTALL_HINT}"
        )
    runtime = JavaRuntime(java, match[1], major_version(match[1]))
    if runtime.major < MINIMUM_JAVA:
        raise JavaMissing(
            f"harness report needs Java {MINIMUM_JAVA} or newer for PySpark, but {java} is Java "
            f"{runtime.version}; {INSTALL_HINT}"
        )
    return runtime
