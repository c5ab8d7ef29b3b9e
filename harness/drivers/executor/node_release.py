"""``--driver node@SPEC``: the npm ``mongodb`` release SPEC, installed once into the harness's cache folder.

The Node executor loads whichever driver ``--driver-module DIR`` names (harness/drivers/node/lib/driver.js), so a
driver matrix needs only the release on disk: ``npm install --prefix <cache>/node-drivers/<SPEC> mongodb@SPEC``,
once per spec, then offline. The folder is keyed by the spec as written (``6.x`` stays the 6.x installed first;
delete its folder to take a newer one); the records name the release actually loaded (the executor's ``hello``).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.drivers.executor.process import ExecutorFailure
from harness.engine import child_processes
from harness.formats.cache import cache_dir

#: How long one ``npm install`` may take (a download of a few MB).
INSTALL_TIMEOUT_S = 600.0


def release_folder(spec: str) -> Path:
    """The cache folder of one npm spec: readable (``6.x``) and collision-free (a digest of the spec)."""
    readable = re.sub(r"[^A-Za-z0-9._-]", "_", spec)[:40]
    return cache_dir() / "node-drivers" / f"{readable}-{hashlib.sha256(spec.encode()).hexdigest()[:10]}"


def installed_driver(spec: str) -> Path:
    """The ``node_modules/mongodb`` folder of release ``spec``, installed now unless the cache has it."""
    if not spec or spec.startswith("-"):
        raise ExecutorFailure(f"--driver node@SPEC needs an npm version spec (node@6.x, node@6.10.0), got {spec!r}")
    folder = release_folder(spec)
    module = folder / "node_modules" / "mongodb"
    if (module / "package.json").is_file():
        return module
    npm = shutil.which("npm")
    if npm is None:
        raise ExecutorFailure(f"--driver node@{spec}: npm is not installed, and the release is not in {folder}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    try:
        command = [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund", f"mongodb@{spec}"]
        try:
            done = child_processes.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise ExecutorFailure(f"--driver node@{spec}: npm install took over {INSTALL_TIMEOUT_S:g}s") from None
        if done.returncode != 0 or not (staging / "node_modules" / "mongodb" / "package.json").is_file():
            raise ExecutorFailure(f"--driver node@{spec}: npm install failed:\n{(done.stderr or done.stdout)[-2000:]}")
        try:
            staging.rename(folder)  # atomic: a concurrent worker that finished first keeps its copy
        except OSError:
            if not (module / "package.json").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return module
