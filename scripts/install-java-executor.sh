#!/usr/bin/env bash
# Build the Java executor (--driver java) once, so the tests and the first `harness run --driver java` find it in
# the harness's cache ($HARNESS_CACHE_DIR, default ~/.cache/cs-harness/java-executor/).
#
# - Needs a JDK 17 and Maven (Debian's `openjdk-17-jdk-headless` and `maven`); without them it says what is
#   missing and exits 1 (CI installs them; a developer's machine may not, and the Java tests then skip).
# - The first build downloads mongodb-driver-sync and Maven's compiler and dependency plug-ins from Maven Central
#   into the local Maven repository (~/.m2); later builds run Maven offline. Every jar is checked against
#   harness/drivers/java/dependencies.lock.
#
# Idempotent: a build whose sources, pom, lock and release are unchanged is reused.
set -euo pipefail

log() { echo "install-java-executor: $*" >&2; }

missing=()
for tool in java javac mvn; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
    log "missing: ${missing[*]} (install openjdk-17-jdk-headless and maven)"
    exit 1
fi

cd "$(dirname "$0")/.."
started=$(date +%s)
python -m harness.drivers.java.build >/dev/null
log "the Java executor is built ($(( $(date +%s) - started ))s): $(python -m harness.drivers.java.build --classpath | tr ':' '\n' | grep -c jar) jars"
