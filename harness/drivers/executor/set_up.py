"""What a known executor needs on this machine, checked when a run starts rather than at its first test.

Without this a checkout where ``npm ci`` never ran errors every test ("Cannot find module 'mongodb'") after the
target started; now the run is refused at once (exit 2) with the command that installs what is missing. The
Java and Go executors are built here too (once, then from the harness's cache), so a build that cannot happen
refuses the run the same way, before any ``-j`` worker starts.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from harness.core.ports import DriverUnavailable
from harness.drivers.executor.process import ExecutorFailure

NODE_FOLDER = Path(__file__).resolve().parent.parent / "node"

#: How long asking Node to resolve the driver may take (a cold start of ``node`` is about 50 ms).
NODE_PROBE_TIMEOUT_S = 30.0

#: Resolves ``mongodb`` the way the executor does: from the executor's own folder, through Node's resolution.
_RESOLVE = (
    "import {createRequire} from 'node:module';process.stdout.write(createRequire(process.argv[1]).resolve('mongodb'))"
)


def node_ready() -> None:
    """``--driver node``: Node.js on PATH and the locked ``mongodb`` package installed beside the executor."""
    node = shutil.which("node")
    if node is None:
        raise DriverUnavailable("--driver node: Node.js (`node`, 20 or later) is not on PATH; install Node.js")
    entry = NODE_FOLDER / "executor.js"
    try:
        done = subprocess.run(
            [node, "--input-type=module", "-e", _RESOLVE, str(entry)],
            capture_output=True,
            text=True,
            timeout=NODE_PROBE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise DriverUnavailable(f"--driver node: `node` did not answer within {NODE_PROBE_TIMEOUT_S:g}s") from None
    if done.returncode != 0:
        raise DriverUnavailable(
            f"--driver node: the Node driver's packages are not installed beside {entry}; "
            f"run: npm ci --prefix {NODE_FOLDER} --no-audit --no-fund"
        )


def built(build: Callable[[], list[str]]) -> Callable[[], None]:
    """A built executor's set-up: its build (a cache hit after the first), a failure refusing the run."""

    def set_up() -> None:
        try:
            build()
        except ExecutorFailure as exc:
            raise DriverUnavailable(str(exc)) from None

    return set_up
