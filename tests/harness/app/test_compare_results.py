"""harness compare: two results files, the same verdicts test by test, whatever only one execution can have."""

from __future__ import annotations

import json
from pathlib import Path

from harness.app.cli import main


def _record(test_id: str, outcome: str, causes=(), attempt: int = 1, **volatile) -> dict:
    return {"test_id": test_id, "outcome": outcome, "causes": list(causes), "attempt": attempt, **volatile}


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


CAUSE = {"clause": "event", "step": "operations[1]", "path": "a.b", "rules": ["CS-X"], "known": "", "fact": "id 41"}


def _compare(tmp_path: Path, before: list[dict], after: list[dict], capsys) -> tuple[int, str]:
    code = main(["compare", str(_write(tmp_path / "a.jsonl", before)), str(_write(tmp_path / "b.jsonl", after))])
    return code, capsys.readouterr().out


def test_what_only_one_execution_has_is_not_compared(tmp_path, capsys):
    before = [_record("f::t1", "passed", run_id="r1", duration_s=1.0), _record("f::t2", "failed", [CAUSE], message="x")]
    before.append(_record("f::t3", "failed", [{**CAUSE, "step": "configureFailPoint on 127.0.0.1:39075"}]))
    moved = {**CAUSE, "fact": "id 97"}  # a cursor id in the fact: volatile
    after = [_record("f::t2", "failed", [moved], message="y"), _record("f::t1", "passed", run_id="r2", duration_s=9.0)]
    after.append(_record("f::t3", "failed", [{**CAUSE, "step": "configureFailPoint on 127.0.0.1:41000"}]))  # its port
    code, out = _compare(tmp_path, before, after, capsys)
    assert code == 0 and out.startswith("same verdicts: 3 tests"), out
    other_host = [*after[:2], _record("f::t3", "failed", [{**CAUSE, "step": "configureFailPoint on 10.0.0.9:41000"}])]
    assert _compare(tmp_path, before, other_host, capsys)[0] == 1  # another server is not a port


def test_each_kind_of_difference_is_said_and_fails(tmp_path, capsys):
    before = [
        _record("f::outcome", "passed"),
        _record("f::causes", "failed", [CAUSE]),
        _record("f::gone", "passed"),
        _record("f::flaky", "failed"),
        _record("f::flaky", "passed", attempt=2),
    ]
    after = [
        _record("f::outcome", "failed", [CAUSE]),
        _record("f::causes", "failed", [{**CAUSE, "rules": ["CS-Y"]}]),
        _record("f::new", "skipped"),
        _record("f::flaky", "failed"),
        _record("f::flaky", "failed", attempt=2),
    ]
    code, out = _compare(tmp_path, before, after, capsys)
    assert code == 1
    assert "outcome: f::outcome: passed -> failed" in out
    assert "outcome: f::flaky: flaky -> failed" in out  # attempts come to one outcome on each side
    assert (
        "causes: f::causes (failed): [event operations[1] a.b ('CS-X',)] -> [event operations[1] a.b ('CS-Y',)]" in out
    )
    assert "only before: f::gone (passed)" in out and "only after: f::new (skipped)" in out
    assert out.rstrip().endswith(
        "verdicts differ: 5 test(s) (1 only before, 1 only after, 2 outcome, 1 causes); 3 test(s) on both sides"
    )


def test_a_file_that_cannot_be_read_is_exit_2(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "none.jsonl"), str(_write(tmp_path / "b.jsonl", []))]) == 2
    assert "cannot read" in capsys.readouterr().out
