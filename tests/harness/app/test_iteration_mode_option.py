"""``--iteration-mode NAME``: one run option, checked when the run starts, recorded in every result, passed to
``-j N`` workers, to an executor's ``openScope``, and run mode by mode by ``harness certify``."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.app.cli import build_parser
from harness.app.options import RUN_OPTIONS, from_namespace, from_pytest_config
from harness.core.ports import ITERATION_MODES
from tests.harness.app.test_cli import PASSING
from tests.harness.drivers.executor.broken import broken_executor
from tests.helpers import LEGACY_HEADER, harness_cli

MORE = "".join(PASSING.replace("description: passes", f"description: passes {n}") for n in range(3))


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return harness_cli(*args, cwd=cwd, HARNESS_CACHE_DIR=str(cwd / "cache"))


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    """Four legacy tests, each iterating a change stream."""
    path = tmp_path / "modes.yml"
    path.write_text(LEGACY_HEADER + PASSING + MORE)
    return path


def test_the_option_is_one_row_for_the_cli_and_pytest() -> None:
    (row,) = [option for option in RUN_OPTIONS if option.dest == "iteration_mode"]
    assert row.cli == ("--iteration-mode",) and row.pytest == "--iteration-mode" and row.default is None
    assert row.choices is not None and list(row.choices()) == list(ITERATION_MODES)
    chosen = from_namespace(build_parser().parse_args(["run", "--iteration-mode", "tryNext"]))
    assert chosen.settings.iteration_mode == "tryNext"
    assert from_namespace(build_parser().parse_args(["run"])).settings.iteration_mode is None

    class Config:
        def getoption(self, name: str, default: object = None) -> object:
            return {"iteration_mode": "iterator"}.get(name, default)

    assert from_pytest_config(Config()).settings.iteration_mode == "iterator"


def test_a_name_outside_the_vocabulary_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["run", "--iteration-mode", "push"])
    assert exited.value.code == 2
    assert "invalid choice: 'push'" in capsys.readouterr().err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_record_says_the_mode_it_ran_in(spec: Path, tmp_path: Path, jobs: str) -> None:
    """Sequential and ``-j 2`` workers alike; without the option, the driver's default made explicit."""
    chosen, default = tmp_path / "chosen.jsonl", tmp_path / "default.jsonl"
    common = ["run", "--specs", str(spec), "--expected", "none", "-j", jobs]
    ran = _harness(*common, "--iteration-mode", "iterator", "--results", str(chosen), cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert _harness(*common, "--results", str(default), cwd=tmp_path).returncode == 0
    assert [r["driver"]["iteration_mode"] for r in _records(chosen)] == ["iterator"] * 4
    assert [r["driver"]["iteration_mode"] for r in _records(default)] == ["next"] * 4
    assert {r["outcome"] for r in _records(chosen)} == {"passed"}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_mode_the_driver_does_not_offer_refuses_the_run(spec: Path, tmp_path: Path, jobs: str) -> None:
    results = tmp_path / "r.jsonl"
    refused = _harness(
        "run", "--specs", str(spec), "--iteration-mode", "emitter", "--results", str(results), "-j", jobs, cwd=tmp_path
    )
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "--iteration-mode emitter: the pymongo driver does not offer it" in refused.stderr
    assert "its iteration modes: next, tryNext, iterator" in refused.stderr
    assert not results.exists() or _records(results) == []


def _logging_executor(tmp_path: Path) -> list[str]:
    """The reference executor, writing each ``openScope``'s params to ``opened.jsonl`` beside it."""
    log = tmp_path / "opened.jsonl"
    before = (
        "    if request.get('method') == 'openScope':\n"
        f"        open({str(log)!r}, 'a').write(__import__('json').dumps(request['params']) + '\\n')"
    )
    return broken_executor(tmp_path, before=before)


def test_an_executor_gets_the_mode_in_open_scope_only_when_one_was_chosen(spec: Path, tmp_path: Path) -> None:
    command = shlex.join(_logging_executor(tmp_path))
    results = tmp_path / "r.jsonl"
    ran = _harness(
        "run",
        "--specs",
        str(spec),
        "--expected",
        "none",
        "--driver",
        f"exec:{command}",
        "--iteration-mode",
        "tryNext",
        "--results",
        str(results),
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert [p.get("iterationMode") for p in _records(tmp_path / "opened.jsonl")] == ["tryNext"] * 4
    assert {r["driver"]["iteration_mode"] for r in _records(results)} == {"tryNext"}
    (tmp_path / "opened.jsonl").unlink()
    plain = _harness("run", "--specs", str(spec), "--expected", "none", "--driver", f"exec:{command}", cwd=tmp_path)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert ["iterationMode" in p for p in _records(tmp_path / "opened.jsonl")] == [False] * 4


def test_certify_runs_every_mode_the_driver_offers(tmp_path: Path) -> None:
    """One statement per mode, the default under the pair's plain name; each lists them all."""
    out = tmp_path / "certify"
    selection = ["-k", "Test consecutive resume"]
    done = _harness(
        "certify", "--driver", "pymongo", "--target", "embedded", *selection, "--out", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    stems = {"next": "pymongo-on-embedded", "tryNext": "pymongo-tryNext-on-embedded"}
    stems["iterator"] = "pymongo-iterator-on-embedded"
    for mode, stem in stems.items():
        statement = json.loads((out / f"{stem}.json").read_text())
        assert statement["subject"]["driver"]["iteration_mode"] == mode
        assert statement["run"]["options"]["iteration_mode"] == mode
        assert [line["mode"] for line in statement["run"]["iteration_modes"]] == list(stems)
        assert [line["statement"] for line in statement["run"]["iteration_modes"]] == list(stems.values())
        records = _records(out / f"{stem}.results.jsonl")
        assert records and {r["driver"]["iteration_mode"] for r in records} == {mode}
    lines = done.stdout.strip().splitlines()
    default = json.loads((out / "pymongo-on-embedded.json").read_text())
    assert lines[-1] == default["summary"]["badge"] and lines[-2].startswith("[tryNext] ")
    assert "--iteration-mode tryNext" in done.stderr and "--iteration-mode iterator" in done.stderr


def test_certify_takes_one_mode_and_refuses_one_the_driver_lacks(tmp_path: Path) -> None:
    out = tmp_path / "certify"
    selection = ["-k", "Test consecutive resume", "--out", str(out)]
    one = _harness("certify", "--driver", "pymongo", "--iteration-mode", "iterator", *selection, cwd=tmp_path)
    assert one.returncode == 0, one.stdout + one.stderr
    assert sorted(p.name for p in out.glob("*-on-embedded.json")) == ["pymongo-iterator-on-embedded.json"]
    refused = _harness("certify", "--driver", "pymongo", "--iteration-mode", "stream", *selection, cwd=tmp_path)
    assert refused.returncode == 2 and "its iteration modes: next, tryNext, iterator" in refused.stderr
