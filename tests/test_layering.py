"""The import contracts (``[tool.importlinter]`` in pyproject.toml) run with the suite.

A new back-edge (a loader importing the engine, the engine naming a plug-in, a plug-in reaching into the app or
into another plug-in family, the core importing pymongo) fails here. The planted-back-edge test runs the
same contracts on a copy of the packages with one forbidden import added, so
this check is known to be able to fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import REPO

PACKAGES = ("harness", "faults", "prose_tests", "reports")
LINT_IMPORTS = shutil.which("lint-imports")
needs_linter = pytest.mark.skipif(
    LINT_IMPORTS is None, reason="import-linter is not installed (pip install -e '.[test]')"
)


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [LINT_IMPORTS, "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@needs_linter
def test_import_contracts_hold() -> None:
    result = _lint(REPO)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


@needs_linter
@pytest.mark.parametrize(
    "module, back_edge, contract",
    [
        ("harness/formats/unified.py", "import harness.engine.lifecycle", "layers"),  # a loader reaching the engine
        (
            "harness/engine/operation_table.py",
            "import faults.campaign.schedule",
            "layers",
        ),  # the engine naming a plug-in
        ("harness/engine/operation_table.py", "import harness.shared.wire", "layers"),  # the engine above its layer
        ("harness/targets/uri_target.py", "import harness.app.options", "layers"),  # a plug-in reaching the app
        ("harness/targets/embedded.py", "import faults.network.api", "layers"),  # one plug-in family naming another
        (
            "prose_tests/support.py",
            "import harness.drivers.pymongo.adapter",
            "layers",
        ),  # the same, from the prose tests
        (
            "harness/shared/wire/proxy.py",
            "import faults.failpoints.plugin",
            "layers",
        ),  # the shared layer naming a plug-in
        ("harness/matrix/cells.py", "import harness.app.options", "layers+matrix"),  # the matrix reaching the app
        ("harness/matrix/cells.py", "import prose_tests.support", "matrix"),  # below it, yet a plug-in family
        ("harness/core/ports.py", "import yaml", "core"),  # not pymongo: the engine imports the ports
        ("harness/formats/spec_reader.py", "import pymongo", "formats"),
        ("harness/engine/lifecycle.py", "import requests", "engine"),
        ("harness/engine/spec_runner.py", "import pymongo", "driver-neutral engine"),
        ("reports/read.py", "import harness.core.records", "reports"),
        ("reports/outcomes.py", "import harness.engine.run", "reports"),  # harness.record only, not the runner
        ("harness/record/schema.py", "import bson", "record"),  # the record's description is library-free
    ],
)
def test_a_planted_back_edge_breaks_its_contract(tmp_path: Path, module: str, back_edge: str, contract: str) -> None:
    for package in PACKAGES:
        shutil.copytree(REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / module
    target.write_text(target.read_text() + f"\n{back_edge}  # planted by the test\n")
    result = _lint(tmp_path)
    assert result.returncode != 0, result.stdout[-3000:]
    broken = [line for line in result.stdout.splitlines() if " BROKEN" in line]
    expected = contract.split("+")  # the contracts it breaks, each named by the start of its name
    assert len(broken) == len(expected), result.stdout[-3000:]
    assert all(any(line.startswith(name) for line in broken) for name in expected), result.stdout[-3000:]


def test_loading_spec_files_imports_no_driver_and_no_runner() -> None:
    """What the contracts say statically, checked at run time: the loaders pull in no pymongo."""
    probe = (
        "import sys, harness.formats.loaders, harness.formats.unified; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pymongo' "
        "or m in ('harness.engine.spec_runner', 'harness.engine.run', "
        "'harness.drivers.pymongo.apm', 'harness.shared.failpoint_backends')))"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
