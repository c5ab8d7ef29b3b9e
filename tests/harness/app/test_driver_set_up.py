"""A driver this machine cannot run is refused when the run starts (exit 2, the command that fixes it), before
the target starts: not an error per test after it did (issue 32, item 8)."""

from __future__ import annotations

import shutil

import pytest

from harness.app import cli, compose
from harness.drivers.executor import set_up
from harness.drivers.executor.process import ExecutorFailure
from tests.paths import SHARED_SPECS

SPEC = str(SHARED_SPECS / "upstream" / "unified" / "change-streams-errors.yml")


@pytest.fixture
def no_run(monkeypatch):
    """Fails the test if the run gets as far as making a run (which starts the target)."""

    def refuse(options):
        raise AssertionError("the run started although its driver cannot be set up")

    monkeypatch.setattr(compose, "new_run", refuse)


def _refused(capsys, *driver: str) -> str:
    status = cli.main(["run", "--specs", SPEC, "--driver", *driver])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    return err


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_node_without_its_packages_is_refused_with_the_install_command(tmp_path, monkeypatch, capsys, no_run):
    (tmp_path / "executor.js").write_text("// the executor, without node_modules beside it\n")
    monkeypatch.setattr(set_up, "NODE_FOLDER", tmp_path)
    err = _refused(capsys, "node")
    assert f"npm ci --prefix {tmp_path}" in err


def test_node_without_node_is_refused(monkeypatch, capsys, no_run):
    monkeypatch.setattr(set_up.shutil, "which", lambda name: None)
    assert "Node.js" in _refused(capsys, "node")


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_node_with_its_packages_is_accepted():
    set_up.node_ready()  # the checkout's own executor, installed by .ci/run's npm ci


def test_a_built_executor_whose_build_fails_is_refused(monkeypatch, capsys, no_run):
    from harness.drivers.go import build

    def fails(release: str) -> list[str]:
        raise ExecutorFailure("--driver go: the Go toolchain (`go`) is not on PATH; install Go 1.25 or newer")

    monkeypatch.setattr(build, "executor_command", fails)
    assert "install Go" in _refused(capsys, "go")


def test_an_unknown_driver_is_refused(capsys, no_run):
    assert "unknown driver 'mongosh'" in _refused(capsys, "mongosh")


def test_pymongo_async_without_the_async_api_is_refused(monkeypatch, capsys, no_run):
    from harness.drivers.pymongo import api_shims

    monkeypatch.setattr(api_shims, "ASYNC_API", None)
    assert "pymongo 4.10 or later" in _refused(capsys, "pymongo-async")
