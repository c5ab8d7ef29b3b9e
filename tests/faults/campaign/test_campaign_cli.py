"""``harness campaign`` end to end: exit status CI can trust, the record written, the summary printed."""

from __future__ import annotations

from harness.app.cli import main
from harness.engine.results_store import read_records


def test_campaign_command_passes_and_writes_a_record(tmp_path, capsys):
    results = tmp_path / "c.jsonl"
    status = main(
        [
            "campaign",
            "--events",
            "80",
            "--faults",
            "3",
            "--seed",
            "9",
            "--kinds",
            "resumable_error,non_resumable_error",
            "--results",
            str(results),
        ]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "campaign seed=9: PASSED" in out and "exactly once, in order" in out
    record = read_records(results)[-1]
    assert record["outcome"] == "passed" and record["details"]["seed"] == 9 and len(record["details"]["faults"]) == 3


def test_unknown_kind_exits_2(capsys):
    assert main(["campaign", "--events", "10", "--faults", "1", "--kinds", "bogus"]) == 2
    assert "bogus" in capsys.readouterr().err


def test_campaign_run_options_are_the_run_tables_rows():
    """``--driver``, ``--target``, ``--failpoints``, ``--results``, ``--allow-destructive``: the one options table."""
    from harness.app.cli import build_parser
    from harness.app.options import RUN_OPTIONS

    commands = next(a for a in build_parser("campaign")._actions if a.dest == "command")
    declared = {action.dest: action for action in commands.choices["campaign"]._actions}
    for option in RUN_OPTIONS:
        if option.dest in ("driver", "target", "failpoints", "results", "allow_destructive"):
            assert declared[option.dest].option_strings == list(option.cli)
            assert declared[option.dest].help == option.declaration(for_cli=True)["help"]
        else:
            assert option.dest not in declared


def test_campaign_run_is_opened_by_the_composition_root_with_the_given_options(tmp_path, monkeypatch, capsys):
    from harness.app import compose

    opened = []
    real_new_run = compose.new_run

    def new_run(options):
        opened.append(options)
        return real_new_run(options)

    monkeypatch.setattr(compose, "new_run", new_run)
    results = tmp_path / "c.jsonl"
    status = main(
        [
            "campaign",
            "--events",
            "40",
            "--faults",
            "1",
            "--seed",
            "3",
            "--kinds",
            "resumable_error",
            "--failpoints",
            "emulated",
            "--label",
            "cell=c1",
            "--results",
            str(results),
            "-q",
        ]
    )
    assert status == 0, capsys.readouterr()
    assert len(opened) == 1 and opened[0].target.startswith("embedded=") and opened[0].expected == "none"
    record = read_records(results)[-1]
    assert record["failpoints"] == "emulated" and record["labels"] == {"cell": "c1"}
