"""``harness matrix`` definitions: flags and YAML, every error named where it came from; cells, ids, labels."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.matrix.cells import Cell, expand
from harness.matrix.cli import add_matrix_arguments
from harness.matrix.definition import DefinitionError, load_definition


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    """A working directory laid out like a checkout beside shared/: ../shared/specs/upstream/{legacy,unified}."""
    for suite in ("legacy", "unified"):
        (tmp_path / "shared" / "specs" / "upstream" / suite).mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    return work


def define(cwd: Path, *argv: str):
    parser = argparse.ArgumentParser()
    add_matrix_arguments(parser)
    args = parser.parse_args(list(argv))
    return load_definition(args.matrix, args, cwd)


def error(cwd: Path, *argv: str) -> str:
    with pytest.raises(DefinitionError) as caught:
        define(cwd, *argv)
    return str(caught.value)


def test_flags_give_versions_targets_suites_and_default_spec_paths(specs):
    definition = define(
        specs,
        "--pymongo",
        "4.18.3,4.19.0,4.20.0",
        "--secantusdb",
        "0.7.0b1,0.7.0b2",
        "--target",
        "secantusdb-daemon",
        "--repeat",
        "3",
        "--jobs",
        "2",
        "-k",
        "resume",
        "--timeout",
        "12",
        "--campaign",
        "events=300,faults=5,seed=7",
    )
    assert definition.pymongo == ("4.18.3", "4.19.0", "4.20.0")
    assert definition.secantusdb == ("0.7.0b1", "0.7.0b2") and definition.targets == ("secantusdb-daemon",)
    assert definition.suites == ("legacy", "unified", "prose")
    assert definition.specs == {
        "legacy": (specs.parent / "shared/specs/upstream/legacy").resolve(),
        "unified": (specs.parent / "shared/specs/upstream/unified").resolve(),
    }
    assert (definition.repeat, definition.jobs, definition.keyword, definition.timeout) == (3, 2, "resume", 12.0)
    assert definition.campaign.arguments() == ["--events", "300", "--faults", "5", "--seed", "7"]


def test_a_yaml_file_with_flags_laid_over_it(specs, tmp_path):
    matrix = tmp_path / "m.yml"
    matrix.write_text(
        "pymongo: ['4.18.3', '4.20.0']\nsecantusdb: ['0.7.0b2']\ntargets: [embedded, secantusdb-daemon]\n"
        "servers: ['uri=mongodb://u:secret@db1:27017,db2:27017/?replicaSet=rs']\nsuites: [unified]\n"
        "specs-unified: shared/specs/upstream/unified\nrepeat: 2\n"
        "campaign: {events: 100, faults: 2, seed: 3, kinds: [restart, resumable_error]}\n"
    )
    definition = define(specs, "--matrix", str(matrix), "--pymongo", "4.19.0", "--repeat", "4")
    assert definition.pymongo == ("4.19.0",) and definition.repeat == 4  # the flags win
    assert definition.targets == ("embedded", "secantusdb-daemon") and definition.suites == ("unified",)
    assert definition.specs == {
        "unified": (tmp_path / "shared/specs/upstream/unified").resolve()
    }  # relative to the file
    assert definition.servers == ("uri=mongodb://u:secret@db1:27017,db2:27017/?replicaSet=rs",)  # commas kept
    assert "secret" not in str(definition.describe())
    assert definition.campaign.kinds == ("restart", "resumable_error")
    assert define(specs, "--matrix", str(matrix), "--campaign", "off").campaign is None


@pytest.mark.parametrize(
    "yaml_text, expected",
    [
        ("pymongo: [4.20, '4.19.0']\n", "pymongo[0]: 4.2 is a float, not a string; quote it ('4.2')"),
        ("pymongo: ['4.20.0']\ndrivers: [x]\n", "unknown key(s) drivers"),
        ("pymongo: ['4.20.0']\nrepeat: 0\n", "repeat: must be at least 1, got 0"),
        ("pymongo: ['4.20.0']\ncampaign: {events: 10, speed: 2}\n", "campaign: unknown campaign key(s) speed"),
        ("pymongo: ['4.20.0']\nsuites: [legacy, prose, fuzz]\n", "suites: unknown suite(s) fuzz"),
        ("- just a list\n", "expected a mapping of keys"),
        ("pymongo: ['4.20.0'\n", "not valid YAML"),
    ],
)
def test_file_errors_name_the_file_and_key(specs, tmp_path, yaml_text, expected):
    matrix = tmp_path / "bad.yml"
    matrix.write_text(yaml_text)
    message = error(specs, "--matrix", str(matrix))
    assert str(matrix) in message and expected in message


@pytest.mark.parametrize(
    "argv, expected",
    [
        ((), "no pymongo versions"),
        (("--pymongo", "4.20.0,latest"), "--pymongo: 'latest' is not a version"),
        (("--pymongo", "4.9,4.9.0"), "--pymongo: the same version listed twice"),
        (("--pymongo", "4.20.0,4.20.0"), "--pymongo: listed more than once: 4.20.0"),
        (("--pymongo", "4.20.0,"), "--pymongo: empty entry"),
        (("--pymongo", "4.20.0", "--target", "uri=mongodb://x"), "--target: 'uri=mongodb://x' is a real server"),
        (("--pymongo", "4.20.0", "--target", "mongod"), "--target: unknown target 'mongod'"),
        (("--pymongo", "4.20.0", "--target", "embedded=/data"), "--target: target embedded does not take '/data'"),
        (("--pymongo", "4.20.0", "--server", "mongo:8.0"), "--server: a server is testcontainers"),
        (("--pymongo", "4.20.0", "--server", "uri=http://x"), "--server: uri= needs a mongodb://"),
        (("--pymongo", "4.20.0", "--server", "uri=mongodb://h:notaport/"), "--server: bad connection string"),
        (
            (
                "--pymongo",
                "4.20.0",
                "--secantusdb",
                "0.7.0b2",
                "--server",
                "uri=mongodb://h/",
                "--target",
                "embedded",
                "--campaign",
                "events=ten",
            ),
            "--campaign.events: expected a whole number",
        ),
        (
            ("--pymongo", "4.20.0", "--campaign", "kinds=restart+earthquake"),
            "--campaign.kinds: unknown fault kind(s) earthquake",
        ),
        (("--pymongo", "4.20.0", "--jobs", "two"), "--jobs: expected a whole number"),
        (("--pymongo", "4.20.0", "--timeout", "-1"), "--timeout: must be a positive number"),
    ],
)
def test_flag_errors_name_the_flag(specs, argv, expected):
    assert expected in error(specs, *argv)


def test_missing_spec_directories_are_an_error_naming_the_default_and_the_flag(tmp_path):
    message = error(tmp_path, "--pymongo", "4.20.0")
    assert "--specs-legacy (default ../shared/specs/upstream/legacy" in message and "does not exist" in message
    message = error(tmp_path, "--pymongo", "4.20.0", "--specs-unified", "nowhere", "--suites", "unified")
    assert message.startswith("--specs-unified: ") and str(tmp_path / "nowhere") in message
    assert define(tmp_path, "--pymongo", "4.20.0", "--suites", "prose").specs == {}  # prose needs no spec files


def test_the_matrix_id_covers_what_decides_results_but_not_repeat_or_jobs(specs):
    base = define(specs, "--pymongo", "4.19.0,4.20.0", "--secantusdb", "0.7.0b3")
    assert (
        define(specs, "--pymongo", "4.19.0,4.20.0", "--secantusdb", "0.7.0b3", "--repeat", "5", "--jobs", "3").matrix_id
        == base.matrix_id
    )
    for changed in (
        ("--pymongo", "4.20.0"),
        ("--pymongo", "4.19.0,4.20.0", "-k", "x"),
        ("--pymongo", "4.19.0,4.20.0", "--suites", "unified"),
        ("--pymongo", "4.19.0,4.20.0", "--target", "secantusdb-daemon"),
    ):
        assert define(specs, *changed, "--secantusdb", "0.7.0b3").matrix_id != base.matrix_id, changed


def test_cells_are_drivers_by_targets_with_readable_ids_and_labels(specs):
    definition = define(
        specs,
        "--pymongo",
        "4.19.0,4.20.0",
        "--secantusdb",
        "0.7.0b2,0.7.0b3",
        "--target",
        "embedded,secantusdb-daemon",
        "--server",
        "testcontainers=mongo:8.0",
        "--server",
        "uri=mongodb://admin:hunter2@db:27017/",
        "--campaign",
        "events=50",
    )
    cells = expand(definition)
    assert len(cells) == 2 * (2 * 2 + 2) and len({c.id for c in cells}) == len(cells)
    first = cells[0]
    assert first.id == "pymongo-4.19.0__embedded__secantusdb-0.7.0b2"
    assert first.requirements == ("pymongo==4.19.0", "secantusdb==0.7.0b2") and first.extras == ("faults",)
    assert first.labels("m-1") == {
        "matrix": "m-1",
        "cell": first.id,
        "pymongo": "4.19.0",
        "target": "embedded",
        "secantusdb": "0.7.0b2",
    }
    servers = [c for c in cells if c.pymongo == "4.20.0" and c.secantusdb is None]
    container, uri = servers
    assert container.id == "pymongo-4.20.0__testcontainers-mongo-8.0" and container.extras == ("containers",)
    assert not container.campaign and container.requirements == ("pymongo==4.20.0",)  # the pinned SecantusDB
    assert uri.id.startswith("pymongo-4.20.0__uri-") and "hunter2" not in uri.id
    assert "hunter2" not in str(uri.labels("m-1")) and "admin:***@db" in uri.labels("m-1")["target"]


def test_without_secantusdb_versions_cells_use_the_pinned_release(specs):
    [cell] = expand(define(specs, "--pymongo", "4.20.0"))
    assert cell == Cell(pymongo="4.20.0", target="embedded", secantusdb=None)
    assert cell.id == "pymongo-4.20.0__embedded__secantusdb-pinned" and cell.requirements == ("pymongo==4.20.0",)
    assert expand(define(specs, "--pymongo", "4.20.0", "--server", "uri=mongodb://h/"))[0].target == "uri=mongodb://h/"


@pytest.mark.parametrize(
    "argv, expected",
    [
        (("--find-links", "/nonexistent-wheels"), "--find-links: /nonexistent-wheels is not a directory"),
        (("--python", "/nonexistent/python"), "--python /nonexistent/python: cannot run it"),
        (("--out", "/proc/no-matrix-here"), "--out: cannot create /proc/no-matrix-here"),
        (("--installer", "pip", "--offline"), "--offline with pip needs --find-links"),
        (("--pymongo", "4.2.0x"), "--pymongo: '4.2.0x' is not a version"),
    ],
)
def test_the_command_refuses_to_start_with_exit_2_and_says_why(tmp_path, capsys, argv, expected):
    from harness.app.cli import main

    base = [
        "matrix",
        "--pymongo",
        "4.20.0",
        "--suites",
        "prose",
        "--envs",
        str(tmp_path / "envs"),
        "--out",
        str(tmp_path / "out"),
    ]
    assert main([*base, *argv]) == 2
    assert expected in capsys.readouterr().err
