"""The harness as a user installs it: a wheel in a fresh virtual environment, run from an unrelated directory.

The wheel is built from this checkout (``uv build``: an sdist, then the wheel from the sdist, as an index
would), installed with its dependencies at this environment's versions, and run where no checkout is in
sight. Everything the project ships as data (``specs/``: expected outcomes, scenarios, rule catalogue,
matrices, pins) must come out of the installed package ``cs_harness_specs``, never from this checkout:
the expected-outcomes files are found, records carry rule ids, the supplementary scenarios run through
``project:scenarios/supplementary``, and ``harness coverage`` without a spec text lists the rules and
says the text was not compared. The pypi source is fetched into the shared cache (``~/.cache/cs-harness``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from tests.paths import REPO

DATA = REPO / "specs"
DATA_PACKAGE = "cs_harness_specs"
UPSTREAM = "pypi:pymongo==4.20.0"
SUPPLEMENTARY = "project:scenarios/supplementary"
THIS_PROJECT = "cs-conformance-harness"


def _uv() -> str:
    return pytest.importorskip("uv").find_uv_bin()


def _data_files(root: Path) -> list[str]:
    """The files the wheel must ship from ``specs/`` (relative paths), leaving out bytecode."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def _this_environment_constraints() -> str:
    """``name==version`` for every distribution here but the harness, so the venv resolves what the tests saw."""
    pins = {
        d.metadata["Name"].lower(): d.version
        for d in metadata.distributions()
        if d.metadata["Name"] and d.metadata["Name"].lower().replace("_", "-") != THIS_PROJECT
    }
    return "".join(f"{name}=={version}\n" for name, version in sorted(pins.items()))


def _clean_environment() -> dict[str, str]:
    """The caller's environment without anything that points Python at this checkout or another venv."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP"}
    return {key: value for key, value in os.environ.items() if key not in drop}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, venv, an unrelated working directory): the wheel built and installed in a fresh venv."""
    uv = _uv()
    root = tmp_path_factory.mktemp("wheel-install")
    dist, venv, elsewhere = root / "dist", root / "venv", root / "elsewhere"
    elsewhere.mkdir()
    env = _clean_environment()

    def step(*command: str | Path) -> None:
        done = subprocess.run([str(c) for c in command], cwd=root, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{' '.join(map(str, command))}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"

    step(uv, "build", "--quiet", "--out-dir", dist, REPO)
    wheel = next(dist.glob("*.whl"))
    constraints = root / "constraints.txt"
    constraints.write_text(_this_environment_constraints())
    # --seed: pip in the venv, as venv and pipx give one (pypi: sources are fetched with pip download)
    step(uv, "venv", "--quiet", "--seed", "--python", sys.executable, venv)
    step(
        uv,
        "pip",
        "install",
        "--quiet",
        "--python",
        venv / "bin" / "python",
        "--constraint",
        constraints,
        f"{wheel}[faults]",
    )
    where = subprocess.run(
        [venv / "bin" / "python", "-c", "import harness; print(harness.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv), f"the venv imports the harness from {where}, not from its own wheel"
    return wheel, venv, elsewhere


def _harness(installed, *args: str) -> subprocess.CompletedProcess:
    _, venv, elsewhere = installed
    return subprocess.run(
        [str(venv / "bin" / "harness"), *args],
        cwd=elsewhere,
        env=_clean_environment(),
        capture_output=True,
        text=True,
        timeout=900,
    )


def _installed_data(venv: Path) -> Path:
    """Where the wheel's data must be (whether or not it is there)."""
    return next(venv.glob("lib/python*/site-packages")) / DATA_PACKAGE


def test_every_package_on_disk_is_in_the_packaging_list():
    """pyproject.toml lists the packages (the data package needs a name of its own); a new one must be added."""
    tomllib = pytest.importorskip("tomllib")
    from setuptools import find_packages

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = set(find_packages(str(REPO), include=["harness*", "faults*", "reports*", "prose_tests*"]))
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - on_disk == {DATA_PACKAGE}


def test_the_wheel_ships_every_data_file(installed):
    wheel, _, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        shipped = sorted(
            name.removeprefix(f"{DATA_PACKAGE}/") for name in archive.namelist() if name.startswith(f"{DATA_PACKAGE}/")
        )
    assert shipped == _data_files(DATA)


def test_the_main_job_runs_from_the_wheel_with_its_own_data(installed, tmp_path):
    from harness.formats.loaders import load_paths

    _, venv, _ = installed
    data = _installed_data(venv)
    results = tmp_path / "results.jsonl"
    done = _harness(
        installed,
        "run",
        "--specs",
        UPSTREAM,
        "--specs",
        SUPPLEMENTARY,
        "--suite",
        "all",
        "--expected",
        "auto",
        "--results",
        str(results),
        "-j",
        "2",
    )
    shown = [line for line in done.stdout.splitlines() if line.startswith("expected outcomes:")]
    assert shown and "<none>" not in shown[0] and str(data / "expectations") in shown[0], done.stdout[-3000:]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert records and all(str(data / "expectations") in r["expectations_file"] for r in records)
    upstream = [r for r in records if "pypi-pymongo-4.20.0" in r["file"]]
    assert upstream and any(r["rules"] for r in upstream), "no upstream record carries rule ids (test-rules.yml)"
    supplementary = [r for r in records if r["file"].startswith(str(data / "scenarios" / "supplementary"))]
    assert len(supplementary) == len(load_paths([DATA / "scenarios" / "supplementary"]))
    assert not [r["file"] for r in records if r["file"].startswith(str(REPO))], "a file was read from the checkout"


def test_coverage_from_the_wheel_lists_rules_and_says_the_text_was_not_compared(installed):
    from harness.formats.rule_files import load_catalogues

    done = _harness(installed, "coverage", "--specs", UPSTREAM)
    assert done.returncode in (0, 1), done.stderr  # 1: a driver-side MUST unchecked (data, not packaging)
    first = done.stdout.splitlines()[0]
    assert "the spec text was not compared" in first, first
    rule_ids = [
        r.id
        for c in load_catalogues(DATA / "coverage" / "change-streams-rules.yml", DATA / "coverage" / "server-rules.yml")
        for r in c.rules
    ]
    assert rule_ids and [i for i in rule_ids if i not in done.stdout] == []
    assert "checked by: " in done.stdout and "unmapped statements: not looked for" in done.stdout
