#!/usr/bin/env bash
# Install a pinned Toxiproxy server into the project-local tool directory.
#
# Why pinned: network-fault results are only comparable between runs when the
# proxy in the middle is the same program; a floating "latest" would change it
# under us. Why `go install`: the Go module proxy is the one source every CI
# machine and developer box here can reach, and it verifies the module against
# the checksum database.
#
# Usage: scripts/install-toxiproxy.sh            (installs into <repo>/.tools/bin)
#        TOXIPROXY_BIN_DIR=/some/dir scripts/install-toxiproxy.sh
# Prints the absolute path of the binary on its last line (stdout); progress
# goes to stderr. Idempotent: does nothing if the pinned version is present.
set -euo pipefail

TOXIPROXY_VERSION="v2.12.0"   # latest stable on the Go module proxy (2025-03-18); builds with Go >= 1.23
# The server's main package is cmd/server (the upstream Makefile renames the
# binary to toxiproxy-server; so do we).
PACKAGE="github.com/Shopify/toxiproxy/v2/cmd/server"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin_dir="${TOXIPROXY_BIN_DIR:-$repo_root/.tools/bin}"
binary="$bin_dir/toxiproxy-server"

log() { echo "install-toxiproxy: $*" >&2; }

# The version is stamped into the binary at build time (below), so the binary
# itself says whether it is the pinned one.
if [[ -x "$binary" ]] && [[ "$("$binary" -version 2>/dev/null)" == "toxiproxy-server version ${TOXIPROXY_VERSION#v}" ]]; then
    log "toxiproxy-server $TOXIPROXY_VERSION already installed"
    echo "$binary"
    exit 0
fi

if ! command -v go >/dev/null 2>&1; then
    log "error: 'go' is not on PATH; Go >= 1.23 is needed to build toxiproxy-server $TOXIPROXY_VERSION"
    exit 1
fi

mkdir -p "$bin_dir"
log "building toxiproxy-server $TOXIPROXY_VERSION with $(go version | awk '{print $3}') into $bin_dir"
# Built into a scratch GOBIN, then moved into place in one rename, so an
# interrupted build never leaves a half-written toxiproxy-server behind.
# -X sets the version the server reports (-version, GET /version), as upstream
# release builds do; without it a `go install` build reports "git".
scratch="$(mktemp -d "$bin_dir/.toxiproxy-build.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
GOBIN="$scratch" GOWORK=off go install -trimpath \
    -ldflags="-s -w -X github.com/Shopify/toxiproxy/v2.Version=${TOXIPROXY_VERSION#v}" \
    "$PACKAGE@$TOXIPROXY_VERSION"
mv -f "$scratch/server" "$binary"

reported="$("$binary" -version 2>&1 || true)"
log "installed: $reported"
echo "$binary"
