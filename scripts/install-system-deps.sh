#!/usr/bin/env bash
# Install the system packages the report tests need, from Debian's packages, only when missing.
#
# - A Java runtime, 17 or newer: PySpark 4 runs on the JVM. `harness report` checks for it itself
#   and says what is missing; here CI installs it so the report tests can run.
# - Chromium and its driver: the test suite renders the report page in headless Chromium and
#   asserts on what a person sees.
# - A JDK (javac) and Maven: the Java executor (--driver java) and the mongo-java-server target's launcher are
#   built from source against artifacts Maven resolves from Maven Central.
#
# Idempotent; `apt-get update` runs at most once, and only when something has to be installed.
# Needs root (CI and the development machines run as root); otherwise it says what to install.
set -euo pipefail

log() { echo "install-system-deps: $*" >&2; }

java_major() {
    command -v java >/dev/null 2>&1 || { echo 0; return; }
    java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1
}

missing=()
if [[ "$(java_major)" -lt 17 ]]; then
    missing+=(openjdk-17-jre-headless)
fi
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)

if [[ ${#missing[@]} -eq 0 ]]; then
    log "Java $(java_major) with javac, Maven, chromium and chromedriver present"
    exit 0
fi
if [[ "$(id -u)" -ne 0 ]]; then
    log "missing: ${missing[*]} (install them with: sudo apt-get install -y ${missing[*]})"
    exit 1
fi
log "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
log "Java $(java_major), $(chromium --version 2>/dev/null || echo 'chromium ?')"
