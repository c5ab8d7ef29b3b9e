#!/usr/bin/env bash
# The static checks CI runs before the tests (configured in pyproject.toml): lint and format over the whole
# project, strict types for the core, formats and engine layers, and the import contracts. Quick: run it
# before every commit.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "static checks: ruff check"
ruff check .
echo "static checks: ruff format --check"
ruff format --check .
echo "static checks: mypy --strict (harness/core, harness/formats, harness/engine)"
mypy
echo "static checks: import contracts"
lint-imports
